//! Own spans of unsampled traces record nothing and are not exported, but pass their ids
//! on with the sampled flag off; a sampled caller still gets its spans under a parent-based
//! sampler. (A test binary of its own: the sampler is fixed when the exporter is installed.)

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::sync::mpsc;

use a2a_telemetry::{ExportConfig, OwnSpan, OwnTarget, Sampler, SpanKind, TraceParent};
use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use prost::Message as _;
use tracing_subscriber::layer::SubscriberExt as _;

static TEST: OwnTarget = OwnTarget::new("a2a::test");

/// A minimal OTLP/HTTP receiver: every request body is sent on the channel, answered 200.
fn collector() -> (String, mpsc::Receiver<Vec<u8>>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for conn in listener.incoming() {
            let Ok(conn) = conn else { return };
            let tx = tx.clone();
            std::thread::spawn(move || {
                let mut reader = BufReader::new(conn.try_clone().unwrap());
                let mut writer = conn;
                loop {
                    let mut length = 0usize;
                    loop {
                        let mut line = String::new();
                        if reader.read_line(&mut line).unwrap_or(0) == 0 {
                            return;
                        }
                        let line = line.trim_end();
                        if line.is_empty() {
                            break;
                        }
                        if let Some((k, v)) = line.split_once(':')
                            && k.eq_ignore_ascii_case("content-length")
                        {
                            length = v.trim().parse().unwrap();
                        }
                    }
                    let mut body = vec![0; length];
                    reader.read_exact(&mut body).unwrap();
                    let _ = tx.send(body);
                    writer
                        .write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n")
                        .unwrap();
                }
            });
        }
    });
    (url, rx)
}

#[test]
fn unsampled_own_spans_propagate_but_are_not_exported() {
    let (url, bodies) = collector();
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
    let names: Vec<String> = bodies
        .try_iter()
        .flat_map(|b| {
            ExportTraceServiceRequest::decode(b.as_slice())
                .unwrap()
                .resource_spans
        })
        .flat_map(|r| r.scope_spans)
        .flat_map(|s| s.spans)
        .map(|s| s.name)
        .collect();
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
