//! Spans for every request and every task run, continuing the caller's W3C trace context,
//! with the conversation's `contextId` on each as `gen_ai.conversation.id` and `thread_id`.
//!
//! The spans are `tracing` spans at `INFO` with the target [`SPAN_TARGET`]; the
//! `a2a-telemetry` layer (or `tracing-opentelemetry`) exports them. Where no subscriber
//! wants them they are disabled at their call site, and none of this runs.

use a2a_telemetry::{AttrValue, TRACEPARENT, TRACESTATE, TraceParent};
use a2a_types::A2aError;
use tracing::Span;
use tracing::field::Empty;

use crate::executor::CallContext;

/// The target of the spans this crate opens: filter on it to export or log them.
pub const SPAN_TARGET: &str = "a2a::server";

/// The span of one request (about `task_id`, when the request names one), a child of the
/// caller's span when the request carries `traceparent` (HTTP header or gRPC metadata).
pub(crate) fn request_span(
    agent: &str,
    method: &'static str,
    call: &CallContext,
    task_id: Option<&str>,
) -> Span {
    let header = |name: &str| call.headers.get(name).and_then(|v| v.to_str().ok());
    let parent = header(TRACEPARENT).and_then(|p| TraceParent::parse(p, header(TRACESTATE)));
    a2a_telemetry::span_with_parent(parent, || {
        tracing::info_span!(
        target: SPAN_TARGET,
        "a2a.request",
        otel.name = method,
        otel.kind = "server",
        otel.status_code = Empty,
        otel.status_description = Empty,
        a2a.binding = call.binding.as_str(),
        a2a.protocol_version = call.protocol_version.as_str(),
        a2a.agent = agent,
        a2a.task_id = task_id,
        gen_ai.conversation.id = Empty,
        thread_id = Empty,
        a2a.error_code = Empty,
        )
    })
}

/// The span of one run of an agent's `execute`, a child of the request that started it.
pub(crate) fn task_span(task_id: &str, context_id: &str) -> Span {
    tracing::info_span!(
        target: SPAN_TARGET,
        "a2a.task",
        otel.name = "execute",
        otel.status_code = Empty,
        otel.status_description = Empty,
        a2a.task_id = task_id,
        gen_ai.conversation.id = context_id,
        thread_id = context_id,
        a2a.state = Empty,
    )
}

/// Records the task and conversation a request was about.
pub(crate) fn record_ids(span: &Span, task_id: Option<&str>, context_id: Option<&str>) {
    if let Some(t) = task_id {
        span.record("a2a.task_id", t);
    }
    if let Some(c) = context_id {
        span.record("gen_ai.conversation.id", c);
        span.record("thread_id", c);
    }
}

/// Records how a request ended.
pub(crate) fn record_error(span: &Span, error: &A2aError) {
    span.record("a2a.error_code", error.code().0);
    span.record("otel.status_code", "error");
    span.record("otel.status_description", tracing::field::display(error));
}

/// Records the state a task run left its task in (terminal or interrupted) on the
/// current span; a failure marks the span as an error.
pub(crate) fn record_state(state: a2a_types::TaskState) {
    let Some(span) = current_span() else {
        return;
    };
    span.record("a2a.state", state.as_str());
    if state == a2a_types::TaskState::Failed {
        span.record("otel.status_code", "error");
    }
}

/// The current span when it is a real one (some subscriber records it). Checking this
/// rather than `tracing::enabled!` keeps per-layer filters' state clean: an `enabled!`
/// probe that is not followed by its event can make a per-layer filter drop the next one.
pub(crate) fn current_span() -> Option<Span> {
    let span = Span::current();
    (!span.is_disabled()).then_some(span)
}

/// Adds an event (a task transition, an artifact) to the current span when it is
/// recorded; `attributes` is only called then.
pub(crate) fn span_event(
    name: &'static str,
    attributes: impl FnOnce() -> Vec<(&'static str, AttrValue)>,
) {
    a2a_telemetry::add_event(name, attributes);
}
