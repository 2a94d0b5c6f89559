//! TLS for a server: the acceptor made from PEM files.

use std::sync::Arc;

/// TLS for a server: its certificate chain and private key, from PEM files.
#[derive(Clone)]
pub struct Tls(pub(super) tokio_rustls::TlsAcceptor);

impl std::fmt::Debug for Tls {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Tls")
    }
}

impl Tls {
    /// Reads the certificate chain from `cert` and the private key (PKCS#8, PKCS#1 or SEC1)
    /// from `key`, both PEM; offers HTTP/2 and HTTP/1.1 by ALPN.
    pub fn from_pem_files(
        cert: &std::path::Path,
        key: &std::path::Path,
    ) -> Result<Self, std::io::Error> {
        use rustls_pki_types::pem::PemObject;
        use rustls_pki_types::{CertificateDer, PrivateKeyDer};
        let bad = |what: &std::path::Path, e: &dyn std::fmt::Display| {
            std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                format!("{}: {e}", what.display()),
            )
        };
        let chain = CertificateDer::pem_file_iter(cert)
            .map_err(|e| bad(cert, &e))?
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| bad(cert, &e))?;
        if chain.is_empty() {
            return Err(bad(cert, &"no certificate in the file"));
        }
        let key_der = PrivateKeyDer::from_pem_file(key).map_err(|e| bad(key, &e))?;
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let mut config = rustls::ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .map_err(|e| bad(cert, &e))?
            .with_no_client_auth()
            .with_single_cert(chain, key_der)
            .map_err(|e| bad(key, &e))?;
        config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
        Ok(Self(tokio_rustls::TlsAcceptor::from(Arc::new(config))))
    }
}
