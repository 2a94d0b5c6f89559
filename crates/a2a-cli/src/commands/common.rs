//! Options shared by the client commands, and turning them into a client.

use std::time::Duration;

use a2a_client::{A2aClient, Binding, ClientBuilder, ProtocolVersion};
use anyhow::{Context, bail};
use clap::{Args, ValueEnum};

#[derive(Debug, Clone, Copy, ValueEnum)]
pub(crate) enum ProtocolArg {
    /// A2A v1.0.
    #[value(name = "1.0")]
    V1,
    /// A2A v0.3.
    #[value(name = "0.3")]
    V03,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub(crate) enum BindingArg {
    /// JSON-RPC 2.0.
    Jsonrpc,
    /// HTTP+JSON (REST).
    Rest,
    /// gRPC.
    Grpc,
}

/// How to reach the agent.
#[derive(Debug, Clone, Args)]
pub(crate) struct ConnectArgs {
    /// The agent's URL (its base URL, or its card URL).
    pub(crate) url: String,
    /// Extra header sent with every request, as `Name: value` (repeatable).
    #[arg(long = "header", short = 'H', value_name = "K:V")]
    pub(crate) headers: Vec<String>,
    /// Bearer token (`Authorization: Bearer …`).
    #[arg(long, env = "A2A_TOKEN")]
    pub(crate) token: Option<String>,
    /// API key (`X-API-Key: …`), for agents whose card declares an API-key scheme.
    #[arg(long, env = "A2A_API_KEY")]
    pub(crate) api_key: Option<String>,
    /// Also trust the CA certificates in this PEM file (an agent with a private or
    /// self-signed certificate).
    #[arg(long, value_name = "FILE", env = "A2A_CA_CERT")]
    pub(crate) ca_cert: Option<std::path::PathBuf>,
    /// Protocol version to use (default: 1.0 when the card offers it, else 0.3).
    #[arg(long, value_enum)]
    pub(crate) protocol: Option<ProtocolArg>,
    /// Protocol binding to use (default: JSON-RPC, then gRPC, then REST, as the card offers).
    #[arg(long, value_enum)]
    pub(crate) binding: Option<BindingArg>,
    /// Skip the agent card: talk JSON-RPC to URL directly.
    #[arg(long)]
    pub(crate) no_card: bool,
}

/// The time limit of a command's request/response calls (not of streams).
#[derive(Debug, Clone, Copy, Args)]
pub(crate) struct TimeoutArg {
    /// Time limit of the call, in seconds.
    #[arg(long, default_value_t = 300.0, value_name = "SECONDS")]
    pub(crate) timeout: f64,
}

/// `URL` with `http://` in front when it names no scheme (`localhost:41241/a2a/echo`).
pub(crate) fn with_scheme(url: &str) -> String {
    let url = url.trim();
    if url.contains("://") {
        url.to_owned()
    } else {
        format!("http://{url}")
    }
}

impl ConnectArgs {
    /// The agent's URL, with a scheme.
    pub(crate) fn url(&self) -> String {
        with_scheme(&self.url)
    }

    pub(crate) fn builder(&self, timeout: Option<TimeoutArg>) -> anyhow::Result<ClientBuilder> {
        let mut b = A2aClient::builder().connect_timeout(Duration::from_secs(10));
        if let Some(t) = timeout {
            b = b.timeout(Duration::from_secs_f64(t.timeout.max(0.001)));
        }
        for h in &self.headers {
            let Some((k, v)) = h.split_once(':') else {
                bail!("--header {h:?}: expected `Name: value`");
            };
            b = b.header(k.trim(), v.trim());
        }
        if let Some(t) = &self.token {
            b = b.bearer_token(t);
        }
        if let Some(k) = &self.api_key {
            b = b.api_key("x-api-key", k);
        }
        if let Some(path) = &self.ca_cert {
            let pem = std::fs::read(path)
                .map_err(|e| anyhow::anyhow!("--ca-cert {}: {e}", path.display()))?;
            b = b.root_certificates_pem(&pem);
        }
        if let Some(p) = self.protocol {
            b = b.protocol_version(version(p));
        }
        if let Some(binding) = self.binding {
            b = b.binding(match binding {
                BindingArg::Jsonrpc => Binding::JsonRpc,
                BindingArg::Rest => Binding::HttpJson,
                BindingArg::Grpc => Binding::Grpc,
            });
        }
        Ok(b)
    }

    /// A client for streams and subscriptions (no time limit per call).
    pub(crate) async fn connect(&self) -> anyhow::Result<A2aClient> {
        self.connect_with(None).await
    }

    /// A client whose request/response calls end after `timeout`.
    /// A plain HTTP client that trusts what the agent's client trusts (`--ca-cert`).
    pub(crate) fn http_client(&self) -> anyhow::Result<reqwest::Client> {
        let mut b = reqwest::Client::builder().connect_timeout(Duration::from_secs(10));
        if let Some(path) = &self.ca_cert {
            let pem = std::fs::read(path)
                .map_err(|e| anyhow::anyhow!("--ca-cert {}: {e}", path.display()))?;
            for cert in reqwest::Certificate::from_pem_bundle(&pem)? {
                b = b.add_root_certificate(cert);
            }
        }
        Ok(b.build()?)
    }

    pub(crate) async fn connect_with(
        &self,
        timeout: Option<TimeoutArg>,
    ) -> anyhow::Result<A2aClient> {
        let b = self.builder(timeout)?;
        let url = self.url();
        if self.no_card {
            if matches!(self.binding, Some(BindingArg::Rest | BindingArg::Grpc)) {
                bail!("--no-card talks JSON-RPC; drop --binding, or let the card be read");
            }
            let v = self.protocol.map_or(ProtocolVersion::V1, version);
            return b.endpoint(&url, v).context("cannot set up the client");
        }
        // The client's error names the URL; no context needed.
        Ok(b.connect(&url).await?)
    }
}

fn version(p: ProtocolArg) -> ProtocolVersion {
    match p {
        ProtocolArg::V1 => ProtocolVersion::V1,
        ProtocolArg::V03 => ProtocolVersion::V03,
    }
}
