//! ProtoJSON behaviour of the v1.0 types, checked on the spec's own examples.

use a2a_types::validate::Validate;
use a2a_types::{
    A2aError, AgentCard, ListTasksResponse, Message, Part, PartContent, Role, SecurityScheme,
    SendMessageRequest, SendMessageResponse, StreamResponse, Task, TaskState,
};
use serde_json::{Value, json};

/// Parses `input` as `T`, serializes it back and compares with `input` as JSON values.
fn round_trip<T: serde::de::DeserializeOwned + serde::Serialize>(input: Value) -> T {
    let parsed: T = serde_json::from_value(input.clone()).expect("parse");
    let back = serde_json::to_value(&parsed).expect("serialize");
    assert_eq!(back, input, "round trip changed the JSON");
    parsed
}

#[test]
fn spec_6_1_basic_task_response() {
    let resp: SendMessageResponse = round_trip(json!({
      "task": {
        "id": "task-uuid",
        "contextId": "context-uuid",
        "status": {"state": "TASK_STATE_COMPLETED"},
        "artifacts": [{
          "artifactId": "artifact-uuid",
          "name": "Weather Report",
          "parts": [{"text": "Today will be sunny with a high of 75°F"}]
        }]
      }
    }));
    let SendMessageResponse::Task(task) = resp else {
        panic!("expected a task")
    };
    assert_eq!(task.status.state, TaskState::Completed);
    assert_eq!(
        task.artifacts[0].text_content(),
        "Today will be sunny with a high of 75°F"
    );
}

#[test]
fn spec_6_1_request_validates() {
    let req: SendMessageRequest = round_trip(json!({
      "message": {
        "messageId": "msg-uuid",
        "role": "ROLE_USER",
        "parts": [{"text": "What is the weather today?"}]
      }
    }));
    req.validate().expect("valid");
}

#[test]
fn spec_6_2_stream_events() {
    let frames = [
        json!({"task": {"id": "task-uuid", "contextId": "context-uuid", "status": {"state": "TASK_STATE_WORKING"}}}),
        json!({"statusUpdate": {"taskId": "task-uuid", "contextId": "context-uuid", "status": {"state": "TASK_STATE_COMPLETED"}}}),
    ];
    let kinds: Vec<&str> = frames
        .into_iter()
        .map(|f| match round_trip::<StreamResponse>(f) {
            StreamResponse::Task(_) => "task",
            StreamResponse::StatusUpdate(_) => "status",
            _ => "other",
        })
        .collect();
    assert_eq!(kinds, ["task", "status"]);
    // The spec's artifact example omits the REQUIRED artifactId; it still parses.
    let ev: StreamResponse = serde_json::from_value(json!({"artifactUpdate": {"taskId": "t", "contextId": "c", "artifact": {"parts": [{"text": "# Report"}]}}})).unwrap();
    assert!(
        matches!(ev, StreamResponse::ArtifactUpdate(a) if a.artifact.text_content() == "# Report")
    );
}

#[test]
fn spec_6_3_input_required() {
    let resp: SendMessageResponse = serde_json::from_value(json!({
      "task": {
        "id": "task-uuid",
        "status": {
          "state": "TASK_STATE_INPUT_REQUIRED",
          "message": {"role": "ROLE_AGENT", "parts": [{"text": "Where would you like to fly?"}]}
        }
      }
    }))
    .unwrap();
    let SendMessageResponse::Task(task) = resp else {
        panic!()
    };
    assert!(task.status.state.is_interrupted());
    assert_eq!(task.status.message.unwrap().role, Role::Agent);
}

#[test]
fn snake_case_and_enum_numbers_are_accepted() {
    let m: Message = serde_json::from_value(json!({
        "message_id": "m1", "context_id": "c1", "task_id": "t1", "role": 1,
        "parts": [{"text": "hi", "media_type": "text/plain"}],
        "reference_task_ids": ["t0"], "unknownField": {"ignored": true}
    }))
    .unwrap();
    assert_eq!(m.message_id, "m1");
    assert_eq!(m.context_id.as_deref(), Some("c1"));
    assert_eq!(m.role, Role::User);
    assert_eq!(m.parts[0].media_type.as_deref(), Some("text/plain"));
    assert_eq!(m.reference_task_ids, ["t0"]);
    let out = serde_json::to_value(&m).unwrap();
    assert_eq!(out["messageId"], "m1");
    assert_eq!(out["role"], "ROLE_USER");
    assert!(out.get("message_id").is_none());
    let t: Task = serde_json::from_value(json!({"id": "t", "status": {"state": 6}})).unwrap();
    assert_eq!(t.status.state, TaskState::InputRequired);
}

#[test]
fn parts_are_oneofs_without_kind() {
    let raw: Part =
        round_trip(json!({"raw": "aGVsbG8=", "filename": "h.txt", "mediaType": "text/plain"}));
    assert_eq!(raw.content, PartContent::Raw(b"hello".to_vec()));
    let url: Part = round_trip(json!({"url": "https://x/f.png", "mediaType": "image/png"}));
    assert!(matches!(url.content, PartContent::Url(_)));
    let data: Part = round_trip(json!({"data": {"a": [1, 2]}, "metadata": {"k": "v"}}));
    assert!(matches!(data.content, PartContent::Data(_)));
    assert!(serde_json::from_value::<Part>(json!({"metadata": {}})).is_err());
    assert!(serde_json::from_value::<Part>(json!({"text": "a", "url": "b"})).is_err());
    assert!(serde_json::from_value::<Part>(json!({"raw": "***"})).is_err());
}

#[test]
fn timestamps_are_utc_millis() {
    let t: Task = serde_json::from_value(json!({
        "id": "t", "status": {"state": "TASK_STATE_WORKING", "timestamp": "2025-10-28T12:30:00.5+02:00"}
    }))
    .unwrap();
    let out = serde_json::to_value(&t).unwrap();
    assert_eq!(out["status"]["timestamp"], "2025-10-28T10:30:00.500Z");
}

#[test]
fn required_fields_are_named() {
    let req: SendMessageRequest =
        serde_json::from_value(json!({"message": {"role": "ROLE_USER", "parts": []}})).unwrap();
    let err = req.validate().unwrap_err();
    let A2aError::InvalidParams { violations, .. } = &err else {
        panic!("{err:?}")
    };
    let fields: Vec<&str> = violations.iter().map(|v| v.field.as_str()).collect();
    assert_eq!(fields, ["message.messageId", "message.parts"]);
    assert_eq!(err.code().0, -32602);
    let missing = serde_json::from_value::<SendMessageRequest>(json!({})).unwrap_err();
    assert!(missing.to_string().contains("message"), "{missing}");
}

#[test]
fn list_tasks_response_always_has_next_page_token() {
    let out = serde_json::to_value(ListTasksResponse::default()).unwrap();
    assert_eq!(
        out,
        json!({"tasks": [], "nextPageToken": "", "pageSize": 0, "totalSize": 0})
    );
}

#[test]
fn agent_card_sample_parses() {
    let card: AgentCard = serde_json::from_value(json!({
      "name": "GeoSpatial Route Planner Agent",
      "description": "Provides advanced route planning.",
      "supportedInterfaces": [
        {"url": "https://georoute-agent.example.com/a2a/v1", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"},
        {"url": "https://georoute-agent.example.com/a2a/grpc", "protocolBinding": "GRPC", "protocolVersion": "1.0"}
      ],
      "provider": {"organization": "Example Geo Services Inc.", "url": "https://www.examplegeoservices.com"},
      "version": "1.2.0",
      "capabilities": {"streaming": true, "pushNotifications": true, "extendedAgentCard": true},
      "securitySchemes": {
        "google": {"openIdConnectSecurityScheme": {"openIdConnectUrl": "https://accounts.google.com/.well-known/openid-configuration"}},
        "key": {"apiKeySecurityScheme": {"location": "header", "name": "X-API-Key"}}
      },
      "securityRequirements": [{"schemes": {"google": {"list": ["openid", "profile"]}}}],
      "defaultInputModes": ["application/json", "text/plain"],
      "defaultOutputModes": ["application/json", "image/png"],
      "skills": [{"id": "route-optimizer-traffic", "name": "Traffic-Aware Route Optimizer",
                  "description": "Calculates the optimal route.", "tags": ["maps", "routing"]}]
    }))
    .unwrap();
    assert_eq!(card.supported_interfaces.len(), 2);
    assert!(matches!(
        card.security_schemes["google"],
        SecurityScheme::OpenIdConnectSecurityScheme(_)
    ));
    let again: AgentCard = serde_json::from_value(serde_json::to_value(&card).unwrap()).unwrap();
    assert_eq!(again, card);
}
