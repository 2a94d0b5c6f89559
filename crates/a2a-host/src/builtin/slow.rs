//! `slow`: SUBMITTED → WORKING → artifact `progress` → waits (cancellably) → artifact
//! `result` → COMPLETED. Canceled while waiting, the task ends CANCELED with only the
//! `progress` artifact.

use std::time::Duration;

use a2a_server::{AgentError, AgentExecutor, RequestContext, TaskUpdater};
use a2a_types::{AgentCard, Artifact};
use async_trait::async_trait;

use super::{base_card, skill};

/// The slow agent.
#[derive(Debug, Clone, Copy)]
pub struct SlowAgent {
    /// How long it works between the two artifacts, unless the message is a number of
    /// seconds.
    pub delay: Duration,
    /// Declares the agent [safe to retry](AgentExecutor::safe_to_retry): a task abandoned by
    /// a crash is re-run instead of failed (`slow-retry`).
    pub retry: bool,
}

impl Default for SlowAgent {
    fn default() -> Self {
        Self {
            delay: Duration::from_secs(5),
            retry: false,
        }
    }
}

pub(crate) fn card() -> AgentCard {
    base_card(
        "Slow Agent",
        "Works for 5 seconds (or the number of seconds in your message) between a progress artifact and a result artifact; cancel it to stop early.",
        vec![skill(
            "slow",
            "Slow work",
            "A long-running, cancellable task",
            &["go", "1.5"],
        )],
    )
}

pub(crate) fn retry_card() -> AgentCard {
    let mut card = card();
    card.name = "Slow Agent (safe to retry)".to_owned();
    card.description = "The slow agent, declared safe to re-run: a task left running by a server that crashed is run again from its message on a live server instead of failed.".to_owned();
    card
}

#[async_trait]
impl AgentExecutor for SlowAgent {
    fn safe_to_retry(&self) -> bool {
        self.retry
    }

    async fn execute(&self, ctx: RequestContext, updater: TaskUpdater) -> Result<(), AgentError> {
        let delay = ctx
            .user_text()
            .trim()
            .parse::<f64>()
            .ok()
            .filter(|s| s.is_finite() && *s >= 0.0 && *s <= 3600.0)
            .map_or(self.delay, Duration::from_secs_f64);
        updater.submit().await?;
        updater
            .start_work(Some(updater.agent_text("working")))
            .await?;
        let progress = Artifact::text("progress", format!("started; finishing in {delay:?}"));
        updater.artifact_chunk(progress, false, false).await?;
        tokio::select! {
            () = ctx.cancellation.cancelled() => return Ok(()),
            () = tokio::time::sleep(delay) => {}
        }
        updater
            .add_artifact(Artifact::text("result", "done"))
            .await?;
        updater
            .complete(Some(updater.agent_text("finished")))
            .await?;
        Ok(())
    }
}
