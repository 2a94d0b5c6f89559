//! Which bindings an agent is served on.

/// Which bindings are served (all by default). gRPC needs the `grpc` feature.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct Bindings {
    /// JSON-RPC 2.0 (v1.0 and v0.3 methods).
    pub jsonrpc: bool,
    /// HTTP+JSON (REST).
    pub http_json: bool,
    /// gRPC (`lf.a2a.v1.A2AService`).
    pub grpc: bool,
}

impl Default for Bindings {
    fn default() -> Self {
        Self {
            jsonrpc: true,
            http_json: true,
            grpc: cfg!(feature = "grpc"),
        }
    }
}

impl Bindings {
    /// Only the bindings named (`jsonrpc`, `rest` or `http+json`, `grpc`); `None` for an
    /// unknown name.
    pub fn parse_list(names: &str) -> Option<Self> {
        let mut b = Self {
            jsonrpc: false,
            http_json: false,
            grpc: false,
        };
        for name in names.split(',').map(str::trim).filter(|n| !n.is_empty()) {
            match name.to_ascii_lowercase().as_str() {
                "jsonrpc" | "json-rpc" => b.jsonrpc = true,
                "rest" | "http+json" | "http_json" => b.http_json = true,
                "grpc" => b.grpc = true,
                _ => return None,
            }
        }
        Some(b)
    }
}
