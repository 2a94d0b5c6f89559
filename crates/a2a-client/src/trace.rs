//! Spans for every call and stream, and W3C trace context on every request: the client
//! sends `traceparent` (and `tracestate`) as HTTP headers or gRPC metadata, so the agent it
//! calls continues the caller's trace.
//!
//! The spans are `tracing` spans at `INFO` with the target [`SPAN_TARGET`]; the
//! `a2a-telemetry` layer (or `tracing-opentelemetry`) exports them. Without one, no span is made and nothing
//! is sent.

use a2a_types::TaskState;
use tracing::Span;
use tracing::field::Empty;

use crate::error::ClientError;

pub use a2a_telemetry::{TRACEPARENT, TRACESTATE, current_trace_context};

/// The target of the spans this crate opens.
pub const SPAN_TARGET: &str = "a2a::client";

/// `traceparent` / `tracestate` for an outgoing request, as header pairs.
pub(crate) fn headers() -> impl Iterator<Item = (&'static str, String)> {
    let (parent, state) = match current_trace_context() {
        Some((p, s)) => (Some(p), s),
        None => (None, None),
    };
    parent
        .map(|p| (TRACEPARENT, p))
        .into_iter()
        .chain(state.map(|s| (TRACESTATE, s)))
}

/// The span of one call (`method`) to `endpoint` over `binding`.
pub(crate) fn call_span(method: &'static str, binding: &'static str, endpoint: &str) -> Span {
    tracing::info_span!(
        target: SPAN_TARGET,
        "a2a.call",
        otel.name = method,
        otel.kind = "client",
        otel.status_code = Empty,
        otel.status_description = Empty,
        a2a.binding = binding,
        url.full = endpoint,
        a2a.task_id = Empty,
        gen_ai.conversation.id = Empty,
        thread_id = Empty,
        a2a.state = Empty,
    )
}

/// Records the task, conversation and state a call was about.
pub(crate) fn record_task(
    span: &Span,
    task_id: Option<&str>,
    context_id: Option<&str>,
    state: Option<TaskState>,
) {
    if span.is_disabled() {
        return;
    }
    if let Some(t) = task_id {
        span.record("a2a.task_id", t);
    }
    if let Some(c) = context_id {
        span.record("gen_ai.conversation.id", c);
        span.record("thread_id", c);
    }
    if let Some(s) = state {
        span.record("a2a.state", s.as_str());
    }
}

/// Marks a call as failed.
pub(crate) fn record_error(span: &Span, error: &ClientError) {
    if span.is_disabled() {
        return;
    }
    span.record("otel.status_code", "error");
    span.record("otel.status_description", tracing::field::display(error));
}
