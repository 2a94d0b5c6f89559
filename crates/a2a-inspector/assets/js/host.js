// The host itself, from the metrics it keeps (`GET /metrics`): tasks by state, requests in
// flight, open streams, push delivery outcomes, requests by agent; and the trace of each
// request of this session (a link when the host was given --trace-url).

import { h, replace, clock } from './dom.js';

/** Prometheus text: [{name, labels, value}]. */
export function parseMetrics(text) {
  const out = [];
  for (const line of text.split('\n')) {
    if (!line || line.startsWith('#')) continue;
    const m = line.match(/^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})?\s+(\S+)/);
    if (!m) continue;
    const labels = {};
    for (const l of (m[3] || '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) labels[l[1]] = l[2];
    out.push({ name: m[1], labels, value: Number(m[4]) });
  }
  return out;
}

function sum(metrics, name, by) {
  const acc = new Map();
  for (const m of metrics) {
    if (m.name !== name) continue;
    const k = by ? m.labels[by] : '';
    acc.set(k, (acc.get(k) || 0) + m.value);
  }
  return acc;
}

function table(title, id, rows) {
  return h('section', { class: 'stat', id },
    h('h3', {}, title),
    rows.length ? h('table', {}, h('tbody', {}, rows.map(([k, v]) => h('tr', { dataset: { key: k } }, h('th', {}, k), h('td', {}, String(v)))))) : h('p', { class: 'hint' }, 'none'));
}

export function renderHost(root, session) {
  const body = h('div', { id: 'host-stats', class: 'stats' });
  const traces = h('section', { id: 'traces' });
  let timer = null;

  async function load() {
    if (!session.config.metrics) {
      replace(body, h('p', { class: 'hint' }, 'This host does not serve /metrics (started with --no-metrics).'));
      return;
    }
    let metrics;
    try {
      const r = await fetch('/metrics');
      metrics = parseMetrics(await r.text());
    } catch (e) {
      replace(body, h('p', { class: 'error' }, `/metrics: ${e.message}`));
      return;
    }
    const one = (name) => [...sum(metrics, name).values()][0] || 0;
    const states = [...sum(metrics, 'a2a_tasks', 'state')].map(([k, v]) => [k.replace('TASK_STATE_', '').toLowerCase(), v]);
    const push = [...sum(metrics, 'a2a_push_deliveries_total', 'outcome')];
    const byAgent = [...sum(metrics, 'a2a_requests_total', 'agent')];
    const refused = [...sum(metrics, 'a2a_connections_refused_total', 'reason')].filter(([, v]) => v > 0);
    const errors = [...sum(metrics.filter((m) => m.labels.outcome && m.labels.outcome !== 'ok'), 'a2a_requests_total', 'outcome')];
    replace(body,
      table('Now', 'host-now', [
        ['requests in flight', one('a2a_requests_in_flight')],
        ['open streams', one('a2a_streams_active')],
        ['task subscriptions', one('a2a_bus_subscribers')],
      ]),
      table('Tasks this process is running, by state', 'host-tasks', states),
      table('Requests by agent', 'host-agents', byAgent),
      table('Errors by reason', 'host-errors', errors),
      table('Push deliveries', 'host-push', push),
      table('Connections refused', 'host-refused', refused),
      h('p', { class: 'hint' }, `read ${clock(Date.now())}, every 2 s`));
  }

  function drawTraces() {
    const entries = session.wire.entries.filter((e) => e.traceId).slice(-30).reverse();
    const link = (id) => (session.config.traceUrl
      ? h('a', { href: session.config.traceUrl.replace('{trace_id}', id), target: '_blank', rel: 'noopener' }, id)
      : h('code', {}, id));
    replace(traces, h('h3', {}, 'Traces of this session\'s requests'),
      session.config.traceUrl ? null : h('p', { class: 'hint' }, 'Start the host with --trace-url (say a Jaeger URL with {trace_id}) to link each trace.'),
      entries.length
        ? h('ol', { class: 'trace-list' }, entries.map((e) => h('li', {}, h('span', { class: 'wire-time' }, clock(e.started)), ` ${e.op} `, link(e.traceId))))
        : h('p', { class: 'hint' }, 'No requests yet.'));
  }

  replace(root, h('h2', {}, 'This host'), body, traces);
  load();
  drawTraces();
  timer = setInterval(() => {
    load();
    drawTraces();
  }, 2000);
  return () => clearInterval(timer);
}
