//! The span of every run of an agent, a child of the request that started it, and the
//! events (transitions, artifacts) and final state recorded on the current span.

use a2a_telemetry::AttrValue;
use tracing::Span;
use tracing::field::Empty;

/// The target of the spans the runtime opens (the same as the server's request spans: one
/// filter exports both).
pub const SPAN_TARGET: &str = "a2a::server";

/// The span of one run of an agent's `execute`, a child of the request that started it.
///
/// Always a `tracing` span (not an own span, unlike the request's): the agent's code runs
/// in it, and agents propagate it with `tracing`'s own means (`Span::current()`,
/// `in_current_span()` on work they spawn).
pub fn task_span(task_id: &str, context_id: &str) -> Span {
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

/// Records the state a task run left its task in (terminal or interrupted) on the
/// current span; a failure marks the span as an error.
pub fn record_state(state: a2a_types::TaskState) {
    a2a_telemetry::record_current(&[("a2a.state", state.as_str())]);
    if state == a2a_types::TaskState::Failed {
        a2a_telemetry::mark_current_error();
    }
}

/// Adds an event (a task transition, an artifact) to the current span when it is
/// recorded; `attributes` is only called then.
pub fn span_event(name: &'static str, attributes: impl FnOnce() -> Vec<(&'static str, AttrValue)>) {
    a2a_telemetry::add_event(name, attributes);
}
