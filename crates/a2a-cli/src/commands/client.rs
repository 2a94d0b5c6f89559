//! `a2a card | send | stream | get | list | cancel | subscribe`.

use std::time::Duration;

use a2a_client::{A2aClient, Outcome, StopReason, TaskAccumulator, TaskStream};
use a2a_types::{
    ListTasksRequest, Message, SendMessageConfiguration, SendMessageRequest, TaskState,
};
use anyhow::{Context, bail};
use clap::Args;

use super::common::{ConnectArgs, TimeoutArg};
use crate::output::{self, LivePrinter};

/// Exit status of an error: bad arguments, no connection, an error from the agent.
pub(crate) const ERROR: u8 = 1;
/// Exit status of a command whose task failed, was rejected or canceled.
pub(crate) const TASK_FAILED: u8 = 2;
/// Exit status of a command that stopped waiting (`--wait`); the task goes on.
pub(crate) const GAVE_UP: u8 = 3;
/// Exit status after Ctrl-C (128 + SIGINT, as shells report it); the task goes on.
pub(crate) const INTERRUPTED: u8 = 130;

#[derive(Debug, Args)]
#[command(after_help = "Example:\n  a2a card http://127.0.0.1:41241/a2a/echo")]
pub(crate) struct CardArgs {
    #[command(flatten)]
    conn: ConnectArgs,
    #[command(flatten)]
    timeout: TimeoutArg,
    /// Print the card as JSON.
    #[arg(long)]
    json: bool,
    /// Verify the card's signature (JCS + JWS, spec §8.4) with the key its `jku` names, or
    /// with the keys of --jwks; fails when the card is unsigned, altered or signed by
    /// another key.
    #[arg(long)]
    verify: bool,
    /// The trusted JWK Set to verify with (a file, or an http(s) URL) instead of the
    /// signature's `jku`.
    #[arg(long, value_name = "FILE|URL", requires = "verify")]
    jwks: Option<String>,
}

/// Verifies the signature of the card at `url`, as served; the line that says by which key.
async fn verify_card(args: &CardArgs) -> anyhow::Result<String> {
    use a2a_client::signature;
    let http = args.conn.http_client()?;
    let mut raw = None;
    for card_url in a2a_client::card::card_urls(&args.conn.url())? {
        let resp = http.get(card_url.clone()).send().await?;
        if resp.status().is_success() {
            let origin = resp.url().origin();
            raw = Some((resp.json::<serde_json::Value>().await?, origin));
            break;
        }
    }
    let (raw, origin) = raw.context("no agent card at this URL")?;
    let headers = signature::signature_headers(&raw)?;
    let (keys, source) = match &args.jwks {
        Some(src) if src.starts_with("http://") || src.starts_with("https://") => {
            (signature::fetch_keys(&http, src).await?, src.clone())
        }
        Some(path) => {
            let text = std::fs::read_to_string(path).with_context(|| format!("--jwks {path}"))?;
            (
                serde_json::from_str(&text).with_context(|| format!("--jwks {path}"))?,
                path.clone(),
            )
        }
        None => {
            let jku = headers
                .iter()
                .find_map(|(h, _)| h.jku.clone())
                .context("the signature names no key set (jku); pass --jwks")?;
            // The card names its own key set: trusting one elsewhere would let whoever
            // altered the card sign it with their own key.
            let same_origin = reqwest::Url::parse(&jku).is_ok_and(|u| u.origin() == origin);
            if !same_origin {
                bail!(
                    "the signature's key set {jku} is not served by the card's own server; pass --jwks with the keys you trust"
                );
            }
            (signature::fetch_keys(&http, &jku).await?, jku)
        }
    };
    let kid = signature::verify_card(&raw, &keys)?;
    Ok(format!("signature: verified with key {kid} from {source}"))
}

pub(crate) async fn card(args: CardArgs) -> anyhow::Result<u8> {
    let verified = if args.verify {
        Some(verify_card(&args).await?)
    } else {
        None
    };
    let client = args.conn.connect_with(Some(args.timeout)).await?;
    let card = client.card();
    if args.json {
        output::json_pretty(card);
        if let Some(line) = verified {
            eprintln!("{line}");
        }
        return Ok(0);
    }
    if let Some(line) = verified {
        println!("{line}");
    }
    println!("{} (version {})", card.name, card.version);
    println!("  {}", card.description);
    for i in &card.supported_interfaces {
        let tenant = i
            .tenant
            .as_deref()
            .map(|t| format!(" (tenant {t})"))
            .unwrap_or_default();
        println!(
            "  interface: {} {} at {}{tenant}",
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
        "  using: {} {} at {}",
        client.binding(),
        client.protocol_version().as_str(),
        client.endpoint()
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
#[command(
    after_help = "Examples:\n  a2a send http://127.0.0.1:41241/a2a/echo \"task: hello\"\n  a2a send http://127.0.0.1:41241/a2a/slow 10 --wait 2   # give up waiting after 2 s; the task goes on"
)]
pub(crate) struct SendArgs {
    #[command(flatten)]
    conn: ConnectArgs,
    #[command(flatten)]
    timeout: TimeoutArg,
    #[command(flatten)]
    message: MessageArgs,
    /// Return as soon as the task exists instead of waiting for it to finish.
    #[arg(long, conflicts_with_all = ["wait", "blocking"])]
    no_wait: bool,
    /// Wait with one blocking SendMessage call even when the agent streams (by default an
    /// agent that streams is followed, so that a --timeout that runs out names the task).
    #[arg(long)]
    blocking: bool,
    /// Stop waiting after this many seconds: print the task id, its state and what arrived
    /// so far, and exit with status 3. The task is not canceled.
    #[arg(long, value_name = "SECONDS")]
    wait: Option<f64>,
    /// History messages to return.
    #[arg(long)]
    history: Option<i32>,
    /// Print the result as JSON.
    #[arg(long)]
    json: bool,
}

/// The exit status of a command that ran or followed a task (see the README's table).
pub(crate) fn exit_code(o: &Outcome) -> u8 {
    match o {
        Outcome::Failed(_) | Outcome::Rejected(_) | Outcome::Canceled(_) => TASK_FAILED,
        Outcome::Stopped(_) => GAVE_UP,
        _ => 0,
    }
}

fn wait_duration(secs: f64) -> anyhow::Result<Duration> {
    Duration::try_from_secs_f64(secs)
        .ok()
        .context("--wait must be a number of seconds, 0 or more")
}

pub(crate) async fn send(args: SendArgs) -> anyhow::Result<u8> {
    let mut req = args.message.request()?;
    let mut conf = SendMessageConfiguration::default();
    conf.return_immediately = args.no_wait;
    conf.history_length = args.history;
    req.configuration = Some(conf);
    if let Some(secs) = args.wait {
        // Follows the task (streaming when the agent streams) until it ends or time is up.
        let client = args.conn.connect_with(Some(args.timeout)).await?;
        let outcome = client.run_with_deadline(req, wait_duration(secs)?).await?;
        if args.json {
            output::json_outcome(&outcome);
        } else {
            output::print_outcome(&outcome);
            summary(&outcome, &args.conn);
        }
        return Ok(exit_code(&outcome));
    }
    let limit = Duration::from_secs_f64(args.timeout.timeout.max(0.001));
    // One client, connected once; the time limit is applied here, as the deadline of a
    // followed task or around one blocking call, rather than by the HTTP client.
    let client = match tokio::time::timeout(limit, args.conn.connect_with(None)).await {
        Ok(client) => client?,
        Err(_) => bail!(
            "{}: no agent card within {}",
            args.conn.url(),
            seconds(limit)
        ),
    };
    if !args.no_wait && !args.blocking && client.supports_streaming() {
        // An agent that streams is followed, so that a time limit that runs out can still
        // say which task it was and how far it got (a blocking answer brings the task id
        // only with the answer).
        let outcome = client.run_with_deadline(req, limit).await?;
        print_followed(&outcome, args.json);
        if let Outcome::Stopped(stopped) = &outcome {
            timed_out(stopped, limit, &args.conn);
            return Ok(ERROR);
        }
        return Ok(exit_code(&outcome));
    }
    let Ok(resp) = tokio::time::timeout(limit, client.send(req)).await else {
        let hint = if args.no_wait {
            ""
        } else {
            " A blocking call brings the task id only with the answer: --no-wait returns it at once"
        };
        bail!(
            "{}: no answer within {}; the agent may still be working on it (a time limit does not cancel).{hint}",
            client.endpoint(),
            seconds(limit)
        );
    };
    let resp = resp?;
    if args.json {
        output::json_pretty(&resp);
    }
    let outcome = Outcome::from_response(resp);
    if !args.json {
        output::print_outcome(&outcome);
    }
    Ok(exit_code(&outcome))
}

/// `1 s`, `2.5 s`.
pub(crate) fn seconds(d: Duration) -> String {
    format!("{} s", (d.as_secs_f64() * 1000.0).round() / 1000.0)
}

fn print_followed(outcome: &Outcome, json: bool) {
    if json {
        output::json_outcome(outcome);
    } else {
        output::print_outcome(outcome);
    }
}

/// Says on stderr, after what arrived, that a `send`'s time limit ran out while following
/// its task: the task id, its last state, and that it keeps running.
fn timed_out(stopped: &a2a_client::Stopped, limit: Duration, conn: &ConnectArgs) {
    let url = conn.url();
    match (stopped.task_id(), &stopped.task) {
        (Some(id), Some(task)) => eprintln!(
            "a2a: error: timed out after {}: task {id} is {} and keeps running; follow it with: a2a subscribe {url} {id}; cancel it with: a2a cancel {url} {id}",
            seconds(limit),
            output::state_label(task.status.state),
        ),
        _ => eprintln!(
            "a2a: error: timed out after {} before the agent created a task",
            seconds(limit)
        ),
    }
}

#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  a2a stream http://127.0.0.1:41241/a2a/multi start\n  a2a stream http://127.0.0.1:41241/a2a/slow 10 --wait 0.25   # stop following; the task goes on\n\nCtrl-C stops following too; the task keeps running (a2a cancel URL TASK_ID stops it)."
)]
pub(crate) struct StreamArgs {
    #[command(flatten)]
    conn: ConnectArgs,
    #[command(flatten)]
    message: MessageArgs,
    /// Stop following after this many seconds: print the task id, its state and what
    /// arrived so far, and exit with status 3. The task is not canceled.
    #[arg(long, value_name = "SECONDS")]
    wait: Option<f64>,
    /// Print each event as a JSON line.
    #[arg(long)]
    json: bool,
}

/// How following a stream ended.
pub(crate) enum Followed {
    /// The stream reached its end, or `--wait` ran out ([`Outcome::Stopped`]).
    Done(Outcome),
    /// Ctrl-C; what arrived so far ([`Outcome::Stopped`]).
    Interrupted(Outcome),
}

/// Prints a task stream live until it ends, `wait` passes, or Ctrl-C.
pub(crate) async fn follow(
    mut stream: TaskStream,
    json: bool,
    wait: Option<Duration>,
) -> anyhow::Result<Followed> {
    let mut acc = TaskAccumulator::new();
    let mut printer = LivePrinter::default();
    let deadline = async {
        match wait {
            Some(d) => tokio::time::sleep(d).await,
            None => std::future::pending().await,
        }
    };
    tokio::pin!(deadline);
    let interrupt = interrupted()?;
    tokio::pin!(interrupt);
    loop {
        tokio::select! {
            ev = stream.next() => {
                let Some(ev) = ev else { break };
                let ev = ev?;
                acc.apply(&ev.response);
                if json {
                    output::json_line(&ev.response);
                } else {
                    printer.event(&ev);
                }
            }
            () = &mut deadline => {
                printer.finish();
                return Ok(Followed::Done(acc.into_stopped(StopReason::Deadline)));
            }
            () = &mut interrupt => {
                printer.finish();
                return Ok(Followed::Interrupted(acc.into_stopped(StopReason::Listener)));
            }
        }
    }
    printer.finish();
    Ok(Followed::Done(acc.into_outcome()?))
}

/// Resolves at Ctrl-C. The handler is installed now, not when the future is first polled,
/// so an interrupt that comes before the first event is not lost.
fn interrupted() -> anyhow::Result<impl std::future::Future<Output = ()>> {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        let mut sigint = signal(SignalKind::interrupt()).context("cannot watch for Ctrl-C")?;
        Ok(async move {
            sigint.recv().await;
        })
    }
    #[cfg(not(unix))]
    {
        Ok(async {
            let _ = tokio::signal::ctrl_c().await;
        })
    }
}

/// The closing line of `send --wait`, `stream` and `subscribe`.
fn summary(o: &Outcome, conn: &ConnectArgs) {
    match o {
        Outcome::InputRequired(i) | Outcome::AuthRequired(i) => println!(
            "the agent is waiting: continue with --task {} --context {}",
            i.task_id(),
            i.context_id()
        ),
        Outcome::Completed(t) => {
            println!(
                "completed: task {} ({})",
                t.id,
                output::count(t.artifacts.len(), "artifact")
            )
        }
        Outcome::Failed(_) | Outcome::Rejected(_) | Outcome::Canceled(_) => {
            let state = o.task().map_or(TaskState::Unspecified, |t| t.status.state);
            let name = output::state_label(state);
            match o.reason().filter(|r| !r.trim().is_empty()) {
                Some(reason) => println!("{name}: {reason}"),
                None => println!("{name}"),
            }
        }
        Outcome::Stopped(s) => {
            let state = s
                .task
                .as_ref()
                .map_or("not started", |t| output::state_label(t.status.state));
            match s.task_id() {
                Some(id) => println!(
                    "stopped waiting: task {id} is {state} and keeps running; cancel it with: a2a cancel {} {id}",
                    conn.url()
                ),
                None => println!("stopped waiting before the agent created a task"),
            }
        }
        _ => {}
    }
}

/// Ends a followed stream: closing line, exit status.
fn finish_follow(followed: Followed, json: bool, conn: &ConnectArgs) -> u8 {
    match followed {
        Followed::Done(o) => {
            if json {
                if matches!(o, Outcome::Stopped(_)) {
                    output::json_outcome(&o);
                }
            } else {
                summary(&o, conn);
            }
            exit_code(&o)
        }
        Followed::Interrupted(o) => {
            // Always on stderr: stdout may be a pipe of JSON lines.
            match o.task_id() {
                Some(id) => eprintln!(
                    "\ninterrupted: task {id} keeps running on the agent; cancel it with: a2a cancel {} {id}",
                    conn.url()
                ),
                None => eprintln!("\ninterrupted"),
            }
            INTERRUPTED
        }
    }
}

pub(crate) async fn stream(args: StreamArgs) -> anyhow::Result<u8> {
    let client = args.conn.connect().await?;
    let req = args.message.request()?;
    let wait = args.wait.map(wait_duration).transpose()?;
    if !client.supports_streaming() {
        eprintln!("a2a: the agent does not stream; sending instead");
        let o = match wait {
            Some(d) => client.run_with_deadline(req, d).await?,
            None => Outcome::from_response(client.send(req).await?),
        };
        output::print_outcome(&o);
        return Ok(exit_code(&o));
    }
    let followed = follow(client.stream(req).await?, args.json, wait).await?;
    Ok(finish_follow(followed, args.json, &args.conn))
}

#[derive(Debug, Args)]
#[command(after_help = "Example:\n  a2a get http://127.0.0.1:41241/a2a/echo TASK_ID --history 5")]
pub(crate) struct GetArgs {
    #[command(flatten)]
    conn: ConnectArgs,
    #[command(flatten)]
    timeout: TimeoutArg,
    /// The task id.
    task: String,
    /// History messages to return.
    #[arg(long)]
    history: Option<i32>,
    /// Print JSON.
    #[arg(long)]
    json: bool,
}

#[derive(Debug, Args)]
#[command(after_help = "Example:\n  a2a cancel http://127.0.0.1:41241/a2a/slow TASK_ID")]
pub(crate) struct CancelArgs {
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
#[command(
    after_help = "Example:\n  a2a subscribe http://127.0.0.1:41241/a2a/slow TASK_ID\n\nCtrl-C stops following; the task keeps running."
)]
pub(crate) struct SubscribeArgs {
    #[command(flatten)]
    conn: ConnectArgs,
    /// The task id.
    task: String,
    /// Stop following after this many seconds (exit status 3); the task goes on.
    #[arg(long, value_name = "SECONDS")]
    wait: Option<f64>,
    /// Print each event as a JSON line.
    #[arg(long)]
    json: bool,
}

pub(crate) async fn get(args: GetArgs) -> anyhow::Result<u8> {
    let client = args.conn.connect_with(Some(args.timeout)).await?;
    let task = client.get_task(&args.task, args.history).await?;
    if args.json {
        output::json_pretty(&task);
    } else {
        output::print_task(&task);
    }
    Ok(0)
}

/// Exits 0 once the task is canceled; a task that cannot be canceled (it already ended)
/// is the agent's error, exit 1.
pub(crate) async fn cancel(args: CancelArgs) -> anyhow::Result<u8> {
    let client = args.conn.connect_with(Some(args.timeout)).await?;
    let task = client.cancel_task(&args.task).await?;
    if args.json {
        output::json_pretty(&task);
    } else {
        output::print_task(&task);
    }
    if task.status.state == TaskState::Canceled {
        Ok(0)
    } else {
        eprintln!(
            "a2a: the agent accepted the cancel request, but task {} is {}",
            task.id,
            output::state_label(task.status.state)
        );
        Ok(ERROR)
    }
}

pub(crate) async fn subscribe(args: SubscribeArgs) -> anyhow::Result<u8> {
    let client = args.conn.connect().await?;
    let wait = args.wait.map(wait_duration).transpose()?;
    let followed = follow(client.subscribe(&args.task).await?, args.json, wait).await?;
    Ok(finish_follow(followed, args.json, &args.conn))
}

#[derive(Debug, Args)]
#[command(after_help = "Example:\n  a2a list http://127.0.0.1:41241/a2a/slow --state working")]
pub(crate) struct ListArgs {
    #[command(flatten)]
    conn: ConnectArgs,
    #[command(flatten)]
    timeout: TimeoutArg,
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
    let client: A2aClient = args.conn.connect_with(Some(args.timeout)).await?;
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
    match (page.tasks.len(), page.total_size) {
        (0, 0) => println!("no tasks"),
        (shown, total) if usize::try_from(total).ok() == Some(shown) => {
            println!("{}", output::count(shown, "task"))
        }
        (shown, total) => println!(
            "{shown} of {}",
            output::count(usize::try_from(total).unwrap_or(0), "task")
        ),
    }
    if !page.next_page_token.is_empty() {
        println!("next page: --page-token {}", page.next_page_token);
    }
    Ok(0)
}
