//! Client errors.

use a2a_types::A2aError;

/// What went wrong talking to an agent.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ClientError {
    /// The connection failed, or reading the response did.
    #[error("HTTP request to {url} failed: {source}")]
    Http {
        /// The URL.
        url: String,
        /// The cause.
        #[source]
        source: reqwest::Error,
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
    /// The agent answered with a protocol error.
    #[error("the agent returned an error: {0}")]
    Protocol(#[source] A2aError),
    /// The response does not follow the protocol.
    #[error("invalid response from the agent: {0}")]
    InvalidResponse(String),
    /// No agent card at the URL (neither `agent-card.json` nor the legacy `agent.json`).
    #[error("no agent card found at {0}")]
    CardNotFound(String),
    /// The card offers no interface this client speaks (JSON-RPC, v1.0 or v0.3).
    #[error(
        "the agent card offers no supported interface (this client speaks JSON-RPC 1.0 and 0.3): {0}"
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
}

impl ClientError {
    /// The protocol error, if the agent returned one.
    pub fn protocol(&self) -> Option<&A2aError> {
        match self {
            Self::Protocol(e) => Some(e),
            _ => None,
        }
    }

    pub(crate) fn http(url: &str, source: reqwest::Error) -> Self {
        Self::Http {
            url: url.to_owned(),
            source,
        }
    }
}
