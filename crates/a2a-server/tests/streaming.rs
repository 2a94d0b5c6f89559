//! `SendStreamingMessage` over SSE, v1.0 and v0.3.

mod common;

use common::*;
use serde_json::json;

#[tokio::test]
async fn task_stream_in_order_with_sequence_ids() {
    let s = server().await;
    let events = stream_text(&s.url, "chunks").await;
    let kinds: Vec<&str> = events.iter().map(|e| kind(&e.data["result"])).collect();
    assert_eq!(
        kinds,
        [
            "task",
            "statusUpdate",
            "artifactUpdate",
            "artifactUpdate",
            "artifactUpdate",
            "artifactUpdate",
            "statusUpdate"
        ]
    );
    for e in &events {
        assert_eq!(e.data["jsonrpc"], "2.0");
        assert_eq!(e.data["id"], 7, "every frame carries the request id");
    }
    let ids: Vec<u64> = events
        .iter()
        .map(|e| e.id.as_deref().unwrap().parse().unwrap())
        .collect();
    assert!(ids.windows(2).all(|w| w[0] < w[1]), "ids increase: {ids:?}");
    let first = &events[0].data["result"]["task"];
    assert_eq!(first["status"]["state"], "TASK_STATE_SUBMITTED");
    let chunk = &events[3].data["result"]["artifactUpdate"];
    assert_eq!(chunk["append"], true);
    let last_chunk = &events[4].data["result"]["artifactUpdate"];
    assert_eq!(last_chunk["lastChunk"], true);
    let last = &events[6].data["result"]["statusUpdate"];
    assert_eq!(last["status"]["state"], "TASK_STATE_COMPLETED");
    assert!(last.get("final").is_none(), "v1.0 has no final flag");
}

#[tokio::test]
async fn message_only_stream() {
    let s = server().await;
    let events = stream_text(&s.url, "reply x").await;
    assert_eq!(events.len(), 1);
    assert_eq!(kind(&events[0].data["result"]), "message");
}

#[tokio::test]
async fn stream_closes_on_input_required_and_continuation_streams() {
    let s = server().await;
    let events = stream_text(&s.url, "input").await;
    let last = &events.last().unwrap().data["result"]["statusUpdate"];
    assert_eq!(last["status"]["state"], "TASK_STATE_INPUT_REQUIRED");
    let task_id = events[0].data["result"]["task"]["id"]
        .as_str()
        .unwrap()
        .to_owned();

    let mut follow = user("input more");
    follow["taskId"] = json!(task_id);
    let events = read_sse(
        stream(
            &s.url,
            "SendStreamingMessage",
            json!({"message": follow}),
            None,
        )
        .await,
    )
    .await;
    let kinds: Vec<&str> = events.iter().map(|e| kind(&e.data["result"])).collect();
    assert_eq!(
        kinds,
        ["task", "artifactUpdate", "statusUpdate"],
        "{events:?}"
    );
    assert_eq!(
        events[0].data["result"]["task"]["status"]["state"],
        "TASK_STATE_INPUT_REQUIRED"
    );
    assert_eq!(
        events[2].data["result"]["statusUpdate"]["status"]["state"],
        "TASK_STATE_COMPLETED"
    );
}

#[tokio::test]
async fn v03_stream_has_kinds_and_final() {
    let s = server().await;
    let msg = json!({"kind": "message", "messageId": "m", "role": "user", "parts": [{"kind": "text", "text": "complete"}]});
    let body = json!({"jsonrpc": "2.0", "id": "s1", "method": "message/stream", "params": {"message": msg}});
    let resp = http().post(&s.url).json(&body).send().await.unwrap();
    let events = read_sse(resp).await;
    let kinds: Vec<&str> = events
        .iter()
        .map(|e| e.data["result"]["kind"].as_str().unwrap())
        .collect();
    assert_eq!(
        kinds,
        ["task", "status-update", "artifact-update", "status-update"]
    );
    let finals: Vec<bool> = events
        .iter()
        .filter(|e| e.data["result"]["kind"] == "status-update")
        .map(|e| e.data["result"]["final"].as_bool().unwrap())
        .collect();
    assert_eq!(finals, [false, true]);
    assert_eq!(events[3].data["result"]["status"]["state"], "completed");
}

#[tokio::test]
async fn a_slow_reader_still_gets_every_event() {
    // More events than the bus buffers: the stream catches up from the task's log.
    let s = server().await;
    let resp = stream(
        &s.url,
        "SendStreamingMessage",
        json!({"message": user("many 500")}),
        None,
    )
    .await;
    let events = read_sse(resp).await;
    let chunks = events
        .iter()
        .filter(|e| kind(&e.data["result"]) == "artifactUpdate")
        .count();
    assert_eq!(chunks, 500);
    let ids: Vec<u64> = events
        .iter()
        .map(|e| e.id.as_deref().unwrap().parse().unwrap())
        .collect();
    assert!(
        ids.windows(2).all(|w| w[1] == w[0] + 1),
        "no event lost or repeated"
    );
}

#[tokio::test]
async fn errors_before_the_stream_are_plain_json() {
    let s = server().await;
    let mut m = user("x");
    m["taskId"] = json!("nope");
    let resp = stream(&s.url, "SendStreamingMessage", json!({"message": m}), None).await;
    assert!(
        resp.headers()["content-type"]
            .to_str()
            .unwrap()
            .starts_with("application/json")
    );
    let v: serde_json::Value = resp.json().await.unwrap();
    assert_eq!(v["error"]["code"], -32001);
}
