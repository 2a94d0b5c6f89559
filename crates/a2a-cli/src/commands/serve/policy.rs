//! What `a2a serve`'s flags make of authentication, connection limits and the bounds every
//! agent of the server shares.

use std::sync::Arc;

use a2a_host::HostBuilder;
use a2a_server::ConnectionLimits;
use a2a_store_sql::{LeaseConfig, RetentionConfig};
use anyhow::{Context, bail};

use super::{ServeArgs, positive_seconds};

/// The per-caller bounds, push delivery, authentication, leases and retention the flags ask
/// for, on `builder`.
pub(super) fn apply(mut builder: HostBuilder, args: &ServeArgs) -> anyhow::Result<HostBuilder> {
    if args.caller_ipv6_prefix > 128 {
        bail!("--caller-ipv6-prefix must be between 0 and 128 bits");
    }
    builder = builder.caller_keying(
        a2a_server::CallerKeying::default().with_ipv6_prefix(args.caller_ipv6_prefix),
    );
    match args.max_streams_per_caller {
        Some(0) => bail!("--max-streams-per-caller must be at least 1"),
        Some(n) => builder = builder.streams_per_caller(n),
        None => {}
    }
    match args.rate_per_caller {
        Some(r) if !(r > 0.0 && r.is_finite()) => {
            bail!("--rate-per-caller must be a positive number of requests a second")
        }
        Some(r) => builder = builder.rate_per_caller(r, args.rate_burst.unwrap_or(r)),
        None => {}
    }
    builder = builder.push((!args.no_push).then(|| {
        let mut settings = a2a_server::push::PushSettings::default();
        settings.policy.allowed_hosts = args.push_allow.clone();
        settings.policy.allow_private = args.push_allow_private;
        settings
    }));
    if let Some(auth) = authenticator(args)? {
        builder = builder.auth(auth);
    }
    let expiry = std::time::Duration::try_from_secs_f64(args.lease_expiry)
        .ok()
        .filter(|d| !d.is_zero())
        .context("--lease-expiry must be a positive number of seconds")?;
    builder = builder.leases(LeaseConfig::with_expiry(expiry));
    let mut retention = RetentionConfig::default();
    retention.terminal = positive_seconds(args.retention);
    retention.idle_interrupted = positive_seconds(args.idle_expiry);
    builder = builder.retention(retention);
    if let Some(secs) = args.store_poll {
        builder = builder.store_poll(positive_seconds(secs));
    }
    Ok(builder)
}

/// The authenticator the credentials on the command line (or in the environment) make, if
/// any; says at start whether callers are authenticated.
pub(super) fn authenticator(
    args: &ServeArgs,
) -> anyhow::Result<Option<Arc<dyn a2a_server::auth::Authenticator>>> {
    let mut creds = a2a_server::auth::StaticCredentials::new();
    let pairs = |flag: &str, values: &[String]| -> anyhow::Result<Vec<(String, String)>> {
        values
            .iter()
            .filter(|v| !v.trim().is_empty())
            .map(|v| match v.split_once('=') {
                Some((p, s)) if !p.trim().is_empty() && !s.is_empty() => {
                    Ok((p.trim().to_owned(), s.to_owned()))
                }
                _ => bail!("--{flag} expects PRINCIPAL=SECRET, got a value without `=`"),
            })
            .collect()
    };
    for (principal, token) in pairs("auth-token", &args.auth_token)? {
        creds = creds.bearer(&principal, &token);
    }
    for (principal, key) in pairs("auth-api-key", &args.auth_api_key)? {
        creds = creds.api_key(&principal, &key);
    }
    let mut all: Vec<Arc<dyn a2a_server::auth::Authenticator>> = Vec::new();
    if !creds.is_empty() {
        all.push(Arc::new(creds));
    }
    if let Some(url) = &args.auth_jwks_url {
        let mut settings = a2a_server::auth::jwt::JwtSettings::new(url.clone());
        settings.issuer = args.auth_jwt_issuer.clone();
        settings.audience = args.auth_jwt_audience.clone();
        settings.leeway = std::time::Duration::from_secs(args.auth_jwt_leeway);
        all.push(Arc::new(a2a_server::auth::jwt::JwtAuthenticator::new(
            settings,
        )));
    }
    match all.len() {
        0 => {
            tracing::warn!(
                "no authentication configured: every caller may call every agent and sees every task (see --auth-token)"
            );
            Ok(None)
        }
        n => {
            tracing::info!("authentication required; each caller sees only its own tasks");
            Ok(Some(if n == 1 {
                all.remove(0)
            } else {
                Arc::new(a2a_server::auth::AnyOf(all))
            }))
        }
    }
}

/// The connection limits from the command line. Raises the open-file limit to its hard
/// limit first (and logs both), so the default connection bound uses all of it.
pub(super) fn connection_limits(args: &ServeArgs) -> anyhow::Result<ConnectionLimits> {
    match a2a_server::raise_open_file_limit() {
        Ok((before, after)) => {
            tracing::info!(soft_before = before, limit = after, "open-file limit");
        }
        Err(e) => tracing::warn!(error = %e, "cannot raise the open-file limit"),
    }
    let secs = |name: &str, v: f64| {
        positive_seconds(v)
            .with_context(|| format!("--{name} must be a positive number of seconds"))
    };
    let mut limits = ConnectionLimits::default();
    limits.header_read_timeout = secs("header-read-timeout", args.header_read_timeout)?;
    limits.body_read_timeout = secs("body-read-timeout", args.body_read_timeout)?;
    limits.write_timeout = secs("write-timeout", args.write_timeout)?;
    limits.http2_keep_alive_interval = secs("http2-keepalive", args.http2_keepalive)?;
    if let Some(n) = args.max_connections {
        if n == 0 {
            bail!("--max-connections must be at least 1");
        }
        limits.max_connections = n;
    }
    limits.max_header_bytes = args.max_header_bytes;
    if let Some(n) = args.max_in_flight {
        if n == 0 {
            bail!("--max-in-flight must be at least 1");
        }
        limits.max_in_flight = Some(n);
    }
    tracing::info!(
        max_connections = limits.max_connections,
        header_read_timeout = ?limits.header_read_timeout,
        "connection limits"
    );
    Ok(limits)
}
