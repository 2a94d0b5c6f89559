//! The gRPC binding (spec §10) over real HTTP/2, driven by a plain tonic client built from
//! the normative proto: unary and streaming methods, `a2a-version` metadata, tenants, and
//! errors as statuses with the spec's code and a `google.rpc.ErrorInfo` detail. The card
//! lists it as `host:port`, and `Bindings` switch it (and the others) off.

mod common;

use a2a_grpc::A2aServiceClient;
use a2a_grpc::pb;
use a2a_server::{Bindings, ServeOptions};
use common::*;
use serde_json::Value;
use tonic::transport::Channel;
use tonic::{Code, Request, Status};
use tonic_types::StatusExt;

async fn client(s: &TestServer) -> A2aServiceClient<Channel> {
    let channel = tonic::transport::Endpoint::from_shared(s.base.clone())
        .unwrap()
        .connect()
        .await
        .unwrap();
    A2aServiceClient::new(channel)
}

/// The status code and the `ErrorInfo` reason and domain.
fn a2a_error(status: &Status) -> (Code, String, String) {
    let info = status
        .get_details_error_info()
        .unwrap_or_else(|| panic!("no ErrorInfo in {status:?}"));
    (status.code(), info.reason, info.domain)
}

fn state(task: &pb::Task) -> pb::TaskState {
    pb::TaskState::try_from(task.status.as_ref().unwrap().state).unwrap()
}

#[tokio::test]
async fn send_get_list_and_cancel() {
    let s = server().await;
    let mut c = client(&s).await;
    let sent = c
        .send_message(v1(send_req("complete")))
        .await
        .unwrap()
        .into_inner();
    let Some(pb::send_message_response::Payload::Task(task)) = sent.payload else {
        panic!("{sent:?}")
    };
    assert_eq!(state(&task), pb::TaskState::Completed);
    assert_eq!(task.artifacts[0].name, "out");
    // The send's answer, written from the task's log by reference, is the task as GetTask
    // gives it (an owned task, converted, encoded by prost).
    let whole = c
        .get_task(v1(pb::GetTaskRequest {
            id: task.id.clone(),
            ..Default::default()
        }))
        .await
        .unwrap()
        .into_inner();
    // The stored form keeps the status time to the millisecond; the answer, to the
    // nanosecond it was taken.
    let mut answered = task.clone();
    if let Some(t) = answered.status.as_mut().and_then(|s| s.timestamp.as_mut()) {
        t.nanos -= t.nanos % 1_000_000;
    }
    assert_eq!(whole, answered);
    assert!(!task.history.is_empty());

    let got = c
        .get_task(v1(pb::GetTaskRequest {
            id: task.id.clone(),
            history_length: Some(0),
            ..Default::default()
        }))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(got.id, task.id);
    assert!(got.history.is_empty());
    match &got.artifacts[0].parts[0].content {
        Some(pb::part::Content::Text(t)) => assert_eq!(t, "result"),
        other => panic!("{other:?}"),
    }

    let listed = c
        .list_tasks(v1(pb::ListTasksRequest {
            status: pb::TaskState::Completed as i32,
            page_size: Some(1),
            include_artifacts: Some(true),
            ..Default::default()
        }))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(listed.tasks[0].id, task.id);
    assert_eq!(listed.page_size, 1);
    assert_eq!(listed.tasks[0].artifacts.len(), 1);

    // A reply is a message, not a task.
    let replied = c
        .send_message(v1(send_req("reply hi")))
        .await
        .unwrap()
        .into_inner();
    assert!(matches!(
        replied.payload,
        Some(pb::send_message_response::Payload::Message(_))
    ));

    // A task waiting for input can be canceled; a finished one cannot.
    let waiting = c
        .send_message(v1(send_req("input")))
        .await
        .unwrap()
        .into_inner();
    let Some(pb::send_message_response::Payload::Task(waiting)) = waiting.payload else {
        panic!()
    };
    assert_eq!(state(&waiting), pb::TaskState::InputRequired);
    let canceled = c
        .cancel_task(v1(pb::CancelTaskRequest {
            id: waiting.id.clone(),
            ..Default::default()
        }))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(state(&canceled), pb::TaskState::Canceled);
    let err = c
        .cancel_task(v1(pb::CancelTaskRequest {
            id: task.id.clone(),
            ..Default::default()
        }))
        .await
        .unwrap_err();
    assert_eq!(
        a2a_error(&err),
        (
            Code::FailedPrecondition,
            "TASK_NOT_CANCELABLE".into(),
            "a2a-protocol.org".into()
        )
    );
}

#[tokio::test]
async fn streams_are_server_streaming_calls() {
    let s = server().await;
    let mut c = client(&s).await;
    let mut stream = c
        .send_streaming_message(v1(send_req("chunks")))
        .await
        .unwrap()
        .into_inner();
    let mut kinds = Vec::new();
    let mut text = String::new();
    while let Some(ev) = stream.message().await.unwrap() {
        use pb::stream_response::Payload;
        match ev.payload.unwrap() {
            Payload::Task(_) => kinds.push("task"),
            Payload::Message(_) => kinds.push("message"),
            Payload::StatusUpdate(_) => kinds.push("status"),
            Payload::ArtifactUpdate(a) => {
                kinds.push("artifact");
                if let Some(pb::part::Content::Text(t)) = &a.artifact.unwrap().parts[0].content {
                    text.push_str(t);
                }
            }
        }
    }
    assert_eq!(kinds.first(), Some(&"task"));
    assert!(kinds.iter().filter(|k| **k == "artifact").count() >= 3);
    assert_eq!(kinds.last(), Some(&"status"));
    assert!(text.starts_with("abc"), "{text}");

    // Subscribing to a finished task is refused, as on every binding.
    let sent = c
        .send_message(v1(send_req("complete")))
        .await
        .unwrap()
        .into_inner();
    let Some(pb::send_message_response::Payload::Task(task)) = sent.payload else {
        panic!()
    };
    let err = c
        .subscribe_to_task(v1(pb::SubscribeToTaskRequest {
            id: task.id,
            ..Default::default()
        }))
        .await
        .unwrap_err();
    assert_eq!(a2a_error(&err).1, "UNSUPPORTED_OPERATION");
}

#[tokio::test]
async fn errors_carry_the_spec_code_and_error_info() {
    let s = server().await;
    let mut c = client(&s).await;
    let err = c
        .get_task(v1(pb::GetTaskRequest {
            id: "nope".into(),
            ..Default::default()
        }))
        .await
        .unwrap_err();
    let (code, reason, domain) = a2a_error(&err);
    assert_eq!(
        (code, reason.as_str(), domain.as_str()),
        (Code::NotFound, "TASK_NOT_FOUND", "a2a-protocol.org")
    );
    assert_eq!(
        err.get_details_error_info().unwrap().metadata["taskId"],
        "nope"
    );

    // No message: INVALID_ARGUMENT with the field named.
    let err = c
        .send_message(v1(pb::SendMessageRequest::default()))
        .await
        .unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument, "{err:?}");
    assert!(err.message().contains("message"), "{err:?}");

    // Push notifications are not declared: PUSH_NOTIFICATION_NOT_SUPPORTED.
    let err = c
        .create_task_push_notification_config(v1(pb::TaskPushNotificationConfig {
            task_id: "t".into(),
            url: "https://example.com/hook".into(),
            ..Default::default()
        }))
        .await
        .unwrap_err();
    assert_eq!(
        a2a_error(&err).0,
        Code::FailedPrecondition,
        "spec §5.4: {err:?}"
    );
    assert_eq!(a2a_error(&err).1, "PUSH_NOTIFICATION_NOT_SUPPORTED");

    // No extended card: UNSUPPORTED_OPERATION.
    let err = c
        .get_extended_agent_card(v1(pb::GetExtendedAgentCardRequest::default()))
        .await
        .unwrap_err();
    assert_eq!(a2a_error(&err).1, "UNSUPPORTED_OPERATION");
}

#[tokio::test]
async fn version_metadata_is_required_and_checked() {
    let s = server().await;
    let mut c = client(&s).await;
    // No `a2a-version`: 0.3, which this binding does not speak.
    let err = c
        .get_task(Request::new(pb::GetTaskRequest {
            id: "x".into(),
            ..Default::default()
        }))
        .await
        .unwrap_err();
    assert_eq!(
        a2a_error(&err).1,
        "VERSION_NOT_SUPPORTED",
        "{}",
        err.message()
    );
    let mut req = Request::new(pb::GetTaskRequest {
        id: "x".into(),
        ..Default::default()
    });
    req.metadata_mut()
        .insert("a2a-version", "2.0".parse().unwrap());
    let err = c.get_task(req).await.unwrap_err();
    assert_eq!(a2a_error(&err).0, Code::FailedPrecondition);
    assert_eq!(a2a_error(&err).1, "VERSION_NOT_SUPPORTED");
}

#[tokio::test]
async fn the_tenant_picks_the_agent() {
    let s = start(Setup {
        path: "/a2a/script",
        ..Setup::default()
    })
    .await;
    let card = get_json(&format!("{}/.well-known/agent-card.json", s.url)).await;
    let grpc = card["supportedInterfaces"]
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["protocolBinding"] == "GRPC")
        .cloned()
        .unwrap_or_else(|| panic!("{card}"));
    assert_eq!(grpc["url"], s.base.trim_start_matches("http://"));
    assert_eq!(grpc["tenant"], "a2a/script");
    assert_eq!(grpc["protocolVersion"], "1.0");

    let mut c = client(&s).await;
    let mut req = send_req("complete");
    req.tenant = "a2a/script".into();
    let sent = c.send_message(v1(req)).await.unwrap().into_inner();
    assert!(matches!(
        sent.payload,
        Some(pb::send_message_response::Payload::Task(_))
    ));
    // Another tenant names no agent here.
    let err = c.send_message(v1(send_req("complete"))).await.unwrap_err();
    assert_eq!(err.code(), Code::NotFound);
    assert!(err.message().contains("a2a/script"), "{}", err.message());
}

#[tokio::test]
async fn bindings_can_be_switched_off() {
    let mut options = ServeOptions::default();
    options.bindings = Bindings::parse_list("rest").unwrap();
    let s = start(Setup {
        options,
        ..Setup::default()
    })
    .await;
    let card = get_json(&format!("{}/.well-known/agent-card.json", s.base)).await;
    let bindings: Vec<&str> = card["supportedInterfaces"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["protocolBinding"].as_str().unwrap())
        .collect();
    assert_eq!(bindings, ["HTTP+JSON"]);
    // Neither JSON-RPC nor gRPC is served.
    let r = post_json(
        &s.url,
        Some("1.0"),
        &serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": {"id": "x"}}),
    )
    .await;
    assert_eq!(r["error"]["code"], Value::from(404), "{r}");
    let mut c = client(&s).await;
    let err = c.send_message(v1(send_req("complete"))).await.unwrap_err();
    assert_eq!(err.code(), Code::Unimplemented, "{err:?}");

    let mut options = ServeOptions::default();
    options.bindings = Bindings::parse_list("jsonrpc,grpc").unwrap();
    options.grpc_address = Some("grpc.example.com:443".into());
    let s = start(Setup {
        options,
        ..Setup::default()
    })
    .await;
    let card = get_json(&format!("{}/.well-known/agent-card.json", s.base)).await;
    let interfaces: Vec<(&str, &str)> = card["supportedInterfaces"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| {
            (
                i["protocolBinding"].as_str().unwrap(),
                i["url"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(interfaces[1], ("GRPC", "grpc.example.com:443"));
    assert_eq!(interfaces.len(), 3, "{interfaces:?}");
    assert!(Bindings::parse_list("jsonrpc,soap").is_none());
}
