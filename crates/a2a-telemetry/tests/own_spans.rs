//! Own spans (recorded without `tracing`) export with the right parents, attributes,
//! events and status, and `tracing` spans made inside them are their children; checked with
//! a real OTLP/HTTP receiver on loopback.

mod common;

use a2a_telemetry::{ExportConfig, OwnSpan, OwnTarget, SpanKind, TraceParent};
use opentelemetry_proto::tonic::trace::v1::Span;
use tracing_subscriber::Layer as _;
use tracing_subscriber::layer::SubscriberExt as _;

static TEST: OwnTarget = OwnTarget::new("a2a::test");
static OTHER: OwnTarget = OwnTarget::new("other");

fn attr(span: &Span, key: &str) -> Option<String> {
    use opentelemetry_proto::tonic::common::v1::any_value::Value;
    let kv = span.attributes.iter().find(|kv| kv.key == key)?;
    match kv.value.as_ref()?.value.as_ref()? {
        Value::StringValue(s) => Some(s.clone()),
        Value::IntValue(i) => Some(i.to_string()),
        other => Some(format!("{other:?}")),
    }
}

#[test]
fn own_spans_nest_and_export() {
    let (url, bodies) = common::collector();
    let mut config = ExportConfig::default().with_endpoint(url);
    config.service_name = Some("own-test".into());
    let (layer, exporter) = config.start().unwrap();
    assert!(exporter.record_own_spans(|target| target.starts_with("a2a")));
    let remote = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

    // As the CLI installs them: export filtered to INFO, and a log layer that also sees
    // DEBUG spans (which are then not exported and must not break the parent links).
    let export_filter =
        tracing_subscriber::filter::Targets::new().with_target("own_spans", tracing::Level::INFO);
    let log = tracing_subscriber::fmt::layer()
        .with_writer(std::io::sink)
        .with_filter(tracing_subscriber::filter::LevelFilter::DEBUG);
    let subscriber = tracing_subscriber::registry()
        .with(log)
        .with(layer.with_filter(export_filter));
    let seen = tracing::subscriber::with_default(subscriber, || {
        assert!(
            OwnSpan::start(&OTHER, "x", SpanKind::Internal, None).is_none(),
            "a target the exporter does not want"
        );
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        rt.block_on(async {
            let parent = TraceParent::parse(remote, None);
            let request = OwnSpan::start(&TEST, "SendMessage", SpanKind::Server, parent)
                .expect("wanted and sampled");
            request.record_str("a2a.agent", "Echo");
            let seen = request
                .in_span(async {
                    let task = OwnSpan::start(&TEST, "execute", SpanKind::Internal, None).unwrap();
                    task.run(async {
                        tracing::info_span!("tool", n = 3).in_scope(|| {
                            a2a_telemetry::add_event("inside tool", Vec::new);
                        });
                        tokio::task::yield_now().await;
                        tracing::debug_span!("log only").in_scope(|| {
                            let _made = tracing::info_span!("made under a log-only span");
                            tracing::info!(step = 2, "agent says");
                        });
                        a2a_telemetry::add_event("a2a.task.status", || {
                            vec![("a2a.state", "TASK_STATE_COMPLETED".into())]
                        });
                        a2a_telemetry::record_current(&[("a2a.state", "TASK_STATE_COMPLETED")]);
                        a2a_telemetry::current_trace_context()
                    })
                    .await
                })
                .await;
            request.set_error("boom");
            seen
        })
    });
    exporter.shutdown();

    let spans = common::spans(&bodies);
    let find = |name: &str| {
        spans
            .iter()
            .find(|s| s.name == name)
            .unwrap_or_else(|| panic!("no {name} span in {spans:#?}"))
    };
    let (request, task, tool) = (find("SendMessage"), find("execute"), find("tool"));
    let remote = TraceParent::parse(remote, None).unwrap();
    assert_eq!(request.trace_id, remote.trace_id);
    assert_eq!(request.parent_span_id, remote.span_id);
    assert_eq!(request.kind, 2, "server");
    assert_eq!(attr(request, "a2a.agent").as_deref(), Some("Echo"));
    let status = request.status.as_ref().unwrap();
    assert_eq!((status.code, status.message.as_str()), (2, "boom"));
    assert_eq!(task.trace_id, remote.trace_id);
    assert_eq!(
        task.parent_span_id, request.span_id,
        "the task runs in the request"
    );
    assert_eq!(
        tool.parent_span_id, task.span_id,
        "a tracing span made in the task"
    );
    assert_eq!(attr(tool, "n").as_deref(), Some("3"));
    let made = find("made under a log-only span");
    assert_eq!(
        made.parent_span_id, task.span_id,
        "a span only the log layer sees is not a link"
    );
    assert_eq!(
        tool.events.len(),
        1,
        "the event inside the tool span is the tool's"
    );
    let names: Vec<&str> = task.events.iter().map(|e| e.name.as_str()).collect();
    assert_eq!(
        names,
        ["agent says", "a2a.task.status"],
        "a tracing event in the task is the task's"
    );
    assert_eq!(
        attr(task, "a2a.state").as_deref(),
        Some("TASK_STATE_COMPLETED")
    );
    let (traceparent, _) = seen.expect("a trace context inside the task");
    let p = TraceParent::parse(&traceparent, None).unwrap();
    assert_eq!(
        p.span_id[..],
        task.span_id[..],
        "calls from the task continue it"
    );
}
