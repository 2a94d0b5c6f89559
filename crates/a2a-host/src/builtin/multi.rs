//! `multi`: streams three artifacts (one of them in appended chunks), asks for input once
//! (INPUT_REQUIRED), then completes after the follow-up, echoing it.

use a2a_server::{AgentError, AgentExecutor, RequestContext, TaskUpdater};
use a2a_types::{AgentCard, Artifact, Part};
use async_trait::async_trait;
use serde_json::json;

use super::{base_card, skill};

/// The multi-turn, multi-artifact agent.
#[derive(Debug, Clone, Copy, Default)]
pub struct MultiAgent;

pub(crate) fn card() -> AgentCard {
    base_card(
        "Multi Agent",
        "Streams three artifacts (one in chunks), asks you a question, and completes by echoing your answer.",
        vec![skill(
            "multi",
            "Multi-turn",
            "Artifacts, chunks and an input-required turn",
            &["start"],
        )],
    )
}

#[async_trait]
impl AgentExecutor for MultiAgent {
    async fn execute(&self, ctx: RequestContext, updater: TaskUpdater) -> Result<(), AgentError> {
        if ctx.task.is_some() {
            let answer = ctx.user_text();
            updater.start_work(None).await?;
            updater
                .add_artifact(Artifact::text("echo", answer.clone()))
                .await?;
            updater
                .complete(Some(updater.agent_text(format!("You said: {answer}"))))
                .await?;
            return Ok(());
        }
        updater
            .start_work(Some(updater.agent_text("writing")))
            .await?;
        updater
            .add_artifact(Artifact::text("summary", "Three artifacts follow."))
            .await?;
        let chunks = ["Once ", "upon ", "a time."];
        let mut story = updater.artifact_writer("story");
        for (i, chunk) in chunks.iter().enumerate() {
            if i + 1 == chunks.len() {
                story.last_text(*chunk).await?;
            } else {
                story.append_text(*chunk).await?;
            }
        }
        let data = Part::data(json!({"artifacts": 3, "chunks": chunks.len()}))
            .with_media_type("application/json");
        updater
            .add_artifact(Artifact::new(a2a_types::new_id(), vec![data]).with_name("stats"))
            .await?;
        updater
            .require_input(Some(updater.agent_text("What should I echo back?")))
            .await?;
        Ok(())
    }
}
