//! The HTTP+JSON binding (spec §11), over real HTTP: resource URLs, bare JSON bodies, SSE of
//! `StreamResponse`s, and errors as `google.rpc.Status` with the spec's HTTP status and an
//! `ErrorInfo` detail. The card lists it beside JSON-RPC.

mod common;

use common::*;
use serde_json::{Value, json};

/// A request with `A2A-Version: 1.0`.
fn v1(req: reqwest::RequestBuilder) -> reqwest::RequestBuilder {
    req.header("A2A-Version", "1.0")
}

async fn answer(req: reqwest::RequestBuilder) -> (u16, Value) {
    let resp = v1(req).send().await.unwrap();
    let status = resp.status().as_u16();
    let body = resp.text().await.unwrap();
    let json = serde_json::from_str(&body).unwrap_or_else(|e| panic!("{e}: {body:?}"));
    (status, json)
}

fn send_body(text: &str) -> Value {
    json!({ "message": user(text) })
}

fn reason(v: &Value) -> &str {
    v["error"]["details"][0]["reason"].as_str().unwrap_or("")
}

#[tokio::test]
async fn send_get_list_and_cancel_by_resource_url() {
    let s = server().await;
    let b = &s.base;
    let (status, sent) = answer(
        http()
            .post(format!("{b}/message:send"))
            .json(&send_body("complete")),
    )
    .await;
    assert_eq!(status, 200, "{sent}");
    let task = &sent["task"];
    assert_eq!(task["status"]["state"], "TASK_STATE_COMPLETED");
    let id = task["id"].as_str().unwrap();

    let (status, got) = answer(http().get(format!("{b}/tasks/{id}?historyLength=0"))).await;
    assert_eq!(status, 200, "{got}");
    assert_eq!(got["id"], id);
    assert!(got.get("history").is_none(), "historyLength=0: {got}");
    assert_eq!(got["artifacts"][0]["parts"][0]["text"], "result");

    // Query parameters are typed: a number, an enum, a boolean.
    let (status, listed) = answer(http().get(format!(
        "{b}/tasks?pageSize=1&status=TASK_STATE_COMPLETED&includeArtifacts=true"
    )))
    .await;
    assert_eq!(status, 200, "{listed}");
    assert_eq!(listed["tasks"][0]["id"], id);
    assert_eq!(listed["pageSize"], 1);
    assert!(listed["tasks"][0]["artifacts"].is_array(), "{listed}");

    // A waiting task can be canceled; a finished one cannot (400, TASK_NOT_CANCELABLE).
    let (_, waiting) = answer(
        http()
            .post(format!("{b}/message:send"))
            .json(&send_body("input")),
    )
    .await;
    let waiting_id = waiting["task"]["id"].as_str().unwrap();
    let (status, canceled) = answer(http().post(format!("{b}/tasks/{waiting_id}:cancel"))).await;
    assert_eq!(
        (status, &canceled["status"]["state"]),
        (200, &json!("TASK_STATE_CANCELED"))
    );
    let (status, refused) = answer(http().post(format!("{b}/tasks/{id}:cancel"))).await;
    assert_eq!(
        (status, reason(&refused)),
        (400, "TASK_NOT_CANCELABLE"),
        "{refused}"
    );
}

#[tokio::test]
async fn errors_are_google_rpc_status_with_the_spec_http_status() {
    let s = server().await;
    let b = &s.base;
    let (status, missing) = answer(http().get(format!("{b}/tasks/no-such-task"))).await;
    assert_eq!(status, 404);
    assert_eq!(missing["error"]["code"], 404);
    assert_eq!(missing["error"]["status"], "NOT_FOUND");
    assert_eq!(reason(&missing), "TASK_NOT_FOUND");
    assert_eq!(missing["error"]["details"][0]["domain"], "a2a-protocol.org");
    assert_eq!(
        missing["error"]["details"][0]["@type"],
        "type.googleapis.com/google.rpc.ErrorInfo"
    );

    let (status, push) = answer(
        http()
            .post(format!("{b}/tasks/x/pushNotificationConfigs"))
            .json(&json!({})),
    )
    .await;
    assert_eq!(
        (status, reason(&push)),
        (400, "PUSH_NOTIFICATION_NOT_SUPPORTED")
    );

    let (status, bad) = answer(
        http()
            .post(format!("{b}/message:send"))
            .json(&json!({"message": 5})),
    )
    .await;
    assert_eq!(status, 400, "{bad}");
    let (status, bad) = answer(http().get(format!("{b}/tasks?pageSize=many"))).await;
    assert_eq!(status, 400, "{bad}");

    // A body that is not JSON is refused before it is read.
    let resp = v1(http().post(format!("{b}/message:send")))
        .header("content-type", "text/plain")
        .body("hello")
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 415);

    // Without `A2A-Version: 1.0` the request is v0.3, which has other REST paths.
    let resp = http()
        .post(format!("{b}/message:send"))
        .json(&send_body("complete"))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 400);
    let body: Value = resp.json().await.unwrap();
    assert_eq!(reason(&body), "VERSION_NOT_SUPPORTED", "{body}");
}

#[tokio::test]
async fn streams_carry_bare_stream_responses_and_subscriptions_follow() {
    let s = server().await;
    let b = &s.base;
    let resp = v1(http().post(format!("{b}/message:stream")))
        .json(&send_body("chunks"))
        .send()
        .await
        .unwrap();
    let events = read_sse(resp).await;
    assert!(events[0].data.get("task").is_some(), "{}", events[0].data);
    assert!(events.iter().all(|e| e.data.get("jsonrpc").is_none()));
    let chunks: Vec<&Value> = events
        .iter()
        .filter_map(|e| e.data.get("artifactUpdate"))
        .filter(|a| a["artifact"]["artifactId"] == "doc")
        .collect();
    assert_eq!(chunks.len(), 3, "the `doc` artifact in three chunks");
    let last = &events.last().unwrap().data;
    assert_eq!(
        last["statusUpdate"]["status"]["state"],
        "TASK_STATE_COMPLETED"
    );
    assert!(
        events.iter().all(|e| e.id.is_some()),
        "every event has an id"
    );

    // Subscribe to a waiting task, by POST and by GET, then finish it.
    let (_, waiting) = answer(
        http()
            .post(format!("{b}/message:send"))
            .json(&send_body("input")),
    )
    .await;
    let id = waiting["task"]["id"].as_str().unwrap().to_owned();
    let resp = v1(http().get(format!("{b}/tasks/{id}:subscribe")))
        .send()
        .await
        .unwrap();
    let mut by_get = SseReader::new(resp);
    let first = by_get.next().await.unwrap();
    assert_eq!(
        first.data["task"]["status"]["state"],
        "TASK_STATE_INPUT_REQUIRED"
    );
    let resp = v1(http().post(format!("{b}/tasks/{id}:subscribe")))
        .send()
        .await
        .unwrap();
    let mut by_post = SseReader::new(resp);
    by_post.next().await.unwrap();
    let mut answer_body = send_body("input again");
    answer_body["message"]["taskId"] = json!(id);
    let (status, done) = answer(http().post(format!("{b}/message:send")).json(&answer_body)).await;
    assert_eq!(
        (status, &done["task"]["status"]["state"]),
        (200, &json!("TASK_STATE_COMPLETED"))
    );
    for reader in [&mut by_get, &mut by_post] {
        let rest = reader.rest().await;
        let last = &rest.last().unwrap().data;
        assert_eq!(
            last["statusUpdate"]["status"]["state"],
            "TASK_STATE_COMPLETED"
        );
    }
}

#[tokio::test]
async fn the_card_lists_http_json_under_the_agent_path() {
    let s = start(Setup {
        path: "/a2a/script",
        ..Setup::default()
    })
    .await;
    let card = get_json(&format!(
        "{}/a2a/script/.well-known/agent-card.json",
        s.base
    ))
    .await;
    let interfaces = card["supportedInterfaces"].as_array().unwrap();
    let rest = interfaces
        .iter()
        .find(|i| i["protocolBinding"] == "HTTP+JSON")
        .unwrap_or_else(|| panic!("no HTTP+JSON interface: {card}"));
    assert_eq!(rest["protocolVersion"], "1.0");
    let url = rest["url"].as_str().unwrap();
    assert_eq!(url, format!("{}/a2a/script", s.base));
    // The advertised URL works.
    let (status, sent) = answer(
        http()
            .post(format!("{url}/message:send"))
            .json(&send_body("reply hi")),
    )
    .await;
    assert_eq!(status, 200, "{sent}");
    assert_eq!(sent["message"]["parts"][0]["text"], "re: reply hi");
    // JSON-RPC still comes first: clients that take the first interface are unchanged.
    assert_eq!(interfaces[0]["protocolBinding"], "JSONRPC");
}
