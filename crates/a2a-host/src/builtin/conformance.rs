//! `conformance`: the test agent of the A2A TCK scenarios (`shared/conformance/*.feature`),
//! keyed on the prefix of the incoming `messageId`, so external conformance suites can drive
//! the server through the protocol alone. Unknown prefixes complete the task with
//! "Hello from TCK" (the scenarios' default).

use std::time::Duration;

use a2a_server::{AgentError, AgentExecutor, RequestContext, TaskUpdater};
use a2a_types::{AgentCard, Artifact, Message, Part, Role, TaskState};
use async_trait::async_trait;
use serde_json::json;

use super::{base_card, skill};

/// The TCK test agent.
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
    base_card(
        "A2A TCK Conformance Agent",
        "The test agent of the A2A TCK: behaviour is selected by the messageId prefix (tck-complete-task, tck-artifact-text, tck-input-required, tck-stream-001, ...).",
        vec![skill(
            "tck",
            "TCK scenarios",
            "Conformance test behaviours",
            &["hello"],
        )],
    )
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
        } else {
            u.complete(Some(u.agent_text("Hello from TCK"))).await?;
        }
        Ok(())
    }
}
