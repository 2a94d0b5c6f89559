//! v0.3 shapes and conversions to and from v1.0.

use a2a_types::v03;
use a2a_types::{
    AgentCard, AgentInterface, Artifact, Message, Part, PartContent, Role, SendMessageRequest,
    StreamResponse, Task, TaskArtifactUpdateEvent, TaskState, TaskStatus, TaskStatusUpdateEvent,
};
use serde_json::json;

#[test]
fn message_send_params_convert_with_blocking() {
    let params: v03::MessageSendParams = serde_json::from_value(json!({
        "message": {
            "kind": "message", "messageId": "m1", "role": "user", "contextId": "c1",
            "parts": [
                {"kind": "text", "text": "hi"},
                {"kind": "file", "file": {"bytes": "aGk=", "mimeType": "text/plain", "name": "a.txt"}},
                {"kind": "file", "file": {"uri": "https://x/y.png"}},
                {"kind": "data", "data": {"k": 1}}
            ]
        },
        "configuration": {"blocking": false, "historyLength": 2}
    }))
    .unwrap();
    let req = SendMessageRequest::try_from(params).unwrap();
    assert!(req.return_immediately());
    assert_eq!(req.history_length(), Some(2));
    let m = &req.message;
    assert_eq!(m.role, Role::User);
    assert_eq!(m.parts[0].as_text(), Some("hi"));
    assert_eq!(m.parts[1].content, PartContent::Raw(b"hi".to_vec()));
    assert_eq!(m.parts[1].filename.as_deref(), Some("a.txt"));
    assert_eq!(
        m.parts[2].content,
        PartContent::Url("https://x/y.png".into())
    );
    assert!(matches!(m.parts[3].content, PartContent::Data(_)));
    // Missing `blocking` means block.
    let p: v03::MessageSendParams = serde_json::from_value(json!({
        "message": {"kind": "message", "messageId": "m", "role": "user", "parts": [{"kind": "text", "text": "x"}]},
        "configuration": {}
    }))
    .unwrap();
    assert!(
        !SendMessageRequest::try_from(p)
            .unwrap()
            .return_immediately()
    );
}

#[test]
fn task_converts_to_v03_with_kinds_and_lowercase() {
    let mut task = Task::new("t1", "c1", TaskState::InputRequired);
    task.history
        .push(Message::new(Role::User, vec![Part::text("q")]));
    task.artifacts
        .push(Artifact::new("a1", vec![Part::data(json!([1, 2]))]));
    let out = serde_json::to_value(v03::Task::from(&task)).unwrap();
    assert_eq!(out["kind"], "task");
    assert_eq!(out["status"]["state"], "input-required");
    assert_eq!(out["history"][0]["kind"], "message");
    assert_eq!(out["history"][0]["role"], "user");
    assert_eq!(out["artifacts"][0]["parts"][0]["kind"], "data");
    assert_eq!(
        out["artifacts"][0]["parts"][0]["data"],
        json!({"value": [1, 2]})
    );
    let back = Task::try_from(serde_json::from_value::<v03::Task>(out).unwrap()).unwrap();
    assert_eq!(back.status.state, TaskState::InputRequired);
}

#[test]
fn stream_events_carry_final() {
    let status = TaskStatusUpdateEvent::new("t", "c", TaskStatus::new(TaskState::Completed));
    let ev = StreamResponse::StatusUpdate(status);
    let out = serde_json::to_value(v03::StreamEvent::from_v1(ev.as_ref(), true)).unwrap();
    assert_eq!(out["kind"], "status-update");
    assert_eq!(out["final"], true);
    assert_eq!(out["status"]["state"], "completed");
    let parsed: v03::StreamEvent = serde_json::from_value(out).unwrap();
    let (back, fin) = parsed.into_v1().unwrap();
    assert!(fin);
    assert!(
        matches!(back, StreamResponse::StatusUpdate(s) if s.status.state == TaskState::Completed)
    );

    let art = TaskArtifactUpdateEvent::new(
        "t",
        "c",
        Artifact::new("a", vec![Part::text("x")]),
        true,
        true,
    );
    let out = serde_json::to_value(v03::StreamEvent::from_v1(
        StreamResponse::ArtifactUpdate(art).as_ref(),
        false,
    ))
    .unwrap();
    assert_eq!(out["kind"], "artifact-update");
    assert_eq!(out["append"], true);
    assert_eq!(out["lastChunk"], true);
    let parsed: v03::StreamEvent = serde_json::from_value(out).unwrap();
    assert!(matches!(parsed, v03::StreamEvent::ArtifactUpdate(_)));
}

#[test]
fn cards_convert_both_ways() {
    let mut card = AgentCard::default();
    card.name = "A".into();
    card.description = "d".into();
    card.version = "1".into();
    card.supported_interfaces = vec![
        AgentInterface::new("http://h/a", "JSONRPC", "1.0"),
        AgentInterface::new("http://h/a", "JSONRPC", "0.3"),
    ];
    let legacy = v03::AgentCard::from_v1(&card);
    assert_eq!(legacy.url, "http://h/a");
    assert_eq!(legacy.protocol_version, "0.3.0");
    assert_eq!(legacy.preferred_transport.as_deref(), Some("JSONRPC"));
    let back = legacy.to_v1();
    assert_eq!(
        back.supported_interfaces,
        vec![AgentInterface::new("http://h/a", "JSONRPC", "0.3")]
    );
    let merged = v03::merged_card_json(&card);
    assert_eq!(merged["url"], "http://h/a");
    assert_eq!(merged["supportedInterfaces"][0]["protocolVersion"], "1.0");
}
