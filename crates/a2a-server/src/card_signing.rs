//! Signing agent cards (spec §8.4): the card as served, without `signatures`, canonicalized
//! with JCS (RFC 8785), signed as a JWS with detached payload; the public key is served as a
//! JWK Set that the signature's `jku` names. The same key signs push notifications
//! ([`CardSigner::sign_jwt`], see [`a2a_types::NOTIFICATION_SIGNATURE_HEADER`]).

use std::sync::Arc;

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD as B64;
use serde_json::{Value, json};

/// Where a server publishes its card-signing key, under its base URL.
pub const JWKS_PATH: &str = "/.well-known/jwks.json";

/// The errors of loading a signing key.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CardSigningError {
    /// The key is not a P-256 private key in PKCS#8 PEM.
    #[error("the card-signing key must be a P-256 (ES256) private key in PKCS#8 PEM: {0}")]
    BadKey(String),
}

/// Signs cards (and push notifications) with one ES256 key.
pub struct CardSigner {
    key: jsonwebtoken::EncodingKey,
    kid: String,
    jwk: Value,
}

impl std::fmt::Debug for CardSigner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CardSigner")
            .field("kid", &self.kid)
            .finish()
    }
}

impl CardSigner {
    /// A signer with the P-256 private key in `pem` (PKCS#8), known by `kid`.
    pub fn from_ec_pem(pem: &[u8], kid: &str) -> Result<Arc<Self>, CardSigningError> {
        let bad = |e: &dyn std::fmt::Display| CardSigningError::BadKey(e.to_string());
        use rustls_pki_types::pem::PemObject as _;
        let der = rustls_pki_types::PrivatePkcs8KeyDer::from_pem_slice(pem).map_err(|e| bad(&e))?;
        let key = jsonwebtoken::EncodingKey::from_ec_der(der.secret_pkcs8_der());
        // The public half, for the JWK Set (parsing also checks that the key is P-256).
        let pair = ring::signature::EcdsaKeyPair::from_pkcs8(
            &ring::signature::ECDSA_P256_SHA256_FIXED_SIGNING,
            der.secret_pkcs8_der(),
            &ring::rand::SystemRandom::new(),
        )
        .map_err(|e| bad(&e))?;
        use ring::signature::KeyPair as _;
        let point = pair.public_key().as_ref();
        if point.len() != 65 {
            return Err(bad(&"not an uncompressed P-256 point"));
        }
        let jwk = json!({
            "kty": "EC", "crv": "P-256", "alg": "ES256", "use": "sig", "kid": kid,
            "x": B64.encode(&point[1..33]), "y": B64.encode(&point[33..]),
        });
        Ok(Arc::new(Self {
            key,
            kid: kid.to_owned(),
            jwk,
        }))
    }

    /// The JWK Set with the public key.
    pub fn jwks(&self) -> Value {
        json!({"keys": [self.jwk]})
    }

    /// Adds a signature to `card` (a JSON object), naming `jku` as where the key is.
    pub fn sign(&self, card: &mut Value, jku: &str) {
        let header = json!({"alg": "ES256", "typ": "JOSE", "kid": self.kid, "jku": jku});
        let protected = B64.encode(header.to_string());
        let payload = B64.encode(a2a_types::jcs::card_payload(card));
        let input = format!("{protected}.{payload}");
        let signature = match jsonwebtoken::crypto::sign(
            input.as_bytes(),
            &self.key,
            jsonwebtoken::Algorithm::ES256,
        ) {
            Ok(signature) => signature,
            Err(e) => {
                tracing::warn!(error = %e, "cannot sign the agent card; serving it unsigned");
                return;
            }
        };
        if let Value::Object(members) = card {
            members.insert(
                "signatures".into(),
                json!([{"protected": protected, "signature": signature}]),
            );
        }
    }
}

impl CardSigner {
    /// A compact JWS (a JWT, ES256) of `claims`, naming `jku` when given.
    pub fn sign_jwt(
        &self,
        claims: &impl serde::Serialize,
        jku: Option<&str>,
    ) -> Result<String, jsonwebtoken::errors::Error> {
        let mut header = jsonwebtoken::Header::new(jsonwebtoken::Algorithm::ES256);
        header.kid = Some(self.kid.clone());
        header.jku = jku.map(str::to_owned);
        jsonwebtoken::encode(&header, claims, &self.key)
    }
}
