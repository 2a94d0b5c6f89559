//! `A2A-Version` negotiation.

use a2a_types::A2aError;
pub use a2a_types::ProtocolVersion;
use http::HeaderMap;

/// Reads `A2A-Version` from the headers (or the `A2A-Version` query parameter). A missing
/// or empty value means 0.3 (spec §3.6.2). Only `Major.Minor` counts; patch numbers are
/// ignored. `1.0` and `0.3` are supported; anything else is `VersionNotSupportedError`.
pub fn negotiate_version(
    headers: &HeaderMap,
    query: Option<&str>,
) -> Result<ProtocolVersion, A2aError> {
    static VERSION: http::HeaderName = http::HeaderName::from_static("a2a-version");
    negotiate(headers.get(&VERSION), query)
}

/// [`negotiate_version`] with the `A2A-Version` header's value found already.
pub(crate) fn negotiate(
    header: Option<&http::HeaderValue>,
    query: Option<&str>,
) -> Result<ProtocolVersion, A2aError> {
    let from_query = || {
        query.and_then(|q| {
            q.split('&').find_map(|kv| {
                let (k, v) = kv.split_once('=')?;
                k.eq_ignore_ascii_case("a2a-version").then_some(v)
            })
        })
    };
    let raw = header
        .and_then(|v| v.to_str().ok())
        .or_else(from_query)
        .map(str::trim)
        .unwrap_or("");
    if raw.is_empty() {
        return Ok(ProtocolVersion::V03);
    }
    ProtocolVersion::parse(raw).ok_or_else(|| A2aError::VersionNotSupported {
        version: raw.to_owned(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn h(v: &str) -> HeaderMap {
        let mut m = HeaderMap::new();
        m.insert("a2a-version", v.parse().unwrap());
        m
    }

    #[test]
    fn versions() {
        assert_eq!(
            negotiate_version(&HeaderMap::new(), None).unwrap(),
            ProtocolVersion::V03
        );
        assert_eq!(
            negotiate_version(&h("1.0"), None).unwrap(),
            ProtocolVersion::V1
        );
        assert_eq!(
            negotiate_version(&h("1.0.1"), None).unwrap(),
            ProtocolVersion::V1
        );
        assert_eq!(
            negotiate_version(&h("0.3"), None).unwrap(),
            ProtocolVersion::V03
        );
        assert_eq!(
            negotiate_version(&HeaderMap::new(), Some("x=1&A2A-Version=1.0")).unwrap(),
            ProtocolVersion::V1
        );
        assert_eq!(
            negotiate_version(&h("0.3.0"), None).unwrap(),
            ProtocolVersion::V03
        );
        for bad in ["2.0", "0.5", "1.1", "abc"] {
            assert!(
                matches!(
                    negotiate_version(&h(bad), None),
                    Err(A2aError::VersionNotSupported { .. })
                ),
                "{bad}"
            );
        }
    }
}
