//! Cancel really stops the work; a client that goes away does not.

mod common;

use std::time::Duration;

use common::*;
use futures::StreamExt;
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
    let mut body = resp.bytes_stream();
    // Read until the `progress` artifact arrived.
    let mut seen = String::new();
    while !seen.contains("progress") {
        seen.push_str(&String::from_utf8_lossy(
            &body.next().await.unwrap().unwrap(),
        ));
    }
    let task_id = seen
        .split("\"id\":\"")
        .nth(1)
        .unwrap()
        .split('"')
        .next()
        .unwrap()
        .to_owned();
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
    let mut rest = String::new();
    while let Some(chunk) = body.next().await {
        rest.push_str(&String::from_utf8_lossy(&chunk.unwrap()));
    }
    assert!(rest.contains("TASK_STATE_CANCELED"), "{rest}");
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

#[tokio::test]
async fn an_agent_that_ignores_cancel_is_aborted() {
    let mut setup = Setup::default();
    setup.runtime.cancel_grace = Duration::from_millis(100);
    let s = start(setup).await;
    let r = rpc(
        &s.url,
        "SendMessage",
        json!({"message": user("stubborn"), "configuration": {"returnImmediately": true}}),
    )
    .await;
    let id = r["result"]["task"]["id"].as_str().unwrap().to_owned();
    let r = rpc(&s.url, "CancelTask", json!({"id": id})).await;
    assert_eq!(r["result"]["status"]["state"], "TASK_STATE_CANCELED");
    // The runtime forgets the task once the aborted execution is gone.
    let runtime = s.handler.runtime().clone();
    tokio::time::timeout(Duration::from_secs(5), async {
        while runtime.active_tasks() > 0 {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await
    .expect("execution was not aborted");
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
    let mut body = resp.bytes_stream();
    let first = String::from_utf8_lossy(&body.next().await.unwrap().unwrap()).to_string();
    drop(body);
    let streaming_id = first
        .split("\"id\":\"")
        .nth(1)
        .unwrap()
        .split('"')
        .next()
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
