//! The server's guard around every request: a handler that panics is answered with a
//! JSON-RPC internal error (HTTP 500) and the server goes on serving, routed paths and the
//! JSON 404 fallback alike.

use axum::Router;
use axum::routing::get;
use serde_json::Value;

/// A handler with a bug.
async fn boom() -> &'static str {
    panic!("a bug in a handler")
}

#[tokio::test]
async fn a_panicking_handler_gets_a_500_and_the_server_lives() {
    let router = Router::new()
        .route("/boom", get(boom))
        .route("/fine", get(|| async { "fine" }));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(a2a_server::serve_with_drain(
        listener,
        router,
        std::future::pending(),
        std::time::Duration::from_secs(1),
    ));
    let http = reqwest::Client::new();

    for _ in 0..2 {
        let boom = http
            .get(format!("http://{addr}/boom"))
            .send()
            .await
            .unwrap();
        assert_eq!(boom.status(), 500);
        let body: Value = boom.json().await.unwrap();
        assert_eq!(body["error"]["code"], -32603, "{body}");
    }
    let fine = http
        .get(format!("http://{addr}/fine"))
        .send()
        .await
        .unwrap();
    assert_eq!(fine.status(), 200);
    assert_eq!(fine.text().await.unwrap(), "fine");
    let missing = http
        .get(format!("http://{addr}/nowhere"))
        .send()
        .await
        .unwrap();
    assert_eq!(missing.status(), 404);
    let body: Value = missing.json().await.unwrap();
    assert_eq!(body["error"]["status"], "NOT_FOUND", "{body}");
}
