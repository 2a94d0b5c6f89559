//! Trace context through a `tracing-opentelemetry` layer, for applications that install one
//! instead of this crate's layer (feature `otel`).

use tracing::Span;
use tracing_opentelemetry::OpenTelemetrySpanExt as _;

use crate::attr::AttrValue;
use crate::trace_parent::TraceParent;

fn context_of(parent: &TraceParent) -> opentelemetry::Context {
    use opentelemetry::trace::{
        SpanContext, SpanId, TraceContextExt as _, TraceFlags, TraceId, TraceState,
    };
    let state = parent
        .trace_state
        .as_deref()
        .and_then(|s| s.parse::<TraceState>().ok())
        .unwrap_or_default();
    let sc = SpanContext::new(
        TraceId::from_bytes(parent.trace_id),
        SpanId::from_bytes(parent.span_id),
        TraceFlags::new(parent.flags & 1),
        true,
        state,
    );
    opentelemetry::Context::new().with_remote_span_context(sc)
}

fn value_of(v: &AttrValue) -> opentelemetry::Value {
    match v {
        AttrValue::Static(s) => opentelemetry::Value::from(*s),
        AttrValue::Str(s) => opentelemetry::Value::from(s.clone()),
        AttrValue::I64(i) => opentelemetry::Value::I64(*i),
        AttrValue::F64(f) => opentelemetry::Value::F64(*f),
        AttrValue::Bool(b) => opentelemetry::Value::Bool(*b),
    }
}

/// Makes `parent` the parent of `span` (a span not started yet).
pub(crate) fn set_parent(span: &Span, parent: &TraceParent) {
    // Only fails once the span has started, which it has not.
    let _ = span.set_parent(context_of(parent));
}

/// The trace context of the current span, from a `tracing-opentelemetry` layer.
pub(crate) fn current_trace_context() -> Option<(String, Option<String>)> {
    use opentelemetry::trace::TraceContextExt as _;
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

/// Adds an event to `span`.
pub(crate) fn add_event(
    span: &Span,
    name: &'static str,
    attributes: Vec<(&'static str, AttrValue)>,
) {
    let kvs = attributes
        .into_iter()
        .map(|(k, v)| opentelemetry::KeyValue::new(k, value_of(&v)))
        .collect();
    span.add_event(name, kvs);
}
