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

/// A subscriber that comes back having seen the latest event (its connection dropped while
/// the task was quiet) gets nothing it has seen again: no snapshot restating that event,
/// only what comes after it.
#[tokio::test]
async fn resuming_at_the_latest_event_repeats_nothing() {
    let s = server().await;
    let id = start_sleeper(&s.url, "0.5").await;
    let mut first =
        SseReader::new(stream(&s.url, "SubscribeToTask", json!({"id": id}), None).await);
    let snapshot = first.next().await.expect("the task first");
    let latest = snapshot
        .id
        .clone()
        .expect("the snapshot carries its position");
    drop(first);
    let resumed =
        read_sse(stream(&s.url, "SubscribeToTask", json!({"id": id}), Some(&latest)).await).await;
    let ids: Vec<u64> = resumed
        .iter()
        .map(|e| e.id.as_deref().unwrap().parse().unwrap())
        .collect();
    let latest: u64 = latest.parse().unwrap();
    assert!(ids.iter().all(|i| *i > latest), "{latest} then {ids:?}");
    assert_eq!(
        resumed.last().unwrap().data["result"]["statusUpdate"]["status"]["state"],
        "TASK_STATE_COMPLETED"
    );
}

/// Spec §3.1.6: a subscription ends only at a terminal state. It stays open through
/// INPUT_REQUIRED / AUTH_REQUIRED and carries the events of the continuation.
#[tokio::test]
async fn subscription_to_an_interrupted_task_stays_open_until_terminal() {
    let s = server().await;
    for (word, state) in [
        ("input", "TASK_STATE_INPUT_REQUIRED"),
        ("auth", "TASK_STATE_AUTH_REQUIRED"),
    ] {
        let t = send(&s.url, word).await["task"].clone();
        assert_eq!(t["status"]["state"], state);
        let mut sub =
            SseReader::new(stream(&s.url, "SubscribeToTask", json!({"id": t["id"]}), None).await);
        let first = sub.next().await.expect("the task first");
        assert_eq!(first.data["result"]["task"]["status"]["state"], state);
        // The subscription is still open: continue the task, and its events arrive on it.
        let mut m = user(&format!("{word} again"));
        m["taskId"] = t["id"].clone();
        let done = rpc(&s.url, "SendMessage", json!({"message": m})).await;
        assert_eq!(
            done["result"]["task"]["status"]["state"], "TASK_STATE_COMPLETED",
            "{done}"
        );
        let rest = sub.rest().await;
        let last = &rest.last().expect("events after the continuation").data["result"];
        assert_eq!(
            last["statusUpdate"]["status"]["state"],
            "TASK_STATE_COMPLETED"
        );
    }
}

/// A streamed send still closes at an interrupted state: it answers one message.
#[tokio::test]
async fn streamed_send_closes_at_an_interrupted_state() {
    let s = server().await;
    let events = stream_text(&s.url, "input").await;
    let last = &events.last().unwrap().data["result"];
    let state = last["statusUpdate"]["status"]["state"]
        .as_str()
        .or(last["task"]["status"]["state"].as_str());
    assert_eq!(state, Some("TASK_STATE_INPUT_REQUIRED"), "{events:?}");
}

/// Subscribing to a finished task is refused with a message that says so.
#[tokio::test]
async fn subscription_to_a_terminal_task_is_refused() {
    let s = server().await;
    let t = send(&s.url, "complete").await["task"].clone();
    let r = post_json(
        &s.url,
        Some("1.0"),
        &json!({"jsonrpc": "2.0", "id": 9, "method": "SubscribeToTask", "params": {"id": t["id"]}}),
    )
    .await;
    assert_eq!(r["error"]["code"], -32004, "{r}");
    let msg = r["error"]["message"].as_str().unwrap();
    assert!(msg.contains("cannot be subscribed to"), "{msg}");
    assert!(!msg.contains("messages"), "not the send wording: {msg}");
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

/// A v0.3 client opens `tasks/resubscribe` as an event stream; a task that does not exist
/// is one error event in it (as the reference SDK answers), not a JSON body it cannot read.
#[tokio::test]
async fn v03_resubscribe_to_a_missing_task_is_an_error_event() {
    let s = server().await;
    let body = json!({"jsonrpc": "2.0", "id": 4, "method": "tasks/resubscribe",
        "params": {"id": "no-such-task"}});
    let resp = http().post(&s.url).json(&body).send().await.unwrap();
    assert_eq!(
        resp.headers()["content-type"].to_str().unwrap(),
        "text/event-stream"
    );
    let events = read_sse(resp).await;
    assert_eq!(events.len(), 1, "{events:?}");
    assert_eq!(events[0].data["id"], 4);
    assert_eq!(events[0].data["error"]["code"], -32001);
}
