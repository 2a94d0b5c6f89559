//! The agent card and its parts.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::serde_util;

/// Protocol binding names used in [`AgentInterface::protocol_binding`].
pub mod binding {
    /// JSON-RPC 2.0 over HTTP.
    pub const JSONRPC: &str = "JSONRPC";
    /// HTTP+JSON (REST).
    pub const HTTP_JSON: &str = "HTTP+JSON";
    /// gRPC.
    pub const GRPC: &str = "GRPC";

    /// A protocol binding: what a card's interface offers, what a client speaks, what a
    /// request came in on.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
    #[non_exhaustive]
    pub enum Binding {
        /// JSON-RPC 2.0 over HTTP (v1.0 and v0.3).
        JsonRpc,
        /// HTTP+JSON, REST (v1.0).
        HttpJson,
        /// gRPC (v1.0).
        Grpc,
    }

    impl Binding {
        /// The card's `protocolBinding` name (`JSONRPC`, `HTTP+JSON`, `GRPC`).
        pub fn name(self) -> &'static str {
            match self {
                Self::JsonRpc => JSONRPC,
                Self::HttpJson => HTTP_JSON,
                Self::Grpc => GRPC,
            }
        }

        /// The name in spans and metric labels: `jsonrpc`, `http_json` or `grpc`.
        pub fn as_str(self) -> &'static str {
            match self {
                Self::JsonRpc => "jsonrpc",
                Self::HttpJson => "http_json",
                Self::Grpc => "grpc",
            }
        }

        /// Parses `jsonrpc` / `rest` / `grpc` (or the card's names, any case).
        pub fn parse(s: &str) -> Option<Self> {
            match s.to_ascii_lowercase().as_str() {
                "jsonrpc" | "json-rpc" => Some(Self::JsonRpc),
                "rest" | "http+json" | "http_json" | "httpjson" => Some(Self::HttpJson),
                "grpc" => Some(Self::Grpc),
                _ => None,
            }
        }
    }
}

/// Describes an agent: identity, endpoints, capabilities and skills.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct AgentCard {
    /// Human-readable name.
    #[serde(default)]
    pub name: String,
    /// What the agent does.
    #[serde(default)]
    pub description: String,
    /// Endpoints, in preference order.
    #[serde(
        default,
        alias = "supported_interfaces",
        deserialize_with = "serde_util::vec::deserialize"
    )]
    pub supported_interfaces: Vec<AgentInterface>,
    /// Who provides the agent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider: Option<AgentProvider>,
    /// The agent's version.
    #[serde(default)]
    pub version: String,
    /// Documentation link.
    #[serde(
        default,
        alias = "documentation_url",
        skip_serializing_if = "Option::is_none",
        deserialize_with = "serde_util::opt_string::deserialize"
    )]
    pub documentation_url: Option<String>,
    /// Optional features.
    #[serde(default)]
    pub capabilities: AgentCapabilities,
    /// Security schemes by name.
    #[serde(
        default,
        alias = "security_schemes",
        skip_serializing_if = "BTreeMap::is_empty"
    )]
    pub security_schemes: BTreeMap<String, SecurityScheme>,
    /// Which schemes a request must satisfy.
    #[serde(
        default,
        alias = "security_requirements",
        skip_serializing_if = "Vec::is_empty",
        deserialize_with = "serde_util::vec::deserialize"
    )]
    pub security_requirements: Vec<SecurityRequirement>,
    /// Media types accepted by default.
    #[serde(
        default,
        alias = "default_input_modes",
        deserialize_with = "serde_util::vec::deserialize"
    )]
    pub default_input_modes: Vec<String>,
    /// Media types produced by default.
    #[serde(
        default,
        alias = "default_output_modes",
        deserialize_with = "serde_util::vec::deserialize"
    )]
    pub default_output_modes: Vec<String>,
    /// What the agent can do.
    #[serde(default, deserialize_with = "serde_util::vec::deserialize")]
    pub skills: Vec<AgentSkill>,
    /// JWS signatures of the card.
    #[serde(
        default,
        skip_serializing_if = "Vec::is_empty",
        deserialize_with = "serde_util::vec::deserialize"
    )]
    pub signatures: Vec<AgentCardSignature>,
    /// Icon link.
    #[serde(
        default,
        alias = "icon_url",
        skip_serializing_if = "Option::is_none",
        deserialize_with = "serde_util::opt_string::deserialize"
    )]
    pub icon_url: Option<String>,
}

impl AgentCard {
    /// A card with a name and a description, version `1.0.0`, and `text/plain` as its
    /// default input and output mode. The server that serves it fills in the interfaces and
    /// the capabilities it does not set (see `a2a_server::RequestHandler::new`).
    pub fn new(name: impl Into<String>, description: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            description: description.into(),
            version: "1.0.0".to_owned(),
            default_input_modes: vec!["text/plain".to_owned()],
            default_output_modes: vec!["text/plain".to_owned()],
            ..Self::default()
        }
    }

    /// Sets the agent's version.
    pub fn with_version(mut self, version: impl Into<String>) -> Self {
        self.version = version.into();
        self
    }

    /// Adds a skill.
    pub fn with_skill(mut self, skill: AgentSkill) -> Self {
        self.skills.push(skill);
        self
    }

    /// Sets the provider.
    pub fn with_provider(mut self, provider: AgentProvider) -> Self {
        self.provider = Some(provider);
        self
    }

    /// Sets the media types the agent accepts and produces by default.
    pub fn with_default_modes(mut self, input: &[&str], output: &[&str]) -> Self {
        self.default_input_modes = input.iter().map(|m| (*m).to_owned()).collect();
        self.default_output_modes = output.iter().map(|m| (*m).to_owned()).collect();
        self
    }
}

/// One endpoint of an agent.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct AgentInterface {
    /// Endpoint URL (`host:port` for gRPC).
    #[serde(default)]
    pub url: String,
    /// `JSONRPC`, `GRPC`, `HTTP+JSON` or a custom binding URI.
    #[serde(default, alias = "protocol_binding")]
    pub protocol_binding: String,
    /// Tenant to copy into every request.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "serde_util::opt_string::deserialize"
    )]
    pub tenant: Option<String>,
    /// Protocol version, `Major.Minor`.
    #[serde(default, alias = "protocol_version")]
    pub protocol_version: String,
}

impl AgentInterface {
    /// An interface without a tenant.
    pub fn new(
        url: impl Into<String>,
        protocol_binding: impl Into<String>,
        protocol_version: impl Into<String>,
    ) -> Self {
        Self {
            url: url.into(),
            protocol_binding: protocol_binding.into(),
            tenant: None,
            protocol_version: protocol_version.into(),
        }
    }
}

/// The agent's provider.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct AgentProvider {
    /// Provider website.
    #[serde(default)]
    pub url: String,
    /// Organization name.
    #[serde(default)]
    pub organization: String,
}

impl AgentProvider {
    /// A provider.
    pub fn new(organization: impl Into<String>, url: impl Into<String>) -> Self {
        Self {
            url: url.into(),
            organization: organization.into(),
        }
    }
}

/// Optional features the agent supports.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct AgentCapabilities {
    /// `SendStreamingMessage` and `SubscribeToTask`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub streaming: Option<bool>,
    /// Push notification configs.
    #[serde(
        default,
        alias = "push_notifications",
        skip_serializing_if = "Option::is_none"
    )]
    pub push_notifications: Option<bool>,
    /// Protocol extensions.
    #[serde(
        default,
        skip_serializing_if = "Vec::is_empty",
        deserialize_with = "serde_util::vec::deserialize"
    )]
    pub extensions: Vec<AgentExtension>,
    /// `GetExtendedAgentCard`.
    #[serde(
        default,
        alias = "extended_agent_card",
        skip_serializing_if = "Option::is_none"
    )]
    pub extended_agent_card: Option<bool>,
}

/// A protocol extension the agent supports.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct AgentExtension {
    /// Extension URI.
    #[serde(default)]
    pub uri: String,
    /// What the agent uses it for.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "serde_util::opt_string::deserialize"
    )]
    pub description: Option<String>,
    /// Clients must opt in to use the agent.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub required: bool,
    /// Extension parameters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub params: Option<Map<String, Value>>,
}

/// A capability of the agent.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct AgentSkill {
    /// Unique id.
    #[serde(default)]
    pub id: String,
    /// Name.
    #[serde(default)]
    pub name: String,
    /// Description.
    #[serde(default)]
    pub description: String,
    /// Keywords.
    #[serde(default, deserialize_with = "serde_util::vec::deserialize")]
    pub tags: Vec<String>,
    /// Example prompts.
    #[serde(
        default,
        skip_serializing_if = "Vec::is_empty",
        deserialize_with = "serde_util::vec::deserialize"
    )]
    pub examples: Vec<String>,
    /// Accepted media types, overriding the card defaults.
    #[serde(
        default,
        alias = "input_modes",
        skip_serializing_if = "Vec::is_empty",
        deserialize_with = "serde_util::vec::deserialize"
    )]
    pub input_modes: Vec<String>,
    /// Produced media types, overriding the card defaults.
    #[serde(
        default,
        alias = "output_modes",
        skip_serializing_if = "Vec::is_empty",
        deserialize_with = "serde_util::vec::deserialize"
    )]
    pub output_modes: Vec<String>,
    /// Security requirements for this skill.
    #[serde(
        default,
        alias = "security_requirements",
        skip_serializing_if = "Vec::is_empty",
        deserialize_with = "serde_util::vec::deserialize"
    )]
    pub security_requirements: Vec<SecurityRequirement>,
}

impl AgentSkill {
    /// A skill with id, name, description and tags.
    pub fn new(
        id: impl Into<String>,
        name: impl Into<String>,
        description: impl Into<String>,
        tags: Vec<String>,
    ) -> Self {
        Self {
            id: id.into(),
            name: name.into(),
            description: description.into(),
            tags,
            ..Self::default()
        }
    }

    /// Sets the example prompts.
    pub fn with_examples(mut self, examples: Vec<String>) -> Self {
        self.examples = examples;
        self
    }
}

/// A JWS signature of the card (detached payload).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct AgentCardSignature {
    /// Base64url protected header.
    #[serde(default)]
    pub protected: String,
    /// Base64url signature.
    #[serde(default)]
    pub signature: String,
    /// Unprotected header.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub header: Option<Map<String, Value>>,
}

/// A list of strings (scopes).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[non_exhaustive]
pub struct StringList {
    /// The strings.
    #[serde(default)]
    pub list: Vec<String>,
}

/// Scheme names (with scopes) that together authorize a request.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[non_exhaustive]
pub struct SecurityRequirement {
    /// Scheme name to required scopes.
    #[serde(default)]
    pub schemes: BTreeMap<String, StringList>,
}

/// How clients authenticate.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub enum SecurityScheme {
    /// An API key.
    #[serde(alias = "api_key_security_scheme")]
    ApiKeySecurityScheme(ApiKeySecurityScheme),
    /// HTTP authentication (bearer, basic).
    #[serde(alias = "http_auth_security_scheme")]
    HttpAuthSecurityScheme(HttpAuthSecurityScheme),
    /// OAuth 2.0.
    #[serde(alias = "oauth2_security_scheme")]
    Oauth2SecurityScheme(OAuth2SecurityScheme),
    /// OpenID Connect.
    #[serde(alias = "open_id_connect_security_scheme")]
    OpenIdConnectSecurityScheme(OpenIdConnectSecurityScheme),
    /// Mutual TLS.
    #[serde(alias = "mtls_security_scheme")]
    MtlsSecurityScheme(MutualTlsSecurityScheme),
}

/// API key scheme.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ApiKeySecurityScheme {
    /// Description.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// `query`, `header` or `cookie`.
    #[serde(default)]
    pub location: String,
    /// Parameter name.
    #[serde(default)]
    pub name: String,
}

impl ApiKeySecurityScheme {
    /// An API key sent in `location` under `name`.
    pub fn new(location: impl Into<String>, name: impl Into<String>) -> Self {
        Self {
            description: None,
            location: location.into(),
            name: name.into(),
        }
    }
}

/// HTTP authentication scheme.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct HttpAuthSecurityScheme {
    /// Description.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Scheme name, for example `Bearer`.
    #[serde(default)]
    pub scheme: String,
    /// Token format hint, for example `JWT`.
    #[serde(
        default,
        alias = "bearer_format",
        skip_serializing_if = "Option::is_none"
    )]
    pub bearer_format: Option<String>,
}

impl HttpAuthSecurityScheme {
    /// An HTTP auth scheme such as `Bearer`.
    pub fn new(scheme: impl Into<String>) -> Self {
        Self {
            description: None,
            scheme: scheme.into(),
            bearer_format: None,
        }
    }
}

/// OAuth 2.0 scheme.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct OAuth2SecurityScheme {
    /// Description.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The flow.
    pub flows: OAuthFlows,
    /// RFC 8414 metadata URL.
    #[serde(
        default,
        alias = "oauth2_metadata_url",
        skip_serializing_if = "Option::is_none"
    )]
    pub oauth2_metadata_url: Option<String>,
}

impl OAuth2SecurityScheme {
    /// A scheme with these flows.
    pub fn new(flows: OAuthFlows) -> Self {
        Self {
            description: None,
            flows,
            oauth2_metadata_url: None,
        }
    }
}

/// OpenID Connect scheme.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct OpenIdConnectSecurityScheme {
    /// Description.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Discovery URL.
    #[serde(default, alias = "open_id_connect_url")]
    pub open_id_connect_url: String,
}

/// Mutual TLS scheme.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct MutualTlsSecurityScheme {
    /// Description.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
}

/// One OAuth 2.0 flow.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub enum OAuthFlows {
    /// Authorization code flow.
    #[serde(alias = "authorization_code")]
    AuthorizationCode(OAuthFlow),
    /// Client credentials flow.
    #[serde(alias = "client_credentials")]
    ClientCredentials(OAuthFlow),
    /// Implicit flow (deprecated).
    Implicit(OAuthFlow),
    /// Password flow (deprecated).
    Password(OAuthFlow),
    /// Device code flow.
    #[serde(alias = "device_code")]
    DeviceCode(OAuthFlow),
}

/// The fields of any OAuth flow (each flow uses the subset it needs).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct OAuthFlow {
    /// Authorization URL.
    #[serde(
        default,
        alias = "authorization_url",
        skip_serializing_if = "Option::is_none"
    )]
    pub authorization_url: Option<String>,
    /// Device authorization URL.
    #[serde(
        default,
        alias = "device_authorization_url",
        skip_serializing_if = "Option::is_none"
    )]
    pub device_authorization_url: Option<String>,
    /// Token URL.
    #[serde(default, alias = "token_url", skip_serializing_if = "Option::is_none")]
    pub token_url: Option<String>,
    /// Refresh URL.
    #[serde(
        default,
        alias = "refresh_url",
        skip_serializing_if = "Option::is_none"
    )]
    pub refresh_url: Option<String>,
    /// Scope name to description.
    #[serde(default)]
    pub scopes: BTreeMap<String, String>,
    /// PKCE required (authorization code flow).
    #[serde(
        default,
        alias = "pkce_required",
        skip_serializing_if = "std::ops::Not::not"
    )]
    pub pkce_required: bool,
}
