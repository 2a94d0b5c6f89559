//! `conformance`: the test agent of both official A2A conformance suites (TCK), driven
//! through the protocol alone.
//!
//! - A `messageId` starting with `tck-` (or `test-resubscribe-message-id`) follows the v1.0
//!   suite's scenarios, selected by prefix (see [`ConformanceAgent`]); an unknown `tck-`
//!   prefix completes the task with "Hello from TCK", the scenarios' default.
//! - Any other message (the v0.3 suite sends plain messages) keeps its task open in
//!   `INPUT_REQUIRED`, recording the turn in the status message, so the task can be continued
//!   with its `taskId` any number of times, read with `historyLength`, and canceled.

use std::time::Duration;

use a2a_server::{AgentError, AgentExecutor, RequestContext, TaskUpdater};
use a2a_types::{AgentCard, AgentExtension, Artifact, Message, Part, Role, TaskState};
use async_trait::async_trait;
use serde_json::json;

use super::{base_card, skill};

/// The TCK test agent. Its v1.0 scenarios, by `messageId` prefix:
///
/// | prefix | behaviour |
/// |---|---|
/// | `tck-complete-task` (and any other `tck-`) | COMPLETED with the status message "Hello from TCK" |
/// | `tck-artifact-text` / `-file` / `-file-url` / `-data` | COMPLETED with one artifact of that part kind |
/// | `tck-message-response` | a direct Message reply, no task |
/// | `tck-input-required` | INPUT_REQUIRED |
/// | `tck-reject-task` | REJECTED ("rejected") |
/// | `tck-stream-001`, `-003`, `-ordering-001`, `-artifact-text`, `-artifact-file` | WORKING, one artifact, COMPLETED |
/// | `tck-stream-002` | COMPLETED |
/// | `tck-stream-artifact-chunked` | WORKING, an artifact in two chunks (`append`, `lastChunk`), COMPLETED |
/// | `test-resubscribe-message-id` | WORKING for twice `TCK_STREAMING_TIMEOUT`, cancellably, then COMPLETED |
#[derive(Debug, Clone, Copy)]
pub struct ConformanceAgent {
    /// `TCK_STREAMING_TIMEOUT`: the long-running scenario works for twice this long.
    pub streaming_timeout: Duration,
}

impl Default for ConformanceAgent {
    fn default() -> Self {
        Self {
            streaming_timeout: Duration::from_secs(2),
        }
    }
}

impl ConformanceAgent {
    /// Reads `TCK_STREAMING_TIMEOUT` (seconds, default 2).
    pub fn from_env() -> Self {
        let secs = std::env::var("TCK_STREAMING_TIMEOUT")
            .ok()
            .and_then(|v| v.trim().parse::<f64>().ok())
            .filter(|s| s.is_finite() && *s >= 0.0)
            .unwrap_or(2.0);
        Self {
            streaming_timeout: Duration::from_secs_f64(secs),
        }
    }
}

pub(crate) fn card() -> AgentCard {
    let mut card = base_card(
        "A2A TCK Conformance Agent",
        "The test agent of the A2A conformance suites: messageIds starting with tck- select a v1.0 scenario (tck-complete-task, tck-artifact-text, tck-input-required, tck-stream-001, ...); any other message keeps its task open in INPUT_REQUIRED, one turn at a time.",
        vec![skill(
            "tck",
            "TCK scenarios",
            "Conformance test behaviours",
            &["hello"],
        )],
    );
    // Declare every capability the server implements, so the suites test each of them.
    card.capabilities.extended_agent_card = Some(true);
    card
}

/// The extension `conformance-bare` requires: the URI the v1.0 suite looks for (CORE-CAP-004).
pub const TCK_REQUIRED_EXTENSION: &str = "urn:a2a:tck:required-extension";

/// `conformance-bare`: the same agent declaring no optional capability (no streaming, no
/// push notifications, no extended card) and requiring an extension, for the suite's tests
/// of what a server must refuse when a capability is absent (CORE-CAP-001 to -004). Every other test needs the
/// full agent, so this one is only run for those.
pub(crate) fn bare_card() -> AgentCard {
    let mut card = card();
    card.name = "A2A TCK Conformance Agent (no optional capabilities)".into();
    card.capabilities.streaming = Some(false);
    card.capabilities.extended_agent_card = Some(false);
    card.capabilities.push_notifications = Some(false);
    let mut ext = AgentExtension::default();
    ext.uri = TCK_REQUIRED_EXTENSION.into();
    ext.description = Some("Required by this agent, so that calls without it are refused".into());
    ext.required = true;
    card.capabilities.extensions = vec![ext];
    card
}

/// The extended card: the public card plus a skill only callers of `GetExtendedAgentCard` see.
pub(crate) fn extended_card(public: &AgentCard) -> AgentCard {
    let mut card = public.clone();
    card.skills.push(skill(
        "tck-extended",
        "Extended card skill",
        "Listed only in the extended agent card",
        &["hello"],
    ));
    card
}

fn text_artifact(text: &str) -> Artifact {
    Artifact::new(a2a_types::new_id(), vec![Part::text(text)])
}

fn file_artifact() -> Artifact {
    let part = Part::raw(b"Generated file content".to_vec())
        .with_filename("output.txt")
        .with_media_type("text/plain");
    Artifact::new(a2a_types::new_id(), vec![part]).with_name("output.txt")
}

impl ConformanceAgent {
    /// WORKING, one artifact, COMPLETED: the shape of most streaming scenarios.
    async fn stream_one(u: &TaskUpdater, artifact: Artifact) -> Result<(), AgentError> {
        u.start_work(None).await?;
        u.add_artifact(artifact).await?;
        u.complete(None).await?;
        Ok(())
    }

    /// Completes with an artifact (the non-streaming artifact scenarios).
    async fn complete_with(u: &TaskUpdater, artifact: Artifact) -> Result<(), AgentError> {
        u.add_artifact(artifact).await?;
        u.complete(None).await?;
        Ok(())
    }
}

#[async_trait]
impl AgentExecutor for ConformanceAgent {
    async fn execute(&self, ctx: RequestContext, u: TaskUpdater) -> Result<(), AgentError> {
        let id = ctx.message.message_id.as_str();
        let is = |prefix: &str| id.starts_with(prefix);
        if is("tck-stream-artifact-chunked") {
            let chunk_id = "chunked-artifact";
            u.start_work(None).await?;
            u.artifact_chunk(
                Artifact::new(chunk_id, vec![Part::text("chunk-1 ")]),
                false,
                false,
            )
            .await?;
            u.artifact_chunk(
                Artifact::new(chunk_id, vec![Part::text("chunk-2")]),
                true,
                true,
            )
            .await?;
            u.complete(None).await?;
        } else if is("tck-stream-artifact-text") {
            Self::stream_one(&u, text_artifact("Streamed text content")).await?;
        } else if is("tck-stream-artifact-file") {
            Self::stream_one(&u, file_artifact()).await?;
        } else if is("tck-stream-ordering-001") {
            Self::stream_one(&u, text_artifact("Ordered output")).await?;
        } else if is("tck-stream-001") {
            Self::stream_one(&u, text_artifact("Stream hello from TCK")).await?;
        } else if is("tck-stream-002") {
            u.complete(None).await?;
        } else if is("tck-stream-003") {
            Self::stream_one(&u, text_artifact("Stream task lifecycle")).await?;
        } else if is("test-resubscribe-message-id") {
            u.start_work(None).await?;
            tokio::select! {
                () = ctx.cancellation.cancelled() => return Ok(()),
                () = tokio::time::sleep(self.streaming_timeout * 2) => {}
            }
            u.complete(None).await?;
        } else if is("tck-artifact-file-url") {
            let part = Part::url("https://example.com/output.txt")
                .with_filename("output.txt")
                .with_media_type("text/plain");
            Self::complete_with(&u, Artifact::new(a2a_types::new_id(), vec![part])).await?;
        } else if is("tck-artifact-file") {
            Self::complete_with(&u, file_artifact()).await?;
        } else if is("tck-artifact-text") {
            Self::complete_with(&u, text_artifact("Generated text content")).await?;
        } else if is("tck-artifact-data") {
            let part = Part::data(json!({"key": "value", "count": 42}))
                .with_media_type("application/json");
            Self::complete_with(&u, Artifact::new(a2a_types::new_id(), vec![part])).await?;
        } else if is("tck-message-response") && ctx.task.is_none() {
            u.reply(Message::new(
                Role::Agent,
                vec![Part::text("Direct message response")],
            ))
            .await?;
        } else if is("tck-input-required") {
            u.update_status(
                TaskState::InputRequired,
                Some(u.agent_text("Input required")),
            )
            .await?;
        } else if is("tck-reject-task") {
            u.reject(Some(u.agent_text("rejected"))).await?;
        } else if is("tck-") {
            u.complete(Some(u.agent_text("Hello from TCK"))).await?;
        } else {
            // The v0.3 suite's plain messages: keep the task open, one turn at a time.
            let turn = 1 + ctx.task.as_ref().map_or(0, |t| {
                t.history.iter().filter(|m| m.role == Role::User).count()
            });
            let text = format!(
                "Turn {turn} received: {}. Continue this task with its taskId, or cancel it.",
                ctx.user_text()
            );
            u.require_input(Some(u.agent_text(text))).await?;
        }
        Ok(())
    }
}
