//! `SubscribeToTask`: current task first, live events after, resume with Last-Event-ID.

mod common;

use common::*;
use serde_json::json;

async fn start_sleeper(url: &str, secs: &str) -> String {
    let params = json!({"message": user(&format!("sleep {secs}")), "configuration": {"returnImmediately": true}});
    let r = rpc(url, "SendMessage", params).await;
    r["result"]["task"]["id"].as_str().unwrap().to_owned()
}

#[tokio::test]
async fn first_event_is_the_current_task_then_updates_until_terminal() {
    let s = server().await;
    let id = start_sleeper(&s.url, "0.3").await;
    let (a, b) = tokio::join!(
        read_sse(stream(&s.url, "SubscribeToTask", json!({"id": id}), None).await),
        read_sse(stream(&s.url, "SubscribeToTask", json!({"id": id}), None).await),
    );
    for events in [&a, &b] {
        assert_eq!(kind(&events[0].data["result"]), "task");
        assert_eq!(events[0].data["result"]["task"]["id"], id.as_str());
        let last = &events.last().unwrap().data["result"]["statusUpdate"];
        assert_eq!(last["status"]["state"], "TASK_STATE_COMPLETED");
    }
    // Both subscribers saw the same events after their snapshots.
    let tail = |ev: &Vec<SseEvent>| ev.iter().map(|e| e.id.clone()).collect::<Vec<_>>();
    assert_eq!(tail(&a).last(), tail(&b).last());
}

#[tokio::test]
async fn last_event_id_resumes_without_loss() {
    let s = server().await;
    let events = stream_text(&s.url, "chunks").await;
    let id = events[0].data["result"]["task"]["id"]
        .as_str()
        .unwrap()
        .to_owned();
    // Pretend the connection dropped after the second event.
    let cut = events[1].id.clone().unwrap();
    let resumed =
        read_sse(stream(&s.url, "SubscribeToTask", json!({"id": id}), Some(&cut)).await).await;
    let original: Vec<_> = events[2..]
        .iter()
        .map(|e| (e.id.clone(), e.data["result"].clone()))
        .collect();
    let replay: Vec<_> = resumed
        .iter()
        .map(|e| (e.id.clone(), e.data["result"].clone()))
        .collect();
    assert_eq!(replay, original);
}

#[tokio::test]
async fn subscribe_to_an_interrupted_task_sends_it_and_closes() {
    let s = server().await;
    let t = send(&s.url, "input").await["task"].clone();
    let events =
        read_sse(stream(&s.url, "SubscribeToTask", json!({"id": t["id"]}), None).await).await;
    assert_eq!(events.len(), 1);
    assert_eq!(
        events[0].data["result"]["task"]["status"]["state"],
        "TASK_STATE_INPUT_REQUIRED"
    );
}

#[tokio::test]
async fn v03_resubscribe() {
    let s = server().await;
    let id = start_sleeper(&s.url, "0.2").await;
    let body =
        json!({"jsonrpc": "2.0", "id": 3, "method": "tasks/resubscribe", "params": {"id": id}});
    let events = read_sse(http().post(&s.url).json(&body).send().await.unwrap()).await;
    assert_eq!(events[0].data["result"]["kind"], "task");
    let last = &events.last().unwrap().data["result"];
    assert_eq!(last["kind"], "status-update");
    assert_eq!(last["final"], true);
}
