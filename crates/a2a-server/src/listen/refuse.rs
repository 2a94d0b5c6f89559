//! Connections over the limit: answered in the protocol their client speaks, then closed.

use std::time::Duration;

use hyper_util::rt::{TokioExecutor, TokioIo};
use hyper_util::server::conn::auto;
use tokio::net::TcpStream;

use super::Tls;

/// Connections over the limit answered at once; more are closed unanswered.
pub(super) const REFUSALS_AT_ONCE: usize = 64;

/// Longest a refusal may take (TLS handshake, request head, answer).
pub(super) const REFUSAL_BUDGET: Duration = Duration::from_secs(2);

/// Answers every request of a connection over the limit in the protocol its client speaks
/// (HTTP/1.1 or HTTP/2, over TLS when the server is), then closes it: `503` with
/// `Retry-After` (gRPC requests: status `UNAVAILABLE`), so a client sees a refusal it
/// understands, not a stray HTTP/1.1 answer written before its TLS handshake or preface.
pub(super) async fn refuse(
    tcp: TcpStream,
    tls: Option<Tls>,
    builder: &auto::Builder<TokioExecutor>,
) {
    let service = hyper::service::service_fn(|req: axum::http::Request<hyper::body::Incoming>| {
        let grpc = req
            .headers()
            .get(axum::http::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|ct| ct.starts_with("application/grpc"));
        async move { Ok::<_, std::convert::Infallible>(refusal(grpc)) }
    });
    match tls {
        None => {
            let _ = builder.serve_connection(TokioIo::new(tcp), service).await;
        }
        Some(tls) => {
            if let Ok(stream) = tls.0.accept(tcp).await {
                let _ = builder
                    .serve_connection(TokioIo::new(stream), service)
                    .await;
            }
        }
    }
}

/// The answer to a request on a connection over the limit.
fn refusal(grpc: bool) -> axum::http::Response<axum::body::Body> {
    const WHY: &str = "too many connections; retry shortly";
    let mut resp = if grpc {
        // A gRPC "trailers-only" answer: the status in the headers.
        let mut resp = axum::http::Response::new(axum::body::Body::empty());
        let headers = resp.headers_mut();
        headers.insert(
            "content-type",
            axum::http::HeaderValue::from_static("application/grpc"),
        );
        headers.insert("grpc-status", axum::http::HeaderValue::from_static("14"));
        headers.insert(
            "grpc-message",
            axum::http::HeaderValue::from_static("too%20many%20connections;%20retry%20shortly"),
        );
        resp
    } else {
        let body =
            format!(r#"{{"error":{{"code":503,"status":"UNAVAILABLE","message":"{WHY}"}}}}"#);
        let mut resp = axum::http::Response::new(axum::body::Body::from(body));
        *resp.status_mut() = axum::http::StatusCode::SERVICE_UNAVAILABLE;
        resp.headers_mut().insert(
            "content-type",
            axum::http::HeaderValue::from_static("application/json"),
        );
        resp
    };
    resp.headers_mut()
        .insert("retry-after", axum::http::HeaderValue::from_static("1"));
    // HTTP/1.1: close after this answer (HTTP/2 connections end with the refusal's budget).
    resp.headers_mut()
        .insert("connection", axum::http::HeaderValue::from_static("close"));
    resp
}
