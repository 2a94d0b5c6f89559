//! Cancel really stops the work; a client that goes away does not.

mod common;

use std::sync::Arc;
use std::time::Duration;

use a2a_server::{AgentError, AgentExecutor, RequestContext, TaskUpdater};
use common::*;
use serde_json::json;

#[tokio::test]
async fn cancel_stops_a_running_task() {
    let s = server().await;
    let resp = stream(
        &s.url,
        "SendStreamingMessage",
        json!({"message": user("sleep 30")}),
        None,
    )
    .await;
    let mut events = SseReader::new(resp);
    let first = events.next().await.unwrap();
    let task_id = first.data["result"]["task"]["id"]
        .as_str()
        .unwrap()
        .to_owned();
    // Wait for the `progress` artifact: the agent is now sleeping.
    while let Some(ev) = events.next().await {
        if ev.data["result"]["artifactUpdate"]["artifact"]["artifactId"] == "progress" {
            break;
        }
    }
    let r = rpc(&s.url, "CancelTask", json!({"id": task_id})).await;
    let task = &r["result"];
    assert_eq!(task["status"]["state"], "TASK_STATE_CANCELED", "{r}");
    let ids: Vec<&str> = task["artifacts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["artifactId"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["progress"]);
    // The open stream ends with the CANCELED status.
    let rest = events.rest().await;
    let last = &rest.last().unwrap().data["result"]["statusUpdate"];
    assert_eq!(last["status"]["state"], "TASK_STATE_CANCELED");
    // Canceling again is refused.
    let r = rpc(&s.url, "CancelTask", json!({"id": task_id})).await;
    assert_eq!(r["error"]["code"], -32002);
}

#[tokio::test]
async fn cancel_an_input_required_task() {
    let s = server().await;
    let t = send(&s.url, "input").await["task"].clone();
    let r = rpc(&s.url, "CancelTask", json!({"id": t["id"]})).await;
    assert_eq!(r["result"]["status"]["state"], "TASK_STATE_CANCELED");
}

/// Ignores cancellation entirely; says when its work was dropped (aborted).
struct Stubborn {
    dropped: Arc<tokio::sync::Notify>,
}

struct DropSignal(Arc<tokio::sync::Notify>);

impl Drop for DropSignal {
    fn drop(&mut self) {
        self.0.notify_one();
    }
}

#[async_trait::async_trait]
impl AgentExecutor for Stubborn {
    async fn execute(&self, _: RequestContext, u: TaskUpdater) -> Result<(), AgentError> {
        let _signal = DropSignal(self.dropped.clone());
        u.start_work(None).await?;
        tokio::time::sleep(Duration::from_secs(3600)).await;
        Ok(())
    }
}

#[tokio::test]
async fn an_agent_that_ignores_cancel_is_aborted() {
    let dropped = Arc::new(tokio::sync::Notify::new());
    let mut setup = Setup::default();
    setup.runtime.cancel_grace = Duration::from_millis(100);
    setup.executor = Arc::new(Stubborn {
        dropped: dropped.clone(),
    });
    let s = start(setup).await;
    let params = json!({"message": user("work"), "configuration": {"returnImmediately": true}});
    let r = rpc(&s.url, "SendMessage", params).await;
    let id = r["result"]["task"]["id"].as_str().unwrap().to_owned();
    let r = rpc(&s.url, "CancelTask", json!({"id": id})).await;
    assert_eq!(r["result"]["status"]["state"], "TASK_STATE_CANCELED");
    tokio::time::timeout(Duration::from_secs(5), dropped.notified())
        .await
        .expect("the execution was not aborted after the grace period");
}

#[tokio::test]
async fn client_disconnect_does_not_cancel() {
    let s = server().await;
    // A blocking send whose client gives up after 100 ms.
    let client = reqwest::Client::builder()
        .timeout(Duration::from_millis(100))
        .build()
        .unwrap();
    let mut m = user("sleep 0.5");
    m["contextId"] = json!("gave-up");
    let body =
        json!({"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message": m}});
    let sent = client
        .post(&s.url)
        .header("A2A-Version", "1.0")
        .json(&body)
        .send()
        .await;
    assert!(sent.is_err(), "the client timed out");
    let list = rpc(&s.url, "ListTasks", json!({"contextId": "gave-up"})).await;
    let blocking_id = list["result"]["tasks"][0]["id"]
        .as_str()
        .unwrap()
        .to_owned();

    // A streaming client that drops its stream after the first event.
    let resp = stream(
        &s.url,
        "SendStreamingMessage",
        json!({"message": user("sleep 0.5")}),
        None,
    )
    .await;
    let mut events = SseReader::new(resp);
    let first = events.next().await.unwrap();
    drop(events);
    let streaming_id = first.data["result"]["task"]["id"]
        .as_str()
        .unwrap()
        .to_owned();

    for id in [blocking_id, streaming_id] {
        let done = finished(&s.url, &id).await;
        assert_eq!(done["status"]["state"], "TASK_STATE_COMPLETED", "{done}");
        assert_eq!(
            done["artifacts"].as_array().unwrap().len(),
            2,
            "both artifacts: ran to the end"
        );
    }
}

#[tokio::test]
async fn v03_cancel() {
    let s = server().await;
    let msg = json!({"kind": "message", "messageId": "m", "role": "user", "parts": [{"kind": "text", "text": "sleep 30"}]});
    let r = rpc03(
        &s.url,
        "message/send",
        json!({"message": msg, "configuration": {"blocking": false}}),
    )
    .await;
    let id = r["result"]["id"].as_str().unwrap().to_owned();
    let r = rpc03(&s.url, "tasks/cancel", json!({"id": id})).await;
    assert_eq!(r["result"]["kind"], "task");
    assert_eq!(r["result"]["status"]["state"], "canceled");
}
