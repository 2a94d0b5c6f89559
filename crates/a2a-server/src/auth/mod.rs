//! Authentication: who is calling. An [`Authenticator`] declares its schemes in the agent
//! card and checks each request's credentials (HTTP headers, or gRPC metadata, which are the
//! same thing) before any work is done; the caller becomes a [`Principal`] that owns the
//! tasks it creates.
//!
//! [`StaticCredentials`] accepts bearer tokens and API keys given in configuration;
//! [`jwt::JwtAuthenticator`] verifies JWTs against a JWKS URL; [`AnyOf`] combines them.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use a2a_types::{
    A2aError, AgentCard, ApiKeySecurityScheme, HttpAuthSecurityScheme, SecurityRequirement,
    SecurityScheme, StringList,
};
use async_trait::async_trait;
use axum::http::{HeaderMap, HeaderName, HeaderValue};
use sha2::{Digest, Sha256};

mod gate;
pub mod jwt;
mod recent;

pub(crate) use gate::{Gate, GateLayer};

pub use a2a_runtime::Principal;

/// The source of principals named by bearer tokens from configuration.
pub const TOKEN_SOURCE: &str = "token";
/// The source of principals named by API keys from configuration.
pub const API_KEY_SOURCE: &str = "apikey";

/// Checks the credentials of requests.
///
/// Contract: `authenticate` decides from the headers alone (plus whatever keys it fetches),
/// never from the request body; its error says what is wrong with the credentials without
/// echoing them. `schemes` are what the agent card declares: any one of
/// `security_requirements` must be met.
#[async_trait]
pub trait Authenticator: Send + Sync + std::fmt::Debug + 'static {
    /// The schemes, by name, and the requirements (alternatives) the card lists.
    fn schemes(&self) -> (BTreeMap<String, SecurityScheme>, Vec<SecurityRequirement>);

    /// The `WWW-Authenticate` challenges of a 401 answer (one per scheme).
    fn challenges(&self) -> Vec<HeaderValue>;

    /// The caller of a request with `headers`, or why not.
    async fn authenticate(&self, headers: &HeaderMap) -> Result<Principal, A2aError>;

    /// What [`authenticate`](Self::authenticate) would answer, when that is known without
    /// waiting (no keys to fetch); `None` otherwise. The server asks this first: a request
    /// it decides is passed on at once, with no future of its own. It must agree with
    /// `authenticate`. Default: `None`.
    fn authenticate_now(&self, headers: &HeaderMap) -> Option<Result<Principal, A2aError>> {
        let _ = headers;
        None
    }

    /// The principal a task owner recorded by a version that did not qualify principals (a
    /// bare `name`) is now, if this authenticator would have vouched for that name; used
    /// once, to qualify the owners of tasks stored before. Default: none.
    fn legacy_principal(&self, name: &str) -> Option<Principal> {
        let _ = name;
        None
    }
}

/// Declares `auth`'s schemes in `card`.
pub fn declare(card: &mut AgentCard, auth: &dyn Authenticator) {
    let (schemes, requirements) = auth.schemes();
    card.security_schemes.extend(schemes);
    card.security_requirements = requirements;
}

/// The requirement "scheme `name`, no scopes".
fn requirement(name: &str) -> SecurityRequirement {
    let mut r = SecurityRequirement::default();
    r.schemes.insert(name.to_owned(), StringList::default());
    r
}

/// A credential's digest: secrets are compared as SHA-256 digests, so a lookup's timing says
/// nothing about the secret.
fn digest(secret: &[u8]) -> [u8; 32] {
    Sha256::digest(secret).into()
}

/// Principals by their credential's digest. Hashed with foldhash rather than SipHash (about
/// 250 instructions a lookup): the keys are the operator's credentials, inserted once, and a
/// caller's lookup never inserts, so no caller can crowd a bucket.
type DigestMap = HashMap<[u8; 32], Principal, foldhash::fast::RandomState>;

/// Bearer tokens and API keys from configuration, each naming its principal.
#[derive(Clone)]
pub struct StaticCredentials {
    tokens: DigestMap,
    api_keys: DigestMap,
    api_key_header: Option<HeaderName>,
    /// Who accepted a token or a key, for each thread's [`recent`] credentials: new
    /// whenever a credential is added, so that a clone made before accepts no more.
    tokens_owner: recent::Owner,
    api_keys_owner: recent::Owner,
}

impl Default for StaticCredentials {
    fn default() -> Self {
        Self {
            tokens: DigestMap::default(),
            api_keys: DigestMap::default(),
            api_key_header: None,
            tokens_owner: recent::Owner::fresh(),
            api_keys_owner: recent::Owner::fresh(),
        }
    }
}

impl std::fmt::Debug for StaticCredentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StaticCredentials")
            .field("tokens", &self.tokens.len())
            .field("api_keys", &self.api_keys.len())
            .finish()
    }
}

/// The header API keys travel in.
pub const API_KEY_HEADER: &str = "x-api-key";

impl StaticCredentials {
    /// No credentials yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Accepts `Authorization: Bearer {token}` as `principal` (`token:{principal}`).
    pub fn bearer(mut self, principal: &str, token: &str) -> Self {
        self.tokens.insert(
            digest(token.as_bytes()),
            Principal::new(TOKEN_SOURCE, principal),
        );
        self.tokens_owner = recent::Owner::fresh();
        self
    }

    /// Accepts `X-API-Key: {key}` as `principal` (`apikey:{principal}`).
    pub fn api_key(mut self, principal: &str, key: &str) -> Self {
        self.api_keys.insert(
            digest(key.as_bytes()),
            Principal::new(API_KEY_SOURCE, principal),
        );
        self.api_keys_owner = recent::Owner::fresh();
        self.api_key_header = Some(HeaderName::from_static(API_KEY_HEADER));
        self
    }

    /// True when no credential is configured.
    pub fn is_empty(&self) -> bool {
        self.tokens.is_empty() && self.api_keys.is_empty()
    }
}

/// The token of an `Authorization: Bearer …` header: what follows the scheme and one space,
/// trimmed, when the value is ASCII (as [`HeaderValue::to_str`] requires). Bytes rather than
/// text: a token is hashed or looked up as bytes, and only a JWT not seen before is read as
/// text, so the request path skips the UTF-8 check.
pub(crate) fn bearer_token(headers: &HeaderMap) -> Option<&[u8]> {
    let value = ascii_bytes(headers.get(axum::http::header::AUTHORIZATION)?)?.trim_ascii();
    // The scheme is what comes before the first space, so "bearer" matches exactly when the
    // first seven bytes are "bearer " (in any case).
    let (scheme, token) = value.split_at_checked(7)?;
    scheme
        .eq_ignore_ascii_case(b"bearer ")
        .then(|| token.trim_ascii())
}

/// `value`'s bytes when they are ASCII. A header value holds no control byte but the tab, so
/// this accepts what [`HeaderValue::to_str`] accepts, a word at a time rather than byte by
/// byte (about 2.5 instructions a byte there; a JWT is some 300 bytes).
fn ascii_bytes(value: &HeaderValue) -> Option<&[u8]> {
    let bytes = value.as_bytes();
    bytes.is_ascii().then_some(bytes)
}

#[async_trait]
impl Authenticator for StaticCredentials {
    fn schemes(&self) -> (BTreeMap<String, SecurityScheme>, Vec<SecurityRequirement>) {
        let mut schemes = BTreeMap::new();
        let mut requirements = Vec::new();
        if !self.tokens.is_empty() {
            let mut s = HttpAuthSecurityScheme::new("Bearer");
            s.description = Some("A bearer token issued by the operator of this server".into());
            schemes.insert(
                "bearer".to_owned(),
                SecurityScheme::HttpAuthSecurityScheme(s),
            );
            requirements.push(requirement("bearer"));
        }
        if !self.api_keys.is_empty() {
            let mut s = ApiKeySecurityScheme::new("header", "X-API-Key");
            s.description = Some("An API key issued by the operator of this server".into());
            schemes.insert("apiKey".to_owned(), SecurityScheme::ApiKeySecurityScheme(s));
            requirements.push(requirement("apiKey"));
        }
        (schemes, requirements)
    }

    fn challenges(&self) -> Vec<HeaderValue> {
        let mut out = Vec::new();
        if !self.tokens.is_empty() {
            out.push(HeaderValue::from_static("Bearer realm=\"a2a\""));
        }
        if !self.api_keys.is_empty() {
            out.push(HeaderValue::from_static(
                "ApiKey realm=\"a2a\", header=\"X-API-Key\"",
            ));
        }
        out
    }

    async fn authenticate(&self, headers: &HeaderMap) -> Result<Principal, A2aError> {
        self.check(headers)
    }

    fn authenticate_now(&self, headers: &HeaderMap) -> Option<Result<Principal, A2aError>> {
        Some(self.check(headers))
    }

    /// A bearer token's principal of that name, else an API key's (a name configured for
    /// both was one caller before, and stays the token's).
    fn legacy_principal(&self, name: &str) -> Option<Principal> {
        let named = |map: &DigestMap| map.values().find(|p| p.name() == name).cloned();
        named(&self.tokens).or_else(|| named(&self.api_keys))
    }
}

impl StaticCredentials {
    /// The principal of the credentials in `headers`: nothing to wait for.
    fn check(&self, headers: &HeaderMap) -> Result<Principal, A2aError> {
        if let Some(token) = bearer_token(headers) {
            return Self::find(&self.tokens, self.tokens_owner, token).ok_or_else(|| {
                A2aError::Unauthenticated {
                    detail: "the bearer token is not valid".into(),
                }
            });
        }
        if let Some(header) = &self.api_key_header
            && let Some(key) = headers.get(header).and_then(ascii_bytes)
        {
            return Self::find(&self.api_keys, self.api_keys_owner, key.trim_ascii()).ok_or_else(
                || A2aError::Unauthenticated {
                    detail: "the API key is not valid".into(),
                },
            );
        }
        Err(A2aError::Unauthenticated {
            detail: "this agent requires credentials (see securitySchemes in its card)".into(),
        })
    }

    /// The principal of `credential` in `map`: this thread's if it accepted it lately,
    /// else by its digest (then kept for the thread's next request).
    fn find(map: &DigestMap, owner: recent::Owner, credential: &[u8]) -> Option<Principal> {
        if let Some(principal) = recent::recall(owner, credential, |_| true) {
            return Some(principal);
        }
        let principal = map.get(&digest(credential))?;
        recent::remember(owner, credential, principal, recent::Stamp::FOREVER);
        Some(principal.clone())
    }
}

fn no_credentials_accepted() -> A2aError {
    A2aError::Unauthenticated {
        detail: "no credentials are accepted".into(),
    }
}

/// Accepts a request when any of several authenticators does (bearer tokens from
/// configuration, or JWTs, say).
#[derive(Debug)]
pub struct AnyOf(pub Vec<Arc<dyn Authenticator>>);

#[async_trait]
impl Authenticator for AnyOf {
    fn schemes(&self) -> (BTreeMap<String, SecurityScheme>, Vec<SecurityRequirement>) {
        let mut schemes = BTreeMap::new();
        let mut requirements = Vec::new();
        for a in &self.0 {
            let (s, r) = a.schemes();
            schemes.extend(s);
            requirements.extend(r);
        }
        (schemes, requirements)
    }

    fn challenges(&self) -> Vec<HeaderValue> {
        self.0.iter().flat_map(|a| a.challenges()).collect()
    }

    async fn authenticate(&self, headers: &HeaderMap) -> Result<Principal, A2aError> {
        let mut first_error = None;
        for a in &self.0 {
            match a.authenticate(headers).await {
                Ok(p) => return Ok(p),
                Err(e) => {
                    first_error.get_or_insert(e);
                }
            }
        }
        Err(first_error.unwrap_or_else(no_credentials_accepted))
    }

    /// Known now when every authenticator tried (in order, up to the first that accepts)
    /// knows its answer now.
    fn authenticate_now(&self, headers: &HeaderMap) -> Option<Result<Principal, A2aError>> {
        let mut first_error = None;
        for a in &self.0 {
            match a.authenticate_now(headers)? {
                Ok(p) => return Some(Ok(p)),
                Err(e) => {
                    first_error.get_or_insert(e);
                }
            }
        }
        Some(Err(first_error.unwrap_or_else(no_credentials_accepted)))
    }

    /// The first authenticator's that has one (the order requests are tried in).
    fn legacy_principal(&self, name: &str) -> Option<Principal> {
        self.0.iter().find_map(|a| a.legacy_principal(name))
    }
}

/// The principal of a request with `headers`, or why not.
/// [`Authenticator::authenticate_now`] is asked first, so a request it decides awaits
/// nothing (no boxed future).
pub(crate) async fn authenticate(
    auth: &dyn Authenticator,
    headers: &HeaderMap,
) -> Result<Principal, A2aError> {
    match auth.authenticate_now(headers) {
        Some(decided) => decided,
        None => auth.authenticate(headers).await,
    }
}

/// The principal of a request with `headers`, or the answer refusing it (see
/// [`refuse`]).
pub(crate) async fn admit(
    auth: &dyn Authenticator,
    headers: &HeaderMap,
    jsonrpc: bool,
) -> Result<Principal, axum::response::Response> {
    authenticate(auth, headers)
        .await
        .map_err(|e| refuse(auth, &e, jsonrpc))
}

/// The answer to a request that failed authentication, counted.
pub(crate) fn refuse(
    auth: &dyn Authenticator,
    err: &A2aError,
    jsonrpc: bool,
) -> axum::response::Response {
    crate::metrics::global().connection_refused("unauthenticated");
    unauthorized(auth, err, jsonrpc)
}

/// The answer to a request that failed authentication: 401 with the challenges, and a body
/// in the shape the binding expects (a JSON-RPC error at the JSON-RPC endpoint, else a
/// `google.rpc.Status`).
pub(crate) fn unauthorized(
    auth: &dyn Authenticator,
    err: &A2aError,
    jsonrpc: bool,
) -> axum::response::Response {
    use axum::response::IntoResponse;
    let body = if jsonrpc {
        serde_json::json!({"jsonrpc": "2.0", "id": null, "error": err.to_jsonrpc()})
    } else {
        err.to_rest_body()
    };
    let mut resp = (axum::http::StatusCode::UNAUTHORIZED, axum::Json(body)).into_response();
    for c in auth.challenges() {
        resp.headers_mut()
            .append(axum::http::header::WWW_AUTHENTICATE, c);
    }
    resp
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&str, &str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.insert(
                HeaderName::from_bytes(k.as_bytes()).unwrap(),
                HeaderValue::from_str(v).unwrap(),
            );
        }
        h
    }

    #[tokio::test]
    async fn tokens_and_keys_name_their_principal() {
        let creds = StaticCredentials::new()
            .bearer("alice", "t-alice")
            .api_key("bob", "k-bob");
        let ok = |p: Result<Principal, A2aError>| p.unwrap().id().to_owned();
        assert_eq!(
            ok(creds
                .authenticate(&headers(&[("authorization", "Bearer t-alice")]))
                .await),
            "token:alice"
        );
        assert_eq!(
            ok(creds
                .authenticate(&headers(&[("authorization", "bearer  t-alice ")]))
                .await),
            "token:alice"
        );
        assert_eq!(
            ok(creds
                .authenticate(&headers(&[("x-api-key", "k-bob")]))
                .await),
            "apikey:bob"
        );
        for bad in [
            headers(&[]),
            headers(&[("authorization", "Bearer nope")]),
            headers(&[("authorization", "Basic dDp0")]),
            headers(&[("x-api-key", "t-alice")]),
        ] {
            let err = creds.authenticate(&bad).await.unwrap_err();
            assert!(matches!(err, A2aError::Unauthenticated { .. }), "{err}");
        }
        let (schemes, reqs) = creds.schemes();
        assert_eq!(schemes.len(), 2);
        assert_eq!(reqs.len(), 2);
    }

    /// The definition `bearer_token` had before its fast path: `to_str`, trim, split at the
    /// first space.
    fn bearer_token_by_definition(headers: &HeaderMap) -> Option<&[u8]> {
        let value = headers
            .get(axum::http::header::AUTHORIZATION)?
            .to_str()
            .ok()?;
        let (scheme, token) = value.trim().split_once(' ')?;
        scheme
            .eq_ignore_ascii_case("bearer")
            .then_some(token.trim().as_bytes())
    }

    #[test]
    fn bearer_tokens_are_read_as_their_definition_reads_them() {
        let mut values: Vec<Vec<u8>> = [
            "Bearer t",
            "bearer t",
            "BEARER t",
            "bEaReR  t ",
            "Bearer",
            "Bearer ",
            "Bearer\tt",
            "Bearer t u",
            "Bearertoken",
            "Basic dDp0",
            "  Bearer t",
            "Bearer \t t\t",
            "Beare t",
            "Bearer\u{e9} t",
            "Bearer t\u{e9}",
            "",
            " ",
            "x Bearer t",
            "Bearer  ",
        ]
        .iter()
        .map(|v| v.as_bytes().to_vec())
        .collect();
        // Every byte a header value may hold, at the scheme, the space and in the token.
        for b in (0x20..=0xffu8).chain([b'\t']).filter(|&b| b != 0x7f) {
            for at in [0, 3, 6, 7, 9] {
                let mut v = b"Bearer tok".to_vec();
                v[at] = b;
                values.push(v);
            }
        }
        for v in values {
            let Ok(value) = HeaderValue::from_bytes(&v) else {
                continue;
            };
            let mut h = HeaderMap::new();
            h.insert(axum::http::header::AUTHORIZATION, value);
            assert_eq!(
                bearer_token(&h),
                bearer_token_by_definition(&h),
                "{:?}",
                String::from_utf8_lossy(&v)
            );
        }
    }

    #[test]
    fn principals_are_qualified_by_their_source() {
        let jwt = Principal::new("jwt:https://issuer.test", "alice");
        assert_eq!(jwt.id(), "jwt:https://issuer.test:alice");
        assert_eq!(jwt.source(), "jwt:https://issuer.test");
        assert_eq!(jwt.name(), "alice");
        let token = Principal::new(TOKEN_SOURCE, "alice");
        assert_eq!(token.name(), "alice");
        assert_ne!(jwt, token);
        assert_ne!(token, Principal::new(API_KEY_SOURCE, "alice"));
    }

    #[test]
    fn legacy_owners_map_to_the_source_that_names_them() {
        let creds = StaticCredentials::new()
            .bearer("alice", "t-alice")
            .api_key("alice", "k-alice")
            .api_key("ci", "k-ci");
        let id = |n: &str| creds.legacy_principal(n).map(|p| p.id().to_owned());
        assert_eq!(id("alice").as_deref(), Some("token:alice"));
        assert_eq!(id("ci").as_deref(), Some("apikey:ci"));
        assert_eq!(id("mallory"), None);
    }

    /// An authenticator that only answers by waiting (as a JWT whose keys are not fetched).
    #[derive(Debug)]
    struct Waits(StaticCredentials);

    #[async_trait]
    impl Authenticator for Waits {
        fn schemes(&self) -> (BTreeMap<String, SecurityScheme>, Vec<SecurityRequirement>) {
            self.0.schemes()
        }
        fn challenges(&self) -> Vec<HeaderValue> {
            self.0.challenges()
        }
        async fn authenticate(&self, headers: &HeaderMap) -> Result<Principal, A2aError> {
            tokio::task::yield_now().await;
            self.0.authenticate(headers).await
        }
    }

    /// The outcome as comparable text: the principal, or the error's message.
    fn outcome(r: Result<Principal, A2aError>) -> String {
        match r {
            Ok(p) => p.id().to_owned(),
            Err(e) => format!("error: {e}"),
        }
    }

    /// Each thread remembers the credentials it accepted: what one set of credentials
    /// accepted is never recalled for another, not even for the clone it was built from.
    #[test]
    fn a_remembered_credential_is_accepted_only_by_a_set_that_holds_it() {
        let before = StaticCredentials::new().bearer("alice", "t-alice");
        let after = before.clone().bearer("mallory", "t-mallory");
        let mallory = headers(&[("authorization", "Bearer t-mallory")]);
        for _ in 0..2 {
            assert_eq!(after.check(&mallory).unwrap().id(), "token:mallory");
        }
        assert!(before.check(&mallory).is_err());
        // The same secret as a token and as a key names two principals.
        let both = StaticCredentials::new()
            .bearer("alice", "shared")
            .api_key("bob", "shared");
        let token = headers(&[("authorization", "Bearer shared")]);
        let key = headers(&[("x-api-key", "shared")]);
        for _ in 0..2 {
            assert_eq!(both.check(&token).unwrap().id(), "token:alice");
            assert_eq!(both.check(&key).unwrap().id(), "apikey:bob");
        }
    }

    #[tokio::test]
    async fn answers_known_now_agree_with_the_awaited_ones() {
        let alice = StaticCredentials::new().bearer("alice", "t-alice");
        let bob = StaticCredentials::new().api_key("bob", "k-bob");
        let cases = [
            headers(&[("authorization", "Bearer t-alice")]),
            headers(&[("x-api-key", "k-bob")]),
            headers(&[("authorization", "Bearer nope")]),
            headers(&[]),
        ];
        let now_only = AnyOf(vec![Arc::new(alice.clone()), Arc::new(bob.clone())]);
        let waits_last = AnyOf(vec![Arc::new(alice.clone()), Arc::new(Waits(bob.clone()))]);
        for h in &cases {
            for auth in [&alice as &dyn Authenticator, &bob, &now_only] {
                let now = auth.authenticate_now(h).map(outcome);
                assert_eq!(now, Some(outcome(auth.authenticate(h).await)), "{auth:?}");
            }
            // Known now only when the first to accept knows now; else left to the wait.
            let now = waits_last.authenticate_now(h).map(outcome);
            let awaited = outcome(waits_last.authenticate(h).await);
            if awaited == "token:alice" {
                assert_eq!(now.as_deref(), Some("token:alice"));
            } else {
                assert_eq!(now, None, "{awaited}");
            }
        }
        let waits = Waits(alice);
        assert!(waits.authenticate_now(&cases[0]).is_none());
    }
}
