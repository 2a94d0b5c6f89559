//! `SendMessage`: blocking, returnImmediately, direct replies, historyLength.

mod common;

use common::*;
use serde_json::json;

#[tokio::test]
async fn blocking_send_returns_the_final_task_with_every_artifact() {
    let s = server().await;
    let r = send(&s.url, "chunks").await;
    let task = &r["task"];
    assert_eq!(task["status"]["state"], "TASK_STATE_COMPLETED");
    let arts = task["artifacts"].as_array().unwrap();
    assert_eq!(arts.len(), 2);
    assert_eq!(arts[0]["artifactId"], "doc");
    let texts: Vec<&str> = arts[0]["parts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["text"].as_str().unwrap())
        .collect();
    assert_eq!(
        texts,
        ["a", "b", "c"],
        "appended chunks extend one artifact"
    );
    assert_eq!(task["history"][0]["role"], "ROLE_USER");
    assert!(
        task["contextId"].as_str().is_some_and(|c| !c.is_empty()),
        "contextId generated"
    );
}

#[tokio::test]
async fn blocking_send_stops_at_interrupted_states() {
    let s = server().await;
    let r = send(&s.url, "input").await;
    assert_eq!(r["task"]["status"]["state"], "TASK_STATE_INPUT_REQUIRED");
    assert_eq!(
        r["task"]["status"]["message"]["parts"][0]["text"],
        "more please"
    );
    let r = send(&s.url, "auth").await;
    assert_eq!(r["task"]["status"]["state"], "TASK_STATE_AUTH_REQUIRED");
    assert!(
        r["task"]["status"]["message"]["parts"][0]["text"].is_string(),
        "auth-required carries a message"
    );
}

#[tokio::test]
async fn direct_message_reply() {
    let s = server().await;
    let r = send(&s.url, "reply hi").await;
    let m = &r["message"];
    assert_eq!(m["role"], "ROLE_AGENT");
    assert_eq!(m["parts"][0]["text"], "re: reply hi");
    assert!(m["contextId"].is_string());
    assert!(m.get("taskId").is_none(), "a direct reply has no task");
    assert!(r.get("task").is_none());
}

#[tokio::test]
async fn return_immediately_returns_a_running_task() {
    let s = server().await;
    let params =
        json!({"message": user("sleep 0.3"), "configuration": {"returnImmediately": true}});
    let r = rpc(&s.url, "SendMessage", params).await;
    let task = &r["result"]["task"];
    let state = task["status"]["state"].as_str().unwrap();
    assert!(
        matches!(state, "TASK_STATE_SUBMITTED" | "TASK_STATE_WORKING"),
        "{state}"
    );
    // The task goes on without anyone waiting.
    let id = task["id"].as_str().unwrap();
    let done = finished(&s.url, id).await;
    assert_eq!(done["status"]["state"], "TASK_STATE_COMPLETED");
    assert_eq!(done["artifacts"].as_array().unwrap().len(), 2);
}

#[tokio::test]
async fn history_length() {
    let s = server().await;
    let params =
        |n: i64| json!({"message": user("complete"), "configuration": {"historyLength": n}});
    let r = rpc(&s.url, "SendMessage", params(0)).await;
    assert!(
        r["result"]["task"].get("history").is_none(),
        "historyLength 0 omits history: {r}"
    );
    let r = rpc(&s.url, "SendMessage", params(1)).await;
    let id = r["result"]["task"]["id"].as_str().unwrap().to_owned();
    assert_eq!(r["result"]["task"]["history"].as_array().unwrap().len(), 1);
    // The task keeps the user message and the agent's "working" status message... and more.
    let all = rpc(&s.url, "GetTask", json!({"id": id})).await;
    let n = all["result"]["history"].as_array().unwrap().len();
    assert!(n >= 1);
    let one = rpc(&s.url, "GetTask", json!({"id": id, "historyLength": 1})).await;
    let h = one["result"]["history"].as_array().unwrap();
    assert_eq!(h.len(), 1);
    assert_eq!(
        h[0],
        all["result"]["history"][n - 1],
        "the most recent messages are kept"
    );
}

#[tokio::test]
async fn server_history_cap() {
    let mut setup = Setup::default();
    setup.handler.max_history_length = Some(1);
    let s = start(setup).await;
    let id = send(&s.url, "input").await["task"]["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let mut follow = user("input answer");
    follow["taskId"] = json!(id);
    rpc(&s.url, "SendMessage", json!({"message": follow})).await;
    let r = rpc(&s.url, "GetTask", json!({"id": id, "historyLength": 50})).await;
    assert_eq!(r["result"]["history"].as_array().unwrap().len(), 1);
}

#[tokio::test]
async fn v03_message_send() {
    let s = server().await;
    let msg = json!({"kind": "message", "messageId": "m1", "role": "user", "parts": [{"kind": "text", "text": "complete"}]});
    let r = rpc03(&s.url, "message/send", json!({"message": msg})).await;
    let t = &r["result"];
    assert_eq!(t["kind"], "task", "{r}");
    assert_eq!(t["status"]["state"], "completed");
    assert_eq!(t["artifacts"][0]["parts"][0]["kind"], "text");
    assert_eq!(t["history"][0]["role"], "user");
    let r = rpc03(&s.url, "tasks/get", json!({"id": t["id"]})).await;
    assert_eq!(r["result"]["kind"], "task");
    let msg = json!({"kind": "message", "messageId": "m2", "role": "user", "parts": [{"kind": "text", "text": "reply x"}]});
    let r = rpc03(&s.url, "message/send", json!({"message": msg})).await;
    assert_eq!(r["result"]["kind"], "message");
    assert_eq!(r["result"]["role"], "agent");
}
