// Server-sent events read from a fetch() body (EventSource cannot POST or send headers).
// Lines are cut from bytes before they are decoded, so a character split across network
// chunks arrives whole.

/**
 * Yields {event, data, id} for each event of `body` (a ReadableStream of bytes).
 * Stops when the stream ends or `signal` aborts.
 */
export async function* sseEvents(body) {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let pending = new Uint8Array(0);
  let event = { event: 'message', data: [], id: null };
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      const joined = new Uint8Array(pending.length + value.length);
      joined.set(pending);
      joined.set(value, pending.length);
      let start = 0;
      for (let i = 0; i < joined.length; i++) {
        if (joined[i] !== 10) continue; // \n
        let end = i;
        if (end > start && joined[end - 1] === 13) end--; // \r\n
        const line = decoder.decode(joined.subarray(start, end));
        start = i + 1;
        if (line === '') {
          if (event.data.length) yield { event: event.event, data: event.data.join('\n'), id: event.id };
          event = { event: 'message', data: [], id: event.id };
          continue;
        }
        if (line.startsWith(':')) continue;
        const colon = line.indexOf(':');
        const field = colon < 0 ? line : line.slice(0, colon);
        let v = colon < 0 ? '' : line.slice(colon + 1);
        if (v.startsWith(' ')) v = v.slice(1);
        if (field === 'data') event.data.push(v);
        else if (field === 'event') event.event = v;
        else if (field === 'id') event.id = v;
      }
      pending = joined.slice(start);
    }
    if (event.data.length) yield { event: event.event, data: event.data.join('\n'), id: event.id };
  } finally {
    reader.releaseLock();
  }
}
