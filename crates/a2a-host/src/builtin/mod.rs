//! Built-in demo agents: `echo`, `slow`, `multi` and `conformance` (plus `conformance-bare`
//! and `slow-retry`, served only on their own).

mod conformance;
mod echo;
mod multi;
mod slow;

use std::sync::Arc;

use a2a_server::AgentExecutor;
use a2a_types::{AgentCapabilities, AgentCard, AgentProvider, AgentSkill};

pub use conformance::{ConformanceAgent, TCK_REQUIRED_EXTENSION};
pub use echo::EchoAgent;
pub use multi::MultiAgent;
pub use slow::SlowAgent;

/// Names of the built-in agents, in the order `a2a serve` lists them.
pub const NAMES: [&str; 4] = ["echo", "slow", "multi", "conformance"];

/// Built-in agents that are only served alone (`a2a serve --agent NAME`), not by default:
/// `conformance-bare`, the conformance agent without optional capabilities, and
/// `slow-retry`, the slow agent declared safe to re-run after a crash.
pub const SOLO_NAMES: [&str; 2] = ["conformance-bare", "slow-retry"];

/// A built-in agent: its executor and its card (interfaces are filled in when served).
#[derive(Clone)]
pub struct BuiltinAgent {
    /// The agent id (URL segment).
    pub id: &'static str,
    /// The executor.
    pub executor: Arc<dyn AgentExecutor>,
    /// The card template.
    pub card: AgentCard,
    /// The extended card served to `GetExtendedAgentCard`, when the agent declares one.
    pub extended_card: Option<AgentCard>,
}

impl std::fmt::Debug for BuiltinAgent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BuiltinAgent")
            .field("id", &self.id)
            .finish_non_exhaustive()
    }
}

/// The built-in agent called `name`.
pub fn builtin(name: &str) -> Option<BuiltinAgent> {
    let (id, executor, card): (&'static str, Arc<dyn AgentExecutor>, AgentCard) = match name {
        "echo" => ("echo", Arc::new(EchoAgent), echo::card()),
        "slow" => ("slow", Arc::new(SlowAgent::default()), slow::card()),
        "multi" => ("multi", Arc::new(MultiAgent), multi::card()),
        "slow-retry" => (
            "slow-retry",
            Arc::new(SlowAgent {
                retry: true,
                ..SlowAgent::default()
            }),
            slow::retry_card(),
        ),
        "conformance" => (
            "conformance",
            Arc::new(ConformanceAgent::from_env()),
            conformance::card(),
        ),
        "conformance-bare" => (
            "conformance-bare",
            Arc::new(ConformanceAgent::from_env()),
            conformance::bare_card(),
        ),
        _ => return None,
    };
    let extended_card = (card.capabilities.extended_agent_card == Some(true))
        .then(|| conformance::extended_card(&card));
    Some(BuiltinAgent {
        id,
        executor,
        card,
        extended_card,
    })
}

/// A card with the fields every built-in agent shares.
pub(crate) fn base_card(name: &str, description: &str, skills: Vec<AgentSkill>) -> AgentCard {
    let mut card = AgentCard::default();
    card.name = name.to_owned();
    card.description = description.to_owned();
    card.version = env!("CARGO_PKG_VERSION").to_owned();
    card.provider = Some(AgentProvider::new(
        "a2a-rs",
        "https://github.com/a2a-rs/a2a",
    ));
    let mut caps = AgentCapabilities::default();
    caps.streaming = Some(true);
    // Push notifications: whatever the server delivers (the handler fills it in).
    caps.extended_agent_card = Some(false);
    card.capabilities = caps;
    card.default_input_modes = vec!["text/plain".into(), "application/json".into()];
    card.default_output_modes = vec!["text/plain".into(), "application/json".into()];
    card.skills = skills;
    card
}

pub(crate) fn skill(id: &str, name: &str, description: &str, examples: &[&str]) -> AgentSkill {
    AgentSkill::new(id, name, description, vec!["demo".into()])
        .with_examples(examples.iter().map(|s| (*s).to_owned()).collect())
}
