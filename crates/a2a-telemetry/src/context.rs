//! W3C trace context in and out of spans: continuing a caller's trace, and reading the
//! current span's context to pass on.

use std::cell::RefCell;
use std::fmt::Write as _;
use std::sync::Arc;

use tracing::Span;
use tracing_subscriber::registry::{LookupSpan, Registry};

use crate::own::{set_str, with_innermost};
use crate::record::{AttrValue, EventRecord, Ids, SpanRecord, Val, now_ns};

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

    pub(crate) fn of(ids: &Ids) -> Self {
        Self {
            trace_id: ids.trace_id,
            span_id: ids.span_id,
            flags: u8::from(ids.sampled),
            trace_state: ids.trace_state.clone(),
        }
    }

    fn to_otel(&self) -> opentelemetry::Context {
        use opentelemetry::trace::{
            SpanContext, SpanId, TraceContextExt as _, TraceFlags, TraceId, TraceState,
        };
        let state = self
            .trace_state
            .as_deref()
            .and_then(|s| s.parse::<TraceState>().ok())
            .unwrap_or_default();
        let sc = SpanContext::new(
            TraceId::from_bytes(self.trace_id),
            SpanId::from_bytes(self.span_id),
            TraceFlags::new(self.flags & 1),
            true,
            state,
        );
        opentelemetry::Context::new().with_remote_span_context(sc)
    }
}

thread_local! {
    /// The remote parent of the span being made by [`span_with_parent`] on this thread, taken
    /// by the layer when the span is created.
    static REMOTE_PARENT: RefCell<Option<TraceParent>> = const { RefCell::new(None) };
}

pub(crate) fn take_remote_parent() -> Option<TraceParent> {
    REMOTE_PARENT.with(|p| p.borrow_mut().take())
}

/// Makes a span (with `make`, which must create exactly one span) as a child of a caller's
/// span in another process. The sampling decision follows the caller's when the sampler is
/// parent-based, and is taken before any field is recorded.
pub fn span_with_parent(parent: Option<TraceParent>, make: impl FnOnce() -> Span) -> Span {
    let Some(parent) = parent else {
        return make();
    };
    /// Clears the remote parent if `make` panics before a layer took it.
    struct Clear;
    impl Drop for Clear {
        fn drop(&mut self) {
            let _ = take_remote_parent();
        }
    }
    REMOTE_PARENT.with(|p| *p.borrow_mut() = Some(parent));
    let clear = Clear;
    let span = make();
    std::mem::forget(clear);
    // Still here: no `OtlpLayer` made the span. Another OpenTelemetry layer may record it.
    if let Some(parent) = take_remote_parent()
        && !span.is_disabled()
    {
        use tracing_opentelemetry::OpenTelemetrySpanExt as _;
        // Only fails once the span has started, which it has not.
        let _ = span.set_parent(parent.to_otel());
    }
    span
}

/// Runs `f` on the id and record of the nearest span, from the current `tracing` span
/// outwards, that this crate records.
/// (Reads the current span's id without `Span::current()`, which would take and release a
/// reference to it.)
pub(crate) fn with_current_record<R>(
    f: impl FnOnce(&tracing::span::Id, &mut SpanRecord) -> R,
) -> Option<R> {
    let mut f = Some(f);
    tracing::dispatcher::get_default(|dispatch| {
        let registry = dispatch.downcast_ref::<Registry>()?;
        let current = dispatch.current_span();
        let span = registry.span(current.id()?)?;
        for s in span.scope() {
            let mut ext = s.extensions_mut();
            if let Some(rec) = ext.get_mut::<SpanRecord>() {
                return f.take().map(|f| f(&s.id(), rec));
            }
        }
        None
    })
}

/// The W3C trace context of the current span, as the `traceparent` value and the
/// `tracestate` value (when there is one): `None` when no span is recorded.
///
/// Pass it on where a header cannot go, say to a child process as the `TRACEPARENT` and
/// `TRACESTATE` environment variables.
pub fn current_trace_context() -> Option<(String, Option<String>)> {
    if let Some(parent) = with_innermost(|rec| TraceParent::of(&rec.ids)) {
        let state = parent.trace_state.as_deref().map(str::to_owned);
        return Some((parent.header(), state));
    }
    otel_trace_context()
}

/// The same, from a `tracing-opentelemetry` layer.
fn otel_trace_context() -> Option<(String, Option<String>)> {
    use opentelemetry::trace::TraceContextExt as _;
    use tracing_opentelemetry::OpenTelemetrySpanExt as _;
    let span = Span::current();
    if span.is_none() {
        return None;
    }
    let cx = span.context();
    let otel_span = cx.span();
    let sc = otel_span.span_context();
    if !sc.is_valid() {
        return None;
    }
    let parent = format!(
        "00-{}-{}-{:02x}",
        sc.trace_id(),
        sc.span_id(),
        sc.trace_flags().to_u8()
    );
    let state = sc.trace_state().header();
    Some((parent, (!state.is_empty()).then_some(state)))
}

/// Adds an event (say, a task's transition) to the current span when it is recorded;
/// `attributes` is only called then.
pub fn add_event(name: &'static str, attributes: impl FnOnce() -> Vec<(&'static str, AttrValue)>) {
    let mut attributes = Some(attributes);
    let done = with_innermost(|rec| {
        if rec.ids.sampled
            && let Some(attributes) = attributes.take()
        {
            rec.events.push(EventRecord {
                time_ns: now_ns(),
                name: Val::Static(name),
                attrs: attributes()
                    .into_iter()
                    .map(|(k, v)| (k, v.into()))
                    .collect(),
            });
        }
    });
    if done.is_some() {
        return;
    }
    let span = Span::current();
    if !span.is_disabled()
        && let Some(attributes) = attributes.take()
    {
        use tracing_opentelemetry::OpenTelemetrySpanExt as _;
        let kvs = attributes()
            .into_iter()
            .map(|(k, v)| opentelemetry::KeyValue::new(k, v.to_otel()))
            .collect();
        span.add_event(name, kvs);
    }
}

/// Sets string attributes on the innermost recorded span (for a `tracing` span, the
/// fields must be declared, as `tracing` requires).
pub fn record_current(attributes: &[(&'static str, &str)]) {
    if with_innermost(|rec| {
        if rec.ids.sampled {
            for (key, value) in attributes {
                set_str(rec, key, value);
            }
        }
    })
    .is_none()
    {
        let span = Span::current();
        for (key, value) in attributes {
            span.record(*key, *value);
        }
    }
}

/// Marks the innermost recorded span as failed (for a `tracing` span, through its
/// `otel.status_code` field).
pub fn mark_current_error() {
    if with_innermost(|rec| rec.status = 2).is_none() {
        Span::current().record("otel.status_code", "error");
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
