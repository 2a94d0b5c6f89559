// Tasks: a list with filters (state, context, updated since) and paging, for any agent that
// implements ListTasks; a task's page: its status timeline with timestamps, history,
// artifacts and raw events; subscribe to it live, cancel it, or poll it.

import { h, replace, stateBadge, stateLabel, clock, frameBatched, TERMINAL } from './dom.js';
import { ArtifactAssembler, renderArtifact, renderMessage, textOf } from './parts.js';

const STATES = ['SUBMITTED', 'WORKING', 'INPUT_REQUIRED', 'AUTH_REQUIRED', 'COMPLETED', 'FAILED', 'CANCELED', 'REJECTED'];

export function renderTasks(root, session) {
  const conn = session.connection();
  const form = session.taskFilter || (session.taskFilter = { status: '', contextId: '', since: '', pageSize: '20' });
  const tokens = [''];
  let page = 0;
  const table = h('div', { id: 'task-list', 'aria-live': 'polite' });
  const state = h('select', { id: 'filter-state', 'aria-label': 'State' }, h('option', { value: '' }, 'any state'),
    STATES.map((s) => h('option', { value: `TASK_STATE_${s}`, selected: form.status === `TASK_STATE_${s}` }, s.toLowerCase().replace('_', '-'))));
  const context = h('input', { id: 'filter-context', value: form.contextId, placeholder: 'context id', 'aria-label': 'Context id' });
  const since = h('input', { id: 'filter-since', type: 'datetime-local', value: form.since, 'aria-label': 'Updated since' });
  const size = h('select', { id: 'filter-size', 'aria-label': 'Page size' }, ['10', '20', '50', '100'].map((n) => h('option', { value: n, selected: form.pageSize === n }, `${n} a page`)));

  async function load() {
    form.status = state.value;
    form.contextId = context.value.trim();
    form.since = since.value;
    form.pageSize = size.value;
    replace(table, h('p', { class: 'hint' }, 'Loading…'));
    try {
      const query = {
        status: form.status || undefined,
        contextId: form.contextId || undefined,
        pageSize: Number(form.pageSize),
        pageToken: tokens[page] || undefined,
        historyLength: 0,
        statusTimestampAfter: form.since ? new Date(form.since).toISOString() : undefined,
      };
      const r = await conn.listTasks(query);
      const tasks = r.tasks || [];
      if (r.nextPageToken) tokens[page + 1] = r.nextPageToken;
      replace(table,
        tasks.length
          ? h('table', { class: 'tasks' },
            h('thead', {}, h('tr', {}, h('th', {}, 'Task'), h('th', {}, 'State'), h('th', {}, 'Updated'), h('th', {}, 'Context'), h('th', {}, 'Artifacts'))),
            h('tbody', {}, tasks.map((t) => h('tr', { dataset: { taskId: t.id } },
              h('td', {}, h('a', { href: `#/task/${encodeURIComponent(t.id)}` }, t.id)),
              h('td', {}, stateBadge(t.status && t.status.state)),
              h('td', {}, t.status && t.status.timestamp ? new Date(t.status.timestamp).toLocaleString() : ''),
              h('td', {}, h('button', { class: 'link', onclick: () => { context.value = t.contextId; page = 0; tokens.length = 1; load(); } }, t.contextId)),
              h('td', {}, String((t.artifacts || []).length))))))
          : h('p', {}, 'No tasks match.'),
        h('div', { class: 'row' },
          h('span', { class: 'hint', id: 'task-count' }, `page ${page + 1}${r.totalSize !== undefined ? ` · ${r.totalSize} in all` : ''}`),
          h('button', { disabled: page === 0, onclick: () => { page--; load(); } }, 'Previous page'),
          h('button', { id: 'next-page', disabled: !r.nextPageToken, onclick: () => { page++; load(); } }, 'Next page')));
    } catch (e) {
      replace(table, h('p', { class: 'error' }, `ListTasks: ${e.message}`),
        h('p', { class: 'hint' }, 'An agent that does not implement ListTasks (all of v0.3) can still be followed task by task: open a task by id below.'));
    }
  }

  const byId = h('input', { id: 'open-task', placeholder: 'task id', 'aria-label': 'Open a task by id' });
  replace(root,
    h('h2', {}, 'Tasks'),
    h('form', { class: 'filters', onsubmit: (e) => { e.preventDefault(); page = 0; tokens.length = 1; load(); } },
      state, context, h('label', { for: 'filter-since' }, 'updated since'), since, size, h('button', { type: 'submit', id: 'apply-filters' }, 'List')),
    table,
    h('form', { class: 'row', onsubmit: (e) => { e.preventDefault(); if (byId.value.trim()) session.go(`task/${encodeURIComponent(byId.value.trim())}`); } },
      byId, h('button', { type: 'submit' }, 'Open task')));
  load();
  return null;
}

/** Events of the host's own log of a task, when the agent is this host's (ordered, with the
 * status timestamps the agent wrote). */
async function hostLog(session, taskId) {
  if (session.agent.remote) return null;
  const id = new URL(session.agent.base).pathname.replace(/^\/a2a\//, '');
  const r = await fetch(`/inspector/api/tasks/${encodeURIComponent(id)}/${encodeURIComponent(taskId)}/events`, { headers: session.hostHeaders() });
  if (!r.ok) return null;
  return (await r.json()).events;
}

export function renderTask(root, session, taskId) {
  const conn = session.connection();
  let task = null;
  let controller = null;
  let polling = null;
  const live = [];
  const info = h('div', { id: 'task-page' });
  const status = h('p', { class: 'hint', role: 'status', id: 'task-status' });
  const draw = frameBatched(() => draw_());

  function timelineRows(logEvents) {
    const rows = [];
    const push = (at, state, text, source) => rows.push({ at, state, text, source });
    for (const e of logEvents || []) {
      if (e.task && e.task.status) push(e.task.status.timestamp, e.task.status.state, textOf(e.task.status.message), 'created');
      if (e.statusUpdate) push(e.statusUpdate.status.timestamp, e.statusUpdate.status.state, textOf(e.statusUpdate.status.message), 'status');
    }
    if (!rows.length && task && task.status) push(task.status.timestamp, task.status.state, textOf(task.status.message), 'current');
    return rows;
  }

  let logEvents = null;

  function draw_() {
    if (!task) return;
    const artifacts = new ArtifactAssembler(task.artifacts || []);
    const rows = timelineRows(logEvents);
    const state = task.status && task.status.state;
    const raw = logEvents || (session.observed.get(task.id) || []).map((o) => o.response);
    replace(info,
      h('div', { class: 'toolbar' }, h('h2', {}, 'Task ', h('code', {}, task.id)), stateBadge(state)),
      h('p', { class: 'hint' }, `context ${task.contextId}`),
      h('div', { class: 'row actions' },
        !TERMINAL.includes(state) ? h('button', { id: 'task-subscribe', disabled: !!controller, onclick: subscribe }, controller ? 'Following…' : 'Subscribe (live)') : null,
        controller ? h('button', { id: 'task-stop', onclick: stop }, 'Stop following') : null,
        !TERMINAL.includes(state) ? h('button', { id: 'task-poll', onclick: togglePoll }, polling ? 'Stop polling' : 'Poll every second') : null,
        !TERMINAL.includes(state) ? h('button', { id: 'task-cancel', class: 'danger', onclick: cancel }, 'Cancel task') : null,
        h('button', { onclick: refresh }, 'Refresh')),
      status,
      h('h3', {}, 'Status timeline'),
      h('ol', { class: 'timeline', id: 'task-timeline' }, rows.map((r) => h('li', { dataset: { state: stateLabel(r.state) } },
        h('span', { class: 'wire-time' }, r.at ? `${new Date(r.at).toLocaleDateString()} ${clock(Date.parse(r.at))}` : '(no time)'), ' ', stateBadge(r.state), r.text ? ` ${r.text}` : ''))),
      logEvents ? null : h('p', { class: 'hint' }, 'The full timeline is known for tasks of this host; for others, it is the current status and what this console saw.'),
      h('h3', {}, `Artifacts (${artifacts.list().length})`),
      artifacts.list().map(({ artifact }) => renderArtifact(artifact)),
      h('h3', {}, `History (${(task.history || []).length})`),
      h('ol', { class: 'history' }, (task.history || []).map((m) => h('li', {}, h('span', { class: 'who' }, m.role === 'ROLE_USER' ? 'user' : 'agent'), renderMessage(m)))),
      h('details', { id: 'raw-events' }, h('summary', {}, `Raw events (${raw.length + live.length})`),
        h('ol', { class: 'events' }, [...raw, ...live].slice(-500).map((e) => h('li', {}, h('pre', {}, JSON.stringify(e, null, 2)))))),
      h('details', {}, h('summary', {}, 'The task as JSON'), h('pre', {}, JSON.stringify(task, null, 2))));
  }

  async function refresh() {
    try {
      task = await conn.getTask(taskId);
      logEvents = await hostLog(session, taskId).catch(() => null);
      draw();
    } catch (e) {
      replace(info, h('p', { class: 'error' }, `GetTask: ${e.message}`));
    }
  }

  async function subscribe() {
    controller = new AbortController();
    draw();
    try {
      for await (const ev of conn.subscribe(taskId, controller.signal)) {
        const r = ev.response;
        live.push(r);
        session.observe(taskId, r);
        if (r.task) task = r.task;
        if (r.statusUpdate) {
          task.status = r.statusUpdate.status;
          logEvents = logEvents && [...logEvents, r];
        }
        if (r.artifactUpdate) {
          const a = new ArtifactAssembler(task.artifacts || []);
          a.apply(r.artifactUpdate);
          task.artifacts = a.list().map((x) => x.artifact);
        }
        draw();
      }
      status.textContent = 'The stream ended.';
    } catch (e) {
      status.textContent = `Subscribe: ${e.message}`;
    }
    controller = null;
    draw();
  }

  function stop() {
    if (controller) controller.abort();
    controller = null;
    status.textContent = 'Not following any more: the task keeps running.';
    draw();
  }

  function togglePoll() {
    if (polling) {
      clearInterval(polling);
      polling = null;
    } else {
      polling = setInterval(async () => {
        await refresh();
        if (TERMINAL.includes(task.status.state)) togglePoll();
      }, 1000);
    }
    draw();
  }

  async function cancel() {
    try {
      task = await conn.cancelTask(taskId);
      status.textContent = `CancelTask: the task is ${stateLabel(task.status.state)}.`;
      logEvents = await hostLog(session, taskId).catch(() => logEvents);
    } catch (e) {
      status.textContent = `CancelTask: ${e.message}`;
    }
    draw();
  }

  replace(root, h('p', {}, h('a', { href: '#/tasks' }, '← Tasks')), info);
  refresh();
  return () => {
    if (controller) controller.abort();
    if (polling) clearInterval(polling);
  };
}
