//! `a2a otlp-sink`: an OTLP/HTTP trace receiver that checks and counts what it is sent, for
//! measuring the cost of trace export without an OpenTelemetry Collector installed.
//! `GET /stats` answers `{"requests": N, "spans": M}`.
//!
//! By default it walks the protobuf structure down to the spans (every length checked, no
//! allocation), so that on a benchmark machine it takes little of the CPU the server under
//! test needs (a collector runs elsewhere); `--decode` decodes every span in full instead.

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
    /// Decode every span in full (slower) instead of walking the message's structure.
    #[arg(long)]
    decode: bool,
}

#[derive(Default)]
struct Counts {
    decode: bool,
    requests: AtomicU64,
    spans: AtomicU64,
}

/// Reads a varint at `*at`.
fn varint(buf: &[u8], at: &mut usize) -> Option<u64> {
    let mut value = 0u64;
    for shift in (0..64).step_by(7) {
        let b = *buf.get(*at)?;
        *at += 1;
        value |= u64::from(b & 0x7f) << shift;
        if b < 0x80 {
            return Some(value);
        }
    }
    None
}

/// Calls `each` with every field of the message in `buf` (number, and the bytes of a
/// length-delimited one); `None` when the message is malformed.
fn fields(buf: &[u8], mut each: impl FnMut(u64, &[u8]) -> Option<()>) -> Option<()> {
    let mut at = 0;
    while at < buf.len() {
        let key = varint(buf, &mut at)?;
        match key & 7 {
            0 => {
                varint(buf, &mut at)?;
            }
            1 => at = at.checked_add(8)?,
            2 => {
                let len = usize::try_from(varint(buf, &mut at)?).ok()?;
                let end = at.checked_add(len).filter(|e| *e <= buf.len())?;
                each(key >> 3, &buf[at..end])?;
                at = end;
            }
            5 => at = at.checked_add(4)?,
            _ => return None,
        }
    }
    (at == buf.len()).then_some(())
}

/// The spans in an `ExportTraceServiceRequest`: resource_spans (1) → scope_spans (2) →
/// spans (2), each checked to be a well-formed message.
fn count_spans(body: &[u8]) -> Option<usize> {
    let mut spans = 0;
    fields(body, |n, resource_spans| {
        if n != 1 {
            return Some(());
        }
        fields(resource_spans, |n, scope_spans| {
            if n != 2 {
                return Some(());
            }
            fields(scope_spans, |n, span| {
                if n == 2 {
                    fields(span, |_, _| Some(()))?;
                    spans += 1;
                }
                Some(())
            })
        })
    })?;
    Some(spans)
}

async fn traces(State(counts): State<Arc<Counts>>, body: Bytes) -> StatusCode {
    let spans = if counts.decode {
        ExportTraceServiceRequest::decode(body).ok().map(|req| {
            req.resource_spans
                .iter()
                .flat_map(|r| &r.scope_spans)
                .map(|s| s.spans.len())
                .sum::<usize>()
        })
    } else {
        count_spans(&body)
    };
    let Some(spans) = spans else {
        return StatusCode::BAD_REQUEST;
    };
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
        .with_state(Arc::new(Counts {
            decode: args.decode,
            ..Counts::default()
        }));
    let listener = tokio::net::TcpListener::bind((args.host.as_str(), args.port))
        .await
        .with_context(|| format!("cannot listen on {}:{}", args.host, args.port))?;
    println!("otlp sink on http://{}", listener.local_addr()?);
    axum::serve(listener, app)
        .with_graceful_shutdown(a2a_server::shutdown_signal())
        .await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use opentelemetry_proto::tonic::trace::v1::{ResourceSpans, ScopeSpans, Span};

    use super::*;

    #[test]
    fn the_structural_count_matches_a_full_decode() {
        let span = |name: &str| Span {
            name: name.into(),
            trace_id: vec![1; 16],
            span_id: vec![2; 8],
            ..Span::default()
        };
        let req = ExportTraceServiceRequest {
            resource_spans: vec![ResourceSpans {
                scope_spans: vec![
                    ScopeSpans {
                        spans: vec![span("a"), span("b")],
                        ..ScopeSpans::default()
                    },
                    ScopeSpans {
                        spans: vec![span("c")],
                        ..ScopeSpans::default()
                    },
                ],
                ..ResourceSpans::default()
            }],
        };
        let body = req.encode_to_vec();
        assert_eq!(count_spans(&body), Some(3));
        assert_eq!(count_spans(&body[..body.len() - 1]), None, "truncated");
        assert_eq!(
            count_spans(&[0x0a, 0x05, 0x12]),
            None,
            "a length past the end"
        );
        assert_eq!(count_spans(&[]), Some(0));
    }
}
