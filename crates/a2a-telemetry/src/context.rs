//! The current span's trace context, in and out: continuing a caller's trace, reading the
//! current context to pass on, and adding to the current span. Works with this crate's layer
//! and own spans (feature `export`), with a `tracing-opentelemetry` layer (feature `otel`),
//! and, with neither, on plain `tracing` spans (fields) or not at all (trace context).

use std::cell::RefCell;

use tracing::Span;

use crate::attr::AttrValue;
use crate::trace_parent::TraceParent;

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
    #[allow(unused_variables)]
    if let Some(parent) = take_remote_parent()
        && !span.is_disabled()
    {
        #[cfg(feature = "otel")]
        crate::otel::set_parent(&span, &parent);
    }
    span
}

/// Runs `f` on the record of the innermost span this crate records, if any.
#[cfg(feature = "export")]
fn with_innermost<R>(f: impl FnOnce(&mut crate::record::SpanRecord) -> R) -> Option<R> {
    crate::own::with_innermost(f)
}

/// Without the exporter nothing is recorded here.
#[cfg(not(feature = "export"))]
fn with_innermost<R>(_f: impl FnOnce(&mut Recorded) -> R) -> Option<R> {
    None
}

/// Nothing: the exporter is not built in.
#[cfg(not(feature = "export"))]
enum Recorded {}

/// The W3C trace context of the current span, as the `traceparent` value and the
/// `tracestate` value (when there is one): `None` when no span is recorded.
///
/// Pass it on where a header cannot go, say to a child process as the `TRACEPARENT` and
/// `TRACESTATE` environment variables.
pub fn current_trace_context() -> Option<(String, Option<String>)> {
    #[cfg(feature = "export")]
    if let Some(parent) = with_innermost(|rec| rec.ids.trace_parent()) {
        let state = parent.trace_state.as_deref().map(str::to_owned);
        return Some((parent.header(), state));
    }
    #[cfg(feature = "otel")]
    return crate::otel::current_trace_context();
    #[cfg(not(feature = "otel"))]
    None
}

/// Adds an event (say, a task's transition) to the current span when it is recorded;
/// `attributes` is only called then.
pub fn add_event(name: &'static str, attributes: impl FnOnce() -> Vec<(&'static str, AttrValue)>) {
    let mut attributes = Some(attributes);
    #[cfg(feature = "export")]
    let done = with_innermost(|rec| {
        if rec.ids.sampled
            && let Some(attributes) = attributes.take()
        {
            rec.events.push(crate::record::EventRecord {
                time_ns: crate::record::now_ns(),
                name: crate::record::Val::Static(name),
                attrs: attributes()
                    .into_iter()
                    .map(|(k, v)| (k, v.into()))
                    .collect(),
            });
        }
    });
    #[cfg(not(feature = "export"))]
    let done: Option<()> = with_innermost(|_| ());
    if done.is_some() || !tracing_spans_on() {
        return;
    }
    let span = Span::current();
    if !span.is_disabled()
        && let Some(attributes) = attributes.take()
    {
        #[cfg(feature = "otel")]
        crate::otel::add_event(&span, name, attributes());
        #[cfg(not(feature = "otel"))]
        let _ = (name, attributes);
    }
}

/// Sets string attributes on the innermost recorded span (for a `tracing` span, the
/// fields must be declared, as `tracing` requires).
pub fn record_current(attributes: &[(&'static str, &str)]) {
    #[cfg(feature = "export")]
    let done = with_innermost(|rec| {
        if rec.ids.sampled {
            for (key, value) in attributes {
                crate::own::set_str(rec, key, value);
            }
        }
    });
    #[cfg(not(feature = "export"))]
    let done: Option<()> = with_innermost(|_| ());
    if done.is_none() && tracing_spans_on() {
        let span = Span::current();
        for (key, value) in attributes {
            span.record(*key, *value);
        }
    }
}

/// Whether `tracing` keeps spans at the level of this workspace's spans (`INFO`). Below it
/// (the default filter is `warn`) there is no span of ours to record on, and asking for the
/// current one (a lookup, a reference taken and given back) is all a recording would do,
/// two or three times a send.
fn tracing_spans_on() -> bool {
    tracing::level_enabled!(tracing::Level::INFO)
}

/// Marks the innermost recorded span as failed (for a `tracing` span, through its
/// `otel.status_code` field).
pub fn mark_current_error() {
    #[cfg(feature = "export")]
    let done = with_innermost(|rec| rec.status = 2);
    #[cfg(not(feature = "export"))]
    let done: Option<()> = with_innermost(|_| ());
    if done.is_none() && tracing_spans_on() {
        Span::current().record("otel.status_code", "error");
    }
}
