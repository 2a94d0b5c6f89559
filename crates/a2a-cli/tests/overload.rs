//! Overload stays polite: beyond `--max-streams-per-caller` a new stream is refused at once
//! with a spec-shaped error on every binding (and the slot comes back when a stream ends);
//! beyond `--max-in-flight` a request gets 503 with Retry-After. Neither hangs, and
//! `/metrics` counts both.

mod common;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use common::*;

/// Opens a JSON-RPC stream to `path` on a raw connection and returns it once the response
/// head has arrived (the stream stays open while the connection does).
fn open_stream(base: &str, path: &str, text: &str) -> (TcpStream, String) {
    let mut conn = TcpStream::connect(base.trim_start_matches("http://")).unwrap();
    let body = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"SendStreamingMessage","params":{{"message":{{"messageId":"{}","role":"ROLE_USER","parts":[{{"text":"{text}"}}]}}}}}}"#,
        a2a_types::new_id()
    );
    write!(
        conn,
        "POST {path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nA2A-Version: 1.0\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    conn.set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let mut head = [0u8; 4096];
    let n = conn.read(&mut head).unwrap();
    (conn, String::from_utf8_lossy(&head[..n]).into_owned())
}

#[test]
fn a_caller_beyond_its_stream_bound_is_refused_on_every_binding() {
    let s = serve(&[
        "--agent",
        "slow",
        "--store",
        "memory",
        "--max-streams-per-caller",
        "2",
    ]);
    let base = &s.base;
    let (first, head) = open_stream(base, "/", "30");
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    assert!(head.contains("text/event-stream"), "{head}");
    let (_second, head) = open_stream(base, "/", "30");
    assert!(head.contains("text/event-stream"), "{head}");

    // JSON-RPC: a JSON-RPC error at once, no stream.
    let (_third, head) = open_stream(base, "/", "30");
    assert!(!head.contains("text/event-stream"), "{head}");
    assert!(head.contains("-32090"), "{head}");
    assert!(head.contains("RESOURCE_EXHAUSTED"), "{head}");

    // HTTP+JSON: 429 with a google.rpc.Status body.
    let rest = reqwest::blocking::Client::new()
        .post(format!("{base}/message:stream"))
        .header("A2A-Version", "1.0")
        .json(&serde_json::json!({"message": {"messageId": "r1", "role": "ROLE_USER", "parts": [{"text": "1"}]}}))
        .send()
        .unwrap();
    assert_eq!(rest.status().as_u16(), 429);
    let body: serde_json::Value = rest.json().unwrap();
    assert_eq!(body["error"]["status"], "RESOURCE_EXHAUSTED", "{body}");

    // gRPC (and the client's error text): RESOURCE_EXHAUSTED.
    let o = a2a(&["stream", base, "1", "--binding", "grpc"]);
    assert!(!o.status.success());
    assert!(
        stderr(&o).to_lowercase().contains("resource exhausted")
            || stderr(&o).contains("RESOURCE_EXHAUSTED"),
        "{}",
        stderr(&o)
    );
    assert!(refused(base, "streams_per_caller") >= 3.0);

    // A stream that ends gives its slot back.
    drop(first);
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let o = a2a(&["stream", base, "0.1"]);
        if o.status.success() {
            assert!(stdout(&o).contains("COMPLETED"), "{}", stdout(&o));
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the slot never came back: {}",
            stderr(&o)
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn requests_beyond_the_in_flight_bound_get_503_with_retry_after() {
    let s = serve(&[
        "--agent",
        "slow",
        "--store",
        "memory",
        "--max-in-flight",
        "1",
    ]);
    let base = s.base.clone();
    // A blocking send holds the one slot for as long as the task runs.
    let blocking = std::thread::spawn({
        let base = base.clone();
        move || a2a(&["send", &base, "3", "--blocking"])
    });
    let client = reqwest::blocking::Client::new();
    let deadline = Instant::now() + Duration::from_secs(10);
    let answer = loop {
        let r = client
            .get(format!("{base}/.well-known/agent-card.json"))
            .send()
            .unwrap();
        if r.status().as_u16() == 503 {
            break r;
        }
        assert!(Instant::now() < deadline, "never refused");
        std::thread::sleep(Duration::from_millis(50));
    };
    assert_eq!(answer.headers()["retry-after"], "1");
    let body: serde_json::Value = answer.json().unwrap();
    assert_eq!(body["error"]["status"], "UNAVAILABLE", "{body}");
    let o = blocking.join().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("COMPLETED"), "{}", stdout(&o));
    // Free again.
    let r = client
        .get(format!("{base}/.well-known/agent-card.json"))
        .send()
        .unwrap();
    assert!(r.status().is_success());
    assert!(refused(&base, "max_in_flight") >= 1.0);
}

#[test]
fn a_caller_beyond_its_request_rate_is_told_to_slow_down() {
    let s = serve(&[
        "--agent",
        "echo",
        "--store",
        "memory",
        "--rate-per-caller",
        "0.5",
        "--rate-burst",
        "3",
    ]);
    let client = reqwest::blocking::Client::new();
    let send = |i: usize| {
        client
            .post(&s.base)
            .header("A2A-Version", "1.0")
            .json(&serde_json::json!({"jsonrpc": "2.0", "id": i, "method": "SendMessage",
                "params": {"message": {"messageId": format!("r{i}"), "role": "ROLE_USER", "parts": [{"text": "hi"}]}}}))
            .send()
            .unwrap()
            .json::<serde_json::Value>()
            .unwrap()
    };
    for i in 0..3 {
        let reply = send(i);
        assert!(reply.get("result").is_some(), "{reply}");
    }
    let slowed = send(3);
    assert_eq!(slowed["error"]["code"], -32090, "{slowed}");
    assert!(
        slowed["error"]["message"]
            .as_str()
            .unwrap()
            .contains("requests per second"),
        "{slowed}"
    );
    // HTTP+JSON: 429.
    let rest = client
        .get(format!("{}/tasks", s.base))
        .header("A2A-Version", "1.0")
        .send()
        .unwrap();
    assert_eq!(rest.status().as_u16(), 429);
    // The bucket refills: one more request goes through within a few seconds.
    let deadline = Instant::now() + Duration::from_secs(10);
    let mut i = 4;
    loop {
        let reply = send(i);
        if reply.get("result").is_some() {
            break;
        }
        assert!(Instant::now() < deadline, "never refilled: {reply}");
        std::thread::sleep(Duration::from_millis(200));
        i += 1;
    }
    assert!(refused(&s.base, "rate_per_caller") >= 2.0);
}
