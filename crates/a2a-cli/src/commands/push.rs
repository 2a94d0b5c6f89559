//! `a2a push`: a task's push notification configs (webhooks).

use a2a_types::{AuthenticationInfo, TaskPushNotificationConfig};
use clap::{Args, Subcommand};

use super::common::{ConnectArgs, TimeoutArg};
use crate::output;

/// What to do with push configs.
#[derive(Debug, Subcommand)]
pub(crate) enum PushCommand {
    /// Register a webhook for a task's updates.
    #[command(
        after_help = "Example:\n  a2a push create http://127.0.0.1:41241/a2a/slow TASK_ID https://hooks.example.com/a2a --auth-credentials s3cret"
    )]
    Create(CreateArgs),
    /// List a task's webhooks.
    List(TaskArgs),
    /// Show one webhook of a task.
    Get(ConfigArgs),
    /// Remove a webhook (removing an absent one succeeds).
    Delete(ConfigArgs),
}

/// `a2a push …`.
#[derive(Debug, Args)]
pub(crate) struct PushArgs {
    #[command(subcommand)]
    command: PushCommand,
}

#[derive(Debug, Args)]
pub(crate) struct CreateArgs {
    #[command(flatten)]
    conn: ConnectArgs,
    #[command(flatten)]
    timeout: TimeoutArg,
    /// The task id.
    task: String,
    /// The webhook URL the agent POSTs each update to.
    webhook: String,
    /// The config id (default: the agent assigns one).
    #[arg(long)]
    id: Option<String>,
    /// A token the agent sends back in `X-A2A-Notification-Token`.
    #[arg(long = "notification-token")]
    notification_token: Option<String>,
    /// The scheme of the `Authorization` header the agent sends.
    #[arg(long, default_value = "Bearer")]
    auth_scheme: String,
    /// The credentials of that header (none: no `Authorization` header).
    #[arg(long)]
    auth_credentials: Option<String>,
    /// Print JSON.
    #[arg(long)]
    json: bool,
}

#[derive(Debug, Args)]
pub(crate) struct TaskArgs {
    #[command(flatten)]
    conn: ConnectArgs,
    #[command(flatten)]
    timeout: TimeoutArg,
    /// The task id.
    task: String,
    /// Print JSON.
    #[arg(long)]
    json: bool,
}

#[derive(Debug, Args)]
pub(crate) struct ConfigArgs {
    #[command(flatten)]
    conn: ConnectArgs,
    #[command(flatten)]
    timeout: TimeoutArg,
    /// The task id.
    task: String,
    /// The config id.
    id: String,
    /// Print JSON.
    #[arg(long)]
    json: bool,
}

fn print(config: &TaskPushNotificationConfig, json: bool) {
    if json {
        output::json_pretty(config);
    } else {
        println!(
            "{}  {}{}",
            config.id.as_deref().unwrap_or("-"),
            config.url,
            config
                .authentication
                .as_ref()
                .map(|a| format!("  (Authorization: {} …)", a.scheme))
                .unwrap_or_default()
        );
    }
}

pub(crate) async fn run(args: PushArgs) -> anyhow::Result<u8> {
    match args.command {
        PushCommand::Create(a) => {
            let client = a.conn.connect_with(Some(a.timeout)).await?;
            let mut config = TaskPushNotificationConfig::default();
            config.id = a.id;
            config.url = a.webhook;
            config.token = a.notification_token;
            if let Some(credentials) = a.auth_credentials {
                let mut auth = AuthenticationInfo::default();
                auth.scheme = a.auth_scheme;
                auth.credentials = Some(credentials);
                config.authentication = Some(auth);
            }
            let created = client.create_push_config(&a.task, config).await?;
            print(&created, a.json);
        }
        PushCommand::List(a) => {
            let client = a.conn.connect_with(Some(a.timeout)).await?;
            let configs = client.push_configs(&a.task).await?;
            if a.json {
                output::json_pretty(&configs);
            } else {
                for c in &configs {
                    print(c, false);
                }
            }
        }
        PushCommand::Get(a) => {
            let client = a.conn.connect_with(Some(a.timeout)).await?;
            print(&client.push_config(&a.task, &a.id).await?, a.json);
        }
        PushCommand::Delete(a) => {
            let client = a.conn.connect_with(Some(a.timeout)).await?;
            client.delete_push_config(&a.task, &a.id).await?;
        }
    }
    Ok(0)
}
