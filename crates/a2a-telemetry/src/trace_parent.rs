//! W3C trace context: the `traceparent` header (and `tracestate`) parsed and printed.

use std::fmt::Write as _;
use std::sync::Arc;

/// The W3C `traceparent` header.
pub const TRACEPARENT: &str = "traceparent";
/// The W3C `tracestate` header.
pub const TRACESTATE: &str = "tracestate";

/// A caller's trace context: the `traceparent` header (and `tracestate`) parsed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TraceParent {
    /// The trace the caller's span belongs to.
    pub trace_id: [u8; 16],
    /// The caller's span.
    pub span_id: [u8; 8],
    /// The W3C trace flags (bit 0: sampled).
    pub flags: u8,
    /// The `tracestate` value, passed on unchanged.
    pub trace_state: Option<Arc<str>>,
}

fn hex_into(text: &str, out: &mut [u8]) -> Option<()> {
    let bytes = text.as_bytes();
    if bytes.len() != out.len() * 2 {
        return None;
    }
    let digit = |c: u8| match c {
        b'0'..=b'9' => Some(c - b'0'),
        b'a'..=b'f' => Some(c - b'a' + 10),
        _ => None,
    };
    for (i, slot) in out.iter_mut().enumerate() {
        *slot = digit(bytes[2 * i])? << 4 | digit(bytes[2 * i + 1])?;
    }
    Some(())
}

fn push_hex(out: &mut String, bytes: &[u8]) {
    for b in bytes {
        let _ = write!(out, "{b:02x}");
    }
}

impl TraceParent {
    /// Parses a `traceparent` value (and an optional `tracestate`): `None` when it is not a
    /// valid W3C trace context (then the span starts a trace of its own).
    pub fn parse(traceparent: &str, tracestate: Option<&str>) -> Option<Self> {
        let mut parts = traceparent.trim().split('-');
        let version = parts.next()?;
        let (trace, span, flags) = (parts.next()?, parts.next()?, parts.next()?);
        let mut v = [0u8; 1];
        hex_into(version, &mut v)?;
        // Version 255 is invalid; version 0 has exactly four fields, later ones may add more.
        if v[0] == 0xff || (v[0] == 0 && parts.next().is_some()) {
            return None;
        }
        let mut trace_id = [0u8; 16];
        let mut span_id = [0u8; 8];
        let mut f = [0u8; 1];
        hex_into(trace, &mut trace_id)?;
        hex_into(span, &mut span_id)?;
        hex_into(flags, &mut f)?;
        if trace_id == [0; 16] || span_id == [0; 8] {
            return None;
        }
        let trace_state = tracestate
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(Arc::from);
        Some(Self {
            trace_id,
            span_id,
            flags: f[0],
            trace_state,
        })
    }

    /// Whether the caller recorded its span.
    pub fn sampled(&self) -> bool {
        self.flags & 1 == 1
    }

    /// The `traceparent` value.
    pub fn header(&self) -> String {
        let mut out = String::with_capacity(55);
        out.push_str("00-");
        push_hex(&mut out, &self.trace_id);
        out.push('-');
        push_hex(&mut out, &self.span_id);
        let _ = write!(out, "-{:02x}", self.flags & 1);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn traceparent_round_trips_and_rejects_bad_values() {
        let h = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
        let p = TraceParent::parse(h, Some(" congo=t61rcWkgMzE ")).unwrap();
        assert!(p.sampled());
        assert_eq!(p.header(), h);
        assert_eq!(p.trace_state.as_deref(), Some("congo=t61rcWkgMzE"));
        for bad in [
            "",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7",
            "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
            "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",
            "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra",
        ] {
            assert!(TraceParent::parse(bad, None).is_none(), "{bad:?}");
        }
        assert!(
            TraceParent::parse(
                "01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00-future",
                None
            )
            .is_some_and(|p| !p.sampled()),
            "a later version may add fields"
        );
    }
}
