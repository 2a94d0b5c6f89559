//! [`Conversation`]: multi-turn messaging that keeps `contextId` and `taskId` across turns.

use a2a_types::{Message, SendMessageRequest};
use serde_json::{Map, Value};

use crate::client::A2aClient;
use crate::error::ClientError;
use crate::outcome::{FollowToEnd, Outcome, StreamListener};

/// A conversation with one agent.
///
/// - Every turn carries the conversation's `contextId` (from the agent's first answer on).
/// - After an input- or auth-required outcome the next message continues the same task.
/// - After a terminal outcome the next message starts a new task in the same context.
/// - With a thread id, every request carries `metadata.thread_id` (defaulting to the
///   `contextId` once known), for agent hosts that key conversations by thread.
#[derive(Debug, Clone)]
pub struct Conversation {
    client: A2aClient,
    context_id: Option<String>,
    task_id: Option<String>,
    thread_id: Option<String>,
    send_thread_id: bool,
}

impl Conversation {
    /// A new conversation.
    pub fn new(client: A2aClient) -> Self {
        Self {
            client,
            context_id: None,
            task_id: None,
            thread_id: None,
            send_thread_id: false,
        }
    }

    /// Continues an existing context (and task, when it waits for input).
    pub fn resume(client: A2aClient, context_id: Option<String>, task_id: Option<String>) -> Self {
        Self {
            context_id,
            task_id,
            ..Self::new(client)
        }
    }

    /// Sends `metadata.thread_id` with every turn: `thread_id`, or the context id when `None`.
    pub fn with_thread_id(mut self, thread_id: Option<String>) -> Self {
        self.thread_id = thread_id;
        self.send_thread_id = true;
        self
    }

    /// The context id, once known.
    pub fn context_id(&self) -> Option<&str> {
        self.context_id.as_deref()
    }

    /// The task the next message continues, if the last turn was interrupted.
    pub fn pending_task_id(&self) -> Option<&str> {
        self.task_id.as_deref()
    }

    /// The client.
    pub fn client(&self) -> &A2aClient {
        &self.client
    }

    /// Sends a text turn and follows it to its end.
    pub async fn send(&mut self, text: &str) -> Result<Outcome, ClientError> {
        self.send_message(Message::user_text(text)).await
    }

    /// Sends a message turn and follows it to its end.
    pub async fn send_message(&mut self, message: Message) -> Result<Outcome, ClientError> {
        self.send_with_listener(message, FollowToEnd).await
    }

    /// The request for the next turn.
    pub fn request(&self, mut message: Message) -> SendMessageRequest {
        if message.context_id.is_none() {
            message.context_id.clone_from(&self.context_id);
        }
        if message.task_id.is_none() {
            message.task_id.clone_from(&self.task_id);
        }
        let mut req = SendMessageRequest::new(message);
        if self.send_thread_id
            && let Some(thread) = self.thread_id.as_ref().or(self.context_id.as_ref())
        {
            let mut md = Map::new();
            md.insert("thread_id".into(), Value::String(thread.clone()));
            req.metadata = Some(md);
        }
        req
    }

    /// Sends a message turn, with a listener watching its events.
    pub async fn send_with_listener(
        &mut self,
        message: Message,
        listener: impl StreamListener,
    ) -> Result<Outcome, ClientError> {
        let req = self.request(message);
        let outcome = self.client.run_with_listener(req, listener).await?;
        self.observe(&outcome);
        Ok(outcome)
    }

    /// Updates the conversation state from an outcome obtained elsewhere.
    pub fn observe(&mut self, outcome: &Outcome) {
        if let Some(ctx) = outcome.context_id() {
            self.context_id = Some(ctx.to_owned());
        }
        self.task_id = match outcome {
            Outcome::InputRequired(i) | Outcome::AuthRequired(i) => Some(i.task_id().to_owned()),
            // Listening stopped early: the task may still be running; the next message starts
            // a new task rather than racing it.
            _ => None,
        };
    }
}
