// Agents: the host's, and any other by URL. A card for a person and as JSON, its problems
// against the specification (each with its JSON path), its signature, and the extended card
// as a difference.

import { h, replace } from './dom.js';
import { defaultInterface, interfacesOf } from './a2a.js';

/** Loads `entry`'s card, checks it, and makes it the agent in use. */
export async function loadAgent(session, entry) {
  let check;
  if (entry.remote) {
    const r = await fetch('/inspector/api/card', {
      method: 'POST',
      headers: { ...session.hostHeaders(), 'Content-Type': 'application/json' },
      body: JSON.stringify({ url: entry.cardUrl }),
    });
    check = await r.json();
    if (!r.ok) throw new Error((check.error && check.error.message) || `HTTP ${r.status}`);
  } else {
    const r = await fetch(entry.cardUrl, { headers: { Accept: 'application/json' } });
    if (!r.ok) throw new Error(`${entry.cardUrl}: HTTP ${r.status}`);
    const card = await r.json();
    const c = await fetch('/inspector/api/card', {
      method: 'POST',
      headers: { ...session.hostHeaders(), 'Content-Type': 'application/json' },
      body: JSON.stringify({ card }),
    });
    check = await c.json();
    if (!c.ok) throw new Error((check.error && check.error.message) || `HTTP ${c.status}`);
  }
  session.agent = { ...entry, card: check.card, check };
  session.iface = defaultInterface(check.card);
  session.newConversation();
  return session.agent;
}

export function renderAgents(root, session) {
  const error = h('p', { class: 'error', role: 'alert', id: 'agent-error' });
  const choose = async (entry) => {
    error.textContent = '';
    try {
      await loadAgent(session, entry);
      session.go('card');
    } catch (e) {
      error.textContent = `Cannot use this agent: ${e.message}`;
    }
  };
  const url = h('input', { id: 'agent-url', type: 'url', placeholder: 'https://agents.example.com/a2a/echo', required: true, 'aria-label': 'Agent URL' });
  const cred = h('input', { id: 'agent-credential', type: 'password', autocomplete: 'off', placeholder: 'optional', 'aria-label': 'Bearer token for that agent' });
  const form = h('form', {
    class: 'add-agent', onsubmit: (e) => {
      e.preventDefault();
      const raw = url.value.trim();
      const base = raw.replace(/\/\.well-known\/agent(-card)?\.json$/, '').replace(/\/+$/, '');
      const entry = {
        key: `url:${raw}`, label: raw, base, cardUrl: raw, remote: true,
        credentials: cred.value ? { kind: 'bearer', value: cred.value } : null,
      };
      if (!session.agents.some((a) => a.key === entry.key)) session.agents.push(entry);
      choose(entry);
    },
  },
  h('label', { for: 'agent-url' }, 'Another agent, by URL (its base URL or its card\'s)'),
  h('div', { class: 'row' }, url, h('label', { for: 'agent-credential', class: 'visually-hidden' }, 'Its bearer token'), cred, h('button', { type: 'submit' }, 'Open')),
  h('p', { class: 'hint' }, 'Other hosts are reached through this one (a browser cannot call them directly): the host refuses inner addresses unless they are allowed for push notifications too.'));
  const list = h('ul', { class: 'agent-list', id: 'agent-list' },
    session.agents.length
      ? session.agents.map((a) => h('li', {},
        h('button', { class: session.agent && session.agent.key === a.key ? 'selected' : '', dataset: { agent: a.label }, onclick: () => choose(a) },
          h('strong', {}, a.label), h('span', { class: 'hint' }, a.remote ? ' (another host)' : ` ${new URL(a.base).pathname}`))))
      : h('li', { class: 'hint' }, 'This host serves no agents; open one by URL below.'));
  replace(root, h('h2', {}, 'Agents'), list, form, error);
}

function diff(a, b, path = '$', out = []) {
  if (JSON.stringify(a) === JSON.stringify(b)) return out;
  const isObj = (v) => v && typeof v === 'object' && !Array.isArray(v);
  if (isObj(a) && isObj(b)) {
    for (const k of new Set([...Object.keys(a), ...Object.keys(b)])) diff(a[k], b[k], `${path}.${k}`, out);
  } else if (Array.isArray(a) && Array.isArray(b) && path.endsWith('skills')) {
    const ids = (l) => new Map(l.map((s) => [s.id, s]));
    const ma = ids(a), mb = ids(b);
    for (const [id, s] of mb) if (!ma.has(id)) out.push({ path: `${path}[id=${id}]`, kind: 'added', value: s });
    for (const [id, s] of ma) if (!mb.has(id)) out.push({ path: `${path}[id=${id}]`, kind: 'removed', value: s });
    for (const [id, s] of mb) if (ma.has(id)) diff(ma.get(id), s, `${path}[id=${id}]`, out);
  } else if (a === undefined) out.push({ path, kind: 'added', value: b });
  else if (b === undefined) out.push({ path, kind: 'removed', value: a });
  else out.push({ path, kind: 'changed', from: a, value: b });
  return out;
}

function cardForPeople(card) {
  const caps = card.capabilities || {};
  const yes = (v) => (v ? 'yes' : 'no');
  return h('section', { class: 'card-view' },
    h('h3', {}, card.name || '(no name)', card.version ? h('span', { class: 'hint' }, ` version ${card.version}`) : null),
    h('p', {}, card.description || ''),
    card.provider ? h('p', { class: 'hint' }, `by ${card.provider.organization || ''} ${card.provider.url || ''}`) : null,
    h('h4', {}, 'Interfaces'),
    h('table', {}, h('thead', {}, h('tr', {}, h('th', {}, 'Binding'), h('th', {}, 'Version'), h('th', {}, 'URL'))),
      h('tbody', {}, interfacesOf(card).map((i) => h('tr', {}, h('td', {}, i.binding), h('td', {}, i.version), h('td', {}, h('code', {}, i.url)))))),
    h('h4', {}, 'Capabilities'),
    h('p', {}, `streaming: ${yes(caps.streaming)} · push notifications: ${yes(caps.pushNotifications)} · extended card: ${yes(caps.extendedAgentCard)}`),
    (caps.extensions || []).length ? h('ul', {}, caps.extensions.map((e) => h('li', {}, h('code', {}, e.uri), e.required ? ' (required)' : ''))) : null,
    h('p', {}, `input: ${(card.defaultInputModes || []).join(', ')} · output: ${(card.defaultOutputModes || []).join(', ')}`),
    card.securitySchemes && Object.keys(card.securitySchemes).length
      ? [h('h4', {}, 'Security'), h('ul', {}, Object.entries(card.securitySchemes).map(([name, s]) => h('li', {}, h('strong', {}, name), ` ${Object.keys(s).join(', ')}`)))]
      : null,
    h('h4', {}, 'Skills'),
    h('ul', { class: 'skills' }, (card.skills || []).map((s) => h('li', {}, h('strong', {}, s.name || s.id), ` — ${s.description || ''}`,
      (s.examples || []).length ? h('ul', {}, s.examples.map((ex) => h('li', { class: 'hint' }, ex))) : null))));
}

export function renderCard(root, session) {
  const a = session.agent;
  const check = a.check || {};
  const problems = check.problems || [];
  const sig = check.signature || { state: 'unknown' };
  const errors = problems.filter((p) => p.severity === 'error').length;
  const extended = h('div', { id: 'extended' });
  const showExtended = async () => {
    replace(extended, h('p', { class: 'hint' }, 'Fetching…'));
    try {
      const conn = session.connection();
      const ext = await conn.extendedCard();
      const changes = diff(a.card, ext);
      replace(extended,
        h('h4', {}, `Extended card: ${changes.length} differences`),
        h('ul', { class: 'diff' }, changes.map((c) => h('li', { class: `diff-${c.kind}` }, h('code', {}, c.path), ` ${c.kind}: `,
          c.kind === 'changed' ? `${JSON.stringify(c.from)} → ${JSON.stringify(c.value)}` : JSON.stringify(c.value)))),
        h('details', {}, h('summary', {}, 'Extended card as JSON'), h('pre', {}, JSON.stringify(ext, null, 2))));
    } catch (e) {
      replace(extended, h('p', { class: 'error' }, `Extended card: ${e.message}`));
    }
  };
  replace(root,
    h('div', { class: 'toolbar' }, h('h2', {}, 'Card'),
      a.cardUrl && /^https?:\/\//i.test(a.cardUrl) ? h('a', { href: a.cardUrl, target: '_blank', rel: 'noopener noreferrer' }, a.cardUrl) : null),
    h('section', { class: `check ${errors ? 'bad' : 'good'}`, id: 'card-check', 'aria-live': 'polite' },
      h('h3', {}, errors ? `${errors} problem${errors > 1 ? 's' : ''} against the specification` : 'Valid against the specification',
        problems.length - errors ? h('span', { class: 'hint' }, ` (${problems.length - errors} warning${problems.length - errors > 1 ? 's' : ''})`) : null),
      h('p', { class: 'hint' }, 'Checked against the normative a2a.proto (types, enums, oneofs, REQUIRED fields) and the specification\'s rules for cards.'),
      problems.length ? h('ul', { class: 'problems', id: 'problems' }, problems.map((p) => h('li', { class: `problem ${p.severity}`, dataset: { path: p.path } }, h('code', {}, p.path), ` ${p.severity}: ${p.message}`))) : null),
    h('section', { class: `signature sig-${sig.state}`, id: 'signature' },
      h('h3', {}, `Signature: ${sig.state}`),
      sig.kid ? h('p', {}, `key ${sig.kid}`) : null,
      sig.keySource ? h('p', { class: 'hint' }, `key set: ${sig.keySource}`) : null,
      sig.reason ? h('p', { class: 'error' }, sig.reason) : null),
    cardForPeople(a.card),
    a.card.capabilities && a.card.capabilities.extendedAgentCard
      ? h('div', {}, h('button', { id: 'fetch-extended', onclick: showExtended }, 'Fetch the extended card (with your credentials)'), extended)
      : null,
    h('details', {}, h('summary', {}, 'The card as JSON'), h('pre', { id: 'card-json' }, JSON.stringify(a.card, null, 2))));
}
