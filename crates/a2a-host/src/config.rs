//! The host's config file (`a2a serve --config agents.toml`): host settings and the agents
//! to serve, each with its card fields and a kind (`builtin`, `exec`, `llm`, `remote`).
//!
//! ```toml
//! [host]
//! port = 41241
//! store = "sqlite:a2a.db"
//!
//! [[agents]]
//! id = "wc"
//! kind = "exec"
//! name = "Word count"
//! description = "Counts the words of your message"
//! command = ["wc", "-w"]
//! ```
//!
//! Unknown keys are refused, and every error names the file, the line and the reason.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use a2a_server::AgentExecutor;
use a2a_types::{AgentCard, AgentProvider, AgentSkill};
use serde::Deserialize;

use crate::builtin::{self, BuiltinAgent};
use crate::exec::{ExecAgent, OutputMode};
use crate::llm::LlmAgent;
use crate::remote::RemoteAgent;

/// A config file, read and checked.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct HostConfig {
    /// Host settings (command-line options override them).
    #[serde(default)]
    pub host: HostSettings,
    /// The agents, each served at `/a2a/{id}`.
    #[serde(default)]
    pub agents: Vec<AgentConfig>,
}

/// `[host]`: where and how to serve.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct HostSettings {
    /// Address to listen on.
    pub listen_host: Option<String>,
    /// Port to listen on.
    pub port: Option<u16>,
    /// Public base URL advertised in cards.
    pub public_url: Option<String>,
    /// Task store URL (`sqlite:PATH`, `postgres://…`, `memory`).
    pub store: Option<String>,
    /// Bindings to serve (`jsonrpc`, `rest`, `grpc`).
    pub bindings: Option<Vec<String>>,
    /// Largest accepted request body, in bytes.
    pub max_body_bytes: Option<usize>,
    /// Port of its own for gRPC.
    pub grpc_port: Option<u16>,
    /// `false` switches A2A off for the whole host: no agent is served (their routes answer
    /// 404, `GET /agents` lists none).
    pub a2a: Option<bool>,
}

/// `[[agents]]`: one agent.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct AgentConfig {
    /// URL segment: the agent is served at `/a2a/{id}`.
    pub id: toml::Spanned<String>,
    /// `builtin`, `exec`, `llm` or `remote`.
    pub kind: toml::Spanned<String>,
    /// `false` switches A2A off for this agent: it is checked but not served (its routes
    /// answer 404).
    pub a2a: Option<bool>,
    /// Card: name (default: the id).
    pub name: Option<String>,
    /// Card: description.
    pub description: Option<String>,
    /// Card: version (default `0.1.0`).
    pub version: Option<String>,
    /// Card: input media types (default `text/plain`).
    pub input_modes: Option<Vec<String>>,
    /// Card: output media types (default `text/plain`).
    pub output_modes: Option<Vec<String>>,
    /// Card: skills.
    #[serde(default)]
    pub skills: Vec<SkillConfig>,
    /// Card: provider.
    pub provider: Option<ProviderConfig>,
    /// `builtin`: which built-in agent (default: the id).
    pub builtin: Option<String>,
    /// `exec`: the program and its arguments.
    pub command: Option<Vec<String>>,
    /// `exec`: `text` (stdout is the answer, streamed) or `jsonl` (one JSON event per line).
    pub output: Option<String>,
    /// `exec`: working directory (default: the config file's folder).
    pub workdir: Option<PathBuf>,
    /// `exec`: extra environment variables.
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// `exec`, `llm`: seconds a run may take (default 300).
    pub timeout_seconds: Option<f64>,
    /// `exec`: seconds between SIGTERM and SIGKILL on cancel (default 5).
    pub kill_grace_seconds: Option<f64>,
    /// `remote`: the other agent's URL.
    pub url: Option<String>,
    /// `remote`: the binding to use (`jsonrpc`, `rest`, `grpc`; default: as its card offers).
    pub binding: Option<String>,
    /// `remote`: the protocol version to speak (`1.0` or `0.3`; default: 1.0 when offered).
    pub protocol: Option<String>,
    /// `llm`: the OpenAI-compatible base URL (`https://api.openai.com/v1`).
    pub base_url: Option<String>,
    /// `llm`: the model.
    pub model: Option<String>,
    /// `llm`: the environment variable holding the API key.
    pub api_key_env: Option<String>,
    /// `llm`: the system prompt.
    pub system_prompt: Option<String>,
    /// `llm`: extra request fields (`temperature`, `max_tokens`, …).
    pub parameters: Option<toml::Table>,
    /// `llm`: stream tokens (default true).
    pub stream: Option<bool>,
}

/// A skill of the card.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct SkillConfig {
    /// Skill id.
    pub id: String,
    /// Name.
    pub name: String,
    /// Description.
    #[serde(default)]
    pub description: String,
    /// Tags.
    #[serde(default)]
    pub tags: Vec<String>,
    /// Example prompts.
    #[serde(default)]
    pub examples: Vec<String>,
}

/// The card's provider.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct ProviderConfig {
    /// Organization.
    pub organization: String,
    /// URL.
    #[serde(default)]
    pub url: String,
}

/// A config that cannot be used, with where and why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{file}:{line}: {reason}")]
#[non_exhaustive]
pub struct ConfigError {
    /// The file.
    pub file: String,
    /// The line (1-based).
    pub line: usize,
    /// What is wrong.
    pub reason: String,
}

/// An agent built from the config: its id, executor and card.
#[derive(Clone)]
#[non_exhaustive]
pub struct ConfiguredAgent {
    /// URL segment.
    pub id: String,
    /// The executor.
    pub executor: Arc<dyn AgentExecutor>,
    /// The card template.
    pub card: AgentCard,
    /// The extended card, for built-in agents that have one.
    pub extended_card: Option<AgentCard>,
}

impl std::fmt::Debug for ConfiguredAgent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ConfiguredAgent")
            .field("id", &self.id)
            .finish_non_exhaustive()
    }
}

impl ConfiguredAgent {
    /// The agent `executor` at `/a2a/{id}`, described by `card`.
    pub fn new(id: impl Into<String>, executor: Arc<dyn AgentExecutor>, card: AgentCard) -> Self {
        Self {
            id: id.into(),
            executor,
            card,
            extended_card: None,
        }
    }
}

impl From<BuiltinAgent> for ConfiguredAgent {
    fn from(b: BuiltinAgent) -> Self {
        Self {
            id: b.id.to_owned(),
            executor: b.executor,
            card: b.card,
            extended_card: b.extended_card,
        }
    }
}

/// 1-based line of byte `offset` in `source`.
fn line_of(source: &str, offset: usize) -> usize {
    source[..offset.min(source.len())]
        .bytes()
        .filter(|b| *b == b'\n')
        .count()
        + 1
}

impl HostConfig {
    /// Reads and checks `path`.
    pub fn load(path: &Path) -> Result<Self, ConfigError> {
        let file = path.display().to_string();
        let source = std::fs::read_to_string(path).map_err(|e| ConfigError {
            file: file.clone(),
            line: 0,
            reason: format!("cannot read it: {e}"),
        })?;
        Self::parse(&source, &file)
    }

    /// Parses and checks `source` (read from `file`, named in errors).
    pub fn parse(source: &str, file: &str) -> Result<Self, ConfigError> {
        let config: Self = toml::from_str(source).map_err(|e| ConfigError {
            file: file.to_owned(),
            line: e.span().map_or(0, |s| line_of(source, s.start)),
            reason: e.message().to_owned(),
        })?;
        let fail = |at: usize, reason: String| ConfigError {
            file: file.to_owned(),
            line: line_of(source, at),
            reason,
        };
        let mut seen = BTreeMap::new();
        for agent in &config.agents {
            let id = agent.id.get_ref();
            let at = agent.id.span().start;
            let valid_id = !id.is_empty()
                && id
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
            if !valid_id {
                return Err(fail(
                    at,
                    format!("agent id {id:?}: use letters, digits, '-' and '_' only"),
                ));
            }
            if let Some(first) = seen.insert(id.clone(), at) {
                return Err(fail(
                    at,
                    format!(
                        "agent id {id:?} is used twice (first on line {})",
                        line_of(source, first)
                    ),
                ));
            }
            agent.check().map_err(|reason| {
                fail(agent.kind.span().start, format!("agent {id:?}: {reason}"))
            })?;
        }
        Ok(config)
    }

    /// The agents to serve, built (those with A2A switched off are left out). `base` is the
    /// folder relative paths are read from.
    pub fn build_agents(&self, base: &Path) -> Vec<ConfiguredAgent> {
        if self.host.a2a == Some(false) {
            return Vec::new();
        }
        self.agents
            .iter()
            .filter(|a| a.a2a != Some(false))
            .filter_map(|a| a.build(base))
            .collect()
    }

    /// The ids of the agents whose A2A is switched off (all of them when the host's is).
    pub fn switched_off(&self) -> Vec<&str> {
        self.agents
            .iter()
            .filter(|a| self.host.a2a == Some(false) || a.a2a == Some(false))
            .map(|a| a.id.get_ref().as_str())
            .collect()
    }
}

impl AgentConfig {
    /// The kind-specific rules (see [`HostConfig::parse`]).
    fn check(&self) -> Result<(), String> {
        let kind = self.kind.get_ref().as_str();
        let only = |allowed: &[&str]| -> Result<(), String> {
            let fields: [(&str, bool); 16] = [
                ("builtin", self.builtin.is_some()),
                ("command", self.command.is_some()),
                ("output", self.output.is_some()),
                ("workdir", self.workdir.is_some()),
                ("env", !self.env.is_empty()),
                ("timeout_seconds", self.timeout_seconds.is_some()),
                ("kill_grace_seconds", self.kill_grace_seconds.is_some()),
                ("url", self.url.is_some()),
                ("binding", self.binding.is_some()),
                ("protocol", self.protocol.is_some()),
                ("base_url", self.base_url.is_some()),
                ("model", self.model.is_some()),
                ("api_key_env", self.api_key_env.is_some()),
                ("system_prompt", self.system_prompt.is_some()),
                ("parameters", self.parameters.is_some()),
                ("stream", self.stream.is_some()),
            ];
            match fields
                .iter()
                .find(|(name, set)| *set && !allowed.contains(name))
            {
                Some((name, _)) => Err(format!("`{name}` does not apply to kind {kind:?}")),
                None => Ok(()),
            }
        };
        match kind {
            "builtin" => {
                only(&["builtin"])?;
                let name = self.builtin.as_deref().unwrap_or(self.id.get_ref());
                if builtin::builtin(name).is_none() {
                    let known: Vec<&str> = builtin::NAMES
                        .iter()
                        .chain(&builtin::SOLO_NAMES)
                        .copied()
                        .collect();
                    return Err(format!(
                        "no built-in agent {name:?} (there are: {})",
                        known.join(", ")
                    ));
                }
            }
            "exec" => {
                only(&[
                    "command",
                    "output",
                    "workdir",
                    "env",
                    "timeout_seconds",
                    "kill_grace_seconds",
                ])?;
                match &self.command {
                    Some(c) if !c.is_empty() && !c[0].is_empty() => {}
                    _ => return Err("`command` is required: the program and its arguments".into()),
                }
                if let Some(o) = &self.output
                    && OutputMode::parse(o).is_none()
                {
                    return Err(format!("`output` {o:?}: use \"text\" or \"jsonl\""));
                }
                for (name, v) in [
                    ("timeout_seconds", self.timeout_seconds),
                    ("kill_grace_seconds", self.kill_grace_seconds),
                ] {
                    if v.is_some_and(|s| !(s.is_finite() && s > 0.0)) {
                        return Err(format!("`{name}` must be a positive number of seconds"));
                    }
                }
            }
            "remote" => {
                only(&["url", "binding", "protocol"])?;
                if let Some(p) = &self.protocol
                    && a2a_client::ProtocolVersion::parse(p).is_none()
                {
                    return Err(format!("`protocol` {p:?}: use \"1.0\" or \"0.3\""));
                }
                let url = self.url.as_deref().unwrap_or_default();
                if !(url.starts_with("http://") || url.starts_with("https://")) {
                    return Err("`url` is required: the other agent's http(s) URL".into());
                }
                if let Some(b) = &self.binding
                    && a2a_client::Binding::parse(b).is_none()
                {
                    return Err(format!("`binding` {b:?}: use jsonrpc, rest or grpc"));
                }
            }
            "llm" => {
                only(&[
                    "base_url",
                    "model",
                    "api_key_env",
                    "system_prompt",
                    "parameters",
                    "stream",
                    "timeout_seconds",
                ])?;
                let url = self.base_url.as_deref().unwrap_or_default();
                if !(url.starts_with("http://") || url.starts_with("https://")) {
                    return Err(
                        "`base_url` is required: the endpoint's http(s) base URL, like https://api.openai.com/v1"
                            .into(),
                    );
                }
                if self.model.as_deref().unwrap_or_default().is_empty() {
                    return Err("`model` is required".into());
                }
                if self
                    .timeout_seconds
                    .is_some_and(|s| !(s.is_finite() && s > 0.0))
                {
                    return Err("`timeout_seconds` must be a positive number of seconds".into());
                }
            }
            other => {
                return Err(format!(
                    "unknown kind {other:?} (use builtin, exec, llm or remote)"
                ));
            }
        }
        Ok(())
    }

    fn card(&self, defaults: Option<&AgentCard>) -> AgentCard {
        let mut card = defaults.cloned().unwrap_or_else(|| {
            let mut c = AgentCard::new(self.id.get_ref().clone(), String::new());
            c.default_input_modes = vec!["text/plain".into()];
            c.default_output_modes = vec!["text/plain".into()];
            c
        });
        if let Some(n) = &self.name {
            card.name = n.clone();
        }
        if let Some(d) = &self.description {
            card.description = d.clone();
        }
        if let Some(v) = &self.version {
            card.version = v.clone();
        }
        if let Some(m) = &self.input_modes {
            card.default_input_modes = m.clone();
        }
        if let Some(m) = &self.output_modes {
            card.default_output_modes = m.clone();
        }
        if !self.skills.is_empty() {
            card.skills = self
                .skills
                .iter()
                .map(|s| {
                    AgentSkill::new(&s.id, &s.name, &s.description, s.tags.clone())
                        .with_examples(s.examples.clone())
                })
                .collect();
        }
        if let Some(p) = &self.provider {
            let mut provider = AgentProvider::default();
            provider.organization = p.organization.clone();
            provider.url = p.url.clone();
            card.provider = Some(provider);
        }
        card
    }

    /// The agent (checked by [`check`](Self::check) first).
    fn build(&self, base: &Path) -> Option<ConfiguredAgent> {
        let id = self.id.get_ref().clone();
        match self.kind.get_ref().as_str() {
            "builtin" => {
                let b = builtin::builtin(self.builtin.as_deref().unwrap_or(&id))?;
                let card = self.card(Some(&b.card));
                Some(ConfiguredAgent {
                    id,
                    executor: b.executor,
                    card,
                    extended_card: b.extended_card,
                })
            }
            "exec" => {
                let mut agent = ExecAgent::new(self.command.clone()?);
                agent.output = self
                    .output
                    .as_deref()
                    .and_then(OutputMode::parse)
                    .unwrap_or_default();
                agent.workdir = Some(match &self.workdir {
                    Some(d) if d.is_absolute() => d.clone(),
                    Some(d) => base.join(d),
                    None => base.to_path_buf(),
                });
                agent.env = self.env.clone();
                if let Some(s) = self.timeout_seconds {
                    agent.timeout = Duration::from_secs_f64(s);
                }
                if let Some(s) = self.kill_grace_seconds {
                    agent.kill_grace = Duration::from_secs_f64(s);
                }
                let mut card = self.card(None);
                card.capabilities.streaming = Some(true);
                Some(ConfiguredAgent {
                    id,
                    executor: Arc::new(agent),
                    card,
                    extended_card: None,
                })
            }
            "llm" => {
                let mut agent = LlmAgent::new(self.base_url.clone()?, self.model.clone()?);
                // Read at start: a key missing from the environment is sent as no key.
                agent.api_key = self
                    .api_key_env
                    .as_deref()
                    .and_then(|name| std::env::var(name).ok());
                agent.system_prompt = self.system_prompt.clone();
                agent.stream = self.stream.unwrap_or(true);
                if let Some(params) = &self.parameters {
                    agent.parameters = params
                        .iter()
                        .filter_map(|(k, v)| Some((k.clone(), serde_json::to_value(v).ok()?)))
                        .collect();
                }
                if let Some(s) = self.timeout_seconds {
                    agent.timeout = Duration::from_secs_f64(s);
                }
                let mut card = self.card(None);
                card.capabilities.streaming = Some(true);
                Some(ConfiguredAgent {
                    id,
                    executor: Arc::new(agent),
                    card,
                    extended_card: None,
                })
            }
            "remote" => {
                let binding = self.binding.as_deref().and_then(a2a_client::Binding::parse);
                let mut agent = RemoteAgent::new(self.url.clone()?, binding);
                if let Some(v) = self
                    .protocol
                    .as_deref()
                    .and_then(a2a_client::ProtocolVersion::parse)
                {
                    agent = agent.with_protocol_version(v);
                }
                let mut card = self.card(None);
                card.capabilities.streaming = Some(true);
                Some(ConfiguredAgent {
                    id,
                    executor: Arc::new(agent),
                    card,
                    extended_card: None,
                })
            }
            _ => None,
        }
    }
}
