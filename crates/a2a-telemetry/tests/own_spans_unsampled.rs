//! Own spans of unsampled traces record nothing and are not exported, but pass their ids
//! on with the sampled flag off; a sampled caller still gets its spans under a parent-based
//! sampler. (A test binary of its own: the sampler is fixed when the exporter is installed.)

mod common;

use a2a_telemetry::{ExportConfig, OwnSpan, OwnTarget, Sampler, SpanKind, TraceParent};
use tracing_subscriber::layer::SubscriberExt as _;

static TEST: OwnTarget = OwnTarget::new("a2a::test");

#[test]
fn unsampled_own_spans_propagate_but_are_not_exported() {
    let (url, bodies) = common::collector();
    let mut config = ExportConfig::default().with_endpoint(url);
    config.sampler = Sampler::parse("parentbased_always_off", None).unwrap();
    let (layer, exporter) = config.start().unwrap();
    assert!(exporter.record_own_spans(|_| true));
    let subscriber = tracing_subscriber::registry().with(layer);
    let (unsampled, sampled) = tracing::subscriber::with_default(subscriber, || {
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        rt.block_on(async {
            let root = OwnSpan::start(&TEST, "Unsampled", SpanKind::Server, None)
                .expect("an own span, even unsampled");
            root.record_str("a2a.agent", "Echo");
            let unsampled = root
                .in_span(async {
                    let _child = tracing::info_span!("child").entered();
                    a2a_telemetry::current_trace_context()
                })
                .await;
            drop(root);
            let caller = TraceParent::parse(
                "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
                None,
            );
            let request = OwnSpan::start(&TEST, "Sampled", SpanKind::Server, caller).unwrap();
            let sampled = request
                .in_span(async { a2a_telemetry::current_trace_context() })
                .await;
            (unsampled, sampled)
        })
    });
    exporter.shutdown();
    let names: Vec<String> = common::spans(&bodies).into_iter().map(|s| s.name).collect();
    assert_eq!(
        names,
        ["Sampled"],
        "only the sampled caller's span is exported"
    );
    let (unsampled, _) = unsampled.expect("ids are passed on");
    assert!(unsampled.ends_with("-00"), "{unsampled}");
    let (sampled, _) = sampled.unwrap();
    assert!(sampled.ends_with("-01"), "{sampled}");
}
