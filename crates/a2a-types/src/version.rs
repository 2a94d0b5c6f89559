//! The protocol versions this implementation speaks.

/// An A2A protocol version (`Major.Minor`; patch numbers never matter). The default is
/// v1.0.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub enum ProtocolVersion {
    /// A2A v1.0 (PascalCase methods, ProtoJSON).
    #[default]
    V1,
    /// A2A v0.3 (`message/send`, `kind` discriminators).
    V03,
}

impl ProtocolVersion {
    /// The `A2A-Version` value: `"1.0"` or `"0.3"`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::V1 => crate::PROTOCOL_VERSION,
            Self::V03 => crate::PROTOCOL_VERSION_V03,
        }
    }

    /// Parses `Major.Minor[.patch]` strictly: `1.0` and `0.3` (a missing minor means `.0`).
    pub fn parse(version: &str) -> Option<Self> {
        let mut parts = version.trim().trim_start_matches(['v', 'V']).split('.');
        let major = parts.next().unwrap_or("");
        let minor = parts.next().unwrap_or("0");
        match (major, minor) {
            ("1", "0") => Some(Self::V1),
            ("0", "3") => Some(Self::V03),
            _ => None,
        }
    }

    /// The version an agent card interface's `protocolVersion` names, read leniently: any
    /// `1.x` (or an empty value, as older cards have) is v1.0, any `0.x` is v0.3.
    pub fn of_interface(protocol_version: &str) -> Option<Self> {
        let v = protocol_version.trim();
        if v.is_empty() || v == "1" || v.starts_with("1.") {
            Some(Self::V1)
        } else if v.starts_with("0.") {
            Some(Self::V03)
        } else {
            None
        }
    }
}

impl std::fmt::Display for ProtocolVersion {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::ProtocolVersion;

    #[test]
    fn parse() {
        assert_eq!(ProtocolVersion::parse("1.0.3"), Some(ProtocolVersion::V1));
        assert_eq!(ProtocolVersion::parse("1"), Some(ProtocolVersion::V1));
        assert_eq!(ProtocolVersion::parse("0.3.0"), Some(ProtocolVersion::V03));
        assert_eq!(ProtocolVersion::parse("0.5"), None);
        assert_eq!(ProtocolVersion::parse("1.1"), None);
        assert_eq!(
            ProtocolVersion::of_interface("1.1"),
            Some(ProtocolVersion::V1)
        );
        assert_eq!(
            ProtocolVersion::of_interface("0.2.5"),
            Some(ProtocolVersion::V03)
        );
    }
}
