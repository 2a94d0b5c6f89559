//! What a call carries into the runtime: the binding it came in on, its protocol version and
//! headers, and the authenticated caller.

use std::sync::Arc;

use a2a_types::{Binding, ProtocolVersion};

/// Per-call information taken from the transport (headers, negotiated version).
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct CallContext {
    /// The protocol version the request used.
    pub protocol_version: ProtocolVersion,
    /// Extensions requested with `A2A-Extensions`.
    pub extensions: Vec<String>,
    /// The tenant of the request.
    pub tenant: Option<String>,
    /// The HTTP request headers (for agents that need credentials or tracing headers).
    pub headers: http::HeaderMap,
    /// Where a resumed subscription starts: after this event (SSE `Last-Event-ID`).
    pub last_event_id: Option<u64>,
    /// The binding the request came in on (`None`: called from code in this process).
    pub binding: Option<Binding>,
    /// The network address of the caller (none for calls from this process).
    pub peer: Option<std::net::SocketAddr>,
    /// The authenticated caller (none when the agent requires no authentication).
    pub principal: Option<Principal>,
}

impl CallContext {
    /// A context for `protocol_version` with no headers.
    pub fn new(protocol_version: ProtocolVersion) -> Self {
        Self {
            protocol_version,
            ..Self::default()
        }
    }
}

/// An authenticated caller: who owns the tasks it creates.
///
/// A principal is qualified by the authenticator that vouched for it: its [`id`](Self::id)
/// is `{source}:{name}` (`token:alice` for a bearer token from configuration, `apikey:ci` for
/// an API key, `jwt:{iss}:{sub}` for a JWT), so equal names from different sources are
/// different callers. The id is what a task records as its owner.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Principal {
    id: Arc<str>,
    /// Where the name starts in `id` (after `{source}:`).
    name_at: usize,
}

impl Principal {
    /// The principal `name` vouched for by `source` (`token`, `apikey`, `jwt:{iss}`, or a
    /// custom authenticator's own word).
    pub fn new(source: &str, name: &str) -> Self {
        Self {
            id: Arc::from(format!("{source}:{name}")),
            name_at: source.len() + 1,
        }
    }

    /// The qualified id, `{source}:{name}`: what tasks record as their owner.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// The id, shared.
    pub fn shared_id(&self) -> &Arc<str> {
        &self.id
    }

    /// Who vouched for it (`token`, `apikey`, `jwt:{iss}`, …).
    pub fn source(&self) -> &str {
        &self.id[..self.name_at - 1]
    }

    /// The name its source gave it (the principal of a static credential, a JWT's `sub`).
    pub fn name(&self) -> &str {
        &self.id[self.name_at..]
    }
}

impl std::fmt::Display for Principal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.id)
    }
}
