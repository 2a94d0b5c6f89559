//! A Server-Sent Events reader over a byte stream.

use bytes::{Buf, BytesMut};
use futures::{Stream, StreamExt};

/// One SSE event.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct SseEvent {
    /// The `id:` field (A2A servers put the log sequence number there).
    pub id: Option<String>,
    /// The `event:` field.
    pub event: Option<String>,
    /// The `data:` lines, joined with `\n`.
    pub data: String,
}

/// Incremental SSE parser (WHATWG event-stream rules: `\n`, `\r\n` or `\r` line ends,
/// comments, multi-line data, events dispatched on a blank line).
#[derive(Debug, Default)]
pub struct SseParser {
    buf: BytesMut,
    current: SseEvent,
    has_data: bool,
}

impl SseParser {
    /// A parser.
    pub fn new() -> Self {
        Self::default()
    }

    /// Feeds bytes; returns the events they complete.
    pub fn feed(&mut self, bytes: &[u8]) -> Vec<SseEvent> {
        self.buf.extend_from_slice(bytes);
        let mut out = Vec::new();
        while let Some(pos) = self.buf.iter().position(|b| *b == b'\n' || *b == b'\r') {
            // A `\r` at the very end may be the first half of `\r\n`: wait for more.
            if self.buf[pos] == b'\r' && pos + 1 == self.buf.len() {
                break;
            }
            let line = self.buf.split_to(pos);
            let skip = if self.buf[0] == b'\r' && self.buf.get(1) == Some(&b'\n') {
                2
            } else {
                1
            };
            self.buf.advance(skip);
            if let Some(ev) = self.line(&line) {
                out.push(ev);
            }
        }
        out
    }

    fn line(&mut self, line: &[u8]) -> Option<SseEvent> {
        if line.is_empty() {
            if !self.has_data {
                self.current = SseEvent {
                    id: self.current.id.take(),
                    ..SseEvent::default()
                };
                return None;
            }
            self.has_data = false;
            let ev = std::mem::take(&mut self.current);
            return Some(ev);
        }
        if line[0] == b':' {
            return None;
        }
        let line = String::from_utf8_lossy(line);
        let (field, value) = match line.split_once(':') {
            Some((f, v)) => (f, v.strip_prefix(' ').unwrap_or(v)),
            None => (line.as_ref(), ""),
        };
        match field {
            "data" => {
                if self.has_data {
                    self.current.data.push('\n');
                }
                self.current.data.push_str(value);
                self.has_data = true;
            }
            "id" if !value.contains('\0') => self.current.id = Some(value.to_owned()),
            "event" => self.current.event = Some(value.to_owned()),
            _ => {}
        }
        None
    }
}

/// Turns a response body into a stream of SSE events.
pub fn sse_stream<S, E>(body: S) -> impl Stream<Item = Result<SseEvent, E>> + Send
where
    S: Stream<Item = Result<bytes::Bytes, E>> + Send + 'static,
    E: Send + 'static,
{
    let state = (
        Box::pin(body),
        SseParser::new(),
        std::collections::VecDeque::new(),
    );
    futures::stream::unfold(state, |(mut body, mut parser, mut ready)| async move {
        loop {
            if let Some(ev) = ready.pop_front() {
                return Some((Ok(ev), (body, parser, ready)));
            }
            match body.next().await? {
                Ok(chunk) => ready.extend(parser.feed(&chunk)),
                Err(e) => return Some((Err(e), (body, parser, ready))),
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_events_split_anywhere() {
        let input = b": keep-alive\n\nid: 1\ndata: {\"a\":1}\n\nid: 2\r\nevent: x\r\ndata: l1\r\ndata: l2\r\n\r\n";
        for split in 0..input.len() {
            let mut p = SseParser::new();
            let mut events = p.feed(&input[..split]);
            events.extend(p.feed(&input[split..]));
            assert_eq!(events.len(), 2, "split at {split}");
            assert_eq!(events[0].id.as_deref(), Some("1"));
            assert_eq!(events[0].data, "{\"a\":1}");
            assert_eq!(events[1].event.as_deref(), Some("x"));
            assert_eq!(events[1].data, "l1\nl2");
        }
    }

    #[test]
    fn characters_split_at_every_byte_arrive_whole() {
        let input = "id: 7\ndata: {\"text\":\"Grüße 你好 🙂\"}\n\n".as_bytes();
        for a in 0..input.len() {
            for b in a..input.len() {
                let mut p = SseParser::new();
                let mut events = p.feed(&input[..a]);
                events.extend(p.feed(&input[a..b]));
                events.extend(p.feed(&input[b..]));
                assert_eq!(events.len(), 1, "split at {a}, {b}");
                assert_eq!(
                    events[0].data, "{\"text\":\"Grüße 你好 🙂\"}",
                    "split at {a}, {b}"
                );
            }
        }
    }
}
