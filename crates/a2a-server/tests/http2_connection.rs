//! One HTTP/2 connection carries many calls at once. The server polls a connection's
//! streams inside the connection's own task and writes what they produce once per poll, so
//! these check what that must not change: a stream waiting on its agent does not hold back
//! other calls on the same connection, answers far larger than the write buffer arrive
//! whole, many calls in flight on one connection all answer, a cancel reaches a waiting
//! stream's task, and a client that hangs up on calls still waiting frees its connection
//! (its streams end with it) without canceling their tasks.

mod common;

use std::time::Duration;

use a2a_grpc::A2aServiceClient;
use a2a_grpc::pb;
use a2a_server::ConnectionLimits;
use common::*;
use tonic::transport::Channel;

/// A client on one HTTP/2 connection: clones share it.
async fn one_connection(s: &TestServer) -> A2aServiceClient<Channel> {
    let channel = tonic::transport::Endpoint::from_shared(s.base.clone())
        .unwrap()
        .connect()
        .await
        .unwrap();
    A2aServiceClient::new(channel)
        .max_decoding_message_size(16 << 20)
        .max_encoding_message_size(16 << 20)
}

/// The text of a direct message answer.
async fn reply_text(c: &mut A2aServiceClient<Channel>, text: &str) -> String {
    let answer = c
        .send_message(v1(send_req(text)))
        .await
        .unwrap()
        .into_inner();
    let Some(pb::send_message_response::Payload::Message(m)) = answer.payload else {
        panic!("not a message: {answer:?}")
    };
    match &m.parts[0].content {
        Some(pb::part::Content::Text(t)) => t.clone(),
        other => panic!("{other:?}"),
    }
}

/// Bounds a wait that hangs when the behaviour is broken; not a timing target.
async fn within<T>(what: &str, f: impl std::future::Future<Output = T>) -> T {
    tokio::time::timeout(Duration::from_secs(30), f)
        .await
        .unwrap_or_else(|_| panic!("{what}: no answer in 30 s"))
}

#[tokio::test]
async fn a_waiting_stream_does_not_hold_back_calls_on_its_connection() {
    let s = server().await;
    let mut c = one_connection(&s).await;
    let mut waiting = c
        .send_streaming_message(v1(send_req("sleep 300")))
        .await
        .unwrap()
        .into_inner();
    let first = within("the stream's first event", waiting.message())
        .await
        .unwrap()
        .unwrap();
    let Some(pb::stream_response::Payload::Task(task)) = first.payload else {
        panic!("{first:?}")
    };

    // While that stream waits for its agent, calls on the same connection are answered.
    let calls = (0..20).map(|i| {
        let mut c = c.clone();
        async move { reply_text(&mut c, &format!("reply {i}")).await }
    });
    let answers = within(
        "calls beside a waiting stream",
        futures::future::join_all(calls),
    )
    .await;
    for (i, answer) in answers.iter().enumerate() {
        assert_eq!(answer, &format!("re: reply {i}"));
    }

    // A cancel on the same connection stops the agent, and the waiting stream ends with
    // the task canceled.
    let canceled = c
        .cancel_task(v1(pb::CancelTaskRequest {
            id: task.id.clone(),
            ..Default::default()
        }))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(
        canceled.status.unwrap().state,
        pb::TaskState::Canceled as i32
    );
    let mut last_state = None;
    while let Some(ev) = within("the canceled stream's end", waiting.message())
        .await
        .unwrap()
    {
        if let Some(pb::stream_response::Payload::StatusUpdate(u)) = ev.payload {
            last_state = u.status.map(|s| s.state);
        }
    }
    assert_eq!(last_state, Some(pb::TaskState::Canceled as i32));
}

#[tokio::test]
async fn answers_larger_than_the_write_buffer_arrive_whole() {
    let s = server().await;
    let c = one_connection(&s).await;
    // 1 MiB answers, eight at once on one connection: each is many DATA frames, far past
    // the 64 KiB a connection gathers before it waits for the peer.
    let calls = (0..8u8).map(|i| {
        let mut c = c.clone();
        async move {
            let body: String = std::iter::repeat_n(char::from(b'a' + i), 1 << 20).collect();
            let text = format!("reply {body}");
            (reply_text(&mut c, &text).await, format!("re: {text}"))
        }
    });
    for (got, want) in within("large answers", futures::future::join_all(calls)).await {
        assert_eq!(got.len(), want.len());
        assert!(got == want, "an answer was corrupted");
    }
}

#[tokio::test]
async fn many_calls_in_flight_on_one_connection_all_answer() {
    let s = server().await;
    let c = one_connection(&s).await;
    let calls = (0..500).map(|i| {
        let mut c = c.clone();
        async move { (i, reply_text(&mut c, &format!("reply {i}")).await) }
    });
    let answers = within("500 calls", futures::future::join_all(calls)).await;
    assert_eq!(answers.len(), 500);
    for (i, answer) in answers {
        assert_eq!(answer, format!("re: reply {i}"));
    }
}

/// A server that serves one connection at a time.
async fn one_connection_server() -> TestServer {
    let mut limits = ConnectionLimits::default();
    limits.max_connections = 1;
    start(Setup {
        limits,
        ..Setup::default()
    })
    .await
}

/// The ids of the tasks in `state`, as the server lists them.
async fn tasks_in(
    c: &mut A2aServiceClient<Channel>,
    state: pb::TaskState,
) -> Result<Vec<String>, tonic::Status> {
    let listed = c
        .list_tasks(v1(pb::ListTasksRequest {
            status: state as i32,
            ..Default::default()
        }))
        .await?
        .into_inner();
    let mut ids: Vec<String> = listed.tasks.into_iter().map(|t| t.id).collect();
    ids.sort();
    Ok(ids)
}

#[tokio::test]
async fn a_client_that_hangs_up_on_waiting_calls_frees_its_connection_and_cancels_nothing() {
    let s = one_connection_server().await;
    let connect = || async {
        let channel = tonic::transport::Endpoint::from_shared(s.base.clone())
            .unwrap()
            .connect()
            .await?;
        Ok::<_, tonic::transport::Error>(A2aServiceClient::new(channel))
    };

    // Two calls wait on their agents on the server's only connection: a stream, and a
    // blocking send (whose answer is not even begun).
    let mut c = connect().await.unwrap();
    let mut stream = c
        .send_streaming_message(v1(send_req("sleep 300")))
        .await
        .unwrap()
        .into_inner();
    within("the stream's first event", stream.message())
        .await
        .unwrap()
        .unwrap();
    let mut blocking_client = c.clone();
    let blocking = tokio::spawn(async move {
        let _ = blocking_client
            .send_message(v1(send_req("sleep 300")))
            .await;
    });
    let working = within("both calls at their agents", async {
        loop {
            let ids = tasks_in(&mut c, pb::TaskState::Working).await.unwrap();
            if ids.len() == 2 {
                return ids;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await;

    // The client hangs up on both.
    blocking.abort();
    let _ = blocking.await;
    drop(stream);
    drop(c);

    // The connection's place is free again once its streams have ended with it: a new
    // client is served (it is refused while the old connection holds the only place).
    let mut next = within("a new connection served", async {
        loop {
            if let Ok(mut c) = connect().await
                && tasks_in(&mut c, pb::TaskState::Working).await.is_ok()
            {
                return c;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    })
    .await;
    // Hanging up canceled neither task.
    assert_eq!(
        tasks_in(&mut next, pb::TaskState::Working).await.unwrap(),
        working
    );
    for id in working {
        next.cancel_task(v1(pb::CancelTaskRequest {
            id,
            ..Default::default()
        }))
        .await
        .unwrap();
    }
}
