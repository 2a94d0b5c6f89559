//! The trace-context functions also serve applications that install `tracing-opentelemetry`
//! (with the OpenTelemetry SDK) instead of this crate's layer.

use opentelemetry::trace::TracerProvider as _;
use tracing_subscriber::layer::SubscriberExt as _;

#[test]
fn a_remote_parent_and_the_current_context_go_through_tracing_opentelemetry() {
    let provider = opentelemetry_sdk::trace::SdkTracerProvider::builder().build();
    let subscriber = tracing_subscriber::registry()
        .with(tracing_opentelemetry::layer().with_tracer(provider.tracer("test")));
    let remote = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
    let seen = tracing::subscriber::with_default(subscriber, || {
        let parent = a2a_telemetry::TraceParent::parse(remote, Some("a=b"));
        let span = a2a_telemetry::span_with_parent(parent, || tracing::info_span!("req"));
        let _g = span.enter();
        a2a_telemetry::add_event("e", || vec![("k", "v".into())]);
        a2a_telemetry::current_trace_context()
    });
    let (parent, state) = seen.expect("the bridge's span context");
    let p = a2a_telemetry::TraceParent::parse(&parent, None).expect("a valid traceparent");
    assert_eq!(
        p.trace_id,
        a2a_telemetry::TraceParent::parse(remote, None)
            .unwrap()
            .trace_id,
        "the span continues the caller's trace"
    );
    assert_ne!(
        p.span_id[..],
        [0x00, 0xf0, 0x67, 0xaa, 0x0b, 0xa9, 0x02, 0xb7][..]
    );
    assert_eq!(state.as_deref(), Some("a=b"));
}

#[test]
fn without_any_layer_there_is_no_context() {
    let subscriber = tracing_subscriber::registry();
    let seen = tracing::subscriber::with_default(subscriber, || {
        let span = tracing::info_span!("req");
        let _g = span.enter();
        a2a_telemetry::current_trace_context()
    });
    assert_eq!(seen, None);
}
