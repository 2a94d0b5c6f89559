//! Push notifications against a real webhook receiver started by the test: every event of a
//! task arrives in order with the config's credentials; a receiver that is down at first
//! gets everything once it is up; a receiver that does not answer does not hold the agent
//! up; inner addresses are refused; the four config operations work; with a signing key
//! each notification carries a signature that verifies with the agent's published key; the
//! deliveries of a killed process are resumed by the one that takes over its tasks.

mod common;

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::http::HeaderMap;
use axum::response::IntoResponse;
use common::*;
use serde_json::{Value, json};

/// One request the receiver got.
#[derive(Debug, Clone)]
struct Received {
    authorization: Option<String>,
    signature: Option<String>,
    raw: axum::body::Bytes,
    token: Option<String>,
    content_type: Option<String>,
    body: Value,
}

/// A webhook receiver on `listener`. With `gate`, each request waits until the gate has a
/// permit.
struct Receiver {
    got: Arc<Mutex<Vec<Received>>>,
}

impl Receiver {
    fn start(listener: std::net::TcpListener, gate: Option<Arc<tokio::sync::Semaphore>>) -> Self {
        let got = Arc::new(Mutex::new(Vec::new()));
        let sink = got.clone();
        let app = axum::Router::new().route(
            "/hook",
            axum::routing::post(move |headers: HeaderMap, body: axum::body::Bytes| {
                let sink = sink.clone();
                let gate = gate.clone();
                async move {
                    if let Some(gate) = gate {
                        gate.acquire().await.unwrap().forget();
                    }
                    let text = |h: &str| {
                        headers
                            .get(h)
                            .and_then(|v| v.to_str().ok())
                            .map(str::to_owned)
                    };
                    sink.lock().unwrap().push(Received {
                        authorization: text("authorization"),
                        signature: text("x-a2a-notification-signature"),
                        token: text("x-a2a-notification-token"),
                        content_type: text("content-type"),
                        body: serde_json::from_slice(&body).unwrap_or(Value::Null),
                        raw: body,
                    });
                    "ok"
                }
            }),
        );
        serve_app(listener, app);
        Self { got }
    }

    fn received(&self) -> Vec<Received> {
        self.got.lock().unwrap().clone()
    }

    /// Waits until a notification says the task reached `state`; all received by then.
    fn wait_for_state(&self, state: &str, within: Duration) -> Vec<Received> {
        let deadline = Instant::now() + within;
        loop {
            let got = self.received();
            if got
                .iter()
                .any(|r| r.body["statusUpdate"]["status"]["state"] == state)
            {
                return got;
            }
            assert!(
                Instant::now() < deadline,
                "no {state} notification; got {got:?}"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

fn rpc(base: &str, method: &str, params: Value) -> Value {
    reqwest::blocking::Client::new()
        .post(base)
        .header("A2A-Version", "1.0")
        .json(&json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}))
        .send()
        .unwrap()
        .json()
        .unwrap()
}

/// Sends `text` to the slow agent with a push config for `url`; the task id.
fn send_with_push(base: &str, text: &str, url: &str, blocking: bool) -> String {
    let reply = rpc(
        base,
        "SendMessage",
        json!({
            "message": {"messageId": a2a_types::new_id(), "role": "ROLE_USER", "parts": [{"text": text}]},
            "configuration": {
                "returnImmediately": !blocking,
                "taskPushNotificationConfig": {
                    "url": url,
                    "token": "tok-1",
                    "authentication": {"scheme": "Bearer", "credentials": "s3cret"}
                }
            }
        }),
    );
    reply["result"]["task"]["id"]
        .as_str()
        .unwrap_or_else(|| panic!("no task: {reply}"))
        .to_owned()
}

/// The kind of each StreamResponse, checking it has exactly one.
fn kinds(got: &[Received]) -> Vec<String> {
    got.iter()
        .map(|r| {
            let obj = r.body.as_object().expect("a JSON object");
            assert_eq!(obj.len(), 1, "not one StreamResponse field: {}", r.body);
            let kind = obj.keys().next().unwrap().clone();
            assert!(
                ["task", "message", "statusUpdate", "artifactUpdate"].contains(&kind.as_str()),
                "{kind}"
            );
            kind
        })
        .collect()
}

/// `a2a_push_deliveries_total{outcome}`.
fn deliveries(base: &str, outcome: &str) -> f64 {
    metric(base, "a2a_push_deliveries_total", "outcome", outcome)
}

#[test]
fn every_event_arrives_in_order_with_the_configs_credentials() {
    let (l, addr) = loopback_listener();
    let receiver = Receiver::start(l, None);
    let s = serve(&["--agent", "slow", "--push-allow", "127.0.0.1"]);
    let url = format!("http://{addr}/hook");
    let task_id = send_with_push(&s.base, "0.3", &url, true);
    let got = receiver.wait_for_state("TASK_STATE_COMPLETED", Duration::from_secs(20));
    let kinds = kinds(&got);
    assert_eq!(kinds[0], "task", "{kinds:?}");
    let artifacts: Vec<&str> = got
        .iter()
        .filter_map(|r| r.body["artifactUpdate"]["artifact"]["name"].as_str())
        .collect();
    assert_eq!(artifacts, ["progress", "result"], "{kinds:?}");
    let last = got.last().unwrap();
    assert_eq!(
        last.body["statusUpdate"]["status"]["state"],
        "TASK_STATE_COMPLETED"
    );
    for r in &got {
        assert_eq!(r.authorization.as_deref(), Some("Bearer s3cret"));
        assert_eq!(r.token.as_deref(), Some("tok-1"));
        assert_eq!(r.content_type.as_deref(), Some("application/a2a+json"));
        let about = r.body.as_object().unwrap().values().next().unwrap();
        let id = about.get("taskId").or_else(|| about.get("id")).unwrap();
        assert_eq!(id, &json!(task_id));
    }

    // The inline config was stored with an id; the four operations see it.
    let listed = rpc(
        &s.base,
        "ListTaskPushNotificationConfigs",
        json!({"taskId": task_id}),
    );
    let configs = listed["result"]["configs"].as_array().expect("configs");
    assert_eq!(configs.len(), 1, "{listed}");
    let id = configs[0]["id"].as_str().unwrap().to_owned();
    assert_eq!(configs[0]["url"], json!(url));
    let created = rpc(
        &s.base,
        "CreateTaskPushNotificationConfig",
        json!({"taskId": task_id, "url": "https://example.com/hook"}),
    );
    let second = created["result"]["id"].as_str().expect("an id").to_owned();
    let fetched = rpc(
        &s.base,
        "GetTaskPushNotificationConfig",
        json!({"taskId": task_id, "id": second}),
    );
    assert_eq!(fetched["result"]["url"], "https://example.com/hook");
    for _ in 0..2 {
        let deleted = rpc(
            &s.base,
            "DeleteTaskPushNotificationConfig",
            json!({"taskId": task_id, "id": id}),
        );
        assert!(deleted.get("error").is_none(), "{deleted}");
    }
    let gone = rpc(
        &s.base,
        "GetTaskPushNotificationConfig",
        json!({"taskId": task_id, "id": id}),
    );
    assert_eq!(gone["error"]["code"], -32001, "{gone}");
    let unknown = rpc(
        &s.base,
        "ListTaskPushNotificationConfigs",
        json!({"taskId": "no-such-task"}),
    );
    assert_eq!(unknown["error"]["code"], -32001, "{unknown}");
    assert!(deliveries(&s.base, "delivered") >= got.len() as f64);
}

#[test]
fn notifications_are_signed_with_the_key_the_agent_publishes() {
    use a2a_client::signature::{SignatureError, verify_notification};
    let (l, addr) = loopback_listener();
    let receiver = Receiver::start(l, None);
    let key = format!("{FIXTURES}/jwt-es256.pem");
    let s = serve(&[
        "--agent",
        "slow",
        "--push-allow",
        "127.0.0.1",
        "--signing-key",
        &key,
        "--signing-kid",
        "push-k1",
    ]);
    let url = format!("http://{addr}/hook");
    let task_id = send_with_push(&s.base, "0.2", &url, true);
    let got = receiver.wait_for_state("TASK_STATE_COMPLETED", Duration::from_secs(20));
    let jwks_url = format!("{}/.well-known/jwks.json", s.base);
    let keys: jsonwebtoken::jwk::JwkSet =
        reqwest::blocking::get(&jwks_url).unwrap().json().unwrap();
    let mut jtis = std::collections::HashSet::new();
    for r in &got {
        let signature = r.signature.as_deref().expect("a signature header");
        let header = jsonwebtoken::decode_header(signature).unwrap();
        assert_eq!(header.kid.as_deref(), Some("push-k1"));
        assert_eq!(header.jku.as_deref(), Some(jwks_url.as_str()));
        let claims = verify_notification(signature, &r.raw, &url, &keys)
            .unwrap_or_else(|e| panic!("{e}: {}", r.body));
        assert_eq!(claims.task_id, task_id);
        assert!(claims.exp > claims.iat);
        assert!(jtis.insert(claims.jti), "a jti was used twice");
    }
    // A body altered on the way, a signature replayed to another webhook, and a key the
    // agent does not publish are all refused.
    let first = &got[0];
    let signature = first.signature.as_deref().unwrap();
    let mut altered = first.raw.to_vec();
    let at = altered.iter().position(|b| *b == b'{').unwrap() + 1;
    altered.insert(at, b' ');
    assert!(matches!(
        verify_notification(signature, &altered, &url, &keys),
        Err(SignatureError::Mismatch)
    ));
    assert!(matches!(
        verify_notification(
            signature,
            &first.raw,
            "http://elsewhere.example/hook",
            &keys
        ),
        Err(SignatureError::WrongAudience)
    ));
    // A forgery: the same claims and key id, signed by a key the agent does not publish.
    let claims = verify_notification(signature, &first.raw, &url, &keys).unwrap();
    let rogue = std::fs::read(format!("{FIXTURES}/jwt-rogue.pem")).unwrap();
    let mut header = jsonwebtoken::Header::new(jsonwebtoken::Algorithm::ES256);
    header.kid = Some("push-k1".into());
    let forged = jsonwebtoken::encode(
        &header,
        &json!({"iat": claims.iat, "exp": claims.exp, "jti": claims.jti, "aud": url,
            "task_id": task_id, "request_body_sha256": claims.request_body_sha256}),
        &jsonwebtoken::EncodingKey::from_ec_pem(&rogue).unwrap(),
    )
    .unwrap();
    assert!(matches!(
        verify_notification(&forged, &first.raw, &url, &keys),
        Err(SignatureError::Mismatch)
    ));
}

#[test]
fn a_receiver_that_is_down_at_first_still_gets_every_event() {
    // The port is known, nothing listens on it yet.
    let (l, addr) = loopback_listener();
    drop(l);
    let s = serve(&["--agent", "slow", "--push-allow", "127.0.0.1"]);
    let task_id = send_with_push(&s.base, "0.2", &format!("http://{addr}/hook"), true);
    assert_eq!(state_of(&s.base, &task_id), "TASK_STATE_COMPLETED");
    // Deliveries fail and are retried...
    let deadline = Instant::now() + Duration::from_secs(10);
    while deliveries(&s.base, "retried") < 1.0 {
        assert!(Instant::now() < deadline, "no retry counted");
        std::thread::sleep(Duration::from_millis(50));
    }
    // ...until the receiver comes up: then everything arrives, in order.
    let receiver = Receiver::start(std::net::TcpListener::bind(addr).unwrap(), None);
    let got = receiver.wait_for_state("TASK_STATE_COMPLETED", Duration::from_secs(60));
    let kinds = kinds(&got);
    assert_eq!(kinds.first().map(String::as_str), Some("task"), "{kinds:?}");
    let artifacts = got
        .iter()
        .filter(|r| r.body["artifactUpdate"].is_object())
        .count();
    assert!(artifacts >= 2, "{kinds:?}");
}

/// A receiver that answers `503` with `Retry-After: 2` is tried again no sooner than that.
#[test]
fn retry_after_is_honoured() {
    let (l, addr) = loopback_listener();
    let times = Arc::new(Mutex::new(Vec::<Instant>::new()));
    let seen = times.clone();
    let app = axum::Router::new().route(
        "/hook",
        axum::routing::post(move || {
            let seen = seen.clone();
            async move {
                let mut t = seen.lock().unwrap();
                t.push(Instant::now());
                if t.len() == 1 {
                    (
                        axum::http::StatusCode::SERVICE_UNAVAILABLE,
                        [("retry-after", "2")],
                    )
                        .into_response()
                } else {
                    axum::http::StatusCode::OK.into_response()
                }
            }
        }),
    );
    serve_app(l, app);
    let s = serve(&["--agent", "echo", "--push-allow", "127.0.0.1"]);
    send_with_push(&s.base, "task: hello", &format!("http://{addr}/hook"), true);
    let deadline = Instant::now() + Duration::from_secs(20);
    while times.lock().unwrap().len() < 2 {
        assert!(Instant::now() < deadline, "no second attempt");
        std::thread::sleep(Duration::from_millis(50));
    }
    let t = times.lock().unwrap();
    let waited = t[1] - t[0];
    assert!(
        waited >= Duration::from_millis(1900),
        "retried after {waited:?}"
    );
}

#[test]
fn a_receiver_that_does_not_answer_does_not_hold_the_agent_up() {
    let (l, addr) = loopback_listener();
    // The receiver takes every request but answers none until the test says so.
    let gate = Arc::new(tokio::sync::Semaphore::new(0));
    let receiver = Receiver::start(l, Some(gate.clone()));
    let s = serve(&["--agent", "slow", "--push-allow", "127.0.0.1"]);
    let task_id = send_with_push(&s.base, "0.2", &format!("http://{addr}/hook"), false);
    // The task completes while its first notification is still unanswered.
    let deadline = Instant::now() + Duration::from_secs(20);
    while state_of(&s.base, &task_id) != "TASK_STATE_COMPLETED" {
        assert!(Instant::now() < deadline, "the task never completed");
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(receiver.received().is_empty());
    gate.add_permits(1000);
    let got = receiver.wait_for_state("TASK_STATE_COMPLETED", Duration::from_secs(30));
    assert_eq!(kinds(&got)[0], "task");
}

#[test]
fn inner_addresses_are_refused() {
    let s = serve(&["--agent", "slow"]);
    for url in [
        "http://127.0.0.1:9/hook",
        "http://localhost:9/hook",
        "http://169.254.169.254/latest/meta-data",
        "http://10.0.0.1/hook",
        "http://[::1]:9/hook",
        "file:///etc/passwd",
    ] {
        let reply = rpc(
            &s.base,
            "SendMessage",
            json!({
                "message": {"messageId": a2a_types::new_id(), "role": "ROLE_USER", "parts": [{"text": "0.1"}]},
                "configuration": {"taskPushNotificationConfig": {"url": url}}
            }),
        );
        assert_eq!(reply["error"]["code"], -32602, "{url}: {reply}");
    }
    // A name that resolves to an inner address passes the config check but is refused at
    // delivery, after DNS.
    let host = std::fs::read_to_string("/etc/hostname")
        .map(|h| h.trim().to_owned())
        .unwrap_or_default();
    let inner_only = !host.is_empty()
        && std::net::ToSocketAddrs::to_socket_addrs(&(host.as_str(), 9))
            .map(|mut a| {
                a.all(|a| match a.ip() {
                    std::net::IpAddr::V4(v4) => v4.is_loopback() || v4.is_private(),
                    std::net::IpAddr::V6(v6) => v6.is_loopback(),
                })
            })
            .unwrap_or(false);
    if !inner_only {
        let why =
            format!("this machine's name ({host:?}) does not resolve to inner addresses only");
        assert!(std::env::var("CI").as_deref() != Ok("true"), "{why}");
        eprintln!("skipped (the delivery-time check): {why}");
        return;
    }
    let (l, addr) = loopback_listener();
    let receiver = Receiver::start(l, None);
    let url = format!("http://{host}:{}/hook", addr.port());
    let refused_before = deliveries(&s.base, "refused");
    send_with_push(&s.base, "0.1", &url, true);
    let deadline = Instant::now() + Duration::from_secs(10);
    while deliveries(&s.base, "refused") <= refused_before {
        assert!(
            Instant::now() < deadline,
            "delivery to {url} was not refused"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(receiver.received().is_empty());
}

#[test]
fn the_command_line_manages_configs_on_every_binding() {
    let s = serve(&["--agent", "slow"]);
    let task_id = start_task(&s.base, "30");
    for binding in ["jsonrpc", "rest", "grpc"] {
        let id = format!("cfg-{binding}");
        let o = a2a(&[
            "push",
            "create",
            &s.base,
            &task_id,
            "https://hooks.example.com/a2a",
            "--id",
            &id,
            "--auth-credentials",
            "s3cret",
            "--binding",
            binding,
            "--json",
        ]);
        assert!(o.status.success(), "{binding}: {}", stderr(&o));
        let created: Value = serde_json::from_slice(&o.stdout).unwrap();
        assert_eq!(created["id"], json!(id), "{binding}");
        assert_eq!(created["authentication"]["credentials"], "s3cret");
        let o = a2a(&[
            "push",
            "get",
            &s.base,
            &task_id,
            &id,
            "--binding",
            binding,
            "--json",
        ]);
        assert!(o.status.success(), "{binding}: {}", stderr(&o));
        let got: Value = serde_json::from_slice(&o.stdout).unwrap();
        assert_eq!(got["url"], "https://hooks.example.com/a2a", "{binding}");
        let o = a2a(&["push", "list", &s.base, &task_id, "--binding", binding]);
        assert!(stdout(&o).contains(&id), "{binding}: {}", stdout(&o));
        for _ in 0..2 {
            let o = a2a(&[
                "push",
                "delete",
                &s.base,
                &task_id,
                &id,
                "--binding",
                binding,
            ]);
            assert!(o.status.success(), "{binding}: {}", stderr(&o));
        }
        let o = a2a(&["push", "get", &s.base, &task_id, &id, "--binding", binding]);
        assert!(!o.status.success(), "{binding}: still there");
    }
    // Refused addresses say why.
    let o = a2a(&["push", "create", &s.base, &task_id, "http://10.0.0.1/hook"]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("private"), "{}", stderr(&o));
}

/// A v0.3 JSON-RPC call (no `A2A-Version` header, slash method names).
fn rpc03(base: &str, method: &str, params: Value) -> Value {
    reqwest::blocking::Client::new()
        .post(base)
        .json(&json!({"jsonrpc": "2.0", "id": "r1", "method": method, "params": params}))
        .send()
        .unwrap()
        .json()
        .unwrap()
}

#[test]
fn v03_clients_manage_webhooks_with_the_v03_methods() {
    let (l, addr) = loopback_listener();
    let receiver = Receiver::start(l, None);
    let s = serve(&["--agent", "slow", "--push-allow", "127.0.0.1"]);
    let url = format!("http://{addr}/hook");
    let sent = rpc03(
        &s.base,
        "message/send",
        json!({
            "message": {"kind": "message", "messageId": a2a_types::new_id(), "role": "user",
                "parts": [{"kind": "text", "text": "1"}]},
            "configuration": {"blocking": false}
        }),
    );
    let task_id = sent["result"]["id"].as_str().expect("a task").to_owned();
    let op = |name: &str, params: Value| {
        rpc03(
            &s.base,
            &format!("tasks/pushNotificationConfig/{name}"),
            params,
        )
    };
    let count = || {
        let listed = op("list", json!({"id": task_id}));
        listed["result"].as_array().map(Vec::len)
    };

    let set = op(
        "set",
        json!({"taskId": task_id, "pushNotificationConfig": {
            "url": url, "token": "tok-3",
            "authentication": {"schemes": ["Bearer"], "credentials": "s3"}}}),
    );
    let config = &set["result"];
    assert_eq!(config["taskId"], json!(task_id), "{set}");
    assert_eq!(config["pushNotificationConfig"]["url"], json!(url));
    assert_eq!(
        config["pushNotificationConfig"]["authentication"]["schemes"],
        json!(["Bearer"])
    );
    // Set without an id, the config is known by the task's id (as v0.3 servers do).
    let config_id = config["pushNotificationConfig"]["id"]
        .as_str()
        .expect("an id")
        .to_owned();
    assert_eq!(config_id, task_id);
    let other = op(
        "set",
        json!({"taskId": task_id, "pushNotificationConfig": {"id": "second", "url": "https://example.com/h"}}),
    );
    assert_eq!(other["result"]["pushNotificationConfig"]["id"], "second");

    let got = op(
        "get",
        json!({"id": task_id, "pushNotificationConfigId": "second"}),
    );
    assert_eq!(
        got["result"]["pushNotificationConfig"]["url"],
        "https://example.com/h"
    );
    // Without a config id: the task's first config.
    let first = op("get", json!({"id": task_id}));
    assert_eq!(
        first["result"]["pushNotificationConfig"]["id"],
        json!(config_id)
    );
    assert_eq!(count(), Some(2));
    let deleted = op(
        "delete",
        json!({"id": task_id, "pushNotificationConfigId": "second"}),
    );
    assert_eq!(deleted["result"], Value::Null, "{deleted}");
    assert!(deleted.get("error").is_none(), "{deleted}");
    assert_eq!(count(), Some(1));
    // An id that matches nothing: the task's first config, as v0.3 servers answer.
    let other_id = op(
        "get",
        json!({"id": task_id, "pushNotificationConfigId": "second"}),
    );
    assert_eq!(
        other_id["result"]["pushNotificationConfig"]["id"],
        json!(task_id),
        "{other_id}"
    );
    let missing = op("get", json!({"id": "no-such-task"}));
    assert_eq!(missing["error"]["code"], -32001, "{missing}");
    let no_id = op("delete", json!({"id": task_id}));
    assert_eq!(no_id["error"]["code"], -32602, "{no_id}");

    // The webhook registered the v0.3 way hears the task's end, with its credentials.
    let got = receiver.wait_for_state("TASK_STATE_COMPLETED", Duration::from_secs(20));
    let last = got.last().unwrap();
    assert_eq!(last.authorization.as_deref(), Some("Bearer s3"));
    assert_eq!(last.token.as_deref(), Some("tok-3"));
}

/// Until `receiver` has the `progress` artifact of `task_id`.
fn wait_for_progress(receiver: &Receiver, task_id: &str) {
    let deadline = Instant::now() + Duration::from_secs(20);
    while !receiver.received().iter().any(|r| {
        r.body["artifactUpdate"]["taskId"] == task_id
            && r.body["artifactUpdate"]["artifact"]["name"] == "progress"
    }) {
        assert!(Instant::now() < deadline, "no progress notification");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Starts a long task with a webhook on `victim` and a short one that completes, kills the
/// victim once the long one's `progress` was delivered; the survivor (whose log is
/// `survivor_log`) must fail the long task and deliver that to the webhook, after the
/// events delivered before, and leave the finished task's webhook alone.
fn unfinished_deliveries_resume(
    victim: Server,
    survivor: impl FnOnce() -> (Server, std::sync::mpsc::Receiver<String>),
) {
    let (l, addr) = loopback_listener();
    let receiver = Receiver::start(l, None);
    let url = format!("http://{addr}/hook");
    let finished = send_with_push(&victim.base, "0.1", &url, true);
    let long = send_with_push(&victim.base, "60", &url, false);
    wait_for_progress(&receiver, &long);
    drop(victim); // SIGKILL

    let (_survivor, log) = survivor();
    // Every line up to the resumption of the long task's deliveries, kept.
    let mut lines = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(30);
    while !lines
        .iter()
        .any(|l: &String| l.contains("resumed push deliveries") && l.contains(&long))
    {
        let left = deadline
            .checked_duration_since(Instant::now())
            .expect("the survivor did not resume the deliveries");
        match log.recv_timeout(left) {
            Ok(line) => lines.push(line),
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {
                panic!("the survivor did not resume the deliveries: {lines:#?}")
            }
            Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => {
                panic!("the survivor exited: {lines:#?}")
            }
        }
    }
    let got = receiver.wait_for_state("TASK_STATE_FAILED", Duration::from_secs(30));
    let of_long: Vec<&Received> = got
        .iter()
        .filter(|r| {
            let about = r.body.as_object().unwrap().values().next().unwrap();
            about.get("taskId").or_else(|| about.get("id")) == Some(&json!(long))
        })
        .collect();
    assert_eq!(kinds(&got)[..1], ["task".to_owned()]);
    let failed = of_long.last().unwrap();
    assert_eq!(
        failed.body["statusUpdate"]["status"]["state"], "TASK_STATE_FAILED",
        "{of_long:?}"
    );
    let reason = failed.body["statusUpdate"]["status"]["message"].to_string();
    assert!(reason.contains("stopped"), "{reason}");
    // What was delivered before the kill came first (resending some is at-least-once).
    assert!(of_long[0].body.get("task").is_some(), "{of_long:?}");
    // The finished task's webhook had everything: nothing was resumed for it.
    lines.extend(log.try_iter());
    let others: Vec<&String> = lines.iter().filter(|l| l.contains(&finished)).collect();
    assert!(
        others.iter().all(|l| !l.contains("resumed push")),
        "{others:?}"
    );
    for r in &of_long {
        assert_eq!(r.authorization.as_deref(), Some("Bearer s3cret"));
    }
}

#[test]
fn a_restarted_process_resumes_the_deliveries_it_left_unfinished() {
    let store = temp_store();
    let args = [
        "--agent",
        "slow",
        "--store",
        store.as_str(),
        "--lease-expiry",
        "1",
        "--push-allow",
        "127.0.0.1",
    ];
    unfinished_deliveries_resume(serve(&args), || serve_logged(&args, "info"));
}

#[cfg_attr(
    not(a2a_postgres),
    ignore = "needs PostgreSQL: set A2A_TEST_POSTGRES_URL"
)]
#[test]
fn a_replica_resumes_the_deliveries_of_a_killed_replica() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let Some(url) = runtime.block_on(postgres_store()) else {
        return;
    };
    let args = [
        "--agent",
        "slow",
        "--store",
        url.as_str(),
        "--lease-expiry",
        "1",
        "--push-allow",
        "127.0.0.1",
    ];
    let survivor = serve_logged(&args, "info");
    unfinished_deliveries_resume(serve(&args), move || survivor);
}
