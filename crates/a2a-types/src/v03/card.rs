//! The v0.3 agent card and conversions with the v1.0 card.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate as v1;
use crate::card::binding;

/// v0.3 agent card (served at `/.well-known/agent.json`, or merged into the v1.0 card).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct AgentCard {
    /// Protocol version, for example `0.3.0`.
    #[serde(default)]
    pub protocol_version: String,
    /// Name.
    #[serde(default)]
    pub name: String,
    /// Description.
    #[serde(default)]
    pub description: String,
    /// Preferred endpoint.
    #[serde(default)]
    pub url: String,
    /// Transport of `url` (default `JSONRPC`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preferred_transport: Option<String>,
    /// Other endpoints.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub additional_interfaces: Vec<AgentInterface>,
    /// Icon.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub icon_url: Option<String>,
    /// Provider.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider: Option<v1::AgentProvider>,
    /// Agent version.
    #[serde(default)]
    pub version: String,
    /// Documentation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub documentation_url: Option<String>,
    /// Capabilities.
    #[serde(default)]
    pub capabilities: AgentCapabilities,
    /// Security schemes (OpenAPI style).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub security_schemes: BTreeMap<String, SecuritySchemeV03>,
    /// Security requirements.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub security: Vec<BTreeMap<String, Vec<String>>>,
    /// Default input media types.
    #[serde(default)]
    pub default_input_modes: Vec<String>,
    /// Default output media types.
    #[serde(default)]
    pub default_output_modes: Vec<String>,
    /// Skills.
    #[serde(default)]
    pub skills: Vec<AgentSkill>,
    /// Has an authenticated extended card.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub supports_authenticated_extended_card: Option<bool>,
    /// Signatures.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub signatures: Vec<v1::AgentCardSignature>,
}

/// v0.3 interface entry.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[non_exhaustive]
pub struct AgentInterface {
    /// URL.
    pub url: String,
    /// `JSONRPC`, `GRPC` or `HTTP+JSON`.
    pub transport: String,
}

/// v0.3 capabilities.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct AgentCapabilities {
    /// Streaming.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub streaming: Option<bool>,
    /// Push notifications.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub push_notifications: Option<bool>,
    /// State transition history.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state_transition_history: Option<bool>,
    /// Extensions.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub extensions: Vec<v1::AgentExtension>,
}

/// v0.3 skill.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct AgentSkill {
    /// Id.
    #[serde(default)]
    pub id: String,
    /// Name.
    #[serde(default)]
    pub name: String,
    /// Description.
    #[serde(default)]
    pub description: String,
    /// Tags.
    #[serde(default)]
    pub tags: Vec<String>,
    /// Examples.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub examples: Vec<String>,
    /// Input modes.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub input_modes: Vec<String>,
    /// Output modes.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub output_modes: Vec<String>,
    /// Security.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub security: Vec<BTreeMap<String, Vec<String>>>,
}

/// v0.3 (OpenAPI-style) security scheme.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type")]
#[non_exhaustive]
#[allow(clippy::large_enum_variant, reason = "a wire type, read once per card")]
pub enum SecuritySchemeV03 {
    /// API key.
    #[serde(rename = "apiKey")]
    ApiKey {
        /// `query`, `header` or `cookie`.
        #[serde(rename = "in")]
        location: String,
        /// Parameter name.
        name: String,
        /// Description.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        description: Option<String>,
    },
    /// HTTP auth.
    #[serde(rename = "http")]
    Http {
        /// Scheme.
        scheme: String,
        /// Bearer format.
        #[serde(
            default,
            rename = "bearerFormat",
            skip_serializing_if = "Option::is_none"
        )]
        bearer_format: Option<String>,
        /// Description.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        description: Option<String>,
    },
    /// OAuth 2.0.
    #[serde(rename = "oauth2")]
    OAuth2 {
        /// Flows.
        flows: OAuthFlowsV03,
        /// Metadata URL.
        #[serde(
            default,
            rename = "oauth2MetadataUrl",
            skip_serializing_if = "Option::is_none"
        )]
        oauth2_metadata_url: Option<String>,
        /// Description.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        description: Option<String>,
    },
    /// OpenID Connect.
    #[serde(rename = "openIdConnect")]
    OpenIdConnect {
        /// Discovery URL.
        #[serde(rename = "openIdConnectUrl")]
        open_id_connect_url: String,
        /// Description.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        description: Option<String>,
    },
    /// Mutual TLS.
    #[serde(rename = "mutualTLS")]
    MutualTls {
        /// Description.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        description: Option<String>,
    },
}

/// v0.3 OAuth flows (several may be present).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct OAuthFlowsV03 {
    /// Authorization code.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub authorization_code: Option<v1::OAuthFlow>,
    /// Client credentials.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_credentials: Option<v1::OAuthFlow>,
    /// Implicit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub implicit: Option<v1::OAuthFlow>,
    /// Password.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub password: Option<v1::OAuthFlow>,
}

fn scheme_to_v03(s: &v1::SecurityScheme) -> Option<SecuritySchemeV03> {
    Some(match s {
        v1::SecurityScheme::ApiKeySecurityScheme(k) => SecuritySchemeV03::ApiKey {
            location: k.location.clone(),
            name: k.name.clone(),
            description: k.description.clone(),
        },
        v1::SecurityScheme::HttpAuthSecurityScheme(h) => SecuritySchemeV03::Http {
            scheme: h.scheme.clone(),
            bearer_format: h.bearer_format.clone(),
            description: h.description.clone(),
        },
        v1::SecurityScheme::Oauth2SecurityScheme(o) => {
            let mut flows = OAuthFlowsV03::default();
            match &o.flows {
                v1::OAuthFlows::AuthorizationCode(f) => flows.authorization_code = Some(f.clone()),
                v1::OAuthFlows::ClientCredentials(f) => flows.client_credentials = Some(f.clone()),
                v1::OAuthFlows::Implicit(f) => flows.implicit = Some(f.clone()),
                v1::OAuthFlows::Password(f) => flows.password = Some(f.clone()),
                // v0.3 has no device code flow.
                v1::OAuthFlows::DeviceCode(_) => return None,
            }
            SecuritySchemeV03::OAuth2 {
                flows,
                oauth2_metadata_url: o.oauth2_metadata_url.clone(),
                description: o.description.clone(),
            }
        }
        v1::SecurityScheme::OpenIdConnectSecurityScheme(o) => SecuritySchemeV03::OpenIdConnect {
            open_id_connect_url: o.open_id_connect_url.clone(),
            description: o.description.clone(),
        },
        v1::SecurityScheme::MtlsSecurityScheme(m) => SecuritySchemeV03::MutualTls {
            description: m.description.clone(),
        },
    })
}

fn scheme_from_v03(s: &SecuritySchemeV03) -> Option<v1::SecurityScheme> {
    Some(match s {
        SecuritySchemeV03::ApiKey {
            location,
            name,
            description,
        } => {
            let mut k = v1::ApiKeySecurityScheme::new(location.clone(), name.clone());
            k.description = description.clone();
            v1::SecurityScheme::ApiKeySecurityScheme(k)
        }
        SecuritySchemeV03::Http {
            scheme,
            bearer_format,
            description,
        } => {
            let mut h = v1::HttpAuthSecurityScheme::new(scheme.clone());
            h.bearer_format = bearer_format.clone();
            h.description = description.clone();
            v1::SecurityScheme::HttpAuthSecurityScheme(h)
        }
        SecuritySchemeV03::OAuth2 {
            flows,
            oauth2_metadata_url,
            description,
        } => {
            let flow = if let Some(f) = &flows.authorization_code {
                v1::OAuthFlows::AuthorizationCode(f.clone())
            } else if let Some(f) = &flows.client_credentials {
                v1::OAuthFlows::ClientCredentials(f.clone())
            } else if let Some(f) = &flows.implicit {
                v1::OAuthFlows::Implicit(f.clone())
            } else {
                v1::OAuthFlows::Password(flows.password.clone()?)
            };
            v1::SecurityScheme::Oauth2SecurityScheme(v1::OAuth2SecurityScheme {
                description: description.clone(),
                flows: flow,
                oauth2_metadata_url: oauth2_metadata_url.clone(),
            })
        }
        SecuritySchemeV03::OpenIdConnect {
            open_id_connect_url,
            description,
        } => v1::SecurityScheme::OpenIdConnectSecurityScheme(v1::OpenIdConnectSecurityScheme {
            description: description.clone(),
            open_id_connect_url: open_id_connect_url.clone(),
        }),
        SecuritySchemeV03::MutualTls { description } => {
            v1::SecurityScheme::MtlsSecurityScheme(v1::MutualTlsSecurityScheme {
                description: description.clone(),
            })
        }
    })
}

fn requirements_to_v03(r: &[v1::SecurityRequirement]) -> Vec<BTreeMap<String, Vec<String>>> {
    r.iter()
        .map(|req| {
            req.schemes
                .iter()
                .map(|(k, v)| (k.clone(), v.list.clone()))
                .collect()
        })
        .collect()
}

fn requirements_from_v03(r: &[BTreeMap<String, Vec<String>>]) -> Vec<v1::SecurityRequirement> {
    r.iter()
        .map(|req| v1::SecurityRequirement {
            schemes: req
                .iter()
                .map(|(k, v)| (k.clone(), v1::StringList { list: v.clone() }))
                .collect(),
        })
        .collect()
}

fn is_v03(version: &str) -> bool {
    version.starts_with("0.")
}

impl AgentCard {
    /// Derives the v0.3 card from a v1.0 card: `url` and `preferredTransport` come from the
    /// first interface whose protocol version is `0.x` (or the first interface when none is),
    /// `additionalInterfaces` from the other `0.x` interfaces.
    pub fn from_v1(card: &v1::AgentCard) -> Self {
        let legacy: Vec<&v1::AgentInterface> = card
            .supported_interfaces
            .iter()
            .filter(|i| is_v03(&i.protocol_version))
            .collect();
        let candidates = if legacy.is_empty() {
            card.supported_interfaces.iter().collect::<Vec<_>>()
        } else {
            legacy
        };
        let (url, transport) = candidates
            .first()
            .map(|i| (i.url.clone(), i.protocol_binding.clone()))
            .unwrap_or_else(|| (String::new(), binding::JSONRPC.to_owned()));
        let additional_interfaces = if candidates.len() > 1 {
            candidates
                .iter()
                .map(|i| AgentInterface {
                    url: i.url.clone(),
                    transport: i.protocol_binding.clone(),
                })
                .collect()
        } else {
            Vec::new()
        };
        AgentCard {
            protocol_version: super::PROTOCOL_VERSION.to_owned(),
            name: card.name.clone(),
            description: card.description.clone(),
            url,
            preferred_transport: Some(transport),
            additional_interfaces,
            icon_url: card.icon_url.clone(),
            provider: card.provider.clone(),
            version: card.version.clone(),
            documentation_url: card.documentation_url.clone(),
            capabilities: AgentCapabilities {
                streaming: card.capabilities.streaming,
                push_notifications: card.capabilities.push_notifications,
                state_transition_history: None,
                extensions: card.capabilities.extensions.clone(),
            },
            security_schemes: card
                .security_schemes
                .iter()
                .filter_map(|(k, v)| scheme_to_v03(v).map(|s| (k.clone(), s)))
                .collect(),
            security: requirements_to_v03(&card.security_requirements),
            default_input_modes: card.default_input_modes.clone(),
            default_output_modes: card.default_output_modes.clone(),
            skills: card
                .skills
                .iter()
                .map(|s| AgentSkill {
                    id: s.id.clone(),
                    name: s.name.clone(),
                    description: s.description.clone(),
                    tags: s.tags.clone(),
                    examples: s.examples.clone(),
                    input_modes: s.input_modes.clone(),
                    output_modes: s.output_modes.clone(),
                    security: requirements_to_v03(&s.security_requirements),
                })
                .collect(),
            // v0.3 names it the *authenticated* extended card, and v0.3 clients and the v0.3
            // conformance suite expect it to refuse unauthenticated callers. An agent that
            // declares no security requirement authenticates nobody, so to v0.3 it has none.
            supports_authenticated_extended_card: card
                .capabilities
                .extended_agent_card
                .map(|has| has && !card.security_requirements.is_empty()),
            signatures: Vec::new(),
        }
    }

    /// Reads a v0.3 card as a v1.0 card: `url`/`preferredTransport` and the additional
    /// interfaces become `supportedInterfaces` with protocol version `0.3`.
    pub fn to_v1(&self) -> v1::AgentCard {
        let mut interfaces = vec![v1::AgentInterface::new(
            self.url.clone(),
            self.preferred_transport
                .clone()
                .unwrap_or_else(|| binding::JSONRPC.to_owned()),
            "0.3",
        )];
        for i in &self.additional_interfaces {
            let candidate = v1::AgentInterface::new(i.url.clone(), i.transport.clone(), "0.3");
            if !interfaces.contains(&candidate) {
                interfaces.push(candidate);
            }
        }
        v1::AgentCard {
            name: self.name.clone(),
            description: self.description.clone(),
            supported_interfaces: interfaces,
            provider: self.provider.clone(),
            version: self.version.clone(),
            documentation_url: self.documentation_url.clone(),
            capabilities: v1::AgentCapabilities {
                streaming: self.capabilities.streaming,
                push_notifications: self.capabilities.push_notifications,
                extensions: self.capabilities.extensions.clone(),
                extended_agent_card: self.supports_authenticated_extended_card,
            },
            security_schemes: self
                .security_schemes
                .iter()
                .filter_map(|(k, v)| scheme_from_v03(v).map(|s| (k.clone(), s)))
                .collect(),
            security_requirements: requirements_from_v03(&self.security),
            default_input_modes: self.default_input_modes.clone(),
            default_output_modes: self.default_output_modes.clone(),
            skills: self
                .skills
                .iter()
                .map(|s| v1::AgentSkill {
                    id: s.id.clone(),
                    name: s.name.clone(),
                    description: s.description.clone(),
                    tags: s.tags.clone(),
                    examples: s.examples.clone(),
                    input_modes: s.input_modes.clone(),
                    output_modes: s.output_modes.clone(),
                    security_requirements: requirements_from_v03(&s.security),
                })
                .collect(),
            signatures: self.signatures.clone(),
            icon_url: self.icon_url.clone(),
        }
    }
}

/// The merged card: the v1.0 card as JSON plus the v0.3 top-level fields (`url`,
/// `protocolVersion`, `preferredTransport`, `additionalInterfaces`, …), for deployments
/// whose clients only read v0.3 cards.
pub fn merged_card_json(card: &v1::AgentCard) -> Value {
    let legacy = AgentCard::from_v1(card);
    let mut out = match serde_json::to_value(card) {
        Ok(Value::Object(m)) => m,
        _ => Map::new(),
    };
    let legacy_json = match serde_json::to_value(&legacy) {
        Ok(Value::Object(m)) => m,
        _ => Map::new(),
    };
    for key in [
        "protocolVersion",
        "url",
        "preferredTransport",
        "additionalInterfaces",
        "security",
        "supportsAuthenticatedExtendedCard",
    ] {
        if let Some(v) = legacy_json.get(key) {
            out.insert(key.to_owned(), v.clone());
        }
    }
    // v0.3 readers expect OpenAPI-style schemes; v1.0 readers accept unknown fields only at
    // the top level, so the schemes stay v1.0-shaped here.
    Value::Object(out)
}
