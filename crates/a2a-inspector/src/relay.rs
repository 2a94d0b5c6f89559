//! The relay: a browser cannot call most agents directly (they send no CORS headers), so the
//! console calls them through the host. `POST /inspector/api/relay` with the target in
//! headers (`X-Relay-Url`, `X-Relay-Method`, and the target's own headers as a JSON object
//! in `X-Relay-Headers`) and the body to send; the answer is the target's status and body,
//! streamed (SSE included), with its headers as a JSON object in `X-Relay-Headers`.
//!
//! Only for a caller allowed to use the console, and only where push notifications may go:
//! loopback, private, link-local and metadata addresses are refused (before the call for
//! literal addresses, after DNS for names) unless the host allow-lists them; this host's own
//! base URL is allowed, except the console's own paths (no relay through the relay).
//! Redirects are not followed.

use std::sync::Arc;

use axum::Router;
use axum::body::Body;
use axum::extract::State;
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode};
use axum::response::Response;
use axum::routing::post;
use futures::TryStreamExt;

use crate::access::{Shared, relay_error, relayed_headers};

/// Largest request body relayed.
const MAX_BODY: usize = 10 * 1024 * 1024;

pub(crate) fn routes(shared: Arc<Shared>) -> Router {
    Router::new()
        .route(&format!("{}/api/relay", crate::PATH), post(relay))
        .layer(axum::extract::DefaultBodyLimit::max(MAX_BODY))
        .with_state(shared)
}

async fn relay(
    State(shared): State<Arc<Shared>>,
    headers: HeaderMap,
    body: bytes::Bytes,
) -> Response {
    if let Err(refusal) = shared.admit(&headers).await {
        return refusal;
    }
    let header = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
    let Some(target) = header("x-relay-url") else {
        return relay_error(StatusCode::BAD_REQUEST, "X-Relay-Url is missing");
    };
    let (url, client) = match shared.target(target) {
        Ok(t) => t,
        Err(why) => return relay_error(StatusCode::FORBIDDEN, why),
    };
    let method =
        match header("x-relay-method").unwrap_or(if body.is_empty() { "GET" } else { "POST" }) {
            m if m.eq_ignore_ascii_case("GET") => Method::GET,
            m if m.eq_ignore_ascii_case("POST") => Method::POST,
            m if m.eq_ignore_ascii_case("DELETE") => Method::DELETE,
            m if m.eq_ignore_ascii_case("PUT") => Method::PUT,
            m => {
                return relay_error(
                    StatusCode::BAD_REQUEST,
                    format!("method {m} is not relayed"),
                );
            }
        };
    let out = match relayed_headers(&headers, &[]) {
        Ok(h) => h,
        Err(why) => return relay_error(StatusCode::BAD_REQUEST, why),
    };
    let sent = client
        .request(method, url.clone())
        .headers(out)
        .body(body)
        .send()
        .await;
    let resp = match sent {
        Ok(r) => r,
        Err(e) => {
            return relay_error(
                StatusCode::BAD_GATEWAY,
                format!("{url}: {}", a2a_client::describe_http_error(&e)),
            );
        }
    };
    let status = StatusCode::from_u16(resp.status().as_u16()).unwrap_or(StatusCode::BAD_GATEWAY);
    let mut seen = serde_json::Map::new();
    for (name, value) in resp.headers() {
        if let Ok(v) = value.to_str() {
            seen.insert(name.as_str().to_owned(), v.into());
        }
    }
    let content_type = resp.headers().get(reqwest::header::CONTENT_TYPE).cloned();
    let stream = resp.bytes_stream().map_err(std::io::Error::other);
    let mut answer = Response::new(Body::from_stream(stream));
    *answer.status_mut() = status;
    if let Some(ct) = content_type.and_then(|v| HeaderValue::from_bytes(v.as_bytes()).ok()) {
        answer.headers_mut().insert(http::header::CONTENT_TYPE, ct);
    }
    if let Ok(v) = HeaderValue::from_str(&serde_json::Value::Object(seen).to_string()) {
        answer.headers_mut().insert("x-relay-headers", v);
    }
    answer.headers_mut().insert(
        http::header::CACHE_CONTROL,
        HeaderValue::from_static("no-store"),
    );
    answer
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inner_addresses_and_the_console_itself_are_refused() {
        let mut config = crate::InspectorConfig::new("http://127.0.0.1:41241");
        config.reach_out = true;
        config.policy.allowed_hosts = vec!["localhost".into()];
        let shared = Shared::new(config);
        let check_target = |s: &Shared, url: &str| s.target(url).map(|_| ());
        for url in [
            "http://127.0.0.1:5432/",
            "http://10.0.0.7/a2a",
            "http://169.254.169.254/latest/meta-data",
            "http://127.0.0.1:41241/inspector/api/relay",
            "http://localhost:41241/inspector/api/relay",
            "http://127.0.0.1:41241/inspector/hooks/x",
            "file:///etc/passwd",
        ] {
            assert!(check_target(&shared, url).is_err(), "{url} was allowed");
        }
        for url in [
            "http://127.0.0.1:41241/a2a/echo",
            "https://agents.example.com/a2a/echo",
        ] {
            assert!(check_target(&shared, url).is_ok(), "{url} was refused");
        }
        // A host that may not reach out reaches only itself.
        let shared = Shared::new(crate::InspectorConfig::new("http://0.0.0.0:41241"));
        assert!(check_target(&shared, "https://agents.example.com/a2a/echo").is_err());
        assert!(check_target(&shared, "http://0.0.0.0:41241/a2a/echo").is_ok());
    }
}
