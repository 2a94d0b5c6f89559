//! JWTs verified against a JWKS URL: signature (asymmetric algorithms only), issuer,
//! audience, expiry and not-before with a clock-skew allowance. The principal is the token's
//! `sub` claim. Keys are fetched at first use and again when a token names a key id not seen
//! yet (at most every 30 s) or the set is 10 minutes old.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
use std::time::{Duration, Instant};

use a2a_types::{A2aError, HttpAuthSecurityScheme, SecurityRequirement, SecurityScheme};
use async_trait::async_trait;
use axum::http::{HeaderMap, HeaderValue};
use jsonwebtoken::jwk::JwkSet;
use jsonwebtoken::{Algorithm, DecodingKey, Validation};
use tokio::sync::RwLock;

use super::{Authenticator, Principal, bearer_token, requirement};

/// How JWTs are checked.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct JwtSettings {
    /// Where the issuer publishes its keys (a JWK Set).
    pub jwks_url: String,
    /// The required `iss` (`None`: any).
    pub issuer: Option<String>,
    /// The required `aud` (`None`: any).
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

/// The keys of a JWK Set, by key id.
#[derive(Default)]
struct Keys {
    by_id: HashMap<String, (DecodingKey, Option<Algorithm>)>,
    /// The only key when the set has one without an id.
    anonymous: Option<(DecodingKey, Option<Algorithm>)>,
    fetched: Option<Instant>,
}

/// Verifies `Authorization: Bearer <JWT>`.
pub struct JwtAuthenticator {
    settings: JwtSettings,
    http: reqwest::Client,
    keys: RwLock<Keys>,
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
            keys: RwLock::new(Keys::default()),
        }
    }

    /// Fetches the key set, unless it was fetched less than `min_age` ago.
    async fn refresh(&self, min_age: Duration) -> Result<(), A2aError> {
        let mut keys = self.keys.write().await;
        if keys.fetched.is_some_and(|t| t.elapsed() < min_age) {
            return Ok(());
        }
        keys.fetched = Some(Instant::now());
        let set: JwkSet = async {
            self.http
                .get(&self.settings.jwks_url)
                .send()
                .await?
                .error_for_status()?
                .json()
                .await
        }
        .await
        .map_err(|e| {
            tracing::warn!(url = %self.settings.jwks_url, error = %e, "cannot fetch the JWKS");
            A2aError::Unauthenticated {
                detail: "the keys to verify tokens are not available right now".into(),
            }
        })?;
        let mut fresh = Keys {
            fetched: keys.fetched,
            ..Keys::default()
        };
        for jwk in &set.keys {
            let Ok(key) = DecodingKey::from_jwk(jwk) else {
                continue;
            };
            let alg = jwk
                .common
                .key_algorithm
                .and_then(|a| a.to_string().parse::<Algorithm>().ok());
            match &jwk.common.key_id {
                Some(id) => {
                    fresh.by_id.insert(id.clone(), (key, alg));
                }
                None if set.keys.len() == 1 => fresh.anonymous = Some((key, alg)),
                None => {}
            }
        }
        *keys = fresh;
        Ok(())
    }

    /// The key `kid` names, from a key set fetched less than 10 minutes ago: one read lock
    /// per request.
    async fn fresh_key(&self, kid: Option<&str>) -> Option<(DecodingKey, Option<Algorithm>)> {
        let keys = self.keys.read().await;
        if keys.fetched.is_none_or(|t| t.elapsed() >= REFRESH_EVERY) {
            return None;
        }
        match kid {
            Some(id) => keys.by_id.get(id).cloned(),
            None => keys.anonymous.clone(),
        }
    }
}

#[derive(serde::Deserialize)]
struct Claims {
    sub: String,
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

    async fn authenticate(&self, headers: &HeaderMap) -> Result<Principal, A2aError> {
        let Some(token) = bearer_token(headers) else {
            return Err(A2aError::Unauthenticated {
                detail: "this agent requires a bearer token (a JWT)".into(),
            });
        };
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
        let kid = header.kid.as_deref();
        let (key, alg) = match self.fresh_key(kid).await {
            Some(k) => k,
            None => {
                // Keys never fetched or old (refetch now), or a key rotated in since the
                // last fetch (refetch at most every 30 s).
                let stale = self
                    .keys
                    .read()
                    .await
                    .fetched
                    .is_none_or(|t| t.elapsed() >= REFRESH_EVERY);
                let min_age = if stale {
                    Duration::ZERO
                } else {
                    REFETCH_AT_MOST_EVERY
                };
                self.refresh(min_age).await?;
                self.fresh_key(kid)
                    .await
                    .ok_or_else(|| invalid("it is signed with an unknown key"))?
            }
        };
        if alg.is_some_and(|a| a != header.alg) {
            return Err(invalid("its algorithm does not match its key"));
        }
        let mut validation = Validation::new(header.alg);
        validation.leeway = self.settings.leeway.as_secs();
        validation.validate_nbf = true;
        validation.set_required_spec_claims(&["exp", "sub"]);
        match &self.settings.issuer {
            Some(iss) => validation.set_issuer(&[iss]),
            None => validation.iss = None,
        }
        match &self.settings.audience {
            Some(aud) => validation.set_audience(&[aud]),
            None => validation.validate_aud = false,
        }
        let data = jsonwebtoken::decode::<Claims>(token, &key, &validation).map_err(|e| {
            use jsonwebtoken::errors::ErrorKind;
            invalid(match e.kind() {
                ErrorKind::ExpiredSignature => "it has expired",
                ErrorKind::ImmatureSignature => "it is not valid yet",
                ErrorKind::InvalidIssuer => "wrong issuer",
                ErrorKind::InvalidAudience => "wrong audience",
                ErrorKind::InvalidSignature => "bad signature",
                ErrorKind::MissingRequiredClaim(_) => "a required claim is missing",
                _ => "it cannot be verified",
            })
        })?;
        if data.claims.sub.is_empty() {
            return Err(invalid("empty subject"));
        }
        Ok(Principal(Arc::from(data.claims.sub)))
    }
}
