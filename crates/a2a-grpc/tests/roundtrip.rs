//! Every field survives the trip to protobuf bytes and back, for the shapes the bindings
//! carry: tasks with every kind of part, stream events, requests and full agent cards.

use std::collections::BTreeMap;

use a2a_grpc::pb;
use a2a_types::{
    AgentCapabilities, AgentCard, AgentExtension, AgentInterface, AgentSkill, ApiKeySecurityScheme,
    Artifact, HttpAuthSecurityScheme, ListTasksRequest, Message, OAuth2SecurityScheme, OAuthFlow,
    OAuthFlows, Part, Role, SecurityRequirement, SecurityScheme, SendMessageConfiguration,
    SendMessageRequest, StreamResponse, StringList, Task, TaskArtifactUpdateEvent, TaskState,
    TaskStatus, TaskStatusUpdateEvent,
};
use prost::Message as _;
use serde_json::{Map, Value, json};

/// Through protobuf bytes: `T` → `P` → bytes → `P` → `T`.
fn trip<T, P>(value: T) -> T
where
    P: prost::Message + Default + From<T>,
    T: From<P>,
{
    let bytes = P::from(value).encode_to_vec();
    T::from(P::decode(bytes.as_slice()).unwrap())
}

fn meta(v: Value) -> Option<Map<String, Value>> {
    match v {
        Value::Object(m) => Some(m),
        _ => None,
    }
}

fn rich_task() -> Task {
    let mut msg = Message::new(
        Role::User,
        vec![
            Part::text("hello"),
            Part::raw(vec![0u8, 1, 2, 255])
                .with_filename("b.bin")
                .with_media_type("application/octet-stream"),
            Part::url("https://example.com/f.pdf").with_media_type("application/pdf"),
            Part::data(json!({"n": 3, "x": 1.5, "list": [true, null, "s"], "o": {"k": "v"}})),
        ],
    )
    .with_context_id("ctx")
    .with_task_id("t1")
    .with_metadata(meta(json!({"thread_id": "th", "depth": 2})).unwrap());
    msg.extensions = vec!["https://ext.example/a".into()];
    msg.reference_task_ids = vec!["t0".into()];
    let mut artifact = Artifact::new("a1", vec![Part::text("out")]).with_name("result");
    artifact.description = Some("the result".into());
    artifact.metadata = meta(json!({"score": 0.25}));
    artifact.extensions = vec!["https://ext.example/b".into()];
    let mut task = Task::new("t1", "ctx", TaskState::InputRequired);
    task.status =
        TaskStatus::with_message(TaskState::InputRequired, Some(Message::agent_text("more?")));
    task.history = vec![msg];
    task.artifacts = vec![artifact];
    task.metadata = meta(json!({"owner": "me"}));
    task
}

#[test]
fn tasks_keep_every_field() {
    let task = rich_task();
    assert_eq!(trip::<Task, pb::Task>(task.clone()), task);
    // The timestamp keeps its nanoseconds.
    assert!(task.status.timestamp.is_some());
}

#[test]
fn stream_events_and_send_requests_keep_every_field() {
    let task = rich_task();
    let mut status = TaskStatusUpdateEvent::new("t1", "ctx", TaskStatus::new(TaskState::Working));
    status.metadata = meta(json!({"k": "v"}));
    let chunk = TaskArtifactUpdateEvent::new("t1", "ctx", task.artifacts[0].clone(), true, true);
    for event in [
        StreamResponse::Task(task.clone()),
        StreamResponse::Message(task.history[0].clone()),
        StreamResponse::StatusUpdate(status),
        StreamResponse::ArtifactUpdate(chunk),
    ] {
        let bytes = pb::StreamResponse::from(event.clone()).encode_to_vec();
        let back = StreamResponse::try_from(pb::StreamResponse::decode(bytes.as_slice()).unwrap());
        assert_eq!(back.unwrap(), event);
    }

    let mut conf = SendMessageConfiguration::default();
    conf.accepted_output_modes = vec!["text/plain".into()];
    conf.history_length = Some(0);
    conf.return_immediately = true;
    let mut req = SendMessageRequest::new(task.history[0].clone()).with_configuration(conf);
    req.tenant = Some("a2a/echo".into());
    req.metadata = meta(json!({"a": [1, 2]}));
    let bytes = pb::SendMessageRequest::from(req.clone()).encode_to_vec();
    let back =
        SendMessageRequest::try_from(pb::SendMessageRequest::decode(bytes.as_slice()).unwrap());
    assert_eq!(back.unwrap(), req);
    // A request with no message is refused, naming the field.
    let err = SendMessageRequest::try_from(pb::SendMessageRequest::default()).unwrap_err();
    assert!(err.to_string().contains("message"), "{err}");

    let mut list = ListTasksRequest::default();
    list.context_id = Some("ctx".into());
    list.status = Some(TaskState::Completed);
    list.page_size = Some(10);
    list.page_token = Some("tok".into());
    list.history_length = Some(2);
    list.include_artifacts = Some(false);
    list.status_timestamp_after = task.status.timestamp;
    assert_eq!(
        trip::<ListTasksRequest, pb::ListTasksRequest>(list.clone()),
        list
    );
}

#[test]
fn agent_cards_keep_every_field() {
    let mut card = AgentCard::new("Agent", "does things");
    card.supported_interfaces = vec![{
        let mut i = AgentInterface::new("127.0.0.1:1", "GRPC", "1.0");
        i.tenant = Some("a2a/x".into());
        i
    }];
    let mut caps = AgentCapabilities::default();
    caps.streaming = Some(true);
    caps.push_notifications = Some(false);
    caps.extended_agent_card = Some(true);
    let mut ext = AgentExtension::default();
    ext.uri = "https://ext.example/a".into();
    ext.required = true;
    ext.params = meta(json!({"p": 1}));
    caps.extensions = vec![ext];
    card.capabilities = caps;
    let mut flow = OAuthFlow::default();
    flow.authorization_url = Some("https://auth.example/authorize".into());
    flow.token_url = Some("https://auth.example/token".into());
    flow.scopes = BTreeMap::from([("read".to_owned(), "read things".to_owned())]);
    flow.pkce_required = true;
    let mut bearer = HttpAuthSecurityScheme::new("Bearer");
    bearer.bearer_format = Some("JWT".into());
    card.security_schemes = BTreeMap::from([
        (
            "key".to_owned(),
            SecurityScheme::ApiKeySecurityScheme(ApiKeySecurityScheme::new("header", "X-Key")),
        ),
        (
            "bearer".to_owned(),
            SecurityScheme::HttpAuthSecurityScheme(bearer),
        ),
        (
            "oauth".to_owned(),
            SecurityScheme::Oauth2SecurityScheme(OAuth2SecurityScheme::new(
                OAuthFlows::AuthorizationCode(flow),
            )),
        ),
    ]);
    let mut scopes = StringList::default();
    scopes.list = vec!["read".into()];
    let mut requirement = SecurityRequirement::default();
    requirement.schemes = BTreeMap::from([("oauth".to_owned(), scopes)]);
    card.security_requirements = vec![requirement];
    card.skills = vec![
        AgentSkill::new("s", "Skill", "a skill", vec!["t".into()]).with_examples(vec!["ex".into()]),
    ];
    card.documentation_url = Some("https://docs.example".into());
    card.icon_url = Some("https://icon.example".into());
    assert_eq!(trip::<AgentCard, pb::AgentCard>(card.clone()), card);
}

#[cfg_attr(
    not(a2a_spec),
    ignore = "needs the normative proto at ../shared/spec/a2a.proto beside the checkout"
)]
#[test]
fn the_vendored_proto_is_the_normative_one() {
    let here = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let ours = std::fs::read(here.join("proto/lf/a2a/v1/a2a.proto")).unwrap();
    let spec = here.join("../../../shared/spec/a2a.proto");
    let theirs = std::fs::read(&spec).unwrap_or_else(|e| panic!("{}: {e}", spec.display()));
    assert!(
        ours == theirs,
        "proto/lf/a2a/v1/a2a.proto differs from {}",
        spec.display()
    );
}
