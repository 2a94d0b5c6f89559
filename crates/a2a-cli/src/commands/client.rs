//! `a2a card | send | stream | get | list | cancel | subscribe`.

use a2a_client::{A2aClient, Outcome, TaskAccumulator, TaskStream};
use a2a_types::{
    ListTasksRequest, Message, SendMessageConfiguration, SendMessageRequest, TaskState,
};
use anyhow::Context;
use clap::Args;

use super::common::ConnectArgs;
use crate::output::{self, LivePrinter};

/// Exit status of a command whose task failed, was rejected or canceled.
pub(crate) const TASK_FAILED: u8 = 2;

#[derive(Debug, Args)]
pub(crate) struct CardArgs {
    #[command(flatten)]
    conn: ConnectArgs,
    /// Print the card as JSON.
    #[arg(long)]
    json: bool,
}

pub(crate) async fn card(args: CardArgs) -> anyhow::Result<u8> {
    let client = args.conn.connect().await?;
    let card = client.card();
    if args.json {
        output::json_pretty(card);
        return Ok(0);
    }
    println!("{} (version {})", card.name, card.version);
    println!("  {}", card.description);
    for i in &card.supported_interfaces {
        println!(
            "  interface: {} {} at {}",
            i.protocol_binding, i.protocol_version, i.url
        );
    }
    let caps = &card.capabilities;
    println!(
        "  streaming: {}  push notifications: {}  extended card: {}",
        caps.streaming.unwrap_or(false),
        caps.push_notifications.unwrap_or(false),
        caps.extended_agent_card.unwrap_or(false)
    );
    println!(
        "  input: {}  output: {}",
        card.default_input_modes.join(", "),
        card.default_output_modes.join(", ")
    );
    for s in &card.skills {
        println!("  skill {}: {} — {}", s.id, s.name, s.description);
    }
    println!(
        "  using: {} (A2A {})",
        client.endpoint(),
        client.protocol_version().as_str()
    );
    Ok(0)
}

/// A message to send.
#[derive(Debug, Args)]
pub(crate) struct MessageArgs {
    /// The text to send.
    text: String,
    /// Continue this context.
    #[arg(long)]
    context: Option<String>,
    /// Continue this task (one waiting for input).
    #[arg(long)]
    task: Option<String>,
    /// Use this messageId (for agents that key on it, like the TCK agent).
    #[arg(long)]
    message_id: Option<String>,
    /// Request metadata as a JSON object.
    #[arg(long)]
    metadata: Option<String>,
}

impl MessageArgs {
    fn request(&self) -> anyhow::Result<SendMessageRequest> {
        let mut m = Message::user_text(&self.text);
        m.context_id.clone_from(&self.context);
        m.task_id.clone_from(&self.task);
        if let Some(id) = &self.message_id {
            m.message_id.clone_from(id);
        }
        let mut req = SendMessageRequest::new(m);
        if let Some(md) = &self.metadata {
            req.metadata =
                Some(serde_json::from_str(md).context("--metadata must be a JSON object")?);
        }
        Ok(req)
    }
}

#[derive(Debug, Args)]
pub(crate) struct SendArgs {
    #[command(flatten)]
    conn: ConnectArgs,
    #[command(flatten)]
    message: MessageArgs,
    /// Return as soon as the task exists instead of waiting for it to finish.
    #[arg(long)]
    no_wait: bool,
    /// History messages to return.
    #[arg(long)]
    history: Option<i32>,
    /// Print the result as JSON.
    #[arg(long)]
    json: bool,
}

fn exit_code(o: &Outcome) -> u8 {
    match o {
        Outcome::Failed(_) | Outcome::Rejected(_) | Outcome::Canceled(_) => TASK_FAILED,
        _ => 0,
    }
}

pub(crate) async fn send(args: SendArgs) -> anyhow::Result<u8> {
    let client = args.conn.connect().await?;
    let mut req = args.message.request()?;
    let mut conf = SendMessageConfiguration::default();
    conf.return_immediately = args.no_wait;
    conf.history_length = args.history;
    req.configuration = Some(conf);
    let resp = client.send(req).await?;
    if args.json {
        output::json_pretty(&resp);
    }
    let outcome = Outcome::from_response(resp);
    if !args.json {
        output::print_outcome(&outcome);
    }
    Ok(exit_code(&outcome))
}

#[derive(Debug, Args)]
pub(crate) struct StreamArgs {
    #[command(flatten)]
    conn: ConnectArgs,
    #[command(flatten)]
    message: MessageArgs,
    /// Print each event as a JSON line.
    #[arg(long)]
    json: bool,
}

/// Prints a task stream live; returns the outcome.
pub(crate) async fn follow(mut stream: TaskStream, json: bool) -> anyhow::Result<Outcome> {
    let mut acc = TaskAccumulator::new();
    let mut printer = LivePrinter::default();
    while let Some(ev) = stream.next().await {
        let ev = ev?;
        acc.apply(&ev.response);
        if json {
            output::json_line(&ev.response);
        } else {
            printer.event(&ev);
        }
    }
    printer.finish();
    Ok(acc.into_outcome()?)
}

fn summary(o: &Outcome) {
    match o {
        Outcome::InputRequired(i) | Outcome::AuthRequired(i) => println!(
            "the agent is waiting: continue with --task {} --context {}",
            i.task_id(),
            i.context_id()
        ),
        Outcome::Completed(t) => {
            println!("completed: task {} ({} artifacts)", t.id, t.artifacts.len())
        }
        Outcome::Failed(_) | Outcome::Rejected(_) | Outcome::Canceled(_) => {
            let state = o.task().map_or(TaskState::Unspecified, |t| t.status.state);
            println!(
                "{}: {}",
                state
                    .as_str()
                    .trim_start_matches("TASK_STATE_")
                    .to_lowercase(),
                o.reason().unwrap_or_default()
            );
        }
        _ => {}
    }
}

pub(crate) async fn stream(args: StreamArgs) -> anyhow::Result<u8> {
    let client = args.conn.connect().await?;
    let req = args.message.request()?;
    let outcome = if client.supports_streaming() {
        follow(client.stream(req).await?, args.json).await?
    } else {
        eprintln!("a2a: the agent does not stream; sending instead");
        let o = Outcome::from_response(client.send(req).await?);
        output::print_outcome(&o);
        o
    };
    if !args.json {
        summary(&outcome);
    }
    Ok(exit_code(&outcome))
}

#[derive(Debug, Args)]
pub(crate) struct TaskArgs {
    #[command(flatten)]
    conn: ConnectArgs,
    /// The task id.
    task: String,
    /// History messages to return (get).
    #[arg(long)]
    history: Option<i32>,
    /// Print JSON.
    #[arg(long)]
    json: bool,
}

pub(crate) async fn get(args: TaskArgs) -> anyhow::Result<u8> {
    let client = args.conn.connect().await?;
    let task = client.get_task(&args.task, args.history).await?;
    if args.json {
        output::json_pretty(&task);
    } else {
        output::print_task(&task);
    }
    Ok(0)
}

pub(crate) async fn cancel(args: TaskArgs) -> anyhow::Result<u8> {
    let client = args.conn.connect().await?;
    let task = client.cancel_task(&args.task).await?;
    if args.json {
        output::json_pretty(&task);
    } else {
        output::print_task(&task);
    }
    Ok(if task.status.state == TaskState::Canceled {
        0
    } else {
        TASK_FAILED
    })
}

pub(crate) async fn subscribe(args: TaskArgs) -> anyhow::Result<u8> {
    let client = args.conn.connect().await?;
    let outcome = follow(client.subscribe(&args.task).await?, args.json).await?;
    if !args.json {
        summary(&outcome);
    }
    Ok(exit_code(&outcome))
}

#[derive(Debug, Args)]
pub(crate) struct ListArgs {
    #[command(flatten)]
    conn: ConnectArgs,
    /// Only tasks of this context.
    #[arg(long)]
    context: Option<String>,
    /// Only tasks in this state (for example `working`, `completed`).
    #[arg(long)]
    state: Option<String>,
    /// Page size (1-100).
    #[arg(long)]
    page_size: Option<i32>,
    /// Page token from a previous listing.
    #[arg(long)]
    page_token: Option<String>,
    /// Print JSON.
    #[arg(long)]
    json: bool,
}

pub(crate) async fn list(args: ListArgs) -> anyhow::Result<u8> {
    let client: A2aClient = args.conn.connect().await?;
    let mut req = ListTasksRequest::default();
    req.context_id = args.context;
    req.page_size = args.page_size;
    req.page_token = args.page_token;
    if let Some(s) = &args.state {
        let name = format!("TASK_STATE_{}", s.to_ascii_uppercase().replace('-', "_"));
        req.status = Some(
            TaskState::from_name(&name)
                .or_else(|| TaskState::from_name(s))
                .with_context(|| format!("unknown state {s:?}"))?,
        );
    }
    let page = client.list_tasks(req).await?;
    if args.json {
        output::json_pretty(&page);
        return Ok(0);
    }
    for t in &page.tasks {
        let ts = t
            .status
            .timestamp
            .map(|t| a2a_types::format_timestamp(&t))
            .unwrap_or_default();
        println!(
            "{}  {:<16} {}  context {}",
            t.id,
            t.status.state.as_str().trim_start_matches("TASK_STATE_"),
            ts,
            t.context_id
        );
    }
    println!("{} of {} tasks", page.tasks.len(), page.total_size);
    if !page.next_page_token.is_empty() {
        println!("next page: --page-token {}", page.next_page_token);
    }
    Ok(0)
}
