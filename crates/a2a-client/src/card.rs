//! Finding an agent's card and choosing the interface to talk to.

pub use a2a_types::ProtocolVersion;
use a2a_types::{AgentCard, AgentInterface, binding, v03};
use reqwest::Url;
use serde_json::Value;

use crate::error::ClientError;

/// The card URLs to try for `url`: the URL itself when it names a card, else
/// `url/.well-known/agent-card.json` then the legacy `url/.well-known/agent.json`.
pub fn card_urls(url: &str) -> Result<Vec<Url>, ClientError> {
    let parsed = Url::parse(url).map_err(|_| ClientError::InvalidUrl(url.to_owned()))?;
    if parsed.path().ends_with(".json") {
        return Ok(vec![parsed]);
    }
    let mut base = parsed.clone();
    let path = base.path().trim_end_matches('/').to_owned();
    let mut urls = Vec::new();
    for name in ["agent-card.json", "agent.json"] {
        base.set_path(&format!("{path}/.well-known/{name}"));
        urls.push(base.clone());
    }
    Ok(urls)
}

/// Reads a card in either shape: a v1.0 card (with `supportedInterfaces`) or a v0.3 card
/// (with `url` and `protocolVersion`), which becomes a v1.0 card with `0.3` interfaces.
/// Relative interface URLs are resolved against `card_url`.
pub fn parse_card(json: Value, card_url: &Url) -> Result<AgentCard, ClientError> {
    let has_interfaces = json
        .get("supportedInterfaces")
        .or_else(|| json.get("supported_interfaces"))
        .and_then(Value::as_array)
        .is_some_and(|a| !a.is_empty());
    let mut card = if has_interfaces {
        serde_json::from_value::<AgentCard>(json)
            .map_err(|e| ClientError::InvalidResponse(format!("agent card: {e}")))?
    } else {
        serde_json::from_value::<v03::AgentCard>(json)
            .map_err(|e| ClientError::InvalidResponse(format!("agent card (v0.3): {e}")))?
            .to_v1()
    };
    for i in &mut card.supported_interfaces {
        if let Ok(abs) = card_url.join(&i.url)
            && i.protocol_binding != binding::GRPC
        {
            i.url = abs.to_string();
        }
    }
    Ok(card)
}

pub use a2a_types::Binding;

/// Picks the interface to use, in this order: JSON-RPC at v1.0, gRPC at v1.0 (when built
/// with the `grpc` feature), HTTP+JSON at v1.0, JSON-RPC at v0.3 (servers that only speak
/// v0.3, like some hosted agent servers). `version` and `binding` restrict the choice to one
/// version or one binding.
pub fn select_interface(
    card: &AgentCard,
    version: Option<ProtocolVersion>,
    binding: Option<Binding>,
) -> Result<(AgentInterface, ProtocolVersion, Binding), ClientError> {
    const PREFERENCE: [(Binding, ProtocolVersion); 4] = [
        (Binding::JsonRpc, ProtocolVersion::V1),
        (Binding::Grpc, ProtocolVersion::V1),
        (Binding::HttpJson, ProtocolVersion::V1),
        (Binding::JsonRpc, ProtocolVersion::V03),
    ];
    let wanted = PREFERENCE
        .into_iter()
        .filter(|(b, _)| cfg!(feature = "grpc") || *b != Binding::Grpc)
        .filter(|(b, v)| binding.is_none_or(|w| w == *b) && version.is_none_or(|w| w == *v));
    for (b, v) in wanted {
        if let Some(i) = card.supported_interfaces.iter().find(|i| {
            i.protocol_binding.eq_ignore_ascii_case(b.name())
                && ProtocolVersion::of_interface(&i.protocol_version) == Some(v)
        }) {
            return Ok((i.clone(), v, b));
        }
    }
    let offered: Vec<String> = card
        .supported_interfaces
        .iter()
        .map(|i| format!("{} {} at {}", i.protocol_binding, i.protocol_version, i.url))
        .collect();
    Err(ClientError::NoSupportedInterface(offered.join(", ")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn urls() {
        let u = card_urls("http://h:1/a2a/echo/").unwrap();
        assert_eq!(
            u[0].as_str(),
            "http://h:1/a2a/echo/.well-known/agent-card.json"
        );
        assert_eq!(u[1].as_str(), "http://h:1/a2a/echo/.well-known/agent.json");
        let u = card_urls("http://h:1/.well-known/agent-card.json?assistant_id=x").unwrap();
        assert_eq!(u.len(), 1);
        assert!(card_urls("not a url").is_err());
    }

    #[test]
    fn selects_v1_then_v03() {
        let url = Url::parse("http://h/.well-known/agent-card.json").unwrap();
        let card = parse_card(
            json!({"name": "a", "supportedInterfaces": [
                {"url": "http://h/grpc", "protocolBinding": "GRPC", "protocolVersion": "1.0"},
                {"url": "/rpc03", "protocolBinding": "JSONRPC", "protocolVersion": "0.3"},
                {"url": "/rpc", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}
            ]}),
            &url,
        )
        .unwrap();
        let (i, v, _) = select_interface(&card, None, None).unwrap();
        assert_eq!((i.url.as_str(), v), ("http://h/rpc", ProtocolVersion::V1));
        let (i, v, _) = select_interface(&card, Some(ProtocolVersion::V03), None).unwrap();
        assert_eq!(
            (i.url.as_str(), v),
            ("http://h/rpc03", ProtocolVersion::V03)
        );
        let legacy = parse_card(
            json!({"name": "old", "url": "http://h/a2a/x", "protocolVersion": "0.3.0", "capabilities": {"streaming": true}}),
            &url,
        )
        .unwrap();
        let (i, v, _) = select_interface(&legacy, None, None).unwrap();
        assert_eq!(
            (i.url.as_str(), v),
            ("http://h/a2a/x", ProtocolVersion::V03)
        );
        assert_eq!(legacy.capabilities.streaming, Some(true));
    }
}
