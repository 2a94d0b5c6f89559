//! The protocol rules live in `RequestHandler`, so a call that reaches it without passing
//! through any binding (as a future binding's would) is held to them all the same.

use std::sync::Arc;

use a2a_server::push::{PushDelivery, PushSettings};
use a2a_server::types::{
    A2aError, AgentCard, AgentExtension, GetTaskRequest, ListTaskPushNotificationConfigsRequest,
    ListTasksRequest, Message, ProtocolVersion, SendMessageRequest, SubscribeToTaskRequest,
    TaskPushNotificationConfig, TaskPushNotificationConfigRequest,
};
use a2a_server::{
    AgentError, AgentExecutor, CallContext, HandlerConfig, RequestContext, TaskUpdater,
    async_trait, in_memory_handler, in_memory_handler_with,
};

const EXT: &str = "https://example.com/ext/required";

struct Done;

#[async_trait]
impl AgentExecutor for Done {
    async fn execute(&self, _: RequestContext, task: TaskUpdater) -> Result<(), AgentError> {
        Ok(task.complete(None).await?)
    }
}

fn card() -> AgentCard {
    let mut ext = AgentExtension::default();
    ext.uri = EXT.to_owned();
    ext.required = true;
    let mut card = AgentCard::new("Strict", "requires an extension");
    card.capabilities.extensions.push(ext);
    card
}

fn is_extension_required(e: &A2aError) -> bool {
    matches!(e, A2aError::ExtensionSupportRequired { uri } if uri == EXT)
}

#[tokio::test]
async fn every_operation_requires_the_required_extension() {
    let h = in_memory_handler(Arc::new(Done), card());
    let without = Arc::new(CallContext::new(ProtocolVersion::V1));
    let mut with = CallContext::new(ProtocolVersion::V1);
    with.extensions.push(EXT.to_owned());
    let with = Arc::new(with);

    let send = || SendMessageRequest::new(Message::user_text("hi"));
    let err = h.send_message(send(), without.clone()).await.unwrap_err();
    assert!(is_extension_required(&err), "send: {err:?}");
    let err = h.send_streaming_message(send(), without.clone()).await;
    assert!(is_extension_required(&err.unwrap_err()), "stream");
    let err = h.list_tasks(ListTasksRequest::default(), &without).await;
    assert!(is_extension_required(&err.unwrap_err()), "list");
    let err = h.get_task(GetTaskRequest::new("t"), &without).await;
    assert!(is_extension_required(&err.unwrap_err()), "get");
    let err = h
        .subscribe_to_task(SubscribeToTaskRequest::new("t"), &without)
        .await;
    assert!(is_extension_required(&err.unwrap_err()), "subscribe");

    // With the extension, the same calls go through.
    h.send_message(send(), with.clone()).await.unwrap();
    let listed = h
        .list_tasks(ListTasksRequest::default(), &with)
        .await
        .unwrap();
    assert_eq!(listed.tasks.len(), 1);
}

/// The push-config operations of an agent that sends push notifications are held to the
/// required extension like the others.
#[tokio::test]
async fn push_config_operations_require_the_required_extension() {
    let mut card = card();
    card.capabilities.push_notifications = Some(true);
    let mut config = HandlerConfig::default();
    config.push = Some(PushDelivery::new(PushSettings::default()).unwrap());
    let h = in_memory_handler_with(Arc::new(Done), card, config);
    let without = Arc::new(CallContext::new(ProtocolVersion::V1));
    let mut webhook = TaskPushNotificationConfig::default();
    webhook.task_id = Some("t".into());
    webhook.url = "https://hooks.example.com/a2a".into();
    let err = h.create_push_config(webhook, &without).await.unwrap_err();
    assert!(is_extension_required(&err), "create: {err:?}");
    let one = || TaskPushNotificationConfigRequest::new("t", "c");
    let err = h.get_push_config(one(), &without).await.unwrap_err();
    assert!(is_extension_required(&err), "get: {err:?}");
    let err = h.delete_push_config(one(), &without).await.unwrap_err();
    assert!(is_extension_required(&err), "delete: {err:?}");
    let err = h
        .list_push_configs(ListTaskPushNotificationConfigsRequest::new("t"), &without)
        .await
        .unwrap_err();
    assert!(is_extension_required(&err), "list: {err:?}");
}

#[tokio::test]
async fn capabilities_the_card_leaves_unset_are_what_the_server_does() {
    let h = in_memory_handler(
        Arc::new(Done),
        AgentCard::new("Plain", "no capabilities set"),
    );
    let caps = &h.card().capabilities;
    assert_eq!(caps.streaming, Some(true));
    assert_eq!(caps.push_notifications, Some(false));
    assert_eq!(caps.extended_agent_card, Some(false));

    let mut card = AgentCard::new("No streams", "streaming turned off");
    card.capabilities.streaming = Some(false);
    let h = in_memory_handler(Arc::new(Done), card).with_extended_card(AgentCard::new("x", "y"));
    assert_eq!(h.card().capabilities.streaming, Some(false));
    assert_eq!(h.card().capabilities.extended_agent_card, Some(true));
    let call = Arc::new(CallContext::new(ProtocolVersion::V1));
    let err = h
        .send_streaming_message(SendMessageRequest::new(Message::user_text("hi")), call)
        .await
        .unwrap_err();
    assert!(
        matches!(err, A2aError::UnsupportedOperation { .. }),
        "{err:?}"
    );
    assert!(h.get_extended_agent_card().is_ok());
}
