// Push: the host offers a webhook receiver for this console's session; the console adds a
// push config pointing at it to a task and shows each delivery as it arrives, with its
// signature check.

import { h, replace, clock, stateLabel } from './dom.js';

/** What a notification is about, in a few words. */
function about(body) {
  if (body.statusUpdate) return `status ${stateLabel(body.statusUpdate.status && body.statusUpdate.status.state)}`;
  if (body.artifactUpdate) return `artifact ${body.artifactUpdate.artifact.name || body.artifactUpdate.artifact.artifactId}`;
  if (body.task) return `task ${stateLabel(body.task.status && body.task.status.state)}`;
  if (body.message) return 'message';
  return '';
}
import { sseEvents } from './sse.js';

function deliveryView(d) {
  const body = d.body || {};
  const kind = Object.keys(body)[0] || 'notification';
  const sig = d.signature || {};
  return h('li', { class: 'delivery', dataset: { signature: sig.state, kind } },
    h('div', {}, h('span', { class: 'wire-time' }, clock(d.receivedAt)), ' ', h('strong', {}, kind), ` ${about(body)}`,
      ' · signature ', h('span', { class: `badge sig-${sig.state}` }, sig.state || 'unknown'),
      sig.keySource ? h('span', { class: 'hint' }, ` (${sig.keySource})`) : null,
      sig.reason ? h('span', { class: 'error' }, ` ${sig.reason}`) : null,
      d.tokenMatches ? h('span', { class: 'hint' }, ' · token matches') : h('span', { class: 'hint' }, ' · token does not match')),
    h('details', {}, h('summary', {}, 'headers and body'),
      h('pre', {}, JSON.stringify(d.headers, null, 2)),
      h('pre', {}, JSON.stringify(d.body, null, 2))));
}

export function renderPush(root, session) {
  const conn = session.connection();
  const state = session.push || (session.push = { hook: null, deliveries: [], controller: null });
  const list = h('ol', { class: 'deliveries', id: 'deliveries', 'aria-live': 'polite' });
  const status = h('p', { class: 'hint', role: 'status', id: 'push-status' });
  const taskId = h('input', { id: 'push-task', placeholder: 'task id', 'aria-label': 'Task to notify about', value: state.lastTask || '' });
  const draw = () => replace(list, state.deliveries.length ? state.deliveries.slice(-300).reverse().map(deliveryView) : h('li', { class: 'hint' }, 'Nothing received yet.'));

  async function follow() {
    if (state.controller) return;
    state.controller = new AbortController();
    try {
      const r = await fetch(`/inspector/api/hooks/${state.hook.id}/events`, { headers: session.hostHeaders(), signal: state.controller.signal });
      for await (const ev of sseEvents(r.body)) {
        const d = JSON.parse(ev.data);
        if (state.deliveries.some((x) => x.seq === d.seq)) continue;
        state.deliveries.push(d);
        if (state.redraw) state.redraw();
      }
    } catch {
      /* stopped */
    }
    state.controller = null;
  }

  async function createHook() {
    const r = await fetch('/inspector/api/hooks', { method: 'POST', headers: { ...session.hostHeaders(), 'Content-Type': 'application/json' }, body: '{}' });
    const j = await r.json();
    if (!r.ok) {
      status.textContent = (j.error && j.error.message) || `HTTP ${r.status}`;
      return;
    }
    state.hook = j;
    follow();
    session.render();
  }

  async function addConfig(e) {
    e.preventDefault();
    const id = taskId.value.trim();
    if (!id) return;
    state.lastTask = id;
    try {
      const cfg = await conn.createPushConfig(id, { url: state.hook.url, token: state.hook.token });
      status.textContent = `Push config ${cfg.id || cfg.pushNotificationConfig?.id || ''} added to task ${id}: its next events come here.`;
    } catch (err) {
      status.textContent = `CreateTaskPushNotificationConfig: ${err.message}`;
    }
  }

  const recent = session.chat.turns.filter((t) => t.task).map((t) => t.task.id).slice(-5).reverse();
  replace(root,
    h('h2', {}, 'Push notifications'),
    !session.config.push ? h('p', { class: 'error' }, 'This host does not send push notifications (started with --no-push).') : null,
    state.hook
      ? h('div', {},
        h('p', {}, 'Receiver: ', h('code', { id: 'hook-url' }, state.hook.url)),
        h('form', { class: 'row', onsubmit: addConfig }, h('label', { for: 'push-task' }, 'Notify this receiver about task '), taskId,
          h('button', { type: 'submit', id: 'add-push-config' }, 'Add push config')),
        recent.length ? h('p', { class: 'hint' }, 'Tasks of this conversation: ', recent.map((id) => h('button', { class: 'link', onclick: () => { taskId.value = id; } }, id))) : null)
      : h('button', { id: 'create-hook', onclick: createHook, disabled: !session.config.push }, 'Create a receiver for this session'),
    status,
    h('h3', {}, 'Deliveries'),
    list);
  // Deliveries keep coming while other views are shown; the push view shown draws them.
  state.redraw = draw;
  draw();
  if (state.hook) follow();
  return () => {
    state.redraw = null;
  };
}
