//! `a2a otlp-sink`: an OTLP/HTTP trace receiver that decodes and counts what it is sent,
//! for measuring the cost of trace export without an OpenTelemetry Collector installed.
//! `GET /stats` answers `{"requests": N, "spans": M}`.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use anyhow::Context;
use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::StatusCode;
use axum::routing::{get, post};
use clap::Args;
use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use prost::Message as _;

#[derive(Debug, Args)]
pub(crate) struct OtlpSinkArgs {
    /// Address to listen on.
    #[arg(long, default_value = "127.0.0.1")]
    host: String,
    /// Port to listen on (OTLP/HTTP's is 4318).
    #[arg(long, default_value_t = 4318)]
    port: u16,
}

#[derive(Default)]
struct Counts {
    requests: AtomicU64,
    spans: AtomicU64,
}

async fn traces(State(counts): State<Arc<Counts>>, body: Bytes) -> StatusCode {
    let Ok(req) = ExportTraceServiceRequest::decode(body) else {
        return StatusCode::BAD_REQUEST;
    };
    let spans: usize = req
        .resource_spans
        .iter()
        .flat_map(|r| &r.scope_spans)
        .map(|s| s.spans.len())
        .sum();
    counts.requests.fetch_add(1, Ordering::Relaxed);
    counts.spans.fetch_add(spans as u64, Ordering::Relaxed);
    StatusCode::OK
}

async fn stats(State(counts): State<Arc<Counts>>) -> axum::Json<serde_json::Value> {
    axum::Json(serde_json::json!({
        "requests": counts.requests.load(Ordering::Relaxed),
        "spans": counts.spans.load(Ordering::Relaxed),
    }))
}

pub(crate) async fn run(args: OtlpSinkArgs) -> anyhow::Result<()> {
    let app = Router::new()
        .route("/v1/traces", post(traces))
        .route("/stats", get(stats))
        .with_state(Arc::new(Counts::default()));
    let listener = tokio::net::TcpListener::bind((args.host.as_str(), args.port))
        .await
        .with_context(|| format!("cannot listen on {}:{}", args.host, args.port))?;
    println!("otlp sink on http://{}", listener.local_addr()?);
    axum::serve(listener, app)
        .with_graceful_shutdown(a2a_server::shutdown_signal())
        .await?;
    Ok(())
}
