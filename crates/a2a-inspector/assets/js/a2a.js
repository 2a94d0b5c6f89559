// A2A from the browser: JSON-RPC (v1.0 and v0.3) and HTTP+JSON (v1.0), every call recorded
// on the wire. Agents of this host are called directly (same origin); others through the
// host's relay. Whatever the wire speaks, callers get v1.0 shapes (ProtoJSON).

import { sseEvents } from './sse.js';

/** An A2A error: the agent's code and message, or the transport's. */
export class A2AError extends Error {
  constructor(message, { code, status, data } = {}) {
    super(message);
    this.code = code;
    this.status = status;
    this.data = data;
  }
}

function hex(bytes) {
  return Array.from(crypto.getRandomValues(new Uint8Array(bytes)), (b) => b.toString(16).padStart(2, '0')).join('');
}

export function newId() {
  return crypto.randomUUID ? crypto.randomUUID() : `${hex(4)}-${hex(2)}-${hex(2)}-${hex(2)}-${hex(6)}`;
}

/** The interfaces a card offers: [{url, binding, version}]. */
export function interfacesOf(card) {
  if (!card) return [];
  if (Array.isArray(card.supportedInterfaces) && card.supportedInterfaces.length) {
    return card.supportedInterfaces.map((i) => ({ url: i.url, binding: i.protocolBinding, version: i.protocolVersion || '1.0', tenant: i.tenant }));
  }
  // A v0.3 card: `url` with `preferredTransport`, and `additionalInterfaces`.
  const out = [];
  if (card.url) out.push({ url: card.url, binding: card.preferredTransport || 'JSONRPC', version: '0.3' });
  for (const i of card.additionalInterfaces || []) out.push({ url: i.url, binding: i.transport, version: '0.3' });
  return out;
}

/**
 * What the client library would pick: JSON-RPC v1.0, then gRPC v1.0 (through the host),
 * then HTTP+JSON v1.0, then JSON-RPC v0.3.
 */
export function defaultInterface(card) {
  const all = interfacesOf(card);
  const find = (b, v) => all.find((i) => i.binding === b && String(i.version).startsWith(v));
  return find('JSONRPC', '1.0') || find('GRPC', '1.0') || find('HTTP+JSON', '1.0') || find('JSONRPC', '0.3') || all[0] || null;
}

// ---- v0.3 <-> v1.0 shapes -----------------------------------------------------------

const V03_STATES = {
  submitted: 'TASK_STATE_SUBMITTED', working: 'TASK_STATE_WORKING', completed: 'TASK_STATE_COMPLETED',
  failed: 'TASK_STATE_FAILED', canceled: 'TASK_STATE_CANCELED', rejected: 'TASK_STATE_REJECTED',
  'input-required': 'TASK_STATE_INPUT_REQUIRED', 'auth-required': 'TASK_STATE_AUTH_REQUIRED', unknown: 'TASK_STATE_UNSPECIFIED',
};

function partFrom03(p) {
  const base = { metadata: p.metadata };
  if (p.kind === 'text' || p.text !== undefined) return { ...base, text: p.text };
  if (p.kind === 'data') return { ...base, data: p.data };
  if (p.kind === 'file' && p.file) {
    const f = p.file;
    return f.bytes !== undefined
      ? { ...base, raw: f.bytes, mediaType: f.mimeType, filename: f.name }
      : { ...base, url: f.uri, mediaType: f.mimeType, filename: f.name };
  }
  return p;
}

function partTo03(p) {
  if (p.text !== undefined) return { kind: 'text', text: p.text };
  if (p.data !== undefined) return { kind: 'data', data: p.data };
  if (p.raw !== undefined) return { kind: 'file', file: { bytes: p.raw, mimeType: p.mediaType, name: p.filename } };
  if (p.url !== undefined) return { kind: 'file', file: { uri: p.url, mimeType: p.mediaType, name: p.filename } };
  return p;
}

function messageFrom03(m) {
  if (!m) return m;
  return { ...m, kind: undefined, role: m.role === 'agent' ? 'ROLE_AGENT' : m.role === 'user' ? 'ROLE_USER' : m.role, parts: (m.parts || []).map(partFrom03) };
}

function messageTo03(m) {
  return { kind: 'message', messageId: m.messageId, role: 'user', parts: m.parts.map(partTo03), contextId: m.contextId, taskId: m.taskId, metadata: m.metadata };
}

function statusFrom03(s) {
  return s && { ...s, state: V03_STATES[s.state] || s.state, message: messageFrom03(s.message) };
}

function artifactFrom03(a) {
  return a && { ...a, parts: (a.parts || []).map(partFrom03) };
}

function taskFrom03(t) {
  return { id: t.id, contextId: t.contextId, status: statusFrom03(t.status), artifacts: (t.artifacts || []).map(artifactFrom03), history: (t.history || []).map(messageFrom03), metadata: t.metadata };
}

/** A v0.3 result or event as a v1.0 StreamResponse ({task} | {message} | {statusUpdate} | {artifactUpdate}). */
export function responseFrom03(r) {
  switch (r && r.kind) {
    case 'task': return { task: taskFrom03(r) };
    case 'message': return { message: messageFrom03(r) };
    case 'status-update': return { statusUpdate: { taskId: r.taskId, contextId: r.contextId, status: statusFrom03(r.status), final: r.final } };
    case 'artifact-update': return { artifactUpdate: { taskId: r.taskId, contextId: r.contextId, artifact: artifactFrom03(r.artifact), append: r.append, lastChunk: r.lastChunk } };
    default: return r;
  }
}

const V1_METHODS = {
  send: 'SendMessage', stream: 'SendStreamingMessage', get: 'GetTask', list: 'ListTasks', cancel: 'CancelTask',
  subscribe: 'SubscribeToTask', pushCreate: 'CreateTaskPushNotificationConfig', extendedCard: 'GetExtendedAgentCard',
};
const V03_METHODS = {
  send: 'message/send', stream: 'message/stream', get: 'tasks/get', cancel: 'tasks/cancel', subscribe: 'tasks/resubscribe',
  pushCreate: 'tasks/pushNotificationConfig/set', extendedCard: 'agent/getAuthenticatedExtendedCard',
};

/**
 * One agent as the console talks to it. `agent`: {url (its card's URL or base), card,
 * remote (through the relay), headers (its own credentials)}; `session`: credentials for
 * the host, the wire log, the choice of binding and version.
 */
export class Connection {
  constructor(session, agent, iface) {
    this.session = session;
    this.agent = agent;
    this.iface = iface; // {url, binding, version}
    this.rpcId = 1;
  }

  get v03() {
    return String(this.iface.version).startsWith('0.3');
  }

  get rest() {
    return this.iface.binding === 'HTTP+JSON';
  }

  get grpc() {
    return this.iface.binding === 'GRPC';
  }

  /** Headers for the agent: its own credentials, else the host's for agents of this host. */
  agentHeaders() {
    const h = {};
    const creds = this.agent.remote ? this.agent.credentials : this.session.credentials;
    if (creds && creds.value) {
      if (creds.kind === 'apikey') h['X-API-Key'] = creds.value;
      else h.Authorization = `Bearer ${creds.value}`;
    }
    return h;
  }

  cliArgs() {
    return ['--binding', this.grpc ? 'grpc' : this.rest ? 'rest' : 'jsonrpc', '--protocol', this.v03 ? '0.3' : '1.0'];
  }

  /** A gRPC call made by the host for the browser: recorded as the call it is. */
  async grpcExchange(kind, params, { streaming, signal, a2a }) {
    const headers = this.agentHeaders();
    const body = JSON.stringify({ target: this.iface.url, tenant: this.iface.tenant, op: kind, params });
    const entry = this.session.wire.start({
      op: V1_METHODS[kind], binding: 'GRPC', version: '1.0', via: 'grpc', streaming: !!streaming, a2a,
      request: { method: 'gRPC', url: `${this.iface.url} lf.a2a.v1.A2AService/${V1_METHODS[kind]}${this.iface.tenant ? ` (tenant ${this.iface.tenant})` : ''}`, headers, body: JSON.stringify(params) },
    });
    const resp = await this.recordedFetch(entry, 'the host could not make the gRPC call', true, () => fetch('/inspector/api/grpc', {
      method: 'POST',
      headers: { ...this.session.hostHeaders(), 'Content-Type': 'application/json', 'X-Relay-Headers': JSON.stringify(headers) },
      body,
      signal,
    }));
    return { resp, entry };
  }

  /**
   * Runs `send` (a fetch) for `entry`, recording the answer's status and headers (the
   * target's, when the host relayed it) and what failed: the fetch itself, or the host's
   * call for the browser (`X-Relay-Error`, or with `hostCall` any status but 2xx).
   */
  async recordedFetch(entry, failure, hostCall, send) {
    entry.t0 = performance.now();
    const fail = (message, extra) => {
      entry.error = message;
      entry.totalMs = Math.round(performance.now() - entry.t0);
      this.session.wire.changed(entry);
      throw new A2AError(message, extra);
    };
    let resp;
    try {
      resp = await send();
    } catch (e) {
      fail(e.name === 'AbortError' ? 'stopped by you' : `no answer: ${e.message}`);
    }
    const headers = {};
    const relayed = resp.headers.get('x-relay-headers');
    if (relayed) Object.assign(headers, JSON.parse(relayed));
    else resp.headers.forEach((v, k) => { headers[k] = v; });
    entry.response = { status: resp.status, headers, size: 0 };
    this.session.wire.changed(entry);
    if (resp.headers.get('x-relay-error') || (hostCall && !resp.ok)) {
      const j = await resp.json().catch(() => ({}));
      fail(`${failure}: ${(j.error && j.error.message) || resp.status}`, { status: resp.status });
    }
    return resp;
  }

  /** One HTTP exchange, recorded. Returns {resp, entry} (resp's body not read yet). */
  async exchange({ op, method, url, body, streaming, signal, a2a }) {
    const headers = { ...this.agentHeaders() };
    if (body !== undefined) headers['Content-Type'] = 'application/json';
    if (!this.v03) headers['A2A-Version'] = '1.0';
    if (streaming) headers.Accept = 'text/event-stream';
    const traceId = hex(16);
    headers.traceparent = `00-${traceId}-${hex(8)}-01`;
    const text = body === undefined ? undefined : JSON.stringify(body);
    const entry = this.session.wire.start({
      op, binding: this.iface.binding, version: this.iface.version, via: this.agent.remote ? 'relay' : 'direct',
      streaming: !!streaming, traceId, a2a,
      request: { method, url, headers, body: text },
    });
    const resp = await this.recordedFetch(entry, 'the host could not relay', false, () => {
      if (!this.agent.remote) return fetch(url, { method, headers, body: text, signal });
      const relayHeaders = { ...this.session.hostHeaders(), 'X-Relay-Url': url, 'X-Relay-Method': method, 'X-Relay-Headers': JSON.stringify(headers) };
      return fetch('/inspector/api/relay', { method: 'POST', headers: relayHeaders, body: text, signal });
    });
    return { resp, entry };
  }

  /** A request/response call; the v1.0-shaped result. */
  async call(kind, params, { rest, a2a } = {}) {
    if (this.grpc) {
      const { resp, entry } = await this.grpcExchange(kind, params, { a2a });
      const text = await resp.text();
      entry.response.body = text;
      entry.response.size = text.length;
      entry.totalMs = Math.round(performance.now() - entry.t0);
      const json = JSON.parse(text);
      if (json && json.error) {
        entry.error = `${json.error.message} (${json.error.code})`;
        this.session.wire.changed(entry);
        throw new A2AError(entry.error, { code: json.error.code });
      }
      this.session.wire.changed(entry);
      return json;
    }
    let url, method, body;
    if (this.rest) {
      ({ url, method, body } = rest);
    } else {
      const methods = this.v03 ? V03_METHODS : V1_METHODS;
      if (!methods[kind]) throw new A2AError(`${V1_METHODS[kind]} is not part of A2A v${this.iface.version}`);
      url = this.iface.url;
      method = 'POST';
      body = { jsonrpc: '2.0', id: this.rpcId++, method: methods[kind], params };
    }
    const { resp, entry } = await this.exchange({ op: V1_METHODS[kind], method, url, body, a2a });
    const text = await resp.text();
    entry.response.body = text;
    entry.response.size = text.length;
    entry.totalMs = Math.round(performance.now() - entry.t0);
    let json = null;
    try { json = text ? JSON.parse(text) : null; } catch { /* not JSON */ }
    const fail = (msg, extra) => {
      entry.error = msg;
      this.session.wire.changed(entry);
      throw new A2AError(msg, extra);
    };
    if (this.rest) {
      if (!resp.ok) {
        const err = (json && json.error) || {};
        fail(`${err.status || 'HTTP ' + resp.status}: ${err.message || text.slice(0, 300)}`, { status: resp.status, code: err.code });
      }
      this.session.wire.changed(entry);
      return json;
    }
    if (!json) fail(`HTTP ${resp.status}: ${text.slice(0, 300) || 'an empty answer'}`, { status: resp.status });
    if (json.error) fail(`${json.error.message} (${json.error.code})`, { code: json.error.code, data: json.error.data });
    this.session.wire.changed(entry);
    return this.v03 ? responseFrom03(json.result) : json.result;
  }

  /** A streaming call: yields v1.0 StreamResponses until the stream ends or `signal` aborts. */
  async *stream(kind, params, { rest, signal, a2a } = {}) {
    if (this.grpc) {
      const { resp, entry } = await this.grpcExchange(kind, params, { streaming: true, signal, a2a });
      if (!(resp.headers.get('content-type') || '').includes('text/event-stream')) {
        const j = await resp.json().catch(() => ({}));
        entry.error = j.error ? `${j.error.message} (${j.error.code})` : 'no stream';
        entry.totalMs = Math.round(performance.now() - entry.t0);
        this.session.wire.changed(entry);
        throw new A2AError(entry.error, { code: j.error && j.error.code });
      }
      yield* this.events(resp, entry, (json) => json);
      return;
    }
    let url, method, body;
    if (this.rest) {
      ({ url, method, body } = rest);
    } else {
      const methods = this.v03 ? V03_METHODS : V1_METHODS;
      url = this.iface.url;
      method = 'POST';
      body = { jsonrpc: '2.0', id: this.rpcId++, method: methods[kind], params };
    }
    const { resp, entry } = await this.exchange({ op: V1_METHODS[kind], method, url, body, streaming: true, signal, a2a });
    const type = resp.headers.get('content-type') || '';
    if (!type.includes('text/event-stream')) {
      // An error answered as JSON (or a server that does not stream).
      const text = await resp.text();
      entry.response.body = text;
      entry.streaming = false;
      entry.totalMs = Math.round(performance.now() - entry.t0);
      let json = null;
      try { json = JSON.parse(text); } catch { /* not JSON */ }
      const err = json && json.error;
      entry.error = err ? `${err.message} (${err.code})` : `HTTP ${resp.status}: ${text.slice(0, 300)}`;
      this.session.wire.changed(entry);
      throw new A2AError(entry.error, { code: err && err.code, status: resp.status });
    }
    yield* this.events(resp, entry, (json) => {
      if (json.error) {
        entry.error = `${json.error.message} (${json.error.code})`;
        throw new A2AError(entry.error, { code: json.error.code });
      }
      return this.v03 ? responseFrom03(json.result) : json.result;
    }, this.rest);
  }

  /** The events of a streamed answer, each recorded, as StreamResponses. */
  async *events(resp, entry, unwrap, bare = true) {
    try {
      for await (const ev of sseEvents(resp.body)) {
        const t = Math.round(performance.now() - entry.t0);
        if (entry.firstEventMs === undefined) entry.firstEventMs = t;
        entry.events.push({ t, id: ev.id, data: ev.data });
        entry.eventBytes += ev.data.length;
        if (entry.events.length > 20000) entry.events.splice(0, 10000);
        this.session.wire.changed(entry);
        let json;
        try { json = JSON.parse(ev.data); } catch { continue; }
        if (bare && json.error) {
          entry.error = `${json.error.message} (${json.error.code})`;
          throw new A2AError(entry.error, { code: json.error.code });
        }
        yield { id: ev.id, response: bare ? json : unwrap(json) };
      }
    } catch (e) {
      if (e.name === 'AbortError') {
        entry.error = undefined;
        entry.stopped = true;
        return;
      }
      throw e;
    } finally {
      entry.totalMs = Math.round(performance.now() - entry.t0);
      this.session.wire.changed(entry);
    }
  }

  base() {
    return this.iface.url.replace(/\/+$/, '');
  }

  messageParams(message, configuration) {
    if (this.v03) {
      const c = configuration || {};
      return { message: messageTo03(message), configuration: { blocking: !c.returnImmediately, historyLength: c.historyLength, acceptedOutputModes: c.acceptedOutputModes } };
    }
    return { message, configuration };
  }

  sendArgs(message) {
    const text = (message.parts.find((p) => p.text !== undefined) || {}).text || '';
    const args = ['send', this.agent.base || this.iface.url, text, ...this.cliArgs()];
    if (message.taskId) args.push('--task', message.taskId);
    else if (message.contextId) args.push('--context', message.contextId);
    return args;
  }

  /** SendMessage: {task} or {message}. */
  send(message, configuration) {
    const params = this.messageParams(message, configuration);
    return this.call('send', params, {
      rest: { method: 'POST', url: `${this.base()}/message:send`, body: params },
      a2a: [...this.sendArgs(message), '--blocking'],
    });
  }

  /** SendStreamingMessage. */
  streamMessage(message, configuration, signal) {
    const params = this.messageParams(message, configuration);
    const args = this.sendArgs(message);
    args[0] = 'stream';
    return this.stream('stream', params, { rest: { method: 'POST', url: `${this.base()}/message:stream`, body: params }, signal, a2a: args });
  }

  async getTask(id, historyLength) {
    const params = { id, historyLength };
    const q = historyLength !== undefined ? `?historyLength=${historyLength}` : '';
    const r = await this.call('get', params, {
      rest: { method: 'GET', url: `${this.base()}/tasks/${encodeURIComponent(id)}${q}` },
      a2a: ['get', this.agent.base || this.iface.url, id, ...this.cliArgs()],
    });
    return r && r.task ? r.task : r;
  }

  listTasks(query) {
    const params = {};
    for (const [k, v] of Object.entries(query)) if (v !== undefined && v !== '' && v !== null) params[k] = v;
    const qs = new URLSearchParams(params).toString();
    const args = ['list', this.agent.base || this.iface.url, ...this.cliArgs()];
    if (params.contextId) args.push('--context', params.contextId);
    if (params.status) args.push('--state', params.status.replace('TASK_STATE_', '').toLowerCase());
    return this.call('list', params, { rest: { method: 'GET', url: `${this.base()}/tasks${qs ? '?' + qs : ''}` }, a2a: args });
  }

  async cancelTask(id) {
    const r = await this.call('cancel', { id }, {
      rest: { method: 'POST', url: `${this.base()}/tasks/${encodeURIComponent(id)}:cancel`, body: {} },
      a2a: ['cancel', this.agent.base || this.iface.url, id, ...this.cliArgs()],
    });
    return r && r.task ? r.task : r;
  }

  subscribe(id, signal) {
    return this.stream('subscribe', { id }, {
      rest: { method: 'POST', url: `${this.base()}/tasks/${encodeURIComponent(id)}:subscribe`, body: {} },
      signal,
      a2a: ['subscribe', this.agent.base || this.iface.url, id, ...this.cliArgs()],
    });
  }

  createPushConfig(taskId, config) {
    const v1 = { taskId, ...config };
    const params = this.v03 ? { taskId, pushNotificationConfig: config } : v1;
    return this.call('pushCreate', params, {
      rest: { method: 'POST', url: `${this.base()}/tasks/${encodeURIComponent(taskId)}/pushNotificationConfigs`, body: v1 },
      a2a: ['push', 'create', this.agent.base || this.iface.url, taskId, config.url, ...this.cliArgs()],
    });
  }

  extendedCard() {
    return this.call('extendedCard', {}, { rest: { method: 'GET', url: `${this.base()}/extendedAgentCard` } });
  }
}
