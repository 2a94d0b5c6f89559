//! Tasks, artifacts and histories survive a restart of `a2a serve` on its default store
//! (SQLite), and a subscriber that comes back with `Last-Event-ID` gets every event it
//! missed, once, in order.

mod common;

use a2a_client::{A2aClient, Outcome};
use a2a_types::{Message, SendMessageRequest, StreamResponse, TaskState};
use common::*;

fn req(text: &str, task_id: Option<&str>) -> SendMessageRequest {
    let mut m = Message::user_text(text);
    m.task_id = task_id.map(str::to_owned);
    SendMessageRequest::new(m)
}

#[tokio::test(flavor = "multi_thread")]
async fn tasks_survive_a_restart() {
    let store = temp_store();
    let first = serve(&["--store", &store]);
    let multi = format!("{}/a2a/multi", first.base);
    let echo = format!("{}/a2a/echo", first.base);

    let c = A2aClient::connect(&echo).await.unwrap();
    let done = c.run(req("task: kept", None)).await.unwrap();
    assert!(
        matches!(done, Outcome::Completed(_)),
        "before the restart: {done:?}"
    );
    let done_id = done.task_id().unwrap().to_owned();

    // A multi-turn task left waiting for input, with its artifacts and stream event ids.
    let c = A2aClient::connect(&multi).await.unwrap();
    let mut stream = c.stream(req("start", None)).await.unwrap();
    let mut ids = Vec::new();
    while let Some(ev) = stream.next().await {
        ids.push(ev.unwrap().id.expect("v1.0 events have ids"));
    }
    let waiting = stream.task_id().unwrap().to_owned();
    let before = c.get_task(&waiting, None).await.unwrap();
    assert_eq!(before.status.state, TaskState::InputRequired);
    drop(first); // the server process is killed

    let second = serve(&["--store", &store]);
    let multi = format!("{}/a2a/multi", second.base);
    let echo = format!("{}/a2a/echo", second.base);
    let e = A2aClient::connect(&echo).await.unwrap();
    let t = e.get_task(&done_id, None).await.unwrap();
    assert_eq!(t.status.state, TaskState::Completed);
    assert_eq!(t.artifacts[0].text_content(), "kept");

    let c = A2aClient::connect(&multi).await.unwrap();
    let after = c.get_task(&waiting, None).await.unwrap();
    assert_eq!(after.status, before.status);
    assert_eq!(after.artifacts, before.artifacts);
    assert_eq!(after.history, before.history);
    // Tasks of one agent are not another's.
    assert!(e.get_task(&waiting, None).await.is_err());

    // The conversation goes on where it stopped.
    let o = c.run(req("still here", Some(&waiting))).await.unwrap();
    let Outcome::Completed(t) = &o else {
        panic!("{o:?}")
    };
    assert!(t.artifacts.iter().any(|a| a.text_content() == "still here"));

    // A subscriber that saw the first two events resumes from there: every later event once,
    // in order, up to the end. (The client stops listening at INPUT_REQUIRED, so it comes
    // back after that event too.)
    let mut seqs: Vec<u64> = Vec::new();
    let mut cursor = ids[1].clone();
    let mut last_state = TaskState::Unspecified;
    while !last_state.is_terminal() {
        let mut resumed = c.subscribe_after(&waiting, Some(&cursor)).await.unwrap();
        let before = seqs.len();
        while let Some(ev) = resumed.next().await {
            let ev = ev.unwrap();
            let id = ev.id.expect("resumed events have ids");
            seqs.push(id.parse().unwrap());
            cursor = id;
            if let StreamResponse::StatusUpdate(s) = &ev.response {
                last_state = s.status.state;
            }
        }
        assert!(seqs.len() > before, "each resubscription makes progress");
    }
    let start: u64 = ids[1].parse().unwrap();
    assert!(seqs[0] > start, "{seqs:?}");
    assert!(
        seqs.windows(2).all(|w| w[0] < w[1]),
        "in order, none repeated: {seqs:?}"
    );
    let missed_before_restart = ids.len() - 2;
    assert!(
        seqs.len() >= missed_before_restart + 3,
        "the rest of the first stream, then WORKING, the echo artifact and COMPLETED: {seqs:?}"
    );
    assert_eq!(last_state, TaskState::Completed);
}
