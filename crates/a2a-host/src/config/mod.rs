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
use std::path::Path;

use serde::Deserialize;

use crate::builtin;

mod agent;

use agent::Place;
pub use agent::{
    AgentConfig, AgentKind, BindingName, BuiltinConfig, CardConfig, Command, ConfiguredAgent,
    ExecConfig, HttpUrl, LlmConfig, NonEmpty, Output, ProtocolName, ProviderConfig, RemoteConfig,
    Seconds, SkillConfig,
};

/// A config file, read and checked.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct HostConfig {
    /// Host settings (command-line options override them).
    #[serde(default)]
    pub host: HostSettings,
    /// The agents, each served at `/a2a/{id}`.
    #[serde(skip)]
    pub agents: Vec<AgentConfig>,
    /// The agent tables as written (read into [`Self::agents`] by [`Self::parse`]).
    #[serde(default, rename = "agents")]
    raw_agents: Vec<toml::Spanned<toml::Table>>,
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

/// A config that cannot be used, with where and why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{file}{}: {reason}", if *line > 0 { format!(":{line}") } else { String::new() })]
#[non_exhaustive]
pub struct ConfigError {
    /// The file.
    pub file: String,
    /// The line (1-based; 0 when the error is about the file as a whole, one that cannot be
    /// read, say).
    pub line: usize,
    /// What is wrong.
    pub reason: String,
}

/// What an I/O error says, without the OS's error number.
fn io_reason(e: &std::io::Error) -> String {
    match e.kind() {
        std::io::ErrorKind::NotFound => "no such file".to_owned(),
        std::io::ErrorKind::PermissionDenied => "permission denied".to_owned(),
        _ => e.to_string(),
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
            reason: format!("cannot read it: {}", io_reason(&e)),
        })?;
        Self::parse(&source, &file)
    }

    /// Parses and checks `source` (read from `file`, named in errors).
    pub fn parse(source: &str, file: &str) -> Result<Self, ConfigError> {
        let mut config: Self = toml::from_str(source).map_err(|e| ConfigError {
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
        for raw in std::mem::take(&mut config.raw_agents) {
            let span = raw.span();
            let table = raw.into_inner();
            let at = |key: &str| key_offset(source, span.clone(), key).unwrap_or(span.start);
            let agent = AgentConfig::from_table(table).map_err(|(place, reason)| {
                let offset = match place {
                    Some(Place::Key(k)) => at(&k),
                    Some(Place::Value(v)) => {
                        value_offset(source, span.clone(), &v).unwrap_or_else(|| at("kind"))
                    }
                    None => span.start,
                };
                fail(offset, reason)
            })?;
            let id = &agent.id;
            let valid_id = !id.is_empty()
                && id
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
            if !valid_id {
                return Err(fail(
                    at("id"),
                    format!("agent id {id:?}: use letters, digits, '-' and '_' only"),
                ));
            }
            if let Some(first) = seen.insert(id.clone(), at("id")) {
                return Err(fail(
                    at("id"),
                    format!(
                        "agent id {id:?} is used twice (first on line {})",
                        line_of(source, first)
                    ),
                ));
            }
            if let AgentKind::Builtin(b) = &agent.kind {
                let name = b.builtin.as_deref().unwrap_or(id);
                if builtin::builtin(name).is_none() {
                    let known: Vec<&str> = builtin::NAMES
                        .iter()
                        .chain(&builtin::SOLO_NAMES)
                        .copied()
                        .collect();
                    return Err(fail(
                        at("kind"),
                        format!(
                            "agent {id:?}: no built-in agent {name:?} (there are: {})",
                            known.join(", ")
                        ),
                    ));
                }
            }
            config.agents.push(agent);
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
            .map(|a| a.id.as_str())
            .collect()
    }
}

/// Where `key` is set in the agent table that starts at `span`: the offset of the line,
/// up to the next table header, that sets it.
fn key_offset(source: &str, span: std::ops::Range<usize>, key: &str) -> Option<usize> {
    let part = source.get(span.start..)?;
    let mut offset = span.start;
    for (i, line) in part.split_inclusive('\n').enumerate() {
        let trimmed = line.trim_start();
        if i > 0 && trimmed.starts_with("[[agents]]") {
            break;
        }
        if let Some(rest) = trimmed.strip_prefix(key)
            && rest.trim_start().starts_with('=')
        {
            return Some(offset + (line.len() - trimmed.len()));
        }
        offset += line.len();
    }
    None
}

/// Where `value` is written in the agent table that starts at `span`: the offset of the
/// first line, up to the next table header, that holds it after an `=`.
fn value_offset(source: &str, span: std::ops::Range<usize>, value: &str) -> Option<usize> {
    let part = source.get(span.start..)?;
    let mut offset = span.start;
    for (i, line) in part.split_inclusive('\n').enumerate() {
        let trimmed = line.trim_start();
        if i > 0 && trimmed.starts_with("[[agents]]") {
            break;
        }
        if line
            .split_once('=')
            .is_some_and(|(_, after)| after.contains(value))
        {
            return Some(offset + (line.len() - trimmed.len()));
        }
        offset += line.len();
    }
    None
}
