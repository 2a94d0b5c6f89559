//! Which webhook addresses a server may call: never loopback, private, link-local, shared
//! (CGNAT), multicast or cloud-metadata addresses, unless the host is allow-listed. Checked
//! when a config is stored (literal addresses and `localhost`) and again after DNS at each
//! delivery (a name may resolve, or be re-pointed, to an inner address), by a resolver that
//! drops the forbidden addresses.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::sync::Arc;

use a2a_types::A2aError;

/// Where webhooks may point.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct PushPolicy {
    /// Hosts (names or addresses, as written in the URL) allowed even when they are or
    /// resolve to inner addresses: `localhost`, `127.0.0.1`, `hooks.internal`.
    pub allowed_hosts: Vec<String>,
    /// Allow every inner address (a private network where every receiver is trusted).
    pub allow_private: bool,
    /// URL prefixes allowed whatever their address (`http://127.0.0.1:41241/inspector/hooks/`:
    /// a receiver of the server's own, on its own address). A URL matches when its parsed,
    /// normalized form starts with one, so `..` segments and user-info cannot step outside.
    pub allowed_prefixes: Vec<String>,
}

impl PushPolicy {
    /// Whether `host` (from a URL) is allow-listed.
    pub fn allows_host(&self, host: &str) -> bool {
        let host = host.trim_start_matches('[').trim_end_matches(']');
        self.allow_private
            || self
                .allowed_hosts
                .iter()
                .any(|h| h.eq_ignore_ascii_case(host))
    }

    /// Checks a webhook URL when a config is stored: `http`/`https`, a host, and no literal
    /// inner address or `localhost` unless allowed.
    pub fn check_url(&self, url: &str) -> Result<reqwest::Url, A2aError> {
        let bad = |why: &str| A2aError::invalid_field("url", why);
        let parsed = reqwest::Url::parse(url).map_err(|e| bad(&format!("is not a URL: {e}")))?;
        if !matches!(parsed.scheme(), "http" | "https") {
            return Err(bad("must be an http or https URL"));
        }
        let Some(host) = parsed.host() else {
            return Err(bad("has no host"));
        };
        let text = parsed.host_str().unwrap_or_default().to_owned();
        if self.allows_host(&text) || self.allows_prefix_of(&parsed) {
            return Ok(parsed);
        }
        let inner = match host {
            url::Host::Ipv4(ip) => is_inner(IpAddr::V4(ip)),
            url::Host::Ipv6(ip) => is_inner(IpAddr::V6(ip)),
            url::Host::Domain(name) => {
                let name = name.trim_end_matches('.').to_ascii_lowercase();
                name == "localhost" || name.ends_with(".localhost")
            }
        };
        if inner {
            crate::metrics::global().push_delivery("refused");
            return Err(bad(
                "points to a loopback, private or link-local address, which this server does not call (allow-list the host to permit it)",
            ));
        }
        Ok(parsed)
    }
}

impl PushPolicy {
    /// Whether `url` (parsed, so normalized) starts with an allowed prefix.
    pub fn allows_prefix_of(&self, url: &reqwest::Url) -> bool {
        self.allowed_prefixes
            .iter()
            .any(|p| url.as_str().starts_with(p.as_str()))
    }
}

/// An HTTP client that calls only what `policy` allows: names resolving to inner addresses
/// are refused after DNS (unless allow-listed), redirects are not followed. Check each URL
/// with [`PushPolicy::check_url`] first (literal addresses never reach the resolver).
pub fn guarded_client(
    policy: &PushPolicy,
    timeout: Option<std::time::Duration>,
) -> Result<reqwest::Client, A2aError> {
    // No proxy from the environment: a proxy would resolve names itself, past the guard.
    let mut b = reqwest::Client::builder()
        .no_proxy()
        .redirect(reqwest::redirect::Policy::none())
        .connect_timeout(std::time::Duration::from_secs(10))
        .dns_resolver(Arc::new(GuardedResolver {
            policy: Arc::new(policy.clone()),
        }))
        .user_agent(concat!("a2a-rust/", env!("CARGO_PKG_VERSION")));
    if let Some(t) = timeout {
        b = b.timeout(t);
    }
    b.build()
        .map_err(|e| A2aError::internal(format!("HTTP client: {e}")))
}

/// True for addresses a webhook must not reach without an allow-list entry.
pub fn is_inner(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => is_inner_v4(v4),
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => is_inner_v4(v4),
            None => is_inner_v6(v6),
        },
    }
}

fn is_inner_v4(ip: Ipv4Addr) -> bool {
    let [a, b, ..] = ip.octets();
    ip.is_loopback()
        || ip.is_private()
        || ip.is_link_local() // 169.254/16, cloud metadata (169.254.169.254) included
        || ip.is_unspecified()
        || ip.is_broadcast()
        || ip.is_multicast()
        || ip.is_documentation()
        || a == 0
        || (a == 100 && (64..128).contains(&b)) // shared address space (CGNAT)
        || (a == 192 && b == 0 && ip.octets()[2] == 0) // IETF protocol assignments
        || (a == 198 && (18..20).contains(&b)) // benchmarking (198.18.0.0/15)
        || a >= 240 // reserved
}

fn is_inner_v6(ip: Ipv6Addr) -> bool {
    let first = ip.segments()[0];
    ip.is_loopback()
        || ip.is_unspecified()
        || ip.is_multicast()
        || (first & 0xfe00) == 0xfc00 // unique local, fd00:ec2::254 (metadata) included
        || (first & 0xffc0) == 0xfe80 // link-local
        || ip.to_ipv4().is_some_and(|v4| ip.segments()[..6] == [0; 6] && is_inner_v4(v4))
        || embedded_v4(ip).is_some_and(is_inner_v4)
        || (ip.segments()[..3] == [0x64, 0xff9b, 1]) // local-use NAT64 (64:ff9b:1::/48)
}

/// The IPv4 address an IPv6 one carries to reach it: NAT64's well-known prefix
/// (64:ff9b::/96) and 6to4 (2002::/16), both of which reach the IPv4 address inside.
fn embedded_v4(ip: Ipv6Addr) -> Option<Ipv4Addr> {
    let s = ip.segments();
    let v4 = |hi: u16, lo: u16| Ipv4Addr::from((u32::from(hi) << 16) | u32::from(lo));
    match s {
        [0x64, 0xff9b, 0, 0, 0, 0, hi, lo] => Some(v4(hi, lo)),
        [0x2002, hi, lo, ..] => Some(v4(hi, lo)),
        _ => None,
    }
}

/// A DNS resolver for webhook calls that drops inner addresses unless the name is allowed;
/// a name left with none fails to resolve.
#[derive(Debug, Clone)]
pub(crate) struct GuardedResolver {
    pub(crate) policy: Arc<PushPolicy>,
}

impl reqwest::dns::Resolve for GuardedResolver {
    fn resolve(&self, name: reqwest::dns::Name) -> reqwest::dns::Resolving {
        let policy = self.policy.clone();
        Box::pin(async move {
            let host = name.as_str().to_owned();
            let addrs: Vec<SocketAddr> =
                tokio::net::lookup_host((host.as_str(), 0)).await?.collect();
            let allowed = policy.allows_host(&host);
            let usable: Vec<SocketAddr> = addrs
                .into_iter()
                .filter(|a| allowed || !is_inner(a.ip()))
                .collect();
            if usable.is_empty() {
                crate::metrics::global().push_delivery("refused");
                return Err(format!(
                    "{host} resolves only to loopback, private or link-local addresses, which this server does not call"
                )
                .into());
            }
            Ok(Box::new(usable.into_iter()) as reqwest::dns::Addrs)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inner_addresses_are_refused_unless_allowed() {
        let policy = PushPolicy::default();
        for url in [
            "http://127.0.0.1/hook",
            "http://10.1.2.3/hook",
            "http://172.20.0.1/hook",
            "http://192.168.1.1/hook",
            "http://169.254.169.254/latest/meta-data",
            "http://100.64.0.1/",
            "http://0.0.0.0/",
            "http://[::1]/hook",
            "http://[fd00:ec2::254]/",
            "http://[fe80::1]/",
            "http://[::ffff:127.0.0.1]/",
            "http://[64:ff9b::a00:7]/",
            "http://[64:ff9b:1::1]/",
            "http://[2002:7f00:1::]/",
            "http://198.18.0.1/",
            "http://localhost:8080/hook",
            "http://api.localhost/hook",
            "ftp://example.com/hook",
            "not a url",
        ] {
            assert!(policy.check_url(url).is_err(), "{url} was allowed");
        }
        for url in [
            "https://example.com/hook",
            "http://93.184.215.14/hook",
            "http://[2606:2800:21f:cb07:6820:80da:af6b:8b2c]/",
        ] {
            assert!(policy.check_url(url).is_ok(), "{url} was refused");
        }
        let mut allowing = PushPolicy::default();
        allowing.allowed_hosts = vec!["localhost".into(), "127.0.0.1".into()];
        assert!(allowing.check_url("http://localhost:9/hook").is_ok());
        assert!(allowing.check_url("http://127.0.0.1:9/hook").is_ok());
        assert!(allowing.check_url("http://10.0.0.1/hook").is_err());
    }

    #[test]
    fn an_allowed_prefix_admits_only_what_lies_under_it() {
        let mut policy = PushPolicy::default();
        policy.allowed_prefixes = vec!["http://127.0.0.1:41241/inspector/hooks/".into()];
        assert!(
            policy
                .check_url("http://127.0.0.1:41241/inspector/hooks/abc")
                .is_ok()
        );
        for url in [
            "http://127.0.0.1:41241/inspector/hooks/../../a2a/echo",
            "http://127.0.0.1:41241/inspector/hooks/%2e%2e/x/../../../a2a",
            "http://127.0.0.1:41241@10.0.0.1/inspector/hooks/abc",
            "http://127.0.0.1:5432/inspector/hooks/abc",
            "http://127.0.0.1:41241/a2a/echo",
            "https://127.0.0.1:41241/inspector/hooks/abc",
        ] {
            assert!(policy.check_url(url).is_err(), "{url} was allowed");
        }
    }
}
