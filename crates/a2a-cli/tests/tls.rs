//! TLS: `a2a serve --tls-cert --tls-key` serves HTTPS (HTTP/2 and HTTP/1.1 by ALPN) on its
//! port, its cards name `https` URLs, a client that trusts the CA talks to it on JSON-RPC,
//! HTTP+JSON and gRPC, and one that does not is refused by its TLS check.

mod common;

use common::*;
use serde_json::Value;

#[test]
fn the_host_serves_https() {
    // Test-only certificates: `tls-ca.pem` signed `tls-cert.pem` (localhost, 127.0.0.1).
    let cert = format!("{FIXTURES}/tls-cert.pem");
    let key = format!("{FIXTURES}/tls-key.pem");
    let ca = format!("{FIXTURES}/tls-ca.pem");
    let s = serve(&["--tls-cert", &cert, "--tls-key", &key, "--store", "memory"]);
    assert!(s.base.starts_with("https://127.0.0.1:"), "{}", s.base);
    let echo = format!("{}/a2a/echo", s.base);

    let root = reqwest::Certificate::from_pem(&std::fs::read(&ca).unwrap()).unwrap();
    for http2 in [false, true] {
        let mut b = reqwest::blocking::Client::builder().add_root_certificate(root.clone());
        if !http2 {
            b = b.http1_only();
        }
        let client = b.build().unwrap();
        let resp = client
            .get(format!("{echo}/.well-known/agent-card.json"))
            .send()
            .unwrap();
        let version = resp.version();
        assert_eq!(
            version,
            if http2 {
                reqwest::Version::HTTP_2
            } else {
                reqwest::Version::HTTP_11
            }
        );
        let card: Value = resp.json().unwrap();
        let url = card["supportedInterfaces"][0]["url"].as_str().unwrap();
        assert!(url.starts_with("https://"), "{card}");
    }

    // The command line, trusting the CA, on every binding.
    for binding in ["jsonrpc", "rest", "grpc"] {
        let o = a2a(&[
            "send",
            &echo,
            "task: over tls",
            "--ca-cert",
            &ca,
            "--binding",
            binding,
        ]);
        assert!(o.status.success(), "{binding}: {}", stderr(&o));
        assert!(stdout(&o).contains("over tls"), "{}", stdout(&o));
    }
    // Without trusting it, the certificate is refused, and the error says so in words.
    let o = a2a(&["send", &echo, "hi"]);
    assert!(!o.status.success());
    assert!(
        stderr(&o).contains("TLS: invalid peer certificate: UnknownIssuer"),
        "{}",
        stderr(&o)
    );
    // Plain HTTP on the TLS port gets no answer.
    let plain = s.base.replacen("https://", "http://", 1);
    assert!(
        reqwest::blocking::Client::builder()
            .timeout(std::time::Duration::from_secs(5))
            .build()
            .unwrap()
            .get(format!("{plain}/.well-known/agent-card.json"))
            .send()
            .is_err()
    );
}

/// A key that cannot be read is refused before the server announces itself: nothing waits
/// on a banner for a server that is about to exit.
#[test]
fn an_unreadable_key_is_refused_before_the_banner() {
    let cert = format!("{FIXTURES}/tls-cert.pem");
    let o = std::process::Command::new(BIN)
        .args(["serve", "--port", "0", "--store", "memory"])
        .args(["--tls-cert", &cert, "--tls-key", &cert])
        .output()
        .unwrap();
    assert!(!o.status.success());
    assert!(stdout(&o).is_empty(), "{}", stdout(&o));
    assert!(stderr(&o).contains("--tls-key"), "{}", stderr(&o));
}
