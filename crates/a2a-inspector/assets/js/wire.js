// The wire: every request of the session, its answer and each SSE event, with headers
// (secrets masked), status, timings and sizes; each can be copied as a curl command or an
// `a2a` command.

import { h, replace, clock, size, copyText, frameBatched } from './dom.js';

const SECRET_HEADERS = ['authorization', 'x-api-key', 'x-a2a-notification-token', 'proxy-authorization', 'cookie', 'set-cookie'];

/** A request body with push credentials masked (a push config's token and credentials). */
function maskBody(body) {
  if (!body || !/"(token|credentials)"/.test(body)) return body;
  try {
    const masked = JSON.parse(body, (k, v) => (typeof v === 'string' && (k === 'token' || k === 'credentials') ? mask(v) : v));
    return JSON.stringify(masked);
  } catch {
    return body;
  }
}

/** The session's log of calls. */
export class WireLog {
  constructor() {
    this.entries = [];
    this.listeners = new Set();
    this.next = 1;
  }

  /** Starts an entry; returns it (mutate it, then call `changed`). */
  start(fields) {
    const entry = { id: this.next++, started: Date.now(), events: [], eventBytes: 0, ...fields };
    this.entries.push(entry);
    // A long session keeps its last 2 000 calls.
    if (this.entries.length > 2000) this.entries.shift();
    this.changed(entry);
    return entry;
  }

  changed(entry) {
    for (const l of this.listeners) l(entry);
  }

  subscribe(fn) {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  clear() {
    this.entries = [];
    this.changed(null);
  }

  /** Entries with secrets masked, for export. */
  exported() {
    return this.entries.map((e) => ({
      ...e,
      request: e.request && { ...e.request, headers: maskHeaders(e.request.headers), body: maskBody(e.request.body) },
      response: e.response && { ...e.response, headers: maskHeaders(e.response.headers) },
    }));
  }
}

/** Headers with secret values masked: `Bearer s3cr…`. */
export function maskHeaders(headers = {}) {
  const out = {};
  for (const [k, v] of Object.entries(headers)) {
    out[k] = SECRET_HEADERS.includes(k.toLowerCase()) ? mask(String(v)) : v;
  }
  return out;
}

function mask(v) {
  const space = v.indexOf(' ');
  const scheme = space > 0 && space < 10 ? v.slice(0, space + 1) : '';
  const secret = v.slice(scheme.length);
  return `${scheme}${secret.slice(0, 3)}… (masked)`;
}

/** A string quoted for a POSIX shell. */
export function shellQuote(s) {
  if (/^[A-Za-z0-9_@%+=:,./-]+$/.test(s)) return s;
  return `'${String(s).replace(/'/g, `'\\''`)}'`;
}

/**
 * The entry's request as a curl command that works when run: secrets are not written out
 * but taken from $A2A_TOKEN / $A2A_API_KEY, as the `a2a` command does.
 */
export function curlFor(entry) {
  const r = entry.request;
  if (entry.via === 'grpc') return `# a gRPC call (made by the host): run it with the a2a command below`;
  const parts = ['curl', '-sS'];
  if (entry.streaming) parts.push('-N');
  if (r.method !== 'GET') parts.push('-X', r.method);
  parts.push(shellQuote(r.url));
  for (const [k, v] of Object.entries(r.headers || {})) {
    const lower = k.toLowerCase();
    if (lower === 'authorization') parts.push('-H', `"${k}: Bearer $A2A_TOKEN"`);
    else if (lower === 'x-api-key') parts.push('-H', `"${k}: $A2A_API_KEY"`);
    else if (lower === 'traceparent') continue;
    else parts.push('-H', shellQuote(`${k}: ${v}`));
  }
  if (r.body) parts.push('--data-binary', shellQuote(r.body));
  return parts.join(' ');
}

/** The entry as an `a2a` command, when one does the same. */
export function a2aCommandFor(entry) {
  if (!entry.a2a) return null;
  return ['a2a', ...entry.a2a].map(shellQuote).join(' ');
}

/** The pane: one row per call; a row opens its details. */
export function renderWire(root, session) {
  const log = session.wire;
  const list = h('ol', { class: 'wire-list', 'aria-label': 'Calls of this session' });
  const detail = h('section', { class: 'wire-detail', 'aria-live': 'polite' });
  let selected = null;
  const row = (e) =>
    h(
      'li',
      {},
      h(
        'button',
        {
          class: `wire-row${e === selected ? ' selected' : ''}${e.error || (e.response && e.response.status >= 400) ? ' failed' : ''}`,
          dataset: { wireId: e.id },
          onclick: () => {
            selected = e;
            draw();
          },
        },
        h('span', { class: 'wire-time' }, clock(e.started)),
        h('span', { class: 'wire-op' }, e.op),
        h('span', { class: 'wire-status' }, e.error ? 'error' : e.response ? String(e.response.status) : '…'),
        h('span', { class: 'wire-url' }, e.via === 'relay' || e.via === 'grpc' ? `${e.request.url} (through the host)` : e.request.url),
        h('span', { class: 'wire-timing' }, timing(e)),
      ),
    );
  function draw() {
    replace(list, log.entries.length ? log.entries.slice(-300).map(row) : h('li', { class: 'empty' }, 'No calls yet.'));
    if (selected) replace(detail, details(selected, session));
    else replace(detail, h('p', { class: 'hint' }, 'Choose a call to see its request, answer and events.'));
  }
  // Many changes (a stream's events), one redraw a frame.
  const scheduled = frameBatched(() => list.isConnected && draw());
  const unsubscribe = log.subscribe(scheduled);
  replace(
    root,
    h('div', { class: 'toolbar' }, h('h2', {}, 'Wire'), h('button', { onclick: () => { log.clear(); selected = null; draw(); } }, 'Clear')),
    h('div', { class: 'wire' }, list, detail),
  );
  draw();
  return unsubscribe;
}

function timing(e) {
  const bits = [];
  if (e.firstEventMs !== undefined) bits.push(`first event ${e.firstEventMs} ms`);
  if (e.totalMs !== undefined) bits.push(`${e.totalMs} ms`);
  const bytes = (e.response && e.response.size) || 0;
  if (bytes || e.eventBytes) bits.push(size(bytes + e.eventBytes));
  if (e.events.length) bits.push(`${e.events.length} events`);
  return bits.join(' · ');
}

function headerList(headers) {
  return h('dl', { class: 'headers' }, Object.entries(maskHeaders(headers || {})).map(([k, v]) => [h('dt', {}, k), h('dd', {}, String(v))]));
}

function pretty(body) {
  if (body === null || body === undefined || body === '') return '(empty)';
  if (body.length > 200_000) return `${body.slice(0, 200_000)}\n… (${size(body.length)} in all)`;
  try {
    return JSON.stringify(JSON.parse(body), null, 2);
  } catch {
    return body;
  }
}

function details(e, session) {
  const curl = curlFor(e);
  const a2a = a2aCommandFor(e);
  const curlBox = h('pre', { class: 'command', id: 'wire-curl', 'aria-label': 'curl command' }, curl);
  const a2aBox = a2a ? h('pre', { class: 'command', id: 'wire-a2a', 'aria-label': 'a2a command' }, a2a) : null;
  const trace = e.traceId
    ? h(
        'p',
        {},
        'Trace ',
        session.config.traceUrl
          ? h('a', { href: session.config.traceUrl.replace('{trace_id}', e.traceId), target: '_blank', rel: 'noopener' }, e.traceId)
          : h('code', {}, e.traceId),
      )
    : null;
  const events = e.events.length
    ? h(
        'details',
        { open: e.events.length <= 50 },
        h('summary', {}, `${e.events.length} events`),
        h(
          'ol',
          { class: 'events' },
          e.events.slice(-500).map((ev) => h('li', {}, h('span', { class: 'wire-time' }, `+${ev.t} ms`), h('pre', {}, pretty(ev.data)))),
        ),
        e.events.length > 500 ? h('p', { class: 'hint' }, `The last 500 of ${e.events.length} are shown.`) : null,
      )
    : null;
  return [
    h('h3', {}, `${e.op} — ${e.request.method} ${e.request.url}`),
    e.via === 'relay' ? h('p', { class: 'hint' }, 'Sent through the host (this browser cannot call the agent directly).') : null,
    e.via === 'grpc' ? h('p', { class: 'hint' }, 'A gRPC call, made by the host for this browser (which cannot speak gRPC); the request and answer are shown as ProtoJSON.') : null,
    h('p', {}, `${e.binding || ''} ${e.version ? 'v' + e.version : ''} · started ${clock(e.started)} · ${timing(e) || 'waiting'}`),
    trace,
    e.error ? h('p', { class: 'error' }, e.error) : null,
    h('h4', {}, 'Request headers'),
    headerList(e.request.headers),
    h('h4', {}, 'Request body'),
    h('pre', { class: 'body' }, pretty(e.request.body)),
    e.response ? [h('h4', {}, `Answer: HTTP ${e.response.status}`), headerList(e.response.headers)] : null,
    e.response && e.response.body !== undefined && !e.streaming ? h('pre', { class: 'body' }, pretty(e.response.body)) : null,
    events,
    h('h4', {}, 'As a command'),
    h('div', { class: 'row' }, h('button', { onclick: () => copyText(curl, curlBox) }, 'Copy as curl'), a2a ? h('button', { onclick: () => copyText(a2a, a2aBox) }, 'Copy as a2a command') : null),
    curlBox,
    a2aBox,
    e.request.headers && Object.keys(e.request.headers).some((k) => ['authorization', 'x-api-key'].includes(k.toLowerCase()))
      ? h('p', { class: 'hint' }, 'The credentials are read from $A2A_TOKEN / $A2A_API_KEY: set them before running the command.')
      : null,
  ];
}
