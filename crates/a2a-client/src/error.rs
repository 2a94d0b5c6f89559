//! Client errors.

use a2a_types::A2aError;

/// What went wrong talking to an agent.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ClientError {
    /// The connection failed, or reading the response did.
    #[error("HTTP request to {url} failed")]
    Http {
        /// The URL.
        url: String,
        /// The cause (from the HTTP stack; its type is not part of this API).
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// The server answered with an unexpected HTTP status.
    #[error("{url} answered HTTP {status}: {body}")]
    Status {
        /// The URL.
        url: String,
        /// The status code.
        status: u16,
        /// The start of the body.
        body: String,
    },
    /// The agent answered with a protocol error. Its text is the agent's own
    /// `error.message` (spec §9.5); `error` is the typed error, as far as the code and the
    /// `ErrorInfo` details tell it.
    #[error("{message}")]
    Protocol {
        /// The error, typed.
        error: A2aError,
        /// The agent's message.
        message: String,
    },
    /// The response does not follow the protocol.
    #[error("invalid response from the agent: {0}")]
    InvalidResponse(String),
    /// No agent card at the URL (neither `agent-card.json` nor the legacy `agent.json`).
    #[error("no agent card found at {url}{}", hint.as_deref().map(|h| format!(": {h}")).unwrap_or_default())]
    CardNotFound {
        /// The URL asked for.
        url: String,
        /// What the server said (its 404 body's message, and the agents it lists).
        hint: Option<String>,
    },
    /// The card offers no interface this client speaks.
    #[error(
        "the agent card offers no supported interface (this client speaks JSON-RPC 1.0 and 0.3, HTTP+JSON 1.0 and gRPC 1.0): {0}"
    )]
    NoSupportedInterface(String),
    /// The agent does not support this operation (per its card or protocol version).
    #[error("not supported by this agent: {0}")]
    Unsupported(String),
    /// A URL could not be parsed.
    #[error("invalid URL {0:?}")]
    InvalidUrl(String),
    /// A header name or value is invalid.
    #[error("invalid header {0:?}")]
    InvalidHeader(String),
    /// Root certificates given to trust could not be read.
    #[error("invalid root certificates: {0}")]
    InvalidCertificate(String),
    /// TLS could not be set up for a connection.
    #[error("cannot set up TLS for {url}")]
    Tls {
        /// The address.
        url: String,
        /// The cause.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
}

impl ClientError {
    /// The protocol error, if the agent returned one.
    pub fn protocol(&self) -> Option<&A2aError> {
        match self {
            Self::Protocol { error, .. } => Some(error),
            _ => None,
        }
    }

    /// A protocol error received from an agent, keeping the agent's message.
    pub fn from_jsonrpc(err: a2a_types::jsonrpc::JsonRpcError) -> Self {
        let message = err.message.trim().to_owned();
        let error = A2aError::from_jsonrpc(err);
        let message = if message.is_empty() {
            error.to_string()
        } else {
            message
        };
        Self::Protocol { error, message }
    }

    /// Fills in the task id of a task error whose agent did not say which task it was about
    /// (only this project's servers send it in `ErrorInfo` metadata).
    pub(crate) fn about_task(mut self, id: &str) -> Self {
        if let Self::Protocol { error, .. } = &mut self {
            match error {
                A2aError::TaskNotFound { task_id }
                | A2aError::TaskNotCancelable { task_id, .. }
                    if task_id.is_empty() =>
                {
                    id.clone_into(task_id);
                }
                _ => {}
            }
        }
        self
    }

    pub(crate) fn http(url: &str, source: reqwest::Error) -> Self {
        Self::Http {
            url: url.to_owned(),
            source: Box::new(source),
        }
    }

    /// An unexpected HTTP status, with the start of the body.
    pub(crate) fn status(url: &str, status: u16, bytes: &[u8]) -> Self {
        let body = String::from_utf8_lossy(&bytes[..bytes.len().min(300)]).into_owned();
        Self::Status {
            url: url.to_owned(),
            status,
            body,
        }
    }
}
