//! Spans for every request and every task run, continuing the caller's W3C trace context,
//! with the conversation's `contextId` on each as `gen_ai.conversation.id` and `thread_id`.
//!
//! When the `a2a-telemetry` exporter accepts them, request spans are [`OwnSpan`]s, recorded
//! without the `tracing` registry (cheaper, and no agent code runs in them). Task runs, and
//! requests otherwise, are `tracing` spans at `INFO` with the target [`SPAN_TARGET`], for
//! whatever layer records them (the `a2a-telemetry` layer, `tracing-opentelemetry`, a log
//! layer); where no subscriber wants them they are disabled at their call site, and none of
//! this runs.

use std::future::Future;

use a2a_telemetry::{
    InOwnSpan, OwnSpan, OwnTarget, SpanKind, TRACEPARENT, TRACESTATE, TraceParent,
};
use a2a_types::A2aError;
use futures::future::Either;
use http::HeaderName;
use tracing::Instrument as _;
use tracing::Span;
use tracing::field::Empty;

use a2a_runtime::CallContext;

/// The target of the spans this crate opens: filter on it to export or log them.
pub use a2a_runtime::telemetry::SPAN_TARGET;

/// The same, for own spans (the exporter's decision about it is remembered here).
static OWN_TARGET: OwnTarget = OwnTarget::new(SPAN_TARGET);

/// A request's span: an own span, or a `tracing` one.
#[derive(Debug)]
pub(crate) enum RuntimeSpan {
    Own(OwnSpan),
    Tracing(Span),
}

impl RuntimeSpan {
    /// `future`, run in this span; the span lives on (for what is recorded after).
    ///
    /// Not an `async fn`: one would keep `future` twice in its state (as its argument and
    /// inside the wrapper it awaits), and a request's future is several KB that each box and
    /// move copies.
    pub(crate) fn run<F: Future>(
        &self,
        future: F,
    ) -> Either<InOwnSpan<F>, tracing::instrument::Instrumented<F>> {
        match self {
            Self::Own(s) => Either::Left(s.in_span(future)),
            Self::Tracing(s) => Either::Right(future.instrument(s.clone())),
        }
    }

    /// Sets string attributes (the fields a `tracing` span declared).
    fn record_strs(&self, attributes: &[(&'static str, &str)]) {
        match self {
            Self::Own(s) => s.record_strs(attributes),
            Self::Tracing(s) if !s.is_disabled() => {
                for (key, value) in attributes {
                    s.record(*key, *value);
                }
            }
            Self::Tracing(_) => {}
        }
    }
}

/// The span of one request (about `task_id`, when the request names one), a child of the
/// caller's span when the request carries `traceparent` (HTTP header or gRPC metadata).
pub(crate) fn request_span(
    agent: &str,
    method: &'static str,
    call: &CallContext,
    task_id: Option<&str>,
) -> RuntimeSpan {
    // By names made once: a name given as `&str` is checked and lowered on every lookup.
    static TRACEPARENT_NAME: HeaderName = HeaderName::from_static(TRACEPARENT);
    static TRACESTATE_NAME: HeaderName = HeaderName::from_static(TRACESTATE);
    let header = |name: &HeaderName| call.headers.get(name).and_then(|v| v.to_str().ok());
    let parent =
        header(&TRACEPARENT_NAME).and_then(|p| TraceParent::parse(p, header(&TRACESTATE_NAME)));
    if let Some(own) = OwnSpan::start(&OWN_TARGET, method, SpanKind::Server, parent.clone()) {
        own.record_strs(&[
            (
                "a2a.binding",
                call.binding
                    .map_or("in_process", a2a_runtime::Binding::as_str),
            ),
            ("a2a.protocol_version", call.protocol_version.as_str()),
            ("a2a.agent", agent),
        ]);
        if let Some(t) = task_id {
            own.record_str("a2a.task_id", t);
        }
        return RuntimeSpan::Own(own);
    }
    RuntimeSpan::Tracing(a2a_telemetry::span_with_parent(parent, || {
        tracing::info_span!(
            target: SPAN_TARGET,
            "a2a.request",
            otel.name = method,
            otel.kind = "server",
            otel.status_code = Empty,
            otel.status_description = Empty,
            a2a.binding = call.binding.map_or("in_process", a2a_runtime::Binding::as_str),
            a2a.protocol_version = call.protocol_version.as_str(),
            a2a.agent = agent,
            a2a.task_id = task_id,
            gen_ai.conversation.id = Empty,
            thread_id = Empty,
            a2a.error_code = Empty,
        )
    }))
}

/// Records the conversation a request was about.
pub(crate) fn record_conversation(span: &RuntimeSpan, context_id: &str) {
    span.record_strs(&[
        ("gen_ai.conversation.id", context_id),
        ("thread_id", context_id),
    ]);
}

/// Records the task and conversation on the current request's span.
pub(crate) fn record_current_ids(task_id: &str, context_id: &str) {
    a2a_telemetry::record_current(&[
        ("a2a.task_id", task_id),
        ("gen_ai.conversation.id", context_id),
        ("thread_id", context_id),
    ]);
}

/// Records how a request ended.
pub(crate) fn record_error(span: &RuntimeSpan, error: &A2aError) {
    match span {
        RuntimeSpan::Own(s) => {
            s.record_i64("a2a.error_code", i64::from(error.code().0));
            s.set_error(error);
        }
        RuntimeSpan::Tracing(s) => {
            s.record("a2a.error_code", error.code().0);
            s.record("otel.status_code", "error");
            s.record("otel.status_description", tracing::field::display(error));
        }
    }
}
