//! One `[[agents]]` table: the fields every agent has, a tagged type per kind with its own
//! fields, checked values, and the agent built from it.

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

/// `[[agents]]`: one agent: its id, whether A2A is on for it, its card fields, and its
/// kind with the settings of that kind. Read from the table by [`HostConfig::parse`](super::HostConfig::parse): serde
/// checks the kind's fields (an unknown or misplaced one is refused), and the newtypes below
/// check their values.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct AgentConfig {
    /// URL segment: the agent is served at `/a2a/{id}`.
    pub id: String,
    /// `false` switches A2A off for this agent: it is checked but not served (its routes
    /// answer 404).
    pub a2a: Option<bool>,
    /// Its card's fields.
    pub card: CardConfig,
    /// What it is.
    pub kind: AgentKind,
}

/// The card fields an agent of any kind may set.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct CardConfig {
    /// Name (default: the id).
    pub name: Option<String>,
    /// Description.
    pub description: Option<String>,
    /// Version (default `0.1.0`).
    pub version: Option<String>,
    /// Input media types (default `text/plain`).
    pub input_modes: Option<Vec<String>>,
    /// Output media types (default `text/plain`).
    pub output_modes: Option<Vec<String>>,
    /// Skills.
    #[serde(default)]
    pub skills: Vec<SkillConfig>,
    /// Provider.
    pub provider: Option<ProviderConfig>,
}

/// An agent's kind (`kind = "…"`) and the settings only that kind has.
#[derive(Debug, Clone, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
#[non_exhaustive]
pub enum AgentKind {
    /// One of the built-in agents.
    Builtin(BuiltinConfig),
    /// A command run per message.
    Exec(ExecConfig),
    /// An OpenAI-compatible chat-completions endpoint.
    Llm(LlmConfig),
    /// Another A2A agent, forwarded to.
    Remote(RemoteConfig),
}

impl AgentKind {
    /// `builtin`, `exec`, `llm` or `remote`.
    pub fn name(&self) -> &'static str {
        match self {
            Self::Builtin(_) => "builtin",
            Self::Exec(_) => "exec",
            Self::Llm(_) => "llm",
            Self::Remote(_) => "remote",
        }
    }
}

/// `kind = "builtin"`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct BuiltinConfig {
    /// Which built-in agent (default: the id).
    pub builtin: Option<String>,
}

/// `kind = "exec"`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct ExecConfig {
    /// The program and its arguments.
    pub command: Command,
    /// `text` (stdout is the answer, streamed) or `jsonl` (one JSON event per line).
    #[serde(default)]
    pub output: Output,
    /// Working directory (default: the config file's folder).
    pub workdir: Option<PathBuf>,
    /// Extra environment variables.
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// Seconds a run may take (default 300).
    pub timeout_seconds: Option<Seconds>,
    /// Seconds between SIGTERM and SIGKILL on cancel (default 5).
    pub kill_grace_seconds: Option<Seconds>,
}

/// `kind = "llm"`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct LlmConfig {
    /// The OpenAI-compatible base URL (`https://api.openai.com/v1`).
    pub base_url: HttpUrl,
    /// The model.
    pub model: NonEmpty,
    /// The environment variable holding the API key.
    pub api_key_env: Option<String>,
    /// The system prompt.
    pub system_prompt: Option<String>,
    /// Extra request fields (`temperature`, `max_tokens`, …).
    pub parameters: Option<toml::Table>,
    /// Stream tokens (default true).
    pub stream: Option<bool>,
    /// Seconds a run may take (default 300).
    pub timeout_seconds: Option<Seconds>,
}

/// `kind = "remote"`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct RemoteConfig {
    /// The other agent's URL.
    pub url: HttpUrl,
    /// The binding to use (`jsonrpc`, `rest`, `grpc`; default: as its card offers).
    pub binding: Option<BindingName>,
    /// The protocol version to speak (`1.0` or `0.3`; default: 1.0 when offered).
    pub protocol: Option<ProtocolName>,
}

/// Checked values: each refuses what it cannot be when it is read.
macro_rules! checked {
    ($(#[$doc:meta])* $name:ident($inner:ty), $what:literal, |$v:ident| $ok:expr) => {
        $(#[$doc])*
        #[derive(Debug, Clone, PartialEq, Deserialize)]
        #[serde(try_from = $what)]
        pub struct $name(pub $inner);

        impl TryFrom<$inner> for $name {
            type Error = String;

            fn try_from($v: $inner) -> Result<Self, String> {
                $ok.map(Self)
            }
        }
    };
}

checked!(
    /// The program and its arguments: at least a program.
    Command(Vec<String>), "Vec<String>", |v| if v.first().is_some_and(|p| !p.is_empty()) {
        Ok(v)
    } else {
        Err("`command` is required: the program and its arguments".to_owned())
    }
);

checked!(
    /// A positive, finite number of seconds.
    Seconds(f64), "f64", |v| if v.is_finite() && v > 0.0 {
        Ok(v)
    } else {
        Err(format!("{v}: must be a positive number of seconds"))
    }
);

checked!(
    /// An `http://` or `https://` URL.
    HttpUrl(String), "String", |v| if v.starts_with("http://") || v.starts_with("https://") {
        Ok(v)
    } else {
        Err(format!("{v:?}: must be an http(s) URL"))
    }
);

checked!(
    /// A string that is not empty.
    NonEmpty(String), "String", |v| if v.is_empty() {
        Err("must not be empty".to_owned())
    } else {
        Ok(v)
    }
);

checked!(
    /// A binding name: `jsonrpc`, `rest` or `grpc`.
    BindingName(String), "String", |v| match a2a_client::Binding::parse(&v) {
        Some(_) => Ok(v),
        None => Err(format!("{v:?}: use jsonrpc, rest or grpc")),
    }
);

checked!(
    /// A protocol version: `1.0` or `0.3`.
    ProtocolName(String), "String", |v| match a2a_client::ProtocolVersion::parse(&v) {
        Some(_) => Ok(v),
        None => Err(format!("{v:?}: use \"1.0\" or \"0.3\"")),
    }
);

/// How an `exec` agent's stdout is read.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum Output {
    /// Stdout is the answer, streamed.
    #[default]
    Text,
    /// One JSON event per line.
    #[serde(alias = "json-lines")]
    Jsonl,
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

/// The fields every kind has; the rest of an agent's table is its kind's.
const CARD_FIELDS: [&str; 7] = [
    "name",
    "description",
    "version",
    "input_modes",
    "output_modes",
    "skills",
    "provider",
];

/// Every kind's own fields, to tell a misplaced field from a mistyped one.
const KIND_FIELDS: [(&str, &[&str]); 4] = [
    ("builtin", &["builtin"]),
    (
        "exec",
        &[
            "command",
            "output",
            "workdir",
            "env",
            "timeout_seconds",
            "kill_grace_seconds",
        ],
    ),
    (
        "llm",
        &[
            "base_url",
            "model",
            "api_key_env",
            "system_prompt",
            "parameters",
            "stream",
            "timeout_seconds",
        ],
    ),
    ("remote", &["url", "binding", "protocol"]),
];

/// The name in backquotes that a serde message names first (`unknown field `x``).
fn quoted(message: &str) -> Option<&str> {
    let start = message.find('`')? + 1;
    let len = message[start..].find('`')?;
    Some(&message[start..start + len])
}

/// A kind's fields refused by serde, said in this file's words: which field, and why.
fn kind_error(id: &str, kind: &str, message: &str) -> (Option<Place>, String) {
    let named = quoted(message).map(str::to_owned);
    let reason = if message.starts_with("unknown variant") {
        format!("unknown kind {kind:?} (use builtin, exec, llm or remote)")
    } else if message.starts_with("unknown field") {
        let field = named.as_deref().unwrap_or_default();
        match KIND_FIELDS
            .iter()
            .find(|(_, fields)| fields.contains(&field))
        {
            Some(_) => format!("`{field}` does not apply to kind {kind:?}"),
            None => format!("unknown field `{field}`"),
        }
    } else if message.starts_with("missing field") {
        format!("`{}` is required", named.as_deref().unwrap_or_default())
    } else {
        message.to_owned()
    };
    // A missing field has no line of its own: the agent's `kind` says which are needed. A
    // refused value (the checked types say `{value}: why`) is found by its value.
    let key = if message.starts_with("missing field") || message.starts_with("unknown variant") {
        Some(Place::Key("kind".to_owned()))
    } else if let Some(field) = named {
        Some(Place::Key(field))
    } else {
        message
            .split_once(": ")
            .map(|(value, _)| Place::Value(value.to_owned()))
    };
    (key, format!("agent {id:?}: {reason}"))
}

/// What an error is about, to find its line: a key of the agent's table, or a value in it.
pub(super) enum Place {
    Key(String),
    Value(String),
}

impl AgentConfig {
    /// Reads one `[[agents]]` table: the error names the key it is about (if any, to find
    /// its line) and says what is wrong.
    pub(super) fn from_table(mut table: toml::Table) -> Result<Self, (Option<Place>, String)> {
        let id = match table.remove("id") {
            Some(toml::Value::String(id)) => id,
            Some(_) => {
                return Err((
                    Some(Place::Key("id".into())),
                    "`id` must be a string".into(),
                ));
            }
            None => return Err((None, "every agent needs an `id`".into())),
        };
        let a2a = match table.remove("a2a") {
            None => None,
            Some(toml::Value::Boolean(b)) => Some(b),
            Some(_) => {
                return Err((
                    Some(Place::Key("a2a".into())),
                    format!("agent {id:?}: `a2a` must be true or false"),
                ));
            }
        };
        let kind_name = match table.get("kind") {
            Some(toml::Value::String(k)) => k.clone(),
            _ => {
                return Err((
                    Some(Place::Key("id".into())),
                    format!("agent {id:?}: `kind` is required (builtin, exec, llm or remote)"),
                ));
            }
        };
        let mut card = toml::Table::new();
        for field in CARD_FIELDS {
            if let Some(v) = table.remove(field) {
                card.insert(field.to_owned(), v);
            }
        }
        let card: CardConfig =
            toml::Value::Table(card)
                .try_into()
                .map_err(|e: toml::de::Error| {
                    let key = quoted(e.message()).map(|k| Place::Key(k.to_owned()));
                    (key, format!("agent {id:?}: {}", e.message()))
                })?;
        let kind: AgentKind = toml::Value::Table(table)
            .try_into()
            .map_err(|e: toml::de::Error| kind_error(&id, &kind_name, e.message()))?;
        Ok(Self {
            id,
            a2a,
            card,
            kind,
        })
    }

    fn card(&self, defaults: Option<&AgentCard>) -> AgentCard {
        let c = &self.card;
        let mut card = defaults.cloned().unwrap_or_else(|| {
            let mut card = AgentCard::new(self.id.clone(), String::new());
            card.default_input_modes = vec!["text/plain".into()];
            card.default_output_modes = vec!["text/plain".into()];
            card
        });
        if let Some(n) = &c.name {
            card.name = n.clone();
        }
        if let Some(d) = &c.description {
            card.description = d.clone();
        }
        if let Some(v) = &c.version {
            card.version = v.clone();
        }
        if let Some(m) = &c.input_modes {
            card.default_input_modes = m.clone();
        }
        if let Some(m) = &c.output_modes {
            card.default_output_modes = m.clone();
        }
        if !c.skills.is_empty() {
            card.skills = c
                .skills
                .iter()
                .map(|s| {
                    AgentSkill::new(&s.id, &s.name, &s.description, s.tags.clone())
                        .with_examples(s.examples.clone())
                })
                .collect();
        }
        if let Some(p) = &c.provider {
            let mut provider = AgentProvider::default();
            provider.organization = p.organization.clone();
            provider.url = p.url.clone();
            card.provider = Some(provider);
        }
        card
    }

    /// The agent (its config checked when it was read).
    pub(super) fn build(&self, base: &Path) -> Option<ConfiguredAgent> {
        let id = self.id.clone();
        let (executor, mut card): (Arc<dyn AgentExecutor>, AgentCard) = match &self.kind {
            AgentKind::Builtin(b) => {
                let b = builtin::builtin(b.builtin.as_deref().unwrap_or(&id))?;
                let card = self.card(Some(&b.card));
                return Some(ConfiguredAgent {
                    id,
                    executor: b.executor,
                    card,
                    extended_card: b.extended_card,
                });
            }
            AgentKind::Exec(e) => {
                let mut agent = ExecAgent::new(e.command.0.clone());
                agent.output = match e.output {
                    Output::Text => OutputMode::Text,
                    Output::Jsonl => OutputMode::JsonLines,
                };
                agent.workdir = Some(match &e.workdir {
                    Some(d) if d.is_absolute() => d.clone(),
                    Some(d) => base.join(d),
                    None => base.to_path_buf(),
                });
                agent.env = e.env.clone();
                if let Some(s) = &e.timeout_seconds {
                    agent.timeout = Duration::from_secs_f64(s.0);
                }
                if let Some(s) = &e.kill_grace_seconds {
                    agent.kill_grace = Duration::from_secs_f64(s.0);
                }
                (Arc::new(agent), self.card(None))
            }
            AgentKind::Llm(l) => {
                let mut agent = LlmAgent::new(l.base_url.0.clone(), l.model.0.clone());
                // Read at start: a key missing from the environment is sent as no key.
                agent.api_key = l
                    .api_key_env
                    .as_deref()
                    .and_then(|name| std::env::var(name).ok());
                agent.system_prompt = l.system_prompt.clone();
                agent.stream = l.stream.unwrap_or(true);
                if let Some(params) = &l.parameters {
                    agent.parameters = params
                        .iter()
                        .filter_map(|(k, v)| Some((k.clone(), serde_json::to_value(v).ok()?)))
                        .collect();
                }
                if let Some(s) = &l.timeout_seconds {
                    agent.timeout = Duration::from_secs_f64(s.0);
                }
                (Arc::new(agent), self.card(None))
            }
            AgentKind::Remote(r) => {
                let binding = r
                    .binding
                    .as_ref()
                    .and_then(|b| a2a_client::Binding::parse(&b.0));
                let mut agent = RemoteAgent::new(r.url.0.clone(), binding);
                if let Some(v) = r
                    .protocol
                    .as_ref()
                    .and_then(|p| a2a_client::ProtocolVersion::parse(&p.0))
                {
                    agent = agent.with_protocol_version(v);
                }
                (Arc::new(agent), self.card(None))
            }
        };
        card.capabilities.streaming = Some(true);
        Some(ConfiguredAgent {
            id,
            executor,
            card,
            extended_card: None,
        })
    }
}
