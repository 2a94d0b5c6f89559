// Sessions to share: the card, the conversation and the wire log exported as one JSON file
// (credentials never included, secrets masked), imported later to look at.

const FORMAT = 'a2a-inspector-session/1';

function turnRecord(t) {
  return {
    message: t.message,
    shape: t.shape,
    reply: t.reply,
    task: t.task && { ...t.task, artifacts: t.artifacts.list().map((a) => a.artifact) },
    statuses: t.statuses,
    error: t.error,
  };
}

/** The session as one JSON document. */
export function sessionDocument(session) {
  return {
    format: FORMAT,
    exportedAt: new Date().toISOString(),
    agent: session.agent && { label: session.agent.label, base: session.agent.base, cardUrl: session.agent.cardUrl, remote: session.agent.remote, card: session.agent.card, check: session.agent.check },
    interface: session.iface,
    conversation: { contextId: session.chat.contextId, turns: session.chat.turns.map((t) => (t.message ? turnRecord(t) : t)) },
    wire: session.wire.exported(),
  };
}

/** Downloads the session as a JSON file. */
export function exportSession(session) {
  const doc = sessionDocument(session);
  const blob = new Blob([JSON.stringify(doc, null, 2)], { type: 'application/json' });
  const a = document.createElement('a');
  a.href = URL.createObjectURL(blob);
  a.download = `a2a-session-${new Date().toISOString().replace(/[:.]/g, '-')}.json`;
  document.body.append(a);
  a.click();
  a.remove();
  return doc;
}

export async function importSession(session, text) {
  const doc = JSON.parse(text);
  if (doc.format !== FORMAT) throw new Error(`not an exported session (${doc.format || 'no format'})`);
  session.imported = doc;
  if (doc.agent) {
    // An imported agent is looked at, never trusted: its URLs are shown only when they are
    // http(s), and any call to it goes through the host's guard.
    const web = (u) => (typeof u === 'string' && /^https?:\/\//i.test(u) ? u : null);
    session.agent = { ...doc.agent, cardUrl: web(doc.agent.cardUrl), base: web(doc.agent.base) || '(imported)', remote: true, key: `imported:${doc.agent.label}` };
    session.iface = doc.interface;
  }
  session.chat = { contextId: doc.conversation.contextId, pendingTaskId: null, turns: doc.conversation.turns };
  session.wire.entries = doc.wire || [];
  session.wire.changed(null);
}
