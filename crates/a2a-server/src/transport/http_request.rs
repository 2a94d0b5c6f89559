//! What every HTTP binding reads from a request: the call's context from its headers, its
//! media type, and its body within the size limit.

use std::sync::Arc;

use a2a_types::{A2aError, ProtocolVersion};
use axum::body::{Body, Bytes};
use axum::http::{HeaderMap, HeaderName, HeaderValue, StatusCode};
use bytes::BytesMut;

use a2a_runtime::{Binding, CallContext};

static EXTENSIONS: HeaderName = HeaderName::from_static("a2a-extensions");
static EXTENSIONS_V03: HeaderName = HeaderName::from_static("x-a2a-extensions");

/// The request headers the bindings read, found in one walk over the request's headers:
/// each is the first value of its name, what `HeaderMap::get` answers. A lookup by name
/// hashes the name, byte by byte for names outside the standard set (`A2A-Version`,
/// `Last-Event-ID`): the six lookups of a JSON-RPC request cost about 700 instructions.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct Known<'a> {
    pub(crate) content_type: Option<&'a HeaderValue>,
    pub(crate) content_length: Option<&'a HeaderValue>,
    /// `A2A-Version`.
    pub(crate) version: Option<&'a HeaderValue>,
    pub(crate) last_event_id: Option<&'a HeaderValue>,
    /// Whether any `A2A-Extensions` or `X-A2A-Extensions` header is present.
    pub(crate) extensions: bool,
}

impl<'a> Known<'a> {
    pub(crate) fn of(headers: &'a HeaderMap) -> Self {
        let mut known = Self::default();
        for (name, value) in headers {
            // Names are lowercase (`HeaderName` says so).
            let slot = match name.as_str() {
                "content-type" => &mut known.content_type,
                "content-length" => &mut known.content_length,
                "a2a-version" => &mut known.version,
                "last-event-id" => &mut known.last_event_id,
                "a2a-extensions" | "x-a2a-extensions" => {
                    known.extensions = true;
                    continue;
                }
                _ => continue,
            };
            slot.get_or_insert(value);
        }
        known
    }
}

fn last_event_id(value: Option<&HeaderValue>) -> Option<u64> {
    value
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse().ok())
}

/// Who calls: the address the accept loop recorded (none in tests that call the router
/// directly) and the principal authentication found (none without authentication).
pub(crate) type Caller = (Option<std::net::SocketAddr>, Option<crate::auth::Principal>);

/// The caller of a request with these extensions.
pub(crate) fn caller_of(extensions: &axum::http::Extensions) -> Caller {
    (
        peer_of(extensions),
        extensions.get::<crate::auth::Principal>().cloned(),
    )
}

/// The address the accept loop recorded for a request with these extensions.
pub(crate) fn peer_of(extensions: &axum::http::Extensions) -> Option<std::net::SocketAddr> {
    extensions.get::<crate::limits::PeerAddr>().map(|p| p.0)
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
    let known = Known::of(&headers);
    let extensions = if known.extensions {
        [&EXTENSIONS, &EXTENSIONS_V03]
            .into_iter()
            .flat_map(|h| headers.get_all(h).iter())
            .filter_map(|v| v.to_str().ok())
            .flat_map(|v| v.split(','))
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(String::from)
            .collect()
    } else {
        Vec::new()
    };
    let mut call = CallContext::new(version);
    // v1.0's SubscribeToTask resumes after this event (v0.3's resubscribe never did).
    if version == ProtocolVersion::V1 {
        call.last_event_id = last_event_id(known.last_event_id);
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

/// The request's media type (its `Content-Type`) when it is not JSON (`application/json`,
/// `application/*+json`, `application/json-rpc`). A request without one is read as JSON.
pub(crate) fn unsupported_content_type(content_type: Option<&HeaderValue>) -> Option<String> {
    let value = content_type?;
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

/// The body, read up to `limit` bytes: 413 beyond it (by its `Content-Length`, or as read),
/// 400 when it cannot be read.
pub(crate) async fn read_body(
    body: Body,
    content_length: Option<&HeaderValue>,
    limit: usize,
) -> Result<Bytes, (StatusCode, A2aError)> {
    let too_large = || {
        let err = A2aError::InvalidRequest {
            detail: format!("request body exceeds the limit of {limit} bytes"),
        };
        (StatusCode::PAYLOAD_TOO_LARGE, err)
    };
    let declared = content_length
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
    use axum::http::header;

    #[test]
    fn known_headers_are_what_lookups_by_name_find() {
        let mut headers = HeaderMap::new();
        for (name, value) in [
            ("host", "example"),
            ("content-type", "application/json"),
            ("a2a-version", "1.0"),
            ("a2a-version", "0.3"),
            ("content-length", "12"),
            ("last-event-id", "7"),
            ("x-a2a-extensions", "urn:a"),
            ("accept", "*/*"),
        ] {
            headers.append(
                HeaderName::from_static(name),
                HeaderValue::from_static(value),
            );
        }
        let known = Known::of(&headers);
        let get = |name: &str| headers.get(name);
        assert_eq!(known.content_type, get("content-type"));
        assert_eq!(known.content_length, get("content-length"));
        assert_eq!(known.version, get("a2a-version"));
        assert_eq!(known.version.unwrap(), "1.0");
        assert_eq!(known.last_event_id, get("last-event-id"));
        assert!(known.extensions);

        let none = HeaderMap::new();
        let known = Known::of(&none);
        assert!(known.content_type.is_none() && known.content_length.is_none());
        assert!(known.version.is_none() && known.last_event_id.is_none());
        assert!(!known.extensions);
        headers.remove("x-a2a-extensions");
        assert!(!Known::of(&headers).extensions);
        headers.insert("a2a-extensions", HeaderValue::from_static("urn:b"));
        assert!(Known::of(&headers).extensions);
    }

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
