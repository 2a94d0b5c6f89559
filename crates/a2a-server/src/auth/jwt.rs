//! JWTs verified against a JWKS URL: signature (asymmetric algorithms only), issuer,
//! audience, expiry and not-before with a clock-skew allowance. `exp` and `sub` are always
//! required, and `iss` and `aud` whenever they are configured (a token that leaves one out
//! is refused, never waved through). The principal is `jwt:{iss}:{sub}`. Keys are fetched at first use and again when a token names a key id not seen
//! yet (at most every 30 s) or the set is 10 minutes old; one fetch at a time, while other
//! requests go on verifying with the keys already fetched.
//!
//! A client sends the same token on every request until it expires, and checking an
//! asymmetric signature costs far more than the rest of a request, so tokens verified lately
//! are remembered ([`VERIFIED_TOKENS`] of them, least recently used forgotten first): a
//! remembered token is accepted again without its signature checked while its `exp` (and
//! `nbf`) still hold and the key set it was verified with is still the current, fresh one. A
//! refetched key set (rotation, or every 10 minutes) makes every token verified again.
//! Each thread also keeps the last few tokens it accepted (see `recent`), asked first and
//! checked the same way, so that a client's next request touches no lock, reference count
//! or recency list that other threads write.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
use std::time::{Duration, Instant};

use a2a_types::{A2aError, HttpAuthSecurityScheme, SecurityRequirement, SecurityScheme};
use async_trait::async_trait;
use axum::http::{HeaderMap, HeaderValue};
use jsonwebtoken::jwk::JwkSet;
use jsonwebtoken::{Algorithm, DecodingKey, Validation};
use std::hash::BuildHasher;
use std::num::NonZeroUsize;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, RwLock};

use super::recent::{self, Stamp};
use super::{Authenticator, Principal, bearer_token, requirement};

/// How JWTs are checked.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct JwtSettings {
    /// Where the issuer publishes its keys (a JWK Set).
    pub jwks_url: String,
    /// The `iss` every token must carry (`None`: any, or none).
    pub issuer: Option<String>,
    /// The `aud` every token must carry (`None`: any, or none).
    pub audience: Option<String>,
    /// Allowed clock skew for `exp` and `nbf` (default 60 s).
    pub leeway: Duration,
}

impl JwtSettings {
    /// Tokens signed by the keys at `jwks_url`.
    pub fn new(jwks_url: impl Into<String>) -> Self {
        Self {
            jwks_url: jwks_url.into(),
            issuer: None,
            audience: None,
            leeway: Duration::from_secs(60),
        }
    }
}

/// A key and the algorithm its JWK names, if any.
type Key = Arc<(DecodingKey, Option<Algorithm>)>;

/// The keys of a JWK Set, by key id, as fetched at `fetched`.
#[derive(Default)]
struct Keys {
    by_id: HashMap<String, Key>,
    /// The only key when the set has one without an id.
    anonymous: Option<Key>,
    fetched: Option<Instant>,
    /// Which fetch this is: 1 for the first, 0 before any.
    generation: u64,
}

/// What the keys at hand say about a key id.
enum Lookup {
    /// The key, and the set it is in.
    Found(Key, Arc<Keys>),
    /// Never fetched, or fetched 10 minutes ago or more.
    Stale,
    /// Not in a fresh set (perhaps rotated in since).
    Unknown,
}

/// The last fetch of the key set.
#[derive(Clone, Copy)]
struct Attempt {
    at: Instant,
    ok: bool,
}

/// Verifies `Authorization: Bearer <JWT>`.
pub struct JwtAuthenticator {
    settings: JwtSettings,
    http: reqwest::Client,
    /// Replaced whole after a fetch; readers clone the `Arc` and never wait for a fetch.
    keys: RwLock<Arc<Keys>>,
    /// The generation of `keys`, read without their lock by each thread's [`recent`] tokens.
    generation: AtomicU64,
    /// Who verified a token, for each thread's [`recent`] ones.
    owner: recent::Owner,
    /// Held while fetching, so that one request fetches and the others wait for it.
    fetching: tokio::sync::Mutex<Option<Attempt>>,
    /// Tokens verified lately, by the token itself, in independently locked shards.
    verified: Box<[Mutex<VerifiedShard>]>,
    hasher: foldhash::fast::RandomState,
}

/// One shard of the verified tokens, by the token itself. Hashed with foldhash (seeded per
/// process), as the shard is chosen: with `lru`'s default, SipHash, a request with a token of
/// 276 bytes executed about 700 instructions more (73 997 against 73 303 a blocking send,
/// `scripts/count-instructions.sh`). Only verified tokens are stored, so a caller cannot
/// choose the keys.
type VerifiedShard = lru::LruCache<Box<[u8]>, Verified, foldhash::fast::RandomState>;

/// Most tokens remembered as verified (about 1 KB each at most, for typical tokens).
pub const VERIFIED_TOKENS: usize = 4096;
const VERIFIED_SHARDS: usize = 16;

/// A token whose signature and claims were checked.
struct Verified {
    principal: Principal,
    /// `exp` and `nbf`, seconds since the epoch.
    exp: u64,
    nbf: Option<u64>,
    /// The key set it was verified with: a token is only remembered while that set is the
    /// current one.
    keys: Arc<Keys>,
}

impl std::fmt::Debug for JwtAuthenticator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("JwtAuthenticator")
            .field("settings", &self.settings)
            .finish()
    }
}

const REFRESH_EVERY: Duration = Duration::from_secs(600);
const REFETCH_AT_MOST_EVERY: Duration = Duration::from_secs(30);
/// After a failed fetch, requests are refused at once for this long instead of each
/// waiting for another fetch.
const RETRY_FAILED_AFTER: Duration = Duration::from_secs(5);

fn keys_unavailable() -> A2aError {
    A2aError::Unauthenticated {
        detail: "the keys to verify tokens are not available right now".into(),
    }
}

fn no_token() -> A2aError {
    A2aError::Unauthenticated {
        detail: "this agent requires a bearer token (a JWT)".into(),
    }
}

fn invalid(detail: &str) -> A2aError {
    A2aError::Unauthenticated {
        detail: format!("the bearer token is not a valid JWT for this agent: {detail}"),
    }
}

impl JwtAuthenticator {
    /// An authenticator with `settings`; keys are fetched on first use.
    pub fn new(settings: JwtSettings) -> Self {
        Self {
            settings,
            http: reqwest::Client::builder()
                .timeout(Duration::from_secs(10))
                .build()
                .unwrap_or_default(),
            keys: RwLock::new(Arc::new(Keys::default())),
            generation: AtomicU64::new(0),
            owner: recent::Owner::fresh(),
            fetching: tokio::sync::Mutex::new(None),
            verified: (0..VERIFIED_SHARDS)
                .map(|_| {
                    Mutex::new(lru::LruCache::with_hasher(
                        NonZeroUsize::new(VERIFIED_TOKENS / VERIFIED_SHARDS)
                            .unwrap_or(NonZeroUsize::MIN),
                        foldhash::fast::RandomState::default(),
                    ))
                })
                .collect(),
            hasher: foldhash::fast::RandomState::default(),
        }
    }

    fn verified_shard(&self, token: &[u8]) -> std::sync::MutexGuard<'_, VerifiedShard> {
        // The shard is chosen by the token's last 16 bytes, part of its signature in a JWT:
        // hashing the whole token here as well as in the shard's map cost about 150
        // instructions a request more (a token of 276 bytes).
        let tail = &token[token.len().saturating_sub(16)..];
        let i = (self.hasher.hash_one(tail) % VERIFIED_SHARDS as u64) as usize;
        self.verified[i]
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The principal of `token` if it was verified with the current, fresh key set and its
    /// time claims still hold (with the leeway); a token that no longer holds is forgotten.
    fn remembered(&self, token: &[u8]) -> Option<Principal> {
        // The library's own clock and comparisons, so a remembered token is refused exactly
        // when a fresh verification would refuse it.
        let now = jsonwebtoken::get_current_timestamp();
        let leeway = self.settings.leeway.as_secs();
        let claims_hold = |exp: u64, nbf: Option<u64>| {
            exp >= now.saturating_sub(leeway) && nbf.is_none_or(|nbf| nbf <= now + leeway)
        };
        // This thread's first: it touches no line that other threads write.
        let recalled = recent::recall(self.owner, token, |s| {
            s.generation == self.generation.load(Ordering::Acquire)
                && s.fresh_until.is_some_and(|t| Instant::now() < t)
                && claims_hold(s.exp, s.nbf)
        });
        if recalled.is_some() {
            return recalled;
        }
        let keys = self.keys();
        let fresh_until = keys.fetched.map(|t| t + REFRESH_EVERY);
        if fresh_until.is_none_or(|t| Instant::now() >= t) {
            return None;
        }
        let mut shard = self.verified_shard(token);
        let v = shard.get(token)?;
        if Arc::ptr_eq(&v.keys, &keys) && claims_hold(v.exp, v.nbf) {
            let stamp = Stamp {
                generation: keys.generation,
                fresh_until,
                exp: v.exp,
                nbf: v.nbf,
            };
            recent::remember(self.owner, token, &v.principal, stamp);
            return Some(v.principal.clone());
        }
        shard.pop(token);
        None
    }

    /// The keys at hand.
    fn keys(&self) -> Arc<Keys> {
        self.keys
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    fn lookup(&self, kid: Option<&str>) -> Lookup {
        let keys = self.keys();
        if keys.fetched.is_none_or(|t| t.elapsed() >= REFRESH_EVERY) {
            return Lookup::Stale;
        }
        let key = match kid {
            Some(id) => keys.by_id.get(id).cloned(),
            None => keys.anonymous.clone(),
        };
        match key {
            Some(key) => Lookup::Found(key, keys),
            None => Lookup::Unknown,
        }
    }

    /// The key `kid` names, fetching the key set when it is stale, or when it lacks the
    /// key and was not fetched in the last 30 s.
    async fn key(&self, kid: Option<&str>) -> Result<(Key, Arc<Keys>), A2aError> {
        if let Lookup::Found(key, keys) = self.lookup(kid) {
            return Ok((key, keys));
        }
        let mut last = self.fetching.lock().await;
        // Another request may have fetched while this one waited.
        let min_age = match self.lookup(kid) {
            Lookup::Found(key, keys) => return Ok((key, keys)),
            Lookup::Stale => Duration::ZERO,
            Lookup::Unknown => REFETCH_AT_MOST_EVERY,
        };
        let unknown = || invalid("it is signed with an unknown key");
        match *last {
            Some(a) if !a.ok && a.at.elapsed() < min_age.max(RETRY_FAILED_AFTER) => {
                return Err(keys_unavailable());
            }
            Some(a) if a.at.elapsed() < min_age => return Err(unknown()),
            _ => {}
        }
        let fetched = self.fetch().await;
        *last = Some(Attempt {
            at: Instant::now(),
            ok: fetched.is_ok(),
        });
        let mut fresh = fetched?;
        // Fetches take turns (`fetching` is held), so no other writes the generation.
        fresh.generation = self.generation.load(Ordering::Relaxed) + 1;
        let generation = fresh.generation;
        *self
            .keys
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = Arc::new(fresh);
        // Tokens each thread remembers from the set replaced are verified again.
        self.generation.store(generation, Ordering::Release);
        match self.lookup(kid) {
            Lookup::Found(key, keys) => Ok((key, keys)),
            _ => Err(unknown()),
        }
    }

    /// Fetches and reads the key set.
    async fn fetch(&self) -> Result<Keys, A2aError> {
        let url = &self.settings.jwks_url;
        let set: JwkSet = async {
            self.http
                .get(url)
                .send()
                .await?
                .error_for_status()?
                .json()
                .await
        }
        .await
        .map_err(|e| {
            tracing::warn!(%url, error = %e, "cannot fetch the JWKS");
            keys_unavailable()
        })?;
        let mut keys = Keys {
            fetched: Some(Instant::now()),
            ..Keys::default()
        };
        for jwk in &set.keys {
            let key = match DecodingKey::from_jwk(jwk) {
                Ok(key) => key,
                Err(e) => {
                    tracing::warn!(%url, kid = ?jwk.common.key_id, error = %e, "skipping a key of the JWKS");
                    continue;
                }
            };
            let alg = jwk
                .common
                .key_algorithm
                .and_then(|a| a.to_string().parse::<Algorithm>().ok());
            let key = Arc::new((key, alg));
            match &jwk.common.key_id {
                Some(id) => {
                    keys.by_id.insert(id.clone(), key);
                }
                None if set.keys.len() == 1 => keys.anonymous = Some(key),
                None => {}
            }
        }
        Ok(keys)
    }
}

#[derive(serde::Deserialize)]
struct Claims {
    /// Required; defaulted here so that a token without it is refused for what it lacks.
    #[serde(default)]
    sub: String,
    #[serde(default)]
    iss: Option<String>,
    /// Required, and read as whole seconds, by the library before these claims are read.
    #[serde(default)]
    exp: u64,
    /// Checked by the library only when it is a whole number of seconds; the same here.
    #[serde(default)]
    nbf: Option<serde_json::Value>,
}

/// The source of the principals of tokens issued by `issuer` (`jwt:` when none is named).
fn source(issuer: Option<&str>) -> String {
    format!("jwt:{}", issuer.unwrap_or_default())
}

#[async_trait]
impl Authenticator for JwtAuthenticator {
    fn schemes(&self) -> (BTreeMap<String, SecurityScheme>, Vec<SecurityRequirement>) {
        let mut s = HttpAuthSecurityScheme::new("Bearer");
        s.bearer_format = Some("JWT".into());
        s.description = Some(format!(
            "A JWT signed by a key of {}",
            self.settings.jwks_url
        ));
        let mut schemes = BTreeMap::new();
        schemes.insert("jwt".to_owned(), SecurityScheme::HttpAuthSecurityScheme(s));
        (schemes, vec![requirement("jwt")])
    }

    fn challenges(&self) -> Vec<HeaderValue> {
        vec![HeaderValue::from_static("Bearer realm=\"a2a\"")]
    }

    /// Known now without a token, and for a token verified before with the keys held.
    fn authenticate_now(&self, headers: &HeaderMap) -> Option<Result<Principal, A2aError>> {
        let Some(token) = bearer_token(headers) else {
            return Some(Err(no_token()));
        };
        self.remembered(token).map(Ok)
    }

    async fn authenticate(&self, headers: &HeaderMap) -> Result<Principal, A2aError> {
        let Some(token) = bearer_token(headers) else {
            return Err(no_token());
        };
        if let Some(principal) = self.remembered(token) {
            return Ok(principal);
        }
        // ASCII (`bearer_token` says so), so this never refuses one.
        let token = std::str::from_utf8(token).map_err(|_| invalid("malformed"))?;
        let header = jsonwebtoken::decode_header(token).map_err(|_| invalid("malformed"))?;
        if !matches!(
            header.alg,
            Algorithm::RS256
                | Algorithm::RS384
                | Algorithm::RS512
                | Algorithm::PS256
                | Algorithm::PS384
                | Algorithm::PS512
                | Algorithm::ES256
                | Algorithm::ES384
                | Algorithm::EdDSA
        ) {
            return Err(invalid("its algorithm is not accepted"));
        }
        let (key, keys) = self.key(header.kid.as_deref()).await?;
        let (key, alg) = &*key;
        if alg.is_some_and(|a| a != header.alg) {
            return Err(invalid("its algorithm does not match its key"));
        }
        let mut validation = Validation::new(header.alg);
        validation.leeway = self.settings.leeway.as_secs();
        validation.validate_nbf = true;
        // The library compares `iss` and `aud` only when a token carries them: leaving one
        // out must not get a token past the limit it sets.
        let mut required = vec!["exp", "sub"];
        if self.settings.issuer.is_some() {
            required.push("iss");
        }
        if self.settings.audience.is_some() {
            required.push("aud");
        }
        validation.set_required_spec_claims(&required);
        match &self.settings.issuer {
            Some(iss) => validation.set_issuer(&[iss]),
            None => validation.iss = None,
        }
        match &self.settings.audience {
            Some(aud) => validation.set_audience(&[aud]),
            None => validation.validate_aud = false,
        }
        let data = jsonwebtoken::decode::<Claims>(token, key, &validation).map_err(|e| {
            use jsonwebtoken::errors::ErrorKind;
            let missing;
            invalid(match e.kind() {
                ErrorKind::ExpiredSignature => "it has expired",
                ErrorKind::ImmatureSignature => "it is not valid yet",
                ErrorKind::InvalidIssuer => "wrong issuer",
                ErrorKind::InvalidAudience => "wrong audience",
                ErrorKind::InvalidSignature => "bad signature",
                ErrorKind::MissingRequiredClaim(claim) => {
                    missing = format!("it has no `{claim}` claim, which this agent requires");
                    &missing
                }
                _ => "it cannot be verified",
            })
        })?;
        if data.claims.sub.is_empty() {
            return Err(invalid(
                "it has no `sub` claim (or an empty one), which this agent requires",
            ));
        }
        let issuer = self
            .settings
            .issuer
            .as_deref()
            .or(data.claims.iss.as_deref());
        let principal = Principal::new(&source(issuer), &data.claims.sub);
        self.verified_shard(token.as_bytes()).put(
            token.as_bytes().into(),
            Verified {
                principal: principal.clone(),
                exp: data.claims.exp,
                nbf: data.claims.nbf.and_then(|n| n.as_u64()),
                keys,
            },
        );
        Ok(principal)
    }

    /// `jwt:{iss}:{name}` when the issuer is configured (without it, the issuer of a task
    /// stored before cannot be known).
    fn legacy_principal(&self, name: &str) -> Option<Principal> {
        let issuer = self.settings.issuer.as_deref()?;
        Some(Principal::new(&source(Some(issuer)), name))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `auth` holding a fresh key set (with no key in it) as its `generation`th fetch.
    fn install_keys(auth: &JwtAuthenticator, generation: u64) -> Arc<Keys> {
        let keys = Arc::new(Keys {
            fetched: Some(Instant::now()),
            generation,
            ..Keys::default()
        });
        *auth.keys.write().unwrap() = keys.clone();
        auth.generation.store(generation, Ordering::Release);
        keys
    }

    /// `token` as verified with `keys`, for `sub`, until `exp`.
    fn verified(auth: &JwtAuthenticator, token: &[u8], keys: &Arc<Keys>, sub: &str, exp: u64) {
        let verified = Verified {
            principal: Principal::new(&source(None), sub),
            exp,
            nbf: None,
            keys: keys.clone(),
        };
        auth.verified_shard(token).put(token.into(), verified);
    }

    #[test]
    fn a_remembered_token_is_verified_again_once_the_keys_are_replaced() {
        let auth = JwtAuthenticator::new(JwtSettings::new("http://127.0.0.1:9/jwks"));
        let exp = jsonwebtoken::get_current_timestamp() + 300;
        let first = install_keys(&auth, 1);
        verified(&auth, b"token-a", &first, "dave", exp);

        // From the shared cache, then from this thread's.
        for _ in 0..3 {
            let principal = auth.remembered(b"token-a").expect("remembered");
            assert_eq!(principal.id(), "jwt::dave");
        }
        // Another thread has its own, and finds the shared cache's.
        std::thread::scope(|s| {
            s.spawn(|| assert!(auth.remembered(b"token-a").is_some()));
        });

        // Keys fetched again (rotation, or the 10 minutes): neither cache vouches for it.
        install_keys(&auth, 2);
        assert_eq!(auth.remembered(b"token-a"), None);
        std::thread::scope(|s| {
            s.spawn(|| assert_eq!(auth.remembered(b"token-a"), None));
        });
    }

    #[test]
    fn a_remembered_token_is_refused_once_it_expires_on_every_thread() {
        let mut settings = JwtSettings::new("http://127.0.0.1:9/jwks");
        settings.leeway = Duration::ZERO;
        let auth = JwtAuthenticator::new(settings);
        let keys = install_keys(&auth, 1);
        let now = jsonwebtoken::get_current_timestamp();
        verified(&auth, b"token-b", &keys, "erin", now + 300);
        assert!(auth.remembered(b"token-b").is_some());
        assert!(auth.remembered(b"token-b").is_some());

        // Verified again, now expired (as a remembered token's `exp` passing looks).
        verified(&auth, b"token-c", &keys, "erin", now - 1);
        assert_eq!(auth.remembered(b"token-c"), None);
        // This thread's copy of a token checks its `exp` like the shared one.
        let stamp = Stamp {
            generation: 1,
            fresh_until: keys.fetched.map(|t| t + REFRESH_EVERY),
            exp: now - 1,
            nbf: None,
        };
        recent::remember(auth.owner, b"token-d", &Principal::new("jwt:", "x"), stamp);
        assert_eq!(auth.remembered(b"token-d"), None);
        // A key set that is not the current one fails it too.
        let stamp = Stamp {
            generation: 7,
            exp: now + 300,
            ..stamp
        };
        recent::remember(auth.owner, b"token-e", &Principal::new("jwt:", "x"), stamp);
        assert_eq!(auth.remembered(b"token-e"), None);
    }
}
