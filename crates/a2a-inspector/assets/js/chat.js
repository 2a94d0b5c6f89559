// The conversation: text, files and JSON data sent to the agent; its answer shown for what it
// is (a Message, a Task, or a Task and its updates), streamed status and artifacts as they
// arrive (chunks reassembled), questions (INPUT_REQUIRED / AUTH_REQUIRED) answered in place in
// the same task, the context kept across turns. Stop following and Cancel are two acts:
// stopping leaves the task running; Cancel asks the agent to stop it.

import { h, replace, stateBadge, stateLabel, clock, frameBatched, TERMINAL, INTERRUPTED } from './dom.js';
import { newId } from './a2a.js';
import { ArtifactAssembler, renderArtifact, renderMessage, textOf } from './parts.js';

function fileToPart(file) {
  return new Promise((resolve, reject) => {
    const reader = new FileReader();
    reader.onload = () => {
      const b64 = String(reader.result).split(',', 2)[1] || '';
      resolve({ raw: b64, mediaType: file.type || 'application/octet-stream', filename: file.name });
    };
    reader.onerror = () => reject(reader.error);
    reader.readAsDataURL(file);
  });
}

/** A turn: what was sent, and the agent's answer as it comes. */
class Turn {
  constructor(message, mode) {
    this.message = message;
    this.mode = mode;
    this.shape = null; // 'Message' | 'Task' | 'Task + updates'
    this.reply = null; // a Message answer
    this.task = null; // {id, contextId, status, history}
    this.artifacts = new ArtifactAssembler();
    this.statuses = []; // {state, at, text}
    this.following = false;
    this.stopped = false; // by the user: the task goes on
    this.controller = null;
    this.error = null;
    this.events = 0;
  }

  state() {
    return this.task && this.task.status ? this.task.status.state : null;
  }

  /** Tells the view showing this turn, if any, to draw it again. */
  changed() {
    if (this.onchange) this.onchange();
  }

  open() {
    const s = this.state();
    return s && !TERMINAL.includes(s) && !INTERRUPTED.includes(s);
  }

  /** Applies one StreamResponse. */
  apply(r) {
    this.events++;
    if (r.message) {
      this.reply = r.message;
      this.shape = this.shape || 'Message';
      return;
    }
    if (r.task) {
      this.task = { ...r.task };
      this.artifacts = new ArtifactAssembler(r.task.artifacts || []);
      this.noteStatus(r.task.status);
      return;
    }
    if (r.statusUpdate) {
      const u = r.statusUpdate;
      if (!this.task) this.task = { id: u.taskId, contextId: u.contextId };
      this.task.status = u.status;
      this.noteStatus(u.status);
      return;
    }
    if (r.artifactUpdate) {
      const u = r.artifactUpdate;
      if (!this.task) this.task = { id: u.taskId, contextId: u.contextId };
      this.artifacts.apply(u);
    }
  }

  noteStatus(status) {
    if (!status) return;
    const last = this.statuses[this.statuses.length - 1];
    const text = status.message ? textOf(status.message) : '';
    if (last && last.state === status.state && last.text === text) return;
    this.statuses.push({ state: status.state, at: status.timestamp ? Date.parse(status.timestamp) : Date.now(), text });
    if (this.statuses.length > 1000) this.statuses.splice(0, 500);
  }
}

/** A turn of an imported session, as it was recorded. */
function importedTurn(rec) {
  const state = rec.task && rec.task.status && rec.task.status.state;
  return [
    h('div', { class: 'you' }, h('span', { class: 'who' }, 'You'), rec.message ? renderMessage(rec.message) : null),
    h('div', { class: 'agent', dataset: { shape: rec.shape || '', state: stateLabel(state) } },
      h('div', { class: 'who' }, 'Agent', rec.shape ? ` · ${rec.shape}` : '',
        rec.task ? [' · task ', h('code', { class: 'task-id' }, rec.task.id), ' ', stateBadge(state)] : null),
      rec.reply ? renderMessage(rec.reply) : null,
      (rec.statuses || []).length
        ? h('ol', { class: 'timeline' }, rec.statuses.slice(-50).map((st) => h('li', {}, h('span', { class: 'wire-time' }, clock(st.at)), ' ', stateBadge(st.state), st.text ? ` ${st.text}` : '')))
        : null,
      ((rec.task && rec.task.artifacts) || []).map((a) => renderArtifact(a)),
      rec.error ? h('p', { class: 'error' }, rec.error) : null),
  ];
}

export function renderChat(root, session) {
  const chat = session.chat;
  const conn = session.connection();
  if (!conn) {
    replace(root, h('p', { class: 'error' }, 'This agent offers no interface this console speaks.'));
    return null;
  }
  const card = session.agent.card || {};
  const streams = !!(card.capabilities && card.capabilities.streaming);
  const transcript = h('ol', { class: 'transcript', id: 'transcript', 'aria-live': 'polite' });
  const context = h('span', { id: 'context-id', class: 'hint' });
  const text = h('textarea', { id: 'message-text', rows: 3, 'aria-label': 'Message', placeholder: 'Write to the agent…' });
  const files = h('input', { id: 'message-files', type: 'file', multiple: true, 'aria-label': 'Files to send' });
  const data = h('textarea', { id: 'message-data', rows: 3, 'aria-label': 'JSON data to send', placeholder: '{"optional": "JSON data part"}' });
  const mode = h('select', { id: 'send-mode', 'aria-label': 'How to send' },
    h('option', { value: 'stream', selected: streams, disabled: !streams }, 'Stream (SendStreamingMessage)'),
    h('option', { value: 'send', selected: !streams }, 'Wait for the answer (SendMessage)'),
    h('option', { value: 'poll' }, 'Return at once, then poll (returnImmediately + GetTask)'));
  const label = h('label', { for: 'message-text', id: 'composer-label' });
  const error = h('p', { class: 'error', role: 'alert' });
  const sendButton = h('button', { type: 'submit', id: 'send' }, 'Send');

  const drawLabel = () => {
    label.textContent = chat.pendingTaskId ? `Your answer (continues task ${chat.pendingTaskId})` : 'Message';
    context.textContent = chat.contextId ? `context ${chat.contextId}` : 'a new conversation';
  };

  const blocks = new Map();
  const drawTurn = (turn) => {
    let li = blocks.get(turn);
    const fresh = !li;
    if (!li) {
      li = h('li', { class: 'turn' });
      blocks.set(turn, li);
      transcript.append(li);
    }
    replace(li, turnView(turn));
    if (fresh && turn === chat.turns[chat.turns.length - 1]) li.scrollIntoView({ block: 'nearest' });
  };
  // A turn still streaming when the view is left goes on; the view shown draws it.
  const attach = (turn) => {
    turn.onchange = frameBatched(() => drawTurn(turn));
  };
  const later = (turn) => turn.changed();

  function turnView(turn) {
    const t = turn.task;
    const state = turn.state();
    const actions = [];
    if (turn.superseded) {
      // A later turn continued this task: its actions are there.
    } else if (t && turn.following) {
      actions.push(h('button', { class: 'stop', onclick: () => stopFollowing(turn) }, 'Stop following'));
    }
    if (t && state && !TERMINAL.includes(state) && !turn.superseded) {
      actions.push(h('button', { class: 'cancel danger', onclick: () => cancel(turn) }, 'Cancel task'));
      if (!turn.following && turn.stopped && streams) actions.push(h('button', { class: 'resubscribe', onclick: () => follow(turn) }, 'Follow again (SubscribeToTask)'));
    }
    const question = t && INTERRUPTED.includes(state) && t.status && t.status.message ? textOf(t.status.message) : null;
    return [
      h('div', { class: 'you' }, h('span', { class: 'who' }, 'You'), renderMessage(turn.message)),
      h('div', { class: 'agent', dataset: { shape: turn.shape || '', state: stateLabel(state) } },
        h('div', { class: 'who' }, 'Agent',
          turn.shape ? h('span', { class: 'shape', title: 'What the agent answered with' }, ` · ${turn.shape}`) : null,
          t ? [' · task ', h('code', { class: 'task-id' }, t.id), ' ', stateBadge(state)] : null,
          turn.following ? h('span', { class: 'hint following' }, ' · following…') : null),
        turn.reply ? renderMessage(turn.reply) : null,
        turn.superseded ? h('p', { class: 'hint' }, 'Continued in a later turn.') : null,
        turn.stopped && state && !TERMINAL.includes(state) && !INTERRUPTED.includes(state)
          ? h('p', { class: 'note not-following', role: 'status' }, `Not following any more: the task keeps running on the agent (last seen ${stateLabel(state)}).`)
          : null,
        turn.statuses.length
          ? h('ol', { class: 'timeline' }, turn.statuses.slice(-50).map((s) => h('li', {}, h('span', { class: 'wire-time' }, clock(s.at)), ' ', stateBadge(s.state), s.text ? ` ${s.text}` : '')))
          : null,
        turn.artifacts.list().map(({ artifact, open }) => renderArtifact(artifact, { open })),
        question ? h('p', { class: 'question' }, h('strong', {}, state === 'TASK_STATE_AUTH_REQUIRED' ? 'The agent needs authentication: ' : 'The agent asks: '), question) : null,
        turn.error ? h('p', { class: 'error' }, turn.error) : null,
        actions.length ? h('div', { class: 'row actions' }, actions) : null),
    ];
  }

  function settle(turn) {
    const t = turn.task;
    if (t) {
      for (const earlier of chat.turns) {
        if (earlier !== turn && earlier.task && earlier.task.id === t.id && !earlier.superseded && chat.turns.indexOf(earlier) < chat.turns.indexOf(turn)) {
          earlier.superseded = true;
          earlier.changed();
        }
      }
    }
    if (t && t.contextId) chat.contextId = t.contextId;
    if (turn.reply && turn.reply.contextId) chat.contextId = turn.reply.contextId;
    const state = turn.state();
    chat.pendingTaskId = t && INTERRUPTED.includes(state) ? t.id : TERMINAL.includes(state) || turn.reply ? null : chat.pendingTaskId;
    if (t && TERMINAL.includes(state) && chat.pendingTaskId === t.id) chat.pendingTaskId = null;
    if (chat.drawLabel) chat.drawLabel();
  }

  async function consume(turn, events) {
    turn.following = true;
    later(turn);
    try {
      for await (const ev of events) {
        turn.apply(ev.response);
        if (turn.task) session.observe(turn.task.id, ev.response);
        if (!turn.shape) turn.shape = ev.response.message ? 'Message' : 'Task + updates';
        if (turn.task && turn.task.contextId) chat.contextId = turn.task.contextId;
        later(turn);
      }
    } catch (e) {
      turn.error = e.message;
    } finally {
      turn.following = false;
      settle(turn);
      later(turn);
    }
  }

  async function follow(turn) {
    turn.controller = new AbortController();
    turn.stopped = false;
    turn.error = null;
    await consume(turn, conn.subscribe(turn.task.id, turn.controller.signal));
  }

  function stopFollowing(turn) {
    turn.stopped = true;
    if (turn.controller) turn.controller.abort();
    turn.following = false;
    later(turn);
  }

  async function cancel(turn) {
    try {
      const task = await conn.cancelTask(turn.task.id);
      turn.apply({ task });
      session.observe(task.id, { task });
    } catch (e) {
      turn.error = `Cancel: ${e.message}`;
    }
    settle(turn);
    later(turn);
  }

  /** GetTask every second while the task runs, as the events a stream would bring. */
  async function* polled(turn, signal) {
    while (turn.open() && !signal.aborted) {
      await new Promise((r) => setTimeout(r, 1000));
      if (signal.aborted) return;
      yield { response: { task: await conn.getTask(turn.task.id) } };
    }
  }

  async function poll(turn) {
    turn.controller = new AbortController();
    await consume(turn, polled(turn, turn.controller.signal));
  }

  async function send(e) {
    e.preventDefault();
    error.textContent = '';
    const parts = [];
    if (text.value.trim()) parts.push({ text: text.value });
    try {
      for (const f of files.files) parts.push(await fileToPart(f));
      if (data.value.trim()) parts.push({ data: JSON.parse(data.value) });
    } catch (err) {
      error.textContent = `The JSON data is not JSON: ${err.message}`;
      return;
    }
    if (!parts.length) {
      error.textContent = 'Write something, or attach a file or data.';
      return;
    }
    const message = { role: 'ROLE_USER', messageId: newId(), parts };
    if (chat.contextId) message.contextId = chat.contextId;
    if (chat.pendingTaskId) message.taskId = chat.pendingTaskId;
    const turn = new Turn(message, mode.value);
    attach(turn);
    chat.turns.push(turn);
    text.value = '';
    files.value = '';
    data.value = '';
    drawTurn(turn);
    sendButton.disabled = true;
    try {
      if (turn.mode === 'stream') {
        turn.controller = new AbortController();
        const run = consume(turn, conn.streamMessage(message, {}, turn.controller.signal));
        sendButton.disabled = false;
        await run;
      } else {
        const result = await conn.send(message, turn.mode === 'poll' ? { returnImmediately: true } : {});
        turn.shape = result.message ? 'Message' : 'Task';
        turn.apply(result);
        if (turn.task) session.observe(turn.task.id, result);
        settle(turn);
        later(turn);
        if (turn.mode === 'poll' && turn.open()) await poll(turn);
      }
    } catch (err) {
      turn.error = err.message;
      later(turn);
    } finally {
      sendButton.disabled = false;
      settle(turn);
    }
  }

  const composer = h('form', { class: 'composer', id: 'composer', onsubmit: send },
    label, text,
    h('div', { class: 'row' },
      h('label', { for: 'message-files' }, 'Files '), files,
      h('label', { for: 'send-mode' }, ' Send as '), mode),
    h('details', {}, h('summary', {}, 'JSON data'), data),
    h('div', { class: 'row' }, sendButton), error);
  text.addEventListener('keydown', (e) => {
    if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) composer.requestSubmit();
  });

  replace(root,
    h('div', { class: 'toolbar' }, h('h2', {}, 'Conversation'), context,
      h('button', { id: 'new-conversation', onclick: () => { session.newConversation(); session.render(); } }, 'New conversation')),
    session.imported ? h('p', { class: 'hint' }, 'An imported session: its conversation is shown as recorded.') : null,
    transcript, session.imported ? null : composer);
  for (const turn of chat.turns) {
    if (turn instanceof Turn) {
      attach(turn);
      drawTurn(turn);
    } else transcript.append(h('li', { class: 'turn imported' }, importedTurn(turn)));
  }
  chat.drawLabel = drawLabel;
  drawLabel();
  text.focus();
  // Leaving the view does not stop what is being followed: the turns keep their state.
  return () => {
    for (const turn of chat.turns) if (turn instanceof Turn) turn.onchange = null;
    blocks.clear();
  };
}

