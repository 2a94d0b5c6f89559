//! Callers stay apart (issue 21): with authentication on, a `contextId` or `thread_id` names
//! a conversation among its caller's own tasks, so another principal naming it never reads
//! it, on any binding or protocol version; principals vouched for by different sources never
//! meet; a JWT that leaves out a claim the server requires is refused; and every id of
//! another principal answers exactly as an unknown one.

mod common;

use common::*;
use serde_json::{Value, json};

const ALICE: &str = "Bearer t-alice";
const BOB: &str = "Bearer t-bob";

/// A host whose `history` agent answers with the conversation it was given (`A2A_HISTORY`).
fn history_host(extra: &[&str]) -> (Server, std::path::PathBuf) {
    let dir = std::env::temp_dir().join(format!("a2a-apart-{}", a2a_types::new_id()));
    std::fs::create_dir_all(&dir).unwrap();
    let config = dir.join("agents.toml");
    std::fs::write(
        &config,
        "[[agents]]\nid = \"history\"\nkind = \"exec\"\ncommand = [\"sh\", \"-c\", \"printf '%s' \\\"$A2A_HISTORY\\\"\"]\n",
    )
    .unwrap();
    let mut args = vec![
        "--config",
        config.to_str().unwrap(),
        "--auth-token",
        "alice=t-alice,bob=t-bob",
    ];
    args.extend_from_slice(extra);
    (serve(&args), dir)
}

/// A v1.0 JSON-RPC call with `authorization`; the whole answer.
fn rpc(url: &str, authorization: &str, method: &str, params: Value) -> Value {
    reqwest::blocking::Client::new()
        .post(url)
        .header("A2A-Version", "1.0")
        .header("authorization", authorization)
        .json(&json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}))
        .send()
        .unwrap()
        .json()
        .unwrap()
}

fn message(text: &str, context: Option<&str>, metadata: Option<Value>) -> Value {
    let mut m =
        json!({"messageId": a2a_types::new_id(), "role": "ROLE_USER", "parts": [{"text": text}]});
    if let Some(c) = context {
        m["contextId"] = json!(c);
    }
    if let Some(md) = metadata {
        m["metadata"] = md;
    }
    json!({"message": m})
}

/// Sends `text` to the history agent in `context` on every binding and both protocol
/// versions as `authorization`; the answers, each named by how it was sent.
fn send_everywhere(
    url: &str,
    authorization: &str,
    text: &str,
    context: &str,
) -> Vec<(String, String)> {
    let client = reqwest::blocking::Client::new();
    let mut out = Vec::new();
    let v1 = rpc(
        url,
        authorization,
        "SendMessage",
        message(text, Some(context), None),
    );
    out.push(("JSON-RPC v1.0".to_owned(), v1.to_string()));
    let v03 = client
        .post(url)
        .header("authorization", authorization)
        .json(
            &json!({"jsonrpc": "2.0", "id": 1, "method": "message/send", "params": {"message": {
            "kind": "message", "messageId": a2a_types::new_id(), "role": "user",
            "parts": [{"kind": "text", "text": text}], "contextId": context}}}),
        )
        .send()
        .unwrap()
        .text()
        .unwrap();
    out.push(("JSON-RPC v0.3".to_owned(), v03));
    let rest = client
        .post(format!("{url}/message:send"))
        .header("A2A-Version", "1.0")
        .header("authorization", authorization)
        .json(&message(text, Some(context), None))
        .send()
        .unwrap()
        .text()
        .unwrap();
    out.push(("HTTP+JSON".to_owned(), rest));
    let token = authorization.trim_start_matches("Bearer ");
    let o = a2a(&[
        "send",
        url,
        text,
        "--binding",
        "grpc",
        "--token",
        token,
        "--context",
        context,
        "--json",
    ]);
    assert!(o.status.success(), "gRPC: {}", stderr(&o));
    out.push(("gRPC".to_owned(), stdout(&o)));
    out
}

#[test]
fn another_callers_context_is_a_conversation_of_its_own() {
    let (s, dir) = history_host(&[]);
    let url = format!("{}/a2a/history", s.base);

    // Alice talks in the context `shared` and in the thread `support`.
    let first = rpc(
        &url,
        ALICE,
        "SendMessage",
        message("secret-of-alice", Some("shared"), None),
    );
    assert_eq!(first["result"]["task"]["contextId"], "shared", "{first}");
    let thread = json!({"thread_id": "support"});
    let first = rpc(
        &url,
        ALICE,
        "SendMessage",
        message("thread-secret-of-alice", None, Some(thread.clone())),
    );
    assert_eq!(first["result"]["task"]["contextId"], "support", "{first}");

    // Bob names the same context on every binding and version: each is his own
    // conversation under that id, and none of Alice's turns is in what the agent reads.
    for (how, answer) in send_everywhere(&url, BOB, "bob-here", "shared") {
        assert!(answer.contains("shared"), "{how}: {answer}");
        assert!(
            !answer.contains("secret-of-alice"),
            "{how}: Bob's agent read Alice's conversation: {answer}"
        );
    }
    // …and so does the same thread name.
    let bob = rpc(
        &url,
        BOB,
        "SendMessage",
        message("bob-thread", None, Some(thread.clone())),
    );
    assert_eq!(bob["result"]["task"]["contextId"], "support", "{bob}");
    assert!(!bob.to_string().contains("secret-of-alice"), "{bob}");
    // His conversation is his own, and goes on: his earlier turns are there.
    let bob = rpc(
        &url,
        BOB,
        "SendMessage",
        message("bob-again", None, Some(thread)),
    );
    assert!(bob.to_string().contains("bob-thread"), "{bob}");
    assert!(!bob.to_string().contains("secret-of-alice"), "{bob}");

    // Alice's conversation goes on with her turns only.
    let again = rpc(
        &url,
        ALICE,
        "SendMessage",
        message("alice-again", Some("shared"), None),
    );
    assert!(again.to_string().contains("secret-of-alice"), "{again}");
    assert!(
        !again.to_string().contains("bob-here"),
        "Alice's agent read Bob's turns: {again}"
    );

    // Listing a context shows the caller's own tasks in it only.
    let listed = |who: &str| {
        let body = rpc(
            &url,
            who,
            "ListTasks",
            json!({"contextId": "shared", "historyLength": 10}),
        );
        body["result"]["tasks"]
            .as_array()
            .unwrap_or_else(|| panic!("{body}"))
            .clone()
    };
    let alices = listed(ALICE);
    assert_eq!(alices.len(), 2, "{alices:?}");
    assert!(!Value::from(alices).to_string().contains("bob-here"));
    let bobs = listed(BOB);
    assert_eq!(bobs.len(), 4, "{bobs:?}");
    assert!(!Value::from(bobs).to_string().contains("secret-of-alice"));
    drop(s);
    std::fs::remove_dir_all(dir).ok();
}

#[test]
fn another_callers_ids_answer_as_unknown_ones_on_every_binding() {
    let (s, dir) = history_host(&[]);
    let url = format!("{}/a2a/history", s.base);
    let started = rpc(
        &url,
        ALICE,
        "SendMessage",
        message("hi", Some("alices"), None),
    );
    let id = started["result"]["task"]["id"]
        .as_str()
        .unwrap_or_else(|| panic!("{started}"))
        .to_owned();
    let client = reqwest::blocking::Client::new();
    let missing = "00000000-0000-0000-0000-000000000000";
    // What Bob is told about Alice's task, with its id written as ID, for `task`.
    let answers = |task: &str| -> Vec<(String, u16, String)> {
        let mut out = Vec::new();
        for (method, params) in [
            ("tasks/get", json!({"id": task})),
            ("tasks/cancel", json!({"id": task})),
            ("tasks/resubscribe", json!({"id": task})),
            ("tasks/pushNotificationConfig/get", json!({"id": task})),
            ("tasks/pushNotificationConfig/list", json!({"id": task})),
        ] {
            let resp = client
                .post(&url)
                .header("authorization", BOB)
                .json(&json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}))
                .send()
                .unwrap();
            out.push((
                format!("v0.3 {method}"),
                resp.status().as_u16(),
                resp.text().unwrap(),
            ));
        }
        for (method, params) in [
            ("GetTask", json!({"id": task})),
            ("CancelTask", json!({"id": task})),
            ("SubscribeToTask", json!({"id": task})),
            (
                "GetTaskPushNotificationConfig",
                json!({"taskId": task, "id": "c1"}),
            ),
            (
                "DeleteTaskPushNotificationConfig",
                json!({"taskId": task, "id": "c1"}),
            ),
        ] {
            out.push((
                format!("v1.0 {method}"),
                200,
                rpc(&url, BOB, method, params).to_string(),
            ));
        }
        for (verb, path) in [
            ("GET", format!("/tasks/{task}")),
            ("POST", format!("/tasks/{task}:cancel")),
            ("GET", format!("/tasks/{task}:subscribe")),
            ("GET", format!("/tasks/{task}/pushNotificationConfigs")),
            ("GET", format!("/tasks/{task}/pushNotificationConfigs/c1")),
        ] {
            let req = match verb {
                "GET" => client.get(format!("{url}{path}")),
                _ => client.post(format!("{url}{path}")).json(&json!({})),
            };
            let resp = req
                .header("A2A-Version", "1.0")
                .header("authorization", BOB)
                .send()
                .unwrap();
            out.push((
                format!("HTTP+JSON {verb} {}", path.replace(task, "ID")),
                resp.status().as_u16(),
                resp.text().unwrap(),
            ));
        }
        for command in ["get", "cancel"] {
            let o = a2a(&[command, &url, task, "--binding", "grpc", "--token", "t-bob"]);
            out.push((
                format!("gRPC {command}"),
                o.status.code().unwrap_or(-1) as u16,
                stderr(&o),
            ));
        }
        out.into_iter()
            .map(|(how, status, body)| (how, status, body.replace(task, "ID")))
            .collect()
    };
    let theirs = answers(&id);
    let unknown = answers(missing);
    for (t, u) in theirs.iter().zip(&unknown) {
        assert_eq!(
            t, u,
            "another caller's task is told apart from an unknown one"
        );
        assert!(
            t.2.contains("-32001")
                || t.2.contains("NOT_FOUND")
                || t.2.to_lowercase().contains("not found"),
            "{t:?}"
        );
    }
    // Listing by Alice's context: as empty as an unknown context.
    let list = |context: &str| {
        rpc(&url, BOB, "ListTasks", json!({"contextId": context}))["result"].clone()
    };
    assert_eq!(list("alices"), list("nobodys"));
    assert_eq!(list("alices")["tasks"], json!([]));
    // She still sees it, on every binding.
    assert_eq!(
        rpc(&url, ALICE, "GetTask", json!({"id": id}))["result"]["id"],
        json!(id)
    );
    drop(s);
    std::fs::remove_dir_all(dir).ok();
}

#[test]
fn a_jwt_without_a_required_claim_is_refused() {
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
    let now = unix_now();
    let full = json!({"sub": "dave", "iss": "https://issuer.test", "aud": "a2a-test", "exp": now + 300, "iat": now});
    let status = |claims: &Value| {
        let resp = reqwest::blocking::Client::new()
            .post(&s.base)
            .header("A2A-Version", "1.0")
            .header(
                "authorization",
                format!("Bearer {}", test_jwt(claims.clone())),
            )
            .json(&json!({"jsonrpc": "2.0", "id": 1, "method": "ListTasks", "params": {}}))
            .send()
            .unwrap();
        let code = resp.status().as_u16();
        (code, resp.text().unwrap())
    };
    assert_eq!(status(&full).0, 200);
    for claim in ["iss", "aud", "exp", "sub"] {
        let mut claims = full.clone();
        claims.as_object_mut().unwrap().remove(claim);
        let (code, body) = status(&claims);
        assert_eq!(code, 401, "a token without `{claim}` was accepted: {body}");
        assert!(body.contains(&format!("`{claim}`")), "{claim}: {body}");
    }
    // Not valid yet (beyond the 60 s allowance): refused; within it: accepted.
    let mut early = full.clone();
    early["nbf"] = json!(now + 600);
    assert_eq!(status(&early).0, 401);
    early["nbf"] = json!(now + 10);
    assert_eq!(status(&early).0, 200);
    // A token of the same identity provider minted for another service: refused.
    let mut other = full.clone();
    other["aud"] = json!("another-service");
    assert_eq!(status(&other).0, 401);

    // With no issuer or audience configured, tokens need not carry them (any is accepted).
    let open = serve(&[
        "--agent",
        "echo",
        "--store",
        "memory",
        "--auth-jwks-url",
        &jwks,
    ]);
    let resp = reqwest::blocking::Client::new()
        .post(&open.base)
        .header("A2A-Version", "1.0")
        .header(
            "authorization",
            format!(
                "Bearer {}",
                test_jwt(json!({"sub": "dave", "exp": now + 300}))
            ),
        )
        .json(&json!({"jsonrpc": "2.0", "id": 1, "method": "ListTasks", "params": {}}))
        .send()
        .unwrap();
    assert_eq!(resp.status().as_u16(), 200);
}

#[test]
fn equal_names_from_different_sources_never_meet() {
    let jwks = jwks_url();
    let s = serve(&[
        "--agent",
        "echo",
        "--auth-token",
        "alice=t-alice",
        "--auth-api-key",
        "alice=k-alice",
        "--auth-jwks-url",
        &jwks,
        "--auth-jwt-issuer",
        "https://issuer.test",
    ]);
    let now = unix_now();
    let jwt_alice = format!(
        "Bearer {}",
        test_jwt(json!({"sub": "alice", "iss": "https://issuer.test", "exp": now + 300}))
    );
    let call = |header: (&str, &str), method: &str, params: Value| -> Value {
        reqwest::blocking::Client::new()
            .post(&s.base)
            .header("A2A-Version", "1.0")
            .header(header.0, header.1)
            .json(&json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}))
            .send()
            .unwrap()
            .json()
            .unwrap()
    };
    let token = ("authorization", ALICE);
    let api_key = ("x-api-key", "k-alice");
    let jwt_h = ("authorization", jwt_alice.as_str());
    let mut ids = Vec::new();
    for who in [token, api_key, jwt_h] {
        let body = call(
            who,
            "SendMessage",
            json!({"message": {"messageId": a2a_types::new_id(), "role": "ROLE_USER", "parts": [{"text": "task: mine"}]}}),
        );
        ids.push(
            body["result"]["task"]["id"]
                .as_str()
                .unwrap_or_else(|| panic!("{body}"))
                .to_owned(),
        );
    }
    for (i, who) in [token, api_key, jwt_h].into_iter().enumerate() {
        let listed = call(who, "ListTasks", json!({}));
        let listed: Vec<&str> = listed["result"]["tasks"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["id"].as_str().unwrap())
            .collect();
        assert_eq!(listed, [ids[i].as_str()], "caller {i} lists {listed:?}");
        for (j, id) in ids.iter().enumerate() {
            let got = call(who, "GetTask", json!({"id": id}));
            if i == j {
                assert_eq!(got["result"]["id"], json!(id), "{got}");
            } else {
                assert_eq!(
                    got["error"]["code"], -32001,
                    "caller {i} read task {j}: {got}"
                );
            }
        }
    }
}
