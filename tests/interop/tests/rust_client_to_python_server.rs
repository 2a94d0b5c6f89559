//! This project's client against a server built on the official Python SDK, over v1.0 and
//! v0.3: every reply shape, listeners, deadlines, continuation, cancel.

mod common;

use std::time::Duration;

use a2a_client::{
    A2aClient, Binding, Conversation, Decision, Outcome, ProtocolVersion, StopReason,
};
use a2a_types::{
    A2aError, Message, SendMessageConfiguration, SendMessageRequest, StreamResponse, TaskState,
};
use common::*;

fn req(text: &str) -> SendMessageRequest {
    SendMessageRequest::new(Message::user_text(text))
}

/// A client for each binding and version the reference server offers: JSON-RPC v1.0 and
/// v0.3, HTTP+JSON v1.0 and gRPC v1.0.
async fn clients(url: &str) -> Vec<A2aClient> {
    let mut out = Vec::new();
    for (b, v) in [
        (Binding::JsonRpc, ProtocolVersion::V1),
        (Binding::JsonRpc, ProtocolVersion::V03),
        (Binding::HttpJson, ProtocolVersion::V1),
        (Binding::Grpc, ProtocolVersion::V1),
    ] {
        let c = A2aClient::builder()
            .binding(b)
            .protocol_version(v)
            .connect(url)
            .await
            .expect("connect");
        assert_eq!((c.binding(), c.protocol_version()), (b.name(), v));
        out.push(c);
    }
    out
}

#[cfg_attr(not(a2a_python), ignore = "needs the Python SDK: run scripts/test.sh")]
#[tokio::test(flavor = "multi_thread")]
async fn reply_shapes_and_every_artifact() {
    let Some(py) = python() else { return };
    let server = start_python_server(&py).await;
    for c in clients(&server.url).await {
        let v = c.protocol_version();
        let o = c.run(req("echo hi")).await.unwrap();
        assert!(matches!(o, Outcome::Completed(_)), "{v:?}: {o:?}");
        assert_eq!(o.text(), "echo hi");
        let id = o.task_id().unwrap().to_owned();
        let t = c.get_task(&id, None).await.unwrap();
        assert_eq!(t.status.state, TaskState::Completed);

        let o = c.run(req("message: hello")).await.unwrap();
        let Outcome::Message(m) = &o else {
            panic!("{v:?}: {o:?}")
        };
        assert_eq!(m.text_content(), "message: hello");

        let o = c.run(req("multi")).await.unwrap();
        let texts: Vec<String> = o.artifacts().iter().map(|a| a.text_content()).collect();
        assert_eq!(
            texts,
            ["one", "two-part", "three"],
            "{v:?}: chunks assembled, all artifacts kept"
        );
        assert_eq!(o.text(), "one\ntwo-part\nthree");

        let o = c.run(req("fail")).await.unwrap();
        assert!(matches!(o, Outcome::Failed(_)), "{v:?}: {o:?}");
        assert_eq!(o.reason().as_deref(), Some("boom"));
        let o = c.run(req("reject")).await.unwrap();
        assert!(matches!(o, Outcome::Rejected(_)), "{v:?}: {o:?}");
        assert_eq!(o.reason().as_deref(), Some("no thanks"));

        // Non-streaming sends give the same outcomes.
        let o = Outcome::from_response(c.send(req("echo blocking")).await.unwrap());
        assert_eq!(o.text(), "echo blocking");
    }
}

#[cfg_attr(not(a2a_python), ignore = "needs the Python SDK: run scripts/test.sh")]
#[tokio::test(flavor = "multi_thread")]
async fn input_required_then_continue() {
    let Some(py) = python() else { return };
    let server = start_python_server(&py).await;
    for c in clients(&server.url).await {
        let mut conv = Conversation::new(c.clone());
        let o = conv.send("input").await.unwrap();
        let Outcome::InputRequired(i) = &o else {
            panic!("{o:?}")
        };
        assert_eq!(i.prompt_text(), "need more");
        let task_id = i.task_id().to_owned();
        assert_eq!(conv.pending_task_id(), Some(task_id.as_str()));
        let o = conv.send("here you go").await.unwrap();
        assert!(matches!(o, Outcome::Completed(_)), "{o:?}");
        assert_eq!(o.task_id(), Some(task_id.as_str()), "same task continued");
        assert_eq!(o.text(), "here you go");
        assert_eq!(conv.pending_task_id(), None);
    }
}

#[cfg_attr(not(a2a_python), ignore = "needs the Python SDK: run scripts/test.sh")]
#[tokio::test(flavor = "multi_thread")]
async fn deadline_then_explicit_cancel() {
    let Some(py) = python() else { return };
    let server = start_python_server(&py).await;
    for c in clients(&server.url).await {
        // The deadline must fall after `progress` and before the 30 s sleep ends; 3 s leaves
        // room for a loaded machine (250 ms did not: the reference server is Python).
        let o = c
            .run_with_deadline(req("slow"), Duration::from_secs(3))
            .await
            .unwrap();
        let Outcome::Stopped(s) = &o else {
            panic!("{o:?}")
        };
        assert_eq!(s.reason, StopReason::Deadline);
        let id = s.task_id().expect("task id known").to_owned();
        assert_eq!(s.answer, "progress", "what arrived is handed back");
        let t = c.get_task(&id, None).await.unwrap();
        assert_eq!(
            t.status.state,
            TaskState::Working,
            "timing out does not cancel"
        );
        let t = c.cancel_task(&id).await.unwrap();
        assert_eq!(t.status.state, TaskState::Canceled);
        let names: Vec<_> = t.artifacts.iter().filter_map(|a| a.name.clone()).collect();
        assert_eq!(names, ["progress"]);
    }
}

#[cfg_attr(not(a2a_python), ignore = "needs the Python SDK: run scripts/test.sh")]
#[tokio::test(flavor = "multi_thread")]
async fn listener_stops_without_canceling() {
    let Some(py) = python() else { return };
    let server = start_python_server(&py).await;
    for c in clients(&server.url).await {
        // Stop with our own answer on the first artifact.
        let o = c
            .run_with_listener(
                req("multi"),
                |ev: &a2a_client::StreamEvent, _: Option<&a2a_types::Task>| match ev.response {
                    StreamResponse::ArtifactUpdate(_) => Decision::Stop("enough".into()),
                    _ => Decision::Continue,
                },
            )
            .await
            .unwrap();
        let Outcome::Stopped(s) = &o else {
            panic!("{o:?}")
        };
        assert_eq!(
            (s.reason, s.answer.as_str()),
            (StopReason::Listener, "enough")
        );
        // Stop with the artifacts so far once `a2a` is complete.
        let o = c
            .run_with_listener(
                req("multi"),
                |ev: &a2a_client::StreamEvent, _: Option<&a2a_types::Task>| match &ev.response {
                    StreamResponse::ArtifactUpdate(a) if a.last_chunk => {
                        Decision::StopWithArtifacts
                    }
                    _ => Decision::Continue,
                },
            )
            .await
            .unwrap();
        let Outcome::Stopped(s) = &o else {
            panic!("{o:?}")
        };
        assert_eq!(s.answer, "one\ntwo-part");
        // The slow task goes on after we stop listening.
        let o = c
            .run_with_listener(
                req("slow"),
                |ev: &a2a_client::StreamEvent, _: Option<&a2a_types::Task>| match ev.response {
                    StreamResponse::ArtifactUpdate(_) => Decision::StopWithArtifacts,
                    _ => Decision::Continue,
                },
            )
            .await
            .unwrap();
        let id = o.task_id().unwrap().to_owned();
        assert_eq!(
            c.get_task(&id, None).await.unwrap().status.state,
            TaskState::Working
        );
        c.cancel_task(&id).await.unwrap();
    }
}

#[cfg_attr(not(a2a_python), ignore = "needs the Python SDK: run scripts/test.sh")]
#[tokio::test(flavor = "multi_thread")]
async fn subscribe_to_a_running_task() {
    let Some(py) = python() else { return };
    let server = start_python_server(&py).await;
    for c in clients(&server.url).await {
        let mut conf = SendMessageConfiguration::default();
        conf.return_immediately = true;
        let o = Outcome::from_response(c.send(req("slow").with_configuration(conf)).await.unwrap());
        let id = o.task_id().unwrap().to_owned();
        let mut sub = c.subscribe(&id).await.unwrap();
        let first = sub.next().await.unwrap().unwrap();
        assert!(
            matches!(first.response, StreamResponse::Task(_)),
            "{first:?}"
        );
        c.cancel_task(&id).await.unwrap();
        let mut last = None;
        while let Some(ev) = sub.next().await {
            last = Some(ev.unwrap());
        }
        let last = last.expect("events after cancel");
        assert!(last.is_final);
        let state = match &last.response {
            StreamResponse::StatusUpdate(s) => s.status.state,
            StreamResponse::Task(t) => t.status.state,
            other => panic!("{other:?}"),
        };
        assert_eq!(state, TaskState::Canceled);
    }
}

/// The server's error as it wrote it: a raw call on `c`'s binding (`method` and `params` for
/// JSON-RPC and gRPC; for HTTP+JSON, `rest` = the method and the path under the endpoint).
async fn raw_error(
    c: &A2aClient,
    method: &str,
    params: serde_json::Value,
    rest: (reqwest::Method, String),
) -> serde_json::Value {
    if c.binding() == Binding::Grpc.name() {
        return raw_grpc_error(c.endpoint(), method, params["id"].as_str().unwrap()).await;
    }
    let http = reqwest::Client::new();
    let req = if c.binding() == Binding::HttpJson.name() {
        http.request(rest.0, format!("{}{}", c.endpoint(), rest.1))
    } else {
        let body =
            serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
        http.post(c.endpoint()).json(&body)
    };
    let resp: serde_json::Value = req
        .header("A2A-Version", c.protocol_version().as_str())
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    resp["error"].clone()
}

/// `message` with `a2a-version: 1.0` metadata.
fn v1<T>(message: T) -> tonic::Request<T> {
    let mut req = tonic::Request::new(message);
    req.metadata_mut().insert(
        "a2a-version",
        tonic::metadata::MetadataValue::from_static("1.0"),
    );
    req
}

/// [`raw_error`] over gRPC: the status message, from a plain tonic client.
async fn raw_grpc_error(address: &str, method: &str, id: &str) -> serde_json::Value {
    use a2a_grpc::pb;
    let channel = tonic::transport::Endpoint::from_shared(format!("http://{address}"))
        .unwrap()
        .connect()
        .await
        .unwrap();
    let mut client = a2a_grpc::A2aServiceClient::new(channel);
    let status = match method {
        "GetTask" => {
            let req = pb::GetTaskRequest {
                id: id.into(),
                ..Default::default()
            };
            client.get_task(v1(req)).await.unwrap_err()
        }
        _ => {
            let req = pb::CancelTaskRequest {
                id: id.into(),
                ..Default::default()
            };
            client.cancel_task(v1(req)).await.unwrap_err()
        }
    };
    serde_json::json!({"message": status.message()})
}

/// Spec §9.5: an error's text is the server's own `error.message`; nothing is rebuilt from
/// metadata that only this project's server sends. The typed error still says which task.
#[cfg_attr(not(a2a_python), ignore = "needs the Python SDK: run scripts/test.sh")]
#[tokio::test(flavor = "multi_thread")]
async fn errors_read_as_the_server_wrote_them() {
    let Some(py) = python() else { return };
    let server = start_python_server(&py).await;
    for c in clients(&server.url).await {
        let v = c.protocol_version();
        let (get, cancel) = match v {
            ProtocolVersion::V03 => ("tasks/get", "tasks/cancel"),
            _ => ("GetTask", "CancelTask"),
        };
        let err = c.get_task("no-such-task", None).await.unwrap_err();
        let raw = raw_error(
            &c,
            get,
            serde_json::json!({"id": "no-such-task"}),
            (reqwest::Method::GET, "/tasks/no-such-task".into()),
        )
        .await;
        assert_eq!(err.to_string(), raw["message"].as_str().unwrap(), "{v:?}");
        assert!(
            matches!(err.protocol(), Some(A2aError::TaskNotFound { task_id }) if task_id == "no-such-task"),
            "{v:?}: {err:?}"
        );

        let id = c
            .run(req("echo hi"))
            .await
            .unwrap()
            .task_id()
            .unwrap()
            .to_owned();
        let err = c.cancel_task(&id).await.unwrap_err();
        let raw = raw_error(
            &c,
            cancel,
            serde_json::json!({"id": id}),
            (reqwest::Method::POST, format!("/tasks/{id}:cancel")),
        )
        .await;
        assert_eq!(err.to_string(), raw["message"].as_str().unwrap(), "{v:?}");
        assert!(!err.to_string().contains("UNSPECIFIED"), "{v:?}: {err}");
        assert!(
            matches!(err.protocol(), Some(A2aError::TaskNotCancelable { task_id, .. }) if *task_id == id),
            "{v:?}: {err:?}"
        );
    }
}
