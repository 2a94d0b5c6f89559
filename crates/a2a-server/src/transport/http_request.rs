//! What every HTTP binding reads from a request: the call's context from its headers, its
//! media type, and its body within the size limit.

use std::sync::Arc;

use a2a_types::{A2aError, ProtocolVersion};
use axum::body::{Body, Bytes};
use axum::http::{HeaderMap, HeaderName, HeaderValue, StatusCode, header};
use bytes::BytesMut;

use a2a_runtime::{Binding, CallContext};

static LAST_EVENT_ID: HeaderName = HeaderName::from_static("last-event-id");
static EXTENSIONS: HeaderName = HeaderName::from_static("a2a-extensions");
static EXTENSIONS_V03: HeaderName = HeaderName::from_static("x-a2a-extensions");

pub(crate) fn last_event_id(headers: &HeaderMap) -> Option<u64> {
    headers
        .get(&LAST_EVENT_ID)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse().ok())
}

/// Who calls: the address the accept loop recorded (none in tests that call the router
/// directly) and the principal authentication found (none without authentication).
pub(crate) type Caller = (Option<std::net::SocketAddr>, Option<crate::auth::Principal>);

/// The caller of a request with these extensions.
pub(crate) fn caller_of(extensions: &axum::http::Extensions) -> Caller {
    (
        extensions.get::<crate::limits::PeerAddr>().map(|p| p.0),
        extensions.get::<crate::auth::Principal>().cloned(),
    )
}

/// Extracts the [`Caller`] (never fails).
pub(crate) struct Peer(pub(crate) Caller);

impl<S: Send + Sync> axum::extract::FromRequestParts<S> for Peer {
    type Rejection = std::convert::Infallible;

    async fn from_request_parts(
        parts: &mut axum::http::request::Parts,
        _: &S,
    ) -> Result<Self, Self::Rejection> {
        Ok(Self(caller_of(&parts.extensions)))
    }
}

pub(crate) fn call_context(
    binding: Binding,
    version: ProtocolVersion,
    headers: HeaderMap,
    (peer, principal): Caller,
) -> Arc<CallContext> {
    let extensions = [&EXTENSIONS, &EXTENSIONS_V03]
        .into_iter()
        .flat_map(|h| headers.get_all(h).iter())
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(String::from)
        .collect();
    let mut call = CallContext::new(version);
    // v1.0's SubscribeToTask resumes after this event (v0.3's resubscribe never did).
    if version == ProtocolVersion::V1 {
        call.last_event_id = last_event_id(&headers);
    }
    call.extensions = extensions;
    call.headers = owned(headers);
    call.binding = Some(binding);
    call.peer = peer;
    call.principal = principal;
    Arc::new(call)
}

/// `headers` with their values copied out of the connection's read buffer. The values hyper
/// parses share that buffer (8 KiB), so a context holding them would keep it allocated for
/// as long as the context lives: through the whole of a stream, or of a task that runs on
/// after its client left, while hyper reads the connection into a buffer of its own. One
/// allocation holds every value; names are already owned.
fn owned(mut headers: HeaderMap) -> HeaderMap {
    let len = headers.values().map(HeaderValue::len).sum();
    let mut copy = BytesMut::with_capacity(len);
    for value in headers.values() {
        copy.extend_from_slice(value.as_bytes());
    }
    let copy = copy.freeze();
    let mut at = 0;
    for value in headers.values_mut() {
        let end = at + value.len();
        if let Ok(mut fresh) = HeaderValue::from_maybe_shared(copy.slice(at..end)) {
            fresh.set_sensitive(value.is_sensitive());
            *value = fresh;
        }
        at = end;
    }
    headers
}

/// The request's media type when it is not JSON (`application/json`, `application/*+json`,
/// `application/json-rpc`). A request without `Content-Type` is read as JSON.
pub(crate) fn unsupported_content_type(headers: &HeaderMap) -> Option<String> {
    let value = headers.get(header::CONTENT_TYPE)?;
    // What nearly every client sends, answered without splitting and trimming it (about
    // 250 instructions a request).
    if value.as_bytes() == b"application/json" {
        return None;
    }
    let Ok(text) = value.to_str() else {
        return Some(String::from_utf8_lossy(value.as_bytes()).into_owned());
    };
    let essence = text.split(';').next().unwrap_or("").trim();
    let json = essence.eq_ignore_ascii_case("application/json")
        || essence.eq_ignore_ascii_case("application/json-rpc")
        || (essence.len() > "application/+json".len()
            && essence
                .get(..12)
                .is_some_and(|s| s.eq_ignore_ascii_case("application/"))
            && essence
                .get(essence.len() - 5..)
                .is_some_and(|s| s.eq_ignore_ascii_case("+json")));
    (!json).then(|| essence.to_owned())
}

/// The body, read up to `limit` bytes: 413 beyond it (by `Content-Length` or as read), 400
/// when it cannot be read.
pub(crate) async fn read_body(
    body: Body,
    headers: &HeaderMap,
    limit: usize,
) -> Result<Bytes, (StatusCode, A2aError)> {
    let too_large = || {
        let err = A2aError::InvalidRequest {
            detail: format!("request body exceeds the limit of {limit} bytes"),
        };
        (StatusCode::PAYLOAD_TOO_LARGE, err)
    };
    let declared = headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<usize>().ok());
    if declared.is_some_and(|n| n > limit) {
        return Err(too_large());
    }
    axum::body::to_bytes(body, limit).await.map_err(|e| {
        // `to_bytes` wraps the limit error; find it in the cause chain.
        let mut cause: Option<&(dyn std::error::Error + 'static)> = Some(&e);
        while let Some(c) = cause {
            if c.is::<http_body_util::LengthLimitError>() {
                return too_large();
            }
            cause = c.source();
        }
        let err = A2aError::InvalidRequest {
            detail: "could not read the request body".into(),
        };
        (StatusCode::BAD_REQUEST, err)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn owned_headers_keep_every_value_and_share_nothing_with_the_request() {
        // Values sliced out of one buffer, as hyper parses them.
        let buffer = Bytes::from_static(b"text/plainBearer secretfirstsecond");
        let slice =
            |a: usize, b: usize| HeaderValue::from_maybe_shared(buffer.slice(a..b)).unwrap();
        let mut headers = HeaderMap::new();
        headers.insert(header::CONTENT_TYPE, slice(0, 10));
        let mut auth = slice(10, 23);
        auth.set_sensitive(true);
        headers.insert(header::AUTHORIZATION, auth);
        headers.append("x-many", slice(23, 28));
        headers.append("x-many", slice(28, 34));

        let copy = owned(headers.clone());
        assert_eq!(copy, headers);
        assert!(copy[header::AUTHORIZATION].is_sensitive());
        assert!(!copy[header::CONTENT_TYPE].is_sensitive());
        let many: Vec<_> = copy.get_all("x-many").iter().collect();
        assert_eq!(many, ["first", "second"]);
        let inside = buffer.as_ptr_range();
        for value in copy.values() {
            assert!(
                !inside.contains(&value.as_bytes().as_ptr()),
                "{value:?} still points into the request buffer"
            );
        }
    }
}
