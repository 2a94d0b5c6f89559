//! A time-bounded fuzzer for the request parsers: mutated JSON-RPC (v1.0 and v0.3) and
//! HTTP+JSON requests go through the real router in process. Every answer must be an answer:
//! no panic, no 5xx, a JSON body (or an event stream), and at the JSON-RPC endpoint a JSON-RPC
//! response. Runs `A2A_FUZZ_SECONDS` (default 5; CI sets more) from seed `A2A_FUZZ_SEED`
//! (default: the clock, printed so that a failure can be replayed).

mod common;

use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::body::Body;
use axum::http::{Method, Request};
use common::*;
use tower::ServiceExt;

/// xorshift64*: small, fast, reproducible.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

const SEEDS: &[&str] = &[
    r#"{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"complete"}]}}}"#,
    r#"{"jsonrpc":"2.0","id":"x","method":"SendStreamingMessage","params":{"message":{"messageId":"m2","role":"ROLE_USER","parts":[{"text":"chunks"},{"data":{"a":[1,2,{"b":null}]}},{"url":"https://x.test/f","mediaType":"text/plain","filename":"f"},{"raw":"aGk="}]},"configuration":{"acceptedOutputModes":["text/plain"],"historyLength":2,"returnImmediately":true}}}"#,
    r#"{"jsonrpc":"2.0","id":2,"method":"GetTask","params":{"id":"t1","historyLength":3}}"#,
    r#"{"jsonrpc":"2.0","id":3,"method":"ListTasks","params":{"contextId":"c","status":"TASK_STATE_WORKING","pageSize":5,"pageToken":"abc","statusTimestampAfter":"2026-01-01T00:00:00Z","includeArtifacts":true}}"#,
    r#"{"jsonrpc":"2.0","id":4,"method":"CancelTask","params":{"id":"t1","metadata":{"k":"v"}}}"#,
    r#"{"jsonrpc":"2.0","id":5,"method":"SubscribeToTask","params":{"id":"t1"}}"#,
    r#"{"jsonrpc":"2.0","id":6,"method":"CreateTaskPushNotificationConfig","params":{"taskId":"t1","url":"https://h.test/x","authentication":{"scheme":"Bearer","credentials":"c"}}}"#,
    r#"{"jsonrpc":"2.0","id":7,"method":"GetExtendedAgentCard","params":{}}"#,
    r#"{"jsonrpc":"2.0","id":8,"method":"message/send","params":{"message":{"kind":"message","messageId":"m3","role":"user","parts":[{"kind":"text","text":"reply"},{"kind":"file","file":{"bytes":"aGk=","mimeType":"text/plain"}}]},"configuration":{"blocking":true}}}"#,
    r#"{"jsonrpc":"2.0","id":9,"method":"message/stream","params":{"message":{"kind":"message","messageId":"m4","role":"user","parts":[{"kind":"data","data":{"x":1}}]}}}"#,
    r#"{"jsonrpc":"2.0","id":10,"method":"tasks/get","params":{"id":"t1","historyLength":1}}"#,
    r#"[{"jsonrpc":"2.0","id":11,"method":"GetTask","params":{"id":"t"}}]"#,
];

const REST_SEEDS: &[(&str, &str)] = &[
    (
        "/message:send",
        r#"{"message":{"messageId":"r1","role":"ROLE_USER","parts":[{"text":"complete"}]},"configuration":{"historyLength":1}}"#,
    ),
    (
        "/message:stream",
        r#"{"message":{"messageId":"r2","role":"ROLE_USER","parts":[{"text":"reply"}]}}"#,
    ),
    ("/tasks/t1:cancel", r#"{"metadata":{}}"#),
    (
        "/tasks/t1/pushNotificationConfigs",
        r#"{"url":"https://h.test/x","token":"t"}"#,
    ),
];

const NASTY: &[&str] = &[
    "null",
    "true",
    "-0",
    "1e400",
    "-1e-400",
    "18446744073709551616",
    "\"\"",
    "[]",
    "{}",
    "\"\\ud800\"",
    "\"\\u0000\"",
    "\"TASK_STATE_\"",
    "\"ROLE_AGENT\"",
    "[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]",
    "{\"__proto__\":1}",
    "\"x\"",
    "9007199254740993",
    "-1",
    "2147483648",
    "0.5",
];

/// One mutation of `input`.
fn mutate(rng: &mut Rng, input: &[u8]) -> Vec<u8> {
    let mut out = input.to_vec();
    for _ in 0..=rng.below(3) {
        match rng.below(8) {
            0 if !out.is_empty() => {
                let i = rng.below(out.len());
                out[i] ^= 1 << rng.below(8);
            }
            1 if !out.is_empty() => {
                let i = rng.below(out.len());
                out.truncate(i);
            }
            2 => {
                let i = rng.below(out.len() + 1);
                let b = (rng.next() & 0xff) as u8;
                out.insert(i, b);
            }
            3 | 4 => {
                // Replace a JSON value (after a colon) with a nasty one.
                let colons: Vec<usize> = out
                    .iter()
                    .enumerate()
                    .filter(|(_, b)| **b == b':')
                    .map(|(i, _)| i)
                    .collect();
                if let Some(&at) = colons.get(rng.below(colons.len())) {
                    let end = out[at + 1..]
                        .iter()
                        .position(|b| matches!(b, b',' | b'}' | b']'))
                        .map_or(out.len(), |p| at + 1 + p);
                    let nasty = NASTY[rng.below(NASTY.len())].as_bytes();
                    out.splice(at + 1..end, nasty.iter().copied());
                }
            }
            5 => {
                // Deep nesting.
                let depth = 1 + rng.below(2000);
                let i = rng.below(out.len() + 1);
                let deep: Vec<u8> = std::iter::repeat_n(b'[', depth)
                    .chain(std::iter::repeat_n(b']', depth))
                    .collect();
                out.splice(i..i, deep);
            }
            6 => {
                // Splice with another seed.
                let other = SEEDS[rng.below(SEEDS.len())].as_bytes();
                let i = rng.below(out.len() + 1);
                let j = rng.below(other.len() + 1);
                out.truncate(i);
                out.extend_from_slice(&other[j..]);
            }
            _ => {
                // Invalid UTF-8.
                let i = rng.below(out.len() + 1);
                out.insert(i, 0xff);
            }
        }
    }
    out
}

async fn check(router: &axum::Router, req: Request<Body>, jsonrpc: bool, input: &[u8]) {
    let shown = String::from_utf8_lossy(&input[..input.len().min(300)]).into_owned();
    let resp = tokio::time::timeout(Duration::from_secs(10), router.clone().oneshot(req))
        .await
        .unwrap_or_else(|_| panic!("no answer within 10 s to {shown}"))
        .unwrap();
    let status = resp.status();
    assert!(status.as_u16() < 500, "{status} for {shown}");
    let streaming = resp
        .headers()
        .get("content-type")
        .is_some_and(|v| v.as_bytes().starts_with(b"text/event-stream"));
    let body = tokio::time::timeout(
        Duration::from_secs(10),
        axum::body::to_bytes(resp.into_body(), 16 << 20),
    )
    .await
    .unwrap_or_else(|_| panic!("the body never ended for {shown}"))
    .unwrap();
    if streaming {
        return;
    }
    let json: serde_json::Value = serde_json::from_slice(&body)
        .unwrap_or_else(|e| panic!("not JSON ({e}) for {shown}: {body:?}"));
    if jsonrpc {
        let one = match &json {
            serde_json::Value::Array(items) if !items.is_empty() => &items[0],
            v => v,
        };
        assert_eq!(one["jsonrpc"], "2.0", "for {shown}: {json}");
        assert!(
            one.get("result").is_some() != one.get("error").is_some(),
            "for {shown}: {json}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_parsers_answer_whatever_they_are_sent() {
    let seconds: f64 = std::env::var("A2A_FUZZ_SECONDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(5.0);
    let seed: u64 = std::env::var("A2A_FUZZ_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(1, |d| d.as_nanos() as u64)
                | 1
        });
    println!("fuzz: seed {seed} (A2A_FUZZ_SEED), {seconds} s (A2A_FUZZ_SECONDS)");
    let server = start(Setup::default()).await;
    let router = a2a_server::agent_routes(
        Arc::clone(&server.handler),
        "",
        &a2a_server::ServeOptions::default(),
    );
    // xorshift stays at 0 from 0: an odd state, whatever the seed.
    let mut rng = Rng(seed | 1);
    let deadline = Instant::now() + Duration::from_secs_f64(seconds);
    let mut runs = 0u64;
    while Instant::now() < deadline {
        for _ in 0..50 {
            let jsonrpc = rng.below(4) != 0;
            let (path, seed_body) = if jsonrpc {
                ("/", SEEDS[rng.below(SEEDS.len())])
            } else {
                REST_SEEDS[rng.below(REST_SEEDS.len())]
            };
            let body = if rng.below(10) == 0 {
                seed_body.as_bytes().to_vec()
            } else {
                mutate(&mut rng, seed_body.as_bytes())
            };
            let mut req = Request::builder()
                .method(Method::POST)
                .uri(path)
                .header("content-type", "application/json");
            if rng.below(5) != 0 {
                req = req.header("a2a-version", if rng.below(2) == 0 { "1.0" } else { "0.3" });
            }
            let req = req.body(Body::from(body.clone())).unwrap();
            check(&router, req, jsonrpc, &body).await;
            runs += 1;
        }
        // Mutated query strings too.
        let q = mutate(
            &mut rng,
            b"pageSize=5&status=TASK_STATE_WORKING&historyLength=2&contextId=c",
        );
        let q: String = q
            .iter()
            .map(|b| {
                if b.is_ascii_graphic() && *b != b'#' {
                    *b as char
                } else {
                    '%'
                }
            })
            .collect();
        if let Ok(req) = Request::builder()
            .uri(format!("/tasks?{q}"))
            .header("a2a-version", "1.0")
            .body(Body::empty())
        {
            check(&router, req, false, q.as_bytes()).await;
            runs += 1;
        }
    }
    println!("fuzz: {runs} requests, every one answered");
    assert!(runs > 0);
}
