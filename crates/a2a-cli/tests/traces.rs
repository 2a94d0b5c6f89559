//! A conversation that crosses two agents on two hosts arrives at an OpenTelemetry
//! collector as one trace: the client's call, the first host's request and task, its call to
//! the second host (over gRPC, the trace context in metadata), and the second host's request
//! and task, each the child of the one before, with the conversation id on the server spans.
//! One host exports over OTLP/HTTP, the other over OTLP/gRPC, to a receiver this test runs.

mod common;

use std::collections::HashMap;
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

use common::*;
use opentelemetry_proto::tonic::collector::trace::v1::trace_service_server::{
    TraceService, TraceServiceServer,
};
use opentelemetry_proto::tonic::collector::trace::v1::{
    ExportTraceServiceRequest, ExportTraceServiceResponse,
};
use opentelemetry_proto::tonic::common::v1::any_value::Value;
use prost::Message as _;

/// One received span, flattened.
#[derive(Debug, Clone)]
struct Span {
    service: String,
    trace_id: Vec<u8>,
    span_id: Vec<u8>,
    parent: Vec<u8>,
    name: String,
    kind: i32,
    attrs: HashMap<String, String>,
    events: Vec<(String, HashMap<String, String>)>,
}

const SERVER: i32 = 2;
const CLIENT: i32 = 3;

#[derive(Default)]
struct Received {
    spans: Mutex<Vec<Span>>,
    arrived: Condvar,
}

fn text(v: &Option<opentelemetry_proto::tonic::common::v1::AnyValue>) -> String {
    match v.as_ref().and_then(|v| v.value.as_ref()) {
        Some(Value::StringValue(s)) => s.clone(),
        Some(Value::IntValue(i)) => i.to_string(),
        Some(Value::BoolValue(b)) => b.to_string(),
        Some(Value::DoubleValue(d)) => d.to_string(),
        other => format!("{other:?}"),
    }
}

fn attrs(kvs: &[opentelemetry_proto::tonic::common::v1::KeyValue]) -> HashMap<String, String> {
    kvs.iter()
        .map(|kv| (kv.key.clone(), text(&kv.value)))
        .collect()
}

impl Received {
    fn add(&self, req: ExportTraceServiceRequest) {
        let mut spans = self.spans.lock().unwrap();
        for rs in req.resource_spans {
            let resource = rs
                .resource
                .map(|r| attrs(&r.attributes))
                .unwrap_or_default();
            let service = resource.get("service.name").cloned().unwrap_or_default();
            for ss in rs.scope_spans {
                for s in ss.spans {
                    spans.push(Span {
                        service: service.clone(),
                        trace_id: s.trace_id,
                        span_id: s.span_id,
                        parent: s.parent_span_id,
                        name: s.name,
                        kind: s.kind,
                        attrs: attrs(&s.attributes),
                        events: s
                            .events
                            .iter()
                            .map(|e| (e.name.clone(), attrs(&e.attributes)))
                            .collect(),
                    });
                }
            }
        }
        self.arrived.notify_all();
    }

    /// Waits until `done` holds for the spans received, up to `within`.
    fn wait_for(&self, within: Duration, done: impl Fn(&[Span]) -> bool) -> Vec<Span> {
        let spans = self.spans.lock().unwrap();
        let (spans, _) = self
            .arrived
            .wait_timeout_while(spans, within, |s| !done(s))
            .unwrap();
        spans.clone()
    }
}

struct GrpcReceiver(Arc<Received>);

#[tonic::async_trait]
impl TraceService for GrpcReceiver {
    async fn export(
        &self,
        request: tonic::Request<ExportTraceServiceRequest>,
    ) -> Result<tonic::Response<ExportTraceServiceResponse>, tonic::Status> {
        self.0.add(request.into_inner());
        Ok(tonic::Response::new(ExportTraceServiceResponse::default()))
    }
}

/// An OTLP receiver on one port: `POST /v1/traces` (protobuf over HTTP) and the gRPC
/// `TraceService` (over HTTP/2), both filling `received`.
fn start_collector(received: Arc<Received>) -> String {
    let http = received.clone();
    let app = axum::Router::new()
        .route(
            "/v1/traces",
            axum::routing::post(move |body: axum::body::Bytes| async move {
                match ExportTraceServiceRequest::decode(body) {
                    Ok(req) => {
                        http.add(req);
                        (axum::http::StatusCode::OK, Vec::new())
                    }
                    Err(_) => (axum::http::StatusCode::BAD_REQUEST, Vec::new()),
                }
            }),
        )
        .route_service(
            "/opentelemetry.proto.collector.trace.v1.TraceService/{*method}",
            TraceServiceServer::new(GrpcReceiver(received)),
        );
    let (listener, addr) = loopback_listener();
    serve_app(listener, app);
    format!("http://{addr}")
}

fn find<'a>(spans: &'a [Span], what: &str, pred: impl Fn(&Span) -> bool) -> &'a Span {
    spans
        .iter()
        .find(|s| pred(s))
        .unwrap_or_else(|| panic!("no {what} among {spans:#?}"))
}

/// Whether `span` descends from `ancestor` (directly or through spans in `spans`).
fn descends(spans: &[Span], span: &Span, ancestor: &Span) -> bool {
    let mut parent = span.parent.clone();
    for _ in 0..16 {
        if parent == ancestor.span_id {
            return true;
        }
        match spans.iter().find(|s| s.span_id == parent) {
            Some(p) => parent = p.parent.clone(),
            None => return false,
        }
    }
    false
}

#[test]
fn a_conversation_across_two_agents_is_one_trace() {
    let received = Arc::new(Received::default());
    let collector = start_collector(received.clone());
    let quick = ("OTEL_BSP_SCHEDULE_DELAY", "50");

    // Host B: the demo agents, exporting over OTLP/gRPC.
    let b = serve_env(
        &["--store", "memory"],
        &[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", collector.as_str()),
            ("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc"),
            ("OTEL_SERVICE_NAME", "host-b"),
            quick,
        ],
    );
    // Host A: one agent that forwards to B's echo over gRPC, exporting over OTLP/HTTP.
    let dir = std::env::temp_dir().join(format!("a2a-traces-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let config = dir.join("agents.toml");
    std::fs::write(
        &config,
        format!(
            "[[agents]]\nid = \"relay\"\nkind = \"remote\"\nname = \"Relay\"\n\
             description = \"Forwards to B\"\nurl = \"{}/a2a/echo\"\nbinding = \"grpc\"\n",
            b.base
        ),
    )
    .unwrap();
    let a = serve_env(
        &[
            "--config",
            config.to_str().unwrap(),
            "--store",
            "memory",
            "--otlp-endpoint",
            &collector,
        ],
        &[("OTEL_SERVICE_NAME", "host-a"), quick],
    );

    // The caller: the CLI, exporting its own span too.
    let out = std::process::Command::new(BIN)
        .args([
            "send",
            &format!("{}/a2a/relay", a.base),
            "task: traced",
            "--blocking",
        ])
        .args(["--json", "--otlp-endpoint", &collector])
        .env("OTEL_SERVICE_NAME", "caller")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let context_a = v["task"]["contextId"].as_str().unwrap().to_owned();

    let is_task = |s: &Span, service: &str| s.service == service && s.name == "execute";
    let spans = received.wait_for(Duration::from_secs(20), |spans| {
        ["host-a", "host-b"]
            .iter()
            .all(|svc| spans.iter().any(|s| is_task(s, svc)))
            && spans
                .iter()
                .any(|s| s.service == "caller" && s.kind == CLIENT)
    });

    let caller = find(&spans, "caller span", |s| {
        s.service == "caller" && s.kind == CLIENT && s.name == "SendMessage"
    });
    let a_request = find(&spans, "host A request span", |s| {
        s.service == "host-a" && s.kind == SERVER && s.name == "SendMessage"
    });
    let a_task = find(&spans, "host A task span", |s| is_task(s, "host-a"));
    let a_call = find(&spans, "host A call to B", |s| {
        s.service == "host-a" && s.kind == CLIENT
    });
    let b_request = find(&spans, "host B request span", |s| {
        s.service == "host-b" && s.kind == SERVER && s.name.starts_with("Send")
    });
    let b_task = find(&spans, "host B task span", |s| is_task(s, "host-b"));

    // One trace.
    for s in [a_request, a_task, a_call, b_request, b_task] {
        assert_eq!(s.trace_id, caller.trace_id, "{s:#?} is in another trace");
    }
    // Each step the child of the one before, across processes.
    assert_eq!(
        a_request.parent, caller.span_id,
        "A's request continues the caller"
    );
    assert_eq!(
        a_task.parent, a_request.span_id,
        "A's task runs under its request"
    );
    assert!(
        descends(&spans, a_call, a_task),
        "A's call to B is made by its task"
    );
    assert_eq!(
        b_request.parent, a_call.span_id,
        "B's request continues A's call"
    );
    assert_eq!(
        b_task.parent, b_request.span_id,
        "B's task runs under its request"
    );

    // Thread attributes: the conversation id on the server spans.
    for s in [a_request, a_task] {
        assert_eq!(s.attrs["gen_ai.conversation.id"], context_a, "{s:#?}");
        assert_eq!(s.attrs["thread_id"], context_a, "{s:#?}");
    }
    let context_b = &b_task.attrs["gen_ai.conversation.id"];
    assert!(!context_b.is_empty());
    assert_eq!(&b_request.attrs["gen_ai.conversation.id"], context_b);
    assert_eq!(a_request.attrs["a2a.protocol_version"], "1.0");
    assert_eq!(a_request.attrs["a2a.binding"], "jsonrpc");
    assert_eq!(b_request.attrs["a2a.binding"], "grpc");
    assert_eq!(a_request.attrs["a2a.agent"], "Relay");

    // The task's transitions are events of its span.
    let states: Vec<&str> = b_task
        .events
        .iter()
        .filter(|(name, _)| name == "a2a.task.status")
        .map(|(_, a)| a["a2a.state"].as_str())
        .collect();
    assert!(
        states.contains(&"TASK_STATE_COMPLETED"),
        "B's task events: {:?}",
        b_task.events
    );
    assert_eq!(
        b_task.attrs.get("a2a.state").map(String::as_str),
        Some("TASK_STATE_COMPLETED"),
        "{b_task:#?}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
