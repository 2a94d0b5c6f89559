//! Push notification configuration.

use serde::{Deserialize, Serialize};

use crate::serde_util;

/// Credentials the server presents when calling a webhook.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct AuthenticationInfo {
    /// HTTP authentication scheme, for example `Bearer`.
    #[serde(default, deserialize_with = "serde_util::string::deserialize")]
    pub scheme: String,
    /// The credentials.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "serde_util::opt_string::deserialize"
    )]
    pub credentials: Option<String>,
}

/// A webhook registered for a task's updates.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct TaskPushNotificationConfig {
    /// Tenant, when the agent is multi-tenant.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "serde_util::opt_string::deserialize"
    )]
    pub tenant: Option<String>,
    /// Server-assigned config id.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "serde_util::opt_string::deserialize"
    )]
    pub id: Option<String>,
    /// The task.
    #[serde(
        default,
        alias = "task_id",
        skip_serializing_if = "Option::is_none",
        deserialize_with = "serde_util::opt_string::deserialize"
    )]
    pub task_id: Option<String>,
    /// The webhook URL.
    #[serde(default, deserialize_with = "serde_util::string::deserialize")]
    pub url: String,
    /// A token the webhook can check.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "serde_util::opt_string::deserialize"
    )]
    pub token: Option<String>,
    /// How the server authenticates to the webhook.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub authentication: Option<AuthenticationInfo>,
}

/// The `request_body_sha256` claim of a push notification's signature (see
/// [`NOTIFICATION_SIGNATURE_HEADER`](crate::NOTIFICATION_SIGNATURE_HEADER)): the SHA-256 of
/// the exact body bytes, in lowercase hex.
pub fn notification_body_digest(body: &[u8]) -> String {
    use sha2::Digest as _;
    use std::fmt::Write as _;
    let digest = sha2::Sha256::digest(body);
    let mut hex = String::with_capacity(64);
    for b in digest {
        let _ = write!(hex, "{b:02x}");
    }
    hex
}
