//! Serving agent cards: the strict v1.0 card at `/.well-known/agent-card.json`, a
//! v0.3-shaped card at the legacy `/.well-known/agent.json`, with `Cache-Control`, `ETag`
//! and `Last-Modified`, answering conditional requests with 304.

use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use a2a_types::{AgentCard, AgentInterface, binding, v03};
use axum::extract::State;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use bytes::Bytes;

use crate::bindings::Bindings;

/// Which card `/.well-known/agent-card.json` serves.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum CardCompat {
    /// The strict v1.0 card (strict v1.0 validators reject unknown v0.3 fields).
    #[default]
    Strict,
    /// The v1.0 card plus the v0.3 fields (`url`, `protocolVersion`, `preferredTransport`,
    /// `additionalInterfaces`), for deployments whose clients only read v0.3 cards.
    V03Merged,
}

/// `Cache-Control` of served cards.
const CACHE_CONTROL: &str = "public, max-age=300";

#[derive(Debug)]
struct Rendered {
    base: String,
    card: Body,
    legacy: Body,
}

/// One rendered card and its validators.
#[derive(Debug)]
struct Body {
    bytes: Bytes,
    etag: String,
}

/// Serves one agent's cards.
#[derive(Debug)]
pub struct CardEndpoint {
    template: Arc<AgentCard>,
    path: String,
    public_url: Option<String>,
    compat: CardCompat,
    /// When the card took its current content (second precision, as HTTP dates have).
    modified: SystemTime,
    modified_header: HeaderValue,
    bindings: Bindings,
    grpc_address: Option<String>,
    signer: Option<Arc<crate::card_signing::CardSigner>>,
    cache: Mutex<Option<Arc<Rendered>>>,
}

impl CardEndpoint {
    /// Serves `template` for the agent mounted at `path` (`""` for the root). The card's
    /// `supportedInterfaces` point at `public_url` + `path` when a public URL is set, else at
    /// the address the client used to reach the server (its `Host` header).
    pub fn new(
        template: Arc<AgentCard>,
        path: impl Into<String>,
        public_url: Option<String>,
        compat: CardCompat,
    ) -> Self {
        // The card is fixed for the life of the endpoint: it was last modified now.
        let secs = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        let modified = UNIX_EPOCH + Duration::from_secs(secs);
        let modified_header = HeaderValue::from_str(&httpdate::fmt_http_date(modified))
            .unwrap_or_else(|_| HeaderValue::from_static("Thu, 01 Jan 1970 00:00:00 GMT"));
        Self {
            template,
            path: path.into(),
            public_url: public_url.map(|u| u.trim_end_matches('/').to_owned()),
            compat,
            modified,
            modified_header,
            bindings: Bindings::default(),
            grpc_address: None,
            signer: None,
            cache: Mutex::new(None),
        }
    }

    /// Lists only the interfaces of `bindings`, the gRPC one at `grpc_address` (`host:port`;
    /// default: the host and port of the base URL).
    pub fn with_bindings(mut self, bindings: Bindings, grpc_address: Option<String>) -> Self {
        self.bindings = bindings;
        self.grpc_address = grpc_address;
        self
    }

    /// Signs the served cards with `signer` (the key published under the base URL).
    pub fn with_signer(mut self, signer: Option<Arc<crate::card_signing::CardSigner>>) -> Self {
        self.signer = signer;
        self
    }

    /// The JSON-RPC URL of the agent for a given base URL.
    fn endpoint_url(&self, base: &str) -> String {
        if self.path.is_empty() {
            format!("{base}/")
        } else {
            format!("{base}{}", self.path)
        }
    }

    /// The v1.0 card as served for `base` (for example `http://127.0.0.1:41241`).
    pub fn card_for(&self, base: &str) -> AgentCard {
        let mut card = (*self.template).clone();
        let url = self.endpoint_url(base);
        let mut interfaces = Vec::with_capacity(4);
        if self.bindings.jsonrpc {
            interfaces.push(AgentInterface::new(
                url.clone(),
                binding::JSONRPC,
                a2a_types::PROTOCOL_VERSION,
            ));
        }
        if self.bindings.http_json {
            // HTTP+JSON resources live under the agent's path (`{path}/message:send`, …).
            let rest = format!("{base}{}", self.path);
            interfaces.push(AgentInterface::new(
                rest,
                binding::HTTP_JSON,
                a2a_types::PROTOCOL_VERSION,
            ));
        }
        if self.bindings.grpc && cfg!(feature = "grpc") {
            // gRPC addresses are `host:port` (spec §4.4.6); the agent is picked by tenant.
            let address = self.grpc_address.clone().unwrap_or_else(|| host_port(base));
            let mut grpc = AgentInterface::new(address, binding::GRPC, a2a_types::PROTOCOL_VERSION);
            let tenant = self.path.trim_matches('/');
            if !tenant.is_empty() {
                grpc.tenant = Some(tenant.to_owned());
            }
            interfaces.push(grpc);
        }
        if self.bindings.jsonrpc {
            interfaces.push(AgentInterface::new(
                url,
                binding::JSONRPC,
                a2a_types::PROTOCOL_VERSION_V03,
            ));
        }
        card.supported_interfaces = interfaces;
        card
    }

    fn render(&self, base: &str) -> Arc<Rendered> {
        let mut cache = self.cache.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(r) = cache.as_ref().filter(|r| r.base == base) {
            return r.clone();
        }
        let card = self.card_for(base);
        let (main, legacy) = match &self.signer {
            None => (
                match self.compat {
                    CardCompat::Strict => serde_json::to_vec(&card),
                    CardCompat::V03Merged => serde_json::to_vec(&v03::merged_card_json(&card)),
                }
                .unwrap_or_default(),
                serde_json::to_vec(&v03::AgentCard::from_v1(&card)).unwrap_or_default(),
            ),
            Some(signer) => {
                let mut main = match self.compat {
                    CardCompat::Strict => serde_json::to_value(&card),
                    CardCompat::V03Merged => Ok(v03::merged_card_json(&card)),
                }
                .unwrap_or_default();
                let mut legacy =
                    serde_json::to_value(v03::AgentCard::from_v1(&card)).unwrap_or_default();
                // The key is published at the server's root, whatever the agent's path.
                let jku = format!("{base}{}", crate::card_signing::JWKS_PATH);
                signer.sign(&mut main, &jku);
                signer.sign(&mut legacy, &jku);
                (
                    serde_json::to_vec(&main).unwrap_or_default(),
                    serde_json::to_vec(&legacy).unwrap_or_default(),
                )
            }
        };
        let rendered = Arc::new(Rendered {
            base: base.to_owned(),
            card: with_etag(main),
            legacy: with_etag(legacy),
        });
        *cache = Some(rendered.clone());
        rendered
    }

    /// The base URL clients reach this server at: the public URL, else the request's `Host`
    /// (HTTP/1.1) or `:authority` (HTTP/2, which has no `Host` header).
    fn base(&self, headers: &HeaderMap, uri: &axum::http::Uri) -> String {
        if let Some(u) = &self.public_url {
            return u.clone();
        }
        let host = headers
            .get(header::HOST)
            .and_then(|h| h.to_str().ok())
            .or_else(|| uri.authority().map(axum::http::uri::Authority::as_str))
            .unwrap_or("localhost");
        let scheme = headers
            .get("x-forwarded-proto")
            .and_then(|h| h.to_str().ok())
            .filter(|p| *p == "https")
            .unwrap_or("http");
        format!("{scheme}://{host}")
    }
}

/// The `host:port` of a base URL (`https://a.example` → `a.example:443`).
fn host_port(base: &str) -> String {
    let (scheme, rest) = base.split_once("://").unwrap_or(("http", base));
    let authority = rest.split('/').next().unwrap_or(rest);
    let has_port = authority
        .rsplit_once(':')
        .is_some_and(|(_, p)| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()));
    if has_port {
        authority.to_owned()
    } else if scheme.eq_ignore_ascii_case("https") {
        format!("{authority}:443")
    } else {
        format!("{authority}:80")
    }
}

fn with_etag(body: Vec<u8>) -> Body {
    // FNV-1a: a stable content hash, enough to tell card versions apart.
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in &body {
        h ^= u64::from(*b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    Body {
        bytes: Bytes::from(body),
        etag: format!("\"{h:016x}\""),
    }
}

impl CardEndpoint {
    /// Whether the client's cached copy is current (RFC 9110 §13.2.2: `If-None-Match` when
    /// present, else `If-Modified-Since`).
    fn not_modified(&self, headers: &HeaderMap, etag: &str) -> bool {
        if let Some(tags) = headers.get(header::IF_NONE_MATCH) {
            return tags.to_str().is_ok_and(|v| {
                v.split(',')
                    .any(|t| t.trim().trim_start_matches("W/") == etag || t.trim() == "*")
            });
        }
        headers
            .get(header::IF_MODIFIED_SINCE)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| httpdate::parse_http_date(v).ok())
            .is_some_and(|since| self.modified <= since)
    }

    fn respond(&self, headers: &HeaderMap, body: &Body) -> Response {
        let mut resp = if self.not_modified(headers, &body.etag) {
            StatusCode::NOT_MODIFIED.into_response()
        } else {
            let mut r = body.bytes.clone().into_response();
            r.headers_mut().insert(
                header::CONTENT_TYPE,
                HeaderValue::from_static("application/json"),
            );
            r
        };
        let h = resp.headers_mut();
        h.insert(
            header::CACHE_CONTROL,
            HeaderValue::from_static(CACHE_CONTROL),
        );
        if let Ok(v) = HeaderValue::from_str(&body.etag) {
            h.insert(header::ETAG, v);
        }
        h.insert(header::LAST_MODIFIED, self.modified_header.clone());
        resp
    }
}

/// `GET …/.well-known/agent-card.json`.
pub async fn agent_card(
    State(ep): State<Arc<CardEndpoint>>,
    uri: axum::http::Uri,
    headers: HeaderMap,
) -> Response {
    let rendered = ep.render(&ep.base(&headers, &uri));
    ep.respond(&headers, &rendered.card)
}

/// `GET …/.well-known/agent.json` (v0.3 card).
pub async fn legacy_agent_card(
    State(ep): State<Arc<CardEndpoint>>,
    uri: axum::http::Uri,
    headers: HeaderMap,
) -> Response {
    let rendered = ep.render(&ep.base(&headers, &uri));
    ep.respond(&headers, &rendered.legacy)
}
