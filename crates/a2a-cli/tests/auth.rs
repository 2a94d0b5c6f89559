//! Authentication and ownership: with credentials configured, every binding refuses a
//! request without valid ones (401 with `WWW-Authenticate`, or gRPC `UNAUTHENTICATED`) before
//! reading its body, the cards stay public and declare the schemes, and each caller sees,
//! cancels, subscribes to, lists and configures push for only its own tasks — someone else's
//! task is indistinguishable from one that does not exist.

mod common;

use std::io::{Read, Write};
use std::time::Duration;

use common::*;
use serde_json::{Value, json};

const CREDS: &[&str] = &[
    "--auth-token",
    "alice=t-alice,bob=t-bob",
    "--auth-api-key",
    "carol=k-carol",
    "--store",
    "memory",
];

fn rpc(url: &str, auth: Option<(&str, &str)>, method: &str, params: Value) -> (u16, Value) {
    let mut req = reqwest::blocking::Client::new()
        .post(url)
        .header("A2A-Version", "1.0")
        .json(&json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}));
    if let Some((k, v)) = auth {
        req = req.header(k, v);
    }
    let resp = req.send().unwrap();
    let status = resp.status().as_u16();
    (status, resp.json().unwrap_or(Value::Null))
}

const ALICE: Option<(&str, &str)> = Some(("authorization", "Bearer t-alice"));
const BOB: Option<(&str, &str)> = Some(("authorization", "Bearer t-bob"));
const CAROL: Option<(&str, &str)> = Some(("x-api-key", "k-carol"));

#[test]
fn every_binding_refuses_missing_or_wrong_credentials() {
    let s = serve(CREDS);
    let echo = format!("{}/a2a/echo", s.base);

    // The card is public and says how to authenticate.
    let card: Value = reqwest::blocking::get(format!("{echo}/.well-known/agent-card.json"))
        .unwrap()
        .json()
        .unwrap();
    assert_eq!(
        card["securitySchemes"]["bearer"]["httpAuthSecurityScheme"]["scheme"],
        "Bearer"
    );
    assert_eq!(
        card["securitySchemes"]["apiKey"]["apiKeySecurityScheme"]["name"],
        "X-API-Key"
    );
    assert_eq!(card["securityRequirements"].as_array().unwrap().len(), 2);

    let send =
        json!({"message": {"messageId": "m1", "role": "ROLE_USER", "parts": [{"text": "hi"}]}});
    // JSON-RPC: 401, challenges, a JSON-RPC error.
    for bad in [
        None,
        Some(("authorization", "Bearer wrong")),
        Some(("authorization", "Basic YWxpY2U6dC1hbGljZQ==")),
        Some(("x-api-key", "wrong")),
    ] {
        let resp = reqwest::blocking::Client::new()
            .post(&echo)
            .header("A2A-Version", "1.0")
            .header(bad.map_or("x-none", |b| b.0), bad.map_or("", |b| b.1))
            .json(&json!({"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": send}))
            .send()
            .unwrap();
        assert_eq!(resp.status().as_u16(), 401, "{bad:?}");
        let challenges: Vec<&str> = resp
            .headers()
            .get_all("www-authenticate")
            .iter()
            .map(|v| v.to_str().unwrap())
            .collect();
        assert!(
            challenges.iter().any(|c| c.starts_with("Bearer")),
            "{challenges:?}"
        );
        let body: Value = resp.json().unwrap();
        assert_eq!(body["error"]["code"], -32091, "{body}");
        assert!(!body.to_string().contains("t-alice"), "{body}");
    }
    // Good credentials of both kinds.
    assert_eq!(rpc(&echo, ALICE, "SendMessage", send.clone()).0, 200);
    let (status, body) = rpc(&echo, CAROL, "SendMessage", send.clone());
    assert_eq!(status, 200);
    assert!(body.get("result").is_some(), "{body}");

    // HTTP+JSON: 401 with a google.rpc.Status.
    let resp = reqwest::blocking::Client::new()
        .post(format!("{echo}/message:send"))
        .header("A2A-Version", "1.0")
        .json(&send)
        .send()
        .unwrap();
    assert_eq!(resp.status().as_u16(), 401);
    assert!(resp.headers().contains_key("www-authenticate"));
    let body: Value = resp.json().unwrap();
    assert_eq!(body["error"]["status"], "UNAUTHENTICATED", "{body}");
    let resp = reqwest::blocking::Client::new()
        .get(format!("{echo}/tasks"))
        .header("A2A-Version", "1.0")
        .send()
        .unwrap();
    assert_eq!(resp.status().as_u16(), 401);

    // gRPC: UNAUTHENTICATED, and through with a token.
    let o = a2a(&["send", &echo, "hi", "--binding", "grpc"]);
    assert!(!o.status.success());
    assert!(
        stderr(&o).to_lowercase().contains("unauthenticated")
            || stderr(&o).contains("Authentication required"),
        "{}",
        stderr(&o)
    );
    let o = a2a(&["send", &echo, "hi", "--binding", "grpc", "--token", "t-bob"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let o = a2a(&[
        "send",
        &echo,
        "hi",
        "--binding",
        "rest",
        "--api-key",
        "k-carol",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));

    // Refused before the body is read: a request announcing 5 MB gets its 401 at once.
    let mut conn = std::net::TcpStream::connect(s.base.trim_start_matches("http://")).unwrap();
    write!(
        conn,
        "POST /a2a/echo HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 5000000\r\n\r\n{{"
    )
    .unwrap();
    conn.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let mut head = [0u8; 64];
    let n = conn.read(&mut head).expect("an answer without the body");
    assert!(
        String::from_utf8_lossy(&head[..n]).starts_with("HTTP/1.1 401"),
        "{}",
        String::from_utf8_lossy(&head[..n])
    );
}

#[test]
fn a_caller_sees_only_its_own_tasks() {
    let s = serve(CREDS);
    let slow = format!("{}/a2a/slow", s.base);
    // Alice starts a long task.
    let (_, started) = rpc(
        &slow,
        ALICE,
        "SendMessage",
        json!({"message": {"messageId": "a1", "role": "ROLE_USER", "parts": [{"text": "60"}]},
               "configuration": {"returnImmediately": true}}),
    );
    let id = started["result"]["task"]["id"]
        .as_str()
        .unwrap_or_else(|| panic!("{started}"))
        .to_owned();

    // Every operation of Bob's on it answers exactly as for a task that does not exist.
    let not_found = |who, method: &str, params: Value| {
        let (_, body) = rpc(&slow, who, method, params);
        assert_eq!(body["error"]["code"], -32001, "{method}: {body}");
        body["error"]["message"]
            .as_str()
            .unwrap()
            .replace(&id, "ID")
            .replace("missing-task", "ID")
    };
    for (method, params) in [
        ("GetTask", json!({"id": id})),
        ("CancelTask", json!({"id": id})),
        ("ListTaskPushNotificationConfigs", json!({"taskId": id})),
        (
            "CreateTaskPushNotificationConfig",
            json!({"taskId": id, "url": "https://example.com/hook"}),
        ),
        (
            "SendMessage",
            json!({"message": {"messageId": "b1", "role": "ROLE_USER", "taskId": id, "parts": [{"text": "hi"}]}}),
        ),
    ] {
        let theirs = not_found(BOB, method, params.clone());
        let missing = params.to_string().replace(&id, "missing-task");
        let none = not_found(BOB, method, serde_json::from_str(&missing).unwrap());
        assert_eq!(theirs, none, "{method}");
        not_found(CAROL, method, params);
    }
    let (_, sub) = rpc(&slow, BOB, "SubscribeToTask", json!({"id": id}));
    assert_eq!(sub["error"]["code"], -32001, "{sub}");
    // Bob's and Carol's listings do not show it; Alice's does.
    let listed = |who| {
        let (_, body) = rpc(&slow, who, "ListTasks", json!({}));
        body["result"]["tasks"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["id"].as_str().unwrap().to_owned())
            .collect::<Vec<_>>()
    };
    assert!(listed(BOB).is_empty());
    assert!(listed(CAROL).is_empty());
    assert_eq!(listed(ALICE), std::slice::from_ref(&id));

    // The same over gRPC and HTTP+JSON, through the command line.
    for binding in ["grpc", "rest"] {
        let o = a2a(&["get", &slow, &id, "--binding", binding, "--token", "t-bob"]);
        assert!(!o.status.success(), "{binding}: bob read alice's task");
        let o = a2a(&[
            "get",
            &slow,
            &id,
            "--binding",
            binding,
            "--token",
            "t-alice",
        ]);
        assert!(o.status.success(), "{binding}: {}", stderr(&o));
    }
    // Alice may cancel her task; it was still running after all of Bob's attempts.
    let (_, canceled) = rpc(&slow, ALICE, "CancelTask", json!({"id": id}));
    assert_eq!(
        canceled["result"]["status"]["state"], "TASK_STATE_CANCELED",
        "{canceled}"
    );
}

#[test]
fn jwts_are_verified_against_the_jwks() {
    // Test-only keys: `jwt-es256` is published in the JWKS, `jwt-rogue` is not.
    let rogue = std::fs::read_to_string(format!("{FIXTURES}/jwt-rogue.pem")).unwrap();
    let jwk = std::fs::read_to_string(format!("{FIXTURES}/jwt-es256.jwk.json")).unwrap();
    let jwks = jwks_url();
    let s = serve(&[
        "--agent",
        "echo",
        "--store",
        "memory",
        "--auth-jwks-url",
        &jwks,
        "--auth-jwt-issuer",
        "https://issuer.test",
        "--auth-jwt-audience",
        "a2a-test",
    ]);
    let card: Value = reqwest::blocking::get(format!("{}/.well-known/agent-card.json", s.base))
        .unwrap()
        .json()
        .unwrap();
    assert_eq!(
        card["securitySchemes"]["jwt"]["httpAuthSecurityScheme"]["bearerFormat"],
        "JWT"
    );
    let now = unix_now();
    let claims = |sub: &str, exp: i64, iss: &str, aud: &str| json!({"sub": sub, "exp": exp, "iss": iss, "aud": aud, "iat": now});
    let send = json!({"message": {"messageId": "j1", "role": "ROLE_USER", "parts": [{"text": "task: hi"}]}});
    let call = |token: &str| {
        let bearer = format!("Bearer {token}");
        rpc(
            &s.base,
            Some(("authorization", bearer.as_str())),
            "SendMessage",
            send.clone(),
        )
    };
    let valid = test_jwt(claims("dave", now + 300, "https://issuer.test", "a2a-test"));
    let (status, body) = call(&valid);
    assert_eq!(status, 200, "{body}");
    let id = body["result"]["task"]["id"].as_str().unwrap().to_owned();
    // Within the clock-skew allowance.
    let (status, _) = call(&test_jwt(claims(
        "dave",
        now - 10,
        "https://issuer.test",
        "a2a-test",
    )));
    assert_eq!(status, 200);
    for (why, token) in [
        (
            "expired",
            test_jwt(claims(
                "dave",
                now - 3600,
                "https://issuer.test",
                "a2a-test",
            )),
        ),
        (
            "wrong audience",
            test_jwt(claims("dave", now + 300, "https://issuer.test", "other")),
        ),
        (
            "wrong issuer",
            test_jwt(claims("dave", now + 300, "https://evil.test", "a2a-test")),
        ),
        (
            "unknown signer",
            jwt_signed_by(
                &rogue,
                &claims("dave", now + 300, "https://issuer.test", "a2a-test"),
            ),
        ),
        (
            "no expiry",
            test_jwt(json!({"sub": "dave", "iss": "https://issuer.test", "aud": "a2a-test"})),
        ),
        (
            "HMAC",
            jsonwebtoken::encode(
                &jsonwebtoken::Header::new(jsonwebtoken::Algorithm::HS256),
                &claims("dave", now + 300, "https://issuer.test", "a2a-test"),
                &jsonwebtoken::EncodingKey::from_secret(jwk.as_bytes()),
            )
            .unwrap(),
        ),
        ("garbage", "not.a.jwt".to_owned()),
    ] {
        let (status, body) = call(&token);
        assert_eq!(status, 401, "{why}: {body}");
        assert_eq!(body["error"]["code"], -32091, "{why}: {body}");
    }
    // The subject owns the task: another subject does not see it.
    let other = test_jwt(claims("erin", now + 300, "https://issuer.test", "a2a-test"));
    let bearer = format!("Bearer {other}");
    let (_, body) = rpc(
        &s.base,
        Some(("authorization", bearer.as_str())),
        "GetTask",
        json!({"id": id}),
    );
    assert_eq!(body["error"]["code"], -32001, "{body}");
    let bearer = format!("Bearer {valid}");
    let (_, body) = rpc(
        &s.base,
        Some(("authorization", bearer.as_str())),
        "GetTask",
        json!({"id": id}),
    );
    assert_eq!(body["result"]["id"], json!(id), "{body}");
}

/// Verified tokens are remembered (their signature is not checked on every request), but a
/// remembered token is refused the moment its `exp` passes, as a fresh one would be.
#[test]
fn a_remembered_jwt_is_refused_once_it_expires() {
    let jwks = jwks_url();
    let s = serve(&[
        "--agent",
        "echo",
        "--store",
        "memory",
        "--auth-jwks-url",
        &jwks,
        "--auth-jwt-leeway",
        "0",
    ]);
    let exp = unix_now() + 2;
    let token = test_jwt(json!({"sub": "dave", "exp": exp}));
    let bearer = format!("Bearer {token}");
    let send = |n: u32| {
        rpc(
            &s.base,
            Some(("authorization", bearer.as_str())),
            "SendMessage",
            json!({"message": {"messageId": format!("exp-{n}"), "role": "ROLE_USER", "parts": [{"text": "task: hi"}]}}),
        )
    };
    // Verified, then accepted again from memory.
    for n in 0..3 {
        let (status, body) = send(n);
        assert_eq!(status, 200, "{body}");
    }
    // Past `exp` (whole seconds: wait for the second after it to begin).
    while unix_now() <= exp {
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    let (status, body) = send(9);
    assert_eq!(status, 401, "{body}");
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap_or_default()
            .contains("expired"),
        "{body}"
    );
}
