//! Verifying signed agent cards (spec §8.4.3): each signature is a JWS over the card as
//! received, without `signatures`, canonicalized with JCS (RFC 8785); the key comes from the
//! signature's `jku` (a JWK Set) or from keys the caller trusts.
//!
//! Also verifying signed push notifications ([`verify_notification`]), for webhook receivers.

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD as B64;
pub use jsonwebtoken::jwk::JwkSet;
use serde_json::Value;

/// Why a card's signature did not verify.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SignatureError {
    /// The card has no `signatures`.
    #[error("the agent card is not signed")]
    Unsigned,
    /// A signature is not a well-formed JWS.
    #[error("malformed card signature: {0}")]
    Malformed(String),
    /// No key for the signature's `kid`.
    #[error("no key {0:?} to verify the card signature with")]
    UnknownKey(String),
    /// The key set could not be fetched.
    #[error("cannot fetch the signing keys from {url}: {reason}")]
    Keys {
        /// The `jku`.
        url: String,
        /// What went wrong.
        reason: String,
    },
    /// The signature does not match the card: it was altered, or signed by another key.
    #[error("the signature does not match the content (altered, or signed by another key)")]
    Mismatch,
    /// A notification's signature is past its `exp`.
    #[error("the notification's signature has expired")]
    Expired,
    /// A notification's signature was made for another webhook (`aud`).
    #[error("the notification was signed for another webhook")]
    WrongAudience,
}

/// What a verified push notification's signature says.
#[derive(Debug, Clone, serde::Deserialize)]
#[non_exhaustive]
pub struct NotificationClaims {
    /// The task the notification is about.
    pub task_id: String,
    /// The webhook it was sent to.
    pub aud: String,
    /// When it was signed (seconds since the epoch).
    pub iat: u64,
    /// Until when the signature is valid.
    pub exp: u64,
    /// Unique per signed request: a receiver may keep recent ones to refuse replays.
    pub jti: String,
    /// The hex SHA-256 of the body (already checked).
    pub request_body_sha256: String,
}

/// Verifies a push notification as a webhook receiver got it: `signature` is the value of
/// [`a2a_types::NOTIFICATION_SIGNATURE_HEADER`], `body` the raw request body, `webhook_url`
/// the URL the receiver registered (the signature's audience), `keys` the agent's JWK Set.
/// Checks the key, the signature, the time window (60 s of clock skew allowed), the
/// audience, and that the body is the one signed.
pub fn verify_notification(
    signature: &str,
    body: &[u8],
    webhook_url: &str,
    keys: &JwkSet,
) -> Result<NotificationClaims, SignatureError> {
    let malformed = |e: &dyn std::fmt::Display| SignatureError::Malformed(e.to_string());
    let header = jsonwebtoken::decode_header(signature).map_err(|e| malformed(&e))?;
    let (key, alg) = key_for(keys, header.kid.as_deref().unwrap_or_default(), header.alg)?;
    let mut validation = jsonwebtoken::Validation::new(alg);
    validation.set_audience(&[webhook_url]);
    validation.set_required_spec_claims(&["exp", "aud"]);
    validation.leeway = 60;
    let claims = jsonwebtoken::decode::<NotificationClaims>(signature, &key, &validation)
        .map_err(|e| match e.kind() {
            jsonwebtoken::errors::ErrorKind::InvalidSignature => SignatureError::Mismatch,
            jsonwebtoken::errors::ErrorKind::ExpiredSignature => SignatureError::Expired,
            jsonwebtoken::errors::ErrorKind::InvalidAudience => SignatureError::WrongAudience,
            _ => malformed(&e),
        })?
        .claims;
    if !a2a_types::notification_body_digest(body).eq_ignore_ascii_case(&claims.request_body_sha256)
    {
        return Err(SignatureError::Mismatch);
    }
    Ok(claims)
}

/// One signature's protected header.
#[derive(Debug, Clone, serde::Deserialize)]
pub struct SignatureHeader {
    /// The algorithm.
    pub alg: String,
    /// The key id.
    #[serde(default)]
    pub kid: Option<String>,
    /// Where the key set is.
    #[serde(default)]
    pub jku: Option<String>,
}

/// The protected headers of a card's signatures.
pub fn signature_headers(card: &Value) -> Result<Vec<(SignatureHeader, Value)>, SignatureError> {
    let sigs = card
        .get("signatures")
        .and_then(Value::as_array)
        .filter(|s| !s.is_empty())
        .ok_or(SignatureError::Unsigned)?;
    sigs.iter()
        .map(|s| {
            let protected = s
                .get("protected")
                .and_then(Value::as_str)
                .ok_or_else(|| SignatureError::Malformed("no protected header".into()))?;
            let bytes = B64
                .decode(protected)
                .map_err(|e| SignatureError::Malformed(e.to_string()))?;
            let header: SignatureHeader = serde_json::from_slice(&bytes)
                .map_err(|e| SignatureError::Malformed(e.to_string()))?;
            Ok((header, s.clone()))
        })
        .collect()
}

/// Verifies the signatures of `card` (as received) against `keys`; the key id of the first
/// signature that verifies. Every signature is tried, so a card re-signed for key rotation
/// verifies with either key.
pub fn verify_card(card: &Value, keys: &JwkSet) -> Result<String, SignatureError> {
    let payload = B64.encode(a2a_types::jcs::card_payload(card));
    let mut last = SignatureError::Unsigned;
    for (header, sig) in signature_headers(card)? {
        let kid = header.kid.clone().unwrap_or_default();
        let verified = header
            .alg
            .parse()
            .map_err(|_| SignatureError::Malformed(format!("algorithm {}", header.alg)))
            .and_then(|alg| key_for(keys, &kid, alg))
            .and_then(|(key, alg)| {
                let field = |name: &str| {
                    sig[name].as_str().ok_or_else(|| {
                        SignatureError::Malformed(format!("a signature without `{name}`"))
                    })
                };
                let input = format!("{}.{payload}", field("protected")?);
                match jsonwebtoken::crypto::verify(field("signature")?, input.as_bytes(), &key, alg)
                {
                    Ok(true) => Ok(()),
                    _ => Err(SignatureError::Mismatch),
                }
            });
        // Another signature (key rotation) may still verify.
        match verified {
            Ok(()) => return Ok(kid),
            Err(e) => last = e,
        }
    }
    Err(last)
}

/// The key `kid` of `keys`, for `alg`; symmetric algorithms are refused (a public key set
/// cannot hold a shared secret).
fn key_for(
    keys: &JwkSet,
    kid: &str,
    alg: jsonwebtoken::Algorithm,
) -> Result<(jsonwebtoken::DecodingKey, jsonwebtoken::Algorithm), SignatureError> {
    use jsonwebtoken::Algorithm::{HS256, HS384, HS512};
    if matches!(alg, HS256 | HS384 | HS512) {
        return Err(SignatureError::Malformed(
            "symmetric algorithms are not accepted".into(),
        ));
    }
    let jwk = keys
        .keys
        .iter()
        .find(|k| k.common.key_id.as_deref().unwrap_or_default() == kid)
        .ok_or_else(|| SignatureError::UnknownKey(kid.to_owned()))?;
    let key = jsonwebtoken::DecodingKey::from_jwk(jwk)
        .map_err(|e| SignatureError::Malformed(e.to_string()))?;
    Ok((key, alg))
}

/// Fetches the JWK Set at `url`.
pub async fn fetch_keys(http: &reqwest::Client, url: &str) -> Result<JwkSet, SignatureError> {
    let failed = |reason: String| SignatureError::Keys {
        url: url.to_owned(),
        reason,
    };
    http.get(url)
        .send()
        .await
        .map_err(|e| failed(e.to_string()))?
        .error_for_status()
        .map_err(|e| failed(e.to_string()))?
        .json()
        .await
        .map_err(|e| failed(e.to_string()))
}
