// The console: session (credentials, wire log, the agent in use), navigation, and the
// views of agents, card, conversation, tasks, wire, push and the host.

import { h, replace } from './dom.js';
import { WireLog, renderWire } from './wire.js';
import { Connection, defaultInterface, interfacesOf } from './a2a.js';
import { renderAgents, renderCard, loadAgent } from './agents.js';
import { renderChat } from './chat.js';
import { renderTasks, renderTask } from './tasks.js';
import { renderPush } from './push.js';
import { renderHost } from './host.js';
import { exportSession, importSession, sessionDocument } from './session.js';

const CREDENTIALS_KEY = 'a2a-inspector-credentials';

/** Everything of this browser tab's session. */
export const session = {
  config: { auth: { required: false, schemes: [] } },
  /** {kind: 'bearer' | 'apikey', value}: kept in this tab's sessionStorage only. */
  credentials: JSON.parse(sessionStorage.getItem(CREDENTIALS_KEY) || 'null'),
  wire: new WireLog(),
  /** Agents to choose from: the host's, and URLs typed in. */
  agents: [],
  /** The agent in use: {key, label, base, cardUrl, remote, card, check, credentials}. */
  agent: null,
  /** The interface in use: {url, binding, version}. */
  iface: null,
  /** The conversation: {contextId, pendingTaskId, turns}. */
  chat: { contextId: null, pendingTaskId: null, turns: [] },
  /** Events this console saw, by task id: [{at, response}]. */
  observed: new Map(),
  /** An imported session is only looked at. */
  imported: null,

  hostHeaders() {
    const c = this.credentials;
    if (!c || !c.value) return {};
    return c.kind === 'apikey' ? { 'X-API-Key': c.value } : { Authorization: `Bearer ${c.value}` };
  },

  connection() {
    if (!this.agent || !this.iface) return null;
    return new Connection(this, this.agent, this.iface);
  },

  observe(taskId, response) {
    if (!taskId) return;
    let list = this.observed.get(taskId);
    if (!list) this.observed.set(taskId, (list = []));
    list.push({ at: Date.now(), response });
    if (list.length > 10000) list.splice(0, 5000);
  },

  newConversation() {
    this.chat = { contextId: null, pendingTaskId: null, turns: [] };
  },
};

const VIEWS = [
  ['agents', 'Agents'],
  ['card', 'Card'],
  ['chat', 'Conversation'],
  ['tasks', 'Tasks'],
  ['wire', 'Wire'],
  ['push', 'Push'],
  ['host', 'Host'],
];

const main = document.getElementById('view');
const nav = document.getElementById('nav');
const agentLine = document.getElementById('agent-line');
let cleanup = null;

function route() {
  const hash = location.hash.replace(/^#\/?/, '') || 'agents';
  const [view, ...rest] = hash.split('/');
  return { view, arg: rest.map(decodeURIComponent).join('/') };
}

export function go(path) {
  if (location.hash === `#/${path}`) render();
  else location.hash = `#/${path}`;
}

function drawNav() {
  const { view } = route();
  replace(nav, VIEWS.map(([id, label]) => h('a', { href: `#/${id}`, class: view === id || (view === 'task' && id === 'tasks') ? 'active' : '', 'aria-current': view === id ? 'page' : false, dataset: { view: id } }, label)));
}

export function drawAgentLine() {
  const a = session.agent;
  if (!a) {
    replace(agentLine, h('span', { class: 'hint' }, 'No agent chosen'));
    return;
  }
  const ifaces = interfacesOf(a.card).filter((i) => ['JSONRPC', 'HTTP+JSON', 'GRPC'].includes(i.binding));
  const select = h('select', {
    id: 'interface', 'aria-label': 'Binding and protocol version',
    onchange: (e) => {
      const [binding, version] = e.target.value.split('|');
      session.iface = pickInterface(a.card, binding, version);
      render();
    },
  });
  const options = [];
  for (const i of ifaces) {
    options.push([i.binding, i.version]);
    // The JSON-RPC endpoint of a v1.0 agent of this project also answers v0.3 methods.
    if (i.binding === 'JSONRPC' && String(i.version).startsWith('1.') && !ifaces.some((j) => j.binding === 'JSONRPC' && String(j.version).startsWith('0.3'))) options.push(['JSONRPC', '0.3']);
  }
  for (const [b, v] of options) {
    select.append(h('option', { value: `${b}|${v}`, selected: session.iface && session.iface.binding === b && String(session.iface.version) === String(v) }, `${b} v${v}${b === 'GRPC' ? ' (through the host)' : ''}`));
  }
  replace(agentLine,
    h('strong', { id: 'agent-name' }, a.card ? a.card.name : a.label),
    h('span', { class: 'hint' }, a.remote ? ` ${a.base} (through the host)` : ` ${a.base}`),
    ' ',
    options.length ? select : h('span', { class: 'error' }, 'no interface this console speaks (JSON-RPC, HTTP+JSON or gRPC)'));
}

export function pickInterface(card, binding, version) {
  const all = interfacesOf(card);
  const exact = all.find((i) => i.binding === binding && String(i.version) === String(version));
  if (exact) return exact;
  const same = all.find((i) => i.binding === binding);
  return same ? { ...same, version } : defaultInterface(card);
}

async function render() {
  drawNav();
  drawAgentLine();
  if (cleanup) {
    cleanup();
    cleanup = null;
  }
  const { view, arg } = route();
  main.focus({ preventScroll: true });
  const needAgent = (fn) => {
    if (!session.agent) {
      replace(main, h('p', {}, 'Choose an agent first: ', h('a', { href: '#/agents' }, 'Agents'), '.'));
      return null;
    }
    return fn();
  };
  switch (view) {
    case 'agents': cleanup = await renderAgents(main, session); break;
    case 'card': cleanup = await needAgent(() => renderCard(main, session)); break;
    case 'chat': cleanup = await needAgent(() => renderChat(main, session)); break;
    case 'tasks': cleanup = await needAgent(() => renderTasks(main, session)); break;
    case 'task': cleanup = await needAgent(() => renderTask(main, session, arg)); break;
    case 'wire': cleanup = renderWire(main, session); break;
    case 'push': cleanup = await needAgent(() => renderPush(main, session)); break;
    case 'host': cleanup = await renderHost(main, session); break;
    default: replace(main, h('p', {}, 'No such view.'));
  }
}

/** The sign-in form: the credentials this host accepts, checked before anything is shown. */
function signIn(message) {
  const kinds = session.config.auth.schemes.map((s) => s.scheme);
  const hasKey = kinds.some((s) => s && s.apiKeySecurityScheme);
  const kind = h('select', { id: 'credential-kind', 'aria-label': 'Kind of credential' },
    h('option', { value: 'bearer' }, 'Bearer token (or JWT)'),
    hasKey ? h('option', { value: 'apikey' }, 'API key') : null);
  const value = h('input', { id: 'credential', type: 'password', autocomplete: 'off', required: true, 'aria-label': 'Credential' });
  const error = h('p', { class: 'error', id: 'sign-in-error', role: 'alert' }, message || '');
  replace(nav);
  replace(agentLine);
  replace(main,
    h('form', {
      class: 'sign-in', onsubmit: async (e) => {
        e.preventDefault();
        session.credentials = { kind: kind.value, value: value.value };
        const ok = await checkCredentials();
        if (ok) {
          sessionStorage.setItem(CREDENTIALS_KEY, JSON.stringify(session.credentials));
          start();
        } else {
          session.credentials = null;
          error.textContent = 'These credentials were refused by the host.';
          value.select();
        }
      },
    },
    h('h2', {}, 'Sign in'),
    h('p', {}, 'This host requires authentication. The console uses the credentials you give here for every call, as any client would, and keeps them in this tab only.'),
    h('label', { for: 'credential-kind' }, 'Kind'), kind,
    h('label', { for: 'credential' }, 'Credential'), value,
    h('button', { type: 'submit', id: 'sign-in' }, 'Sign in'),
    error));
  value.focus();
}

async function checkCredentials() {
  const r = await fetch('/inspector/api/whoami', { headers: session.hostHeaders() });
  if (!r.ok) return false;
  const who = await r.json();
  session.principal = who.principal;
  return true;
}

async function start() {
  document.getElementById('who').textContent = session.principal ? `signed in as ${session.principal}` : '';
  const r = await fetch('/agents', { headers: { Accept: 'application/json' } }).catch(() => null);
  if (r && r.ok) {
    const list = await r.json();
    session.agents = list.agents.map((a) => ({
      key: `host:${a.id}`, label: a.id, base: new URL(a.url, location.origin).href, cardUrl: new URL(a.card, location.origin).href, remote: false,
    }));
  }
  if (!session.agents.length) {
    // One agent served at the root (`a2a serve --agent NAME`).
    const root = await fetch('/.well-known/agent-card.json', { headers: { Accept: 'application/json' } }).catch(() => null);
    if (root && root.ok) {
      session.agents.push({ key: 'host:/', label: (await root.json()).name || 'the agent', base: location.origin, cardUrl: `${location.origin}/.well-known/agent-card.json`, remote: false });
    }
  }
  window.addEventListener('hashchange', render);
  const params = new URLSearchParams(location.search);
  const wanted = params.get('agent');
  if (wanted && !session.agent) {
    const known = session.agents.find((a) => a.label === wanted);
    if (known) await loadAgent(session, known).catch(() => {});
  }
  render();
}

async function boot() {
  const r = await fetch('/inspector/api/config');
  session.config = await r.json();
  document.getElementById('export').addEventListener('click', () => exportSession(session));
  document.getElementById('import').addEventListener('change', async (e) => {
    const file = e.target.files[0];
    if (file) {
      await importSession(session, await file.text());
      go('card');
    }
  });
  document.getElementById('sign-out').addEventListener('click', () => {
    sessionStorage.removeItem(CREDENTIALS_KEY);
    session.credentials = null;
    location.reload();
  });
  if (session.config.auth.required) {
    document.getElementById('sign-out').hidden = false;
    if (!session.credentials || !(await checkCredentials())) {
      signIn(session.credentials ? 'The saved credentials were refused.' : '');
      return;
    }
  }
  start();
}

// For the browser's developer console (and tests): the session and its export.
window.a2aInspector = { session, sessionDocument: () => sessionDocument(session) };

// The views reach these through the session (no module imports this one).
session.go = go;
session.render = render;
session.drawAgentLine = drawAgentLine;
session.pickInterface = pickInterface;

boot().catch((e) => replace(main, h('p', { class: 'error' }, `The console could not start: ${e.message}`)));
