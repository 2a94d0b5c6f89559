//! Client errors.

use a2a_types::A2aError;

/// What went wrong talking to an agent.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ClientError {
    /// The connection failed, or reading the response did. Its text names the URL once and
    /// the cause in words ("connection refused", "timed out", "TLS: …"), with a hint where
    /// one helps; the HTTP stack's own error, whose text repeats the URL, is kept in `error`
    /// rather than given as the source, so an error chain prints the cause once.
    #[error("{url}: {cause}")]
    Http {
        /// The URL.
        url: String,
        /// The cause, in words (see [`describe_http_error`]).
        cause: String,
        /// The HTTP stack's error (its type is not part of this API).
        error: Box<dyn std::error::Error + Send + Sync>,
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

    pub(crate) fn http(url: &str, error: reqwest::Error) -> Self {
        Self::Http {
            url: url.to_owned(),
            cause: describe_http_error(&error),
            error: Box::new(error),
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

fn chain<'a>(
    err: &'a (dyn std::error::Error + 'static),
) -> impl Iterator<Item = &'a (dyn std::error::Error + 'static)> {
    std::iter::successors(Some(err), |e| e.source())
}

/// What went wrong with an HTTP call, in words, without the URL (the caller names it once):
/// `connection refused (nothing listens there: is the server running?)`, `timed out`, `cannot resolve the host
/// name (…)`, `TLS: invalid peer certificate: UnknownIssuer`, `connection closed by the
/// server`; else the innermost cause's own text.
pub fn describe_http_error(err: &(dyn std::error::Error + 'static)) -> String {
    use std::io::ErrorKind;
    let innermost = chain(err).last().unwrap_or(err);
    let root = innermost.to_string();
    for e in chain(err) {
        if let Some(io) = e.downcast_ref::<std::io::Error>() {
            match io.kind() {
                ErrorKind::ConnectionRefused => {
                    return "connection refused (nothing listens there: is the server running?)"
                        .into();
                }
                ErrorKind::TimedOut => return "timed out".into(),
                ErrorKind::ConnectionReset => return "connection reset by the server".into(),
                ErrorKind::ConnectionAborted | ErrorKind::UnexpectedEof => {
                    return "connection closed by the server".into();
                }
                // rustls reports a failed handshake as invalid data carrying its own error.
                ErrorKind::InvalidData if io.get_ref().is_some() => return format!("TLS: {root}"),
                _ => {}
            }
        }
    }
    let text = |needle: &str| chain(err).any(|e| e.to_string().contains(needle));
    if err
        .downcast_ref::<reqwest::Error>()
        .is_some_and(reqwest::Error::is_timeout)
    {
        return "timed out".into();
    }
    if text("dns error") {
        return format!("cannot resolve the host name ({root})");
    }
    if text("invalid peer certificate") || text("tls handshake") {
        return format!("TLS: {root}");
    }
    if text("connection closed before message completed") || text("IncompleteMessage") {
        return "connection closed by the server before it answered".into();
    }
    // reqwest's own text repeats the URL: say only what lies under it.
    let reqwest_level = err.downcast_ref::<reqwest::Error>().is_some();
    if reqwest_level && innermost.downcast_ref::<reqwest::Error>().is_some() {
        // No cause under it (a body that is not valid, a redirect loop, …).
        return strip_url(&root);
    }
    root
}

/// reqwest's text without its ` for url (…)` part.
fn strip_url(text: &str) -> String {
    match text.find(" for url (") {
        Some(i) => text[..i].to_owned(),
        None => text.to_owned(),
    }
}
