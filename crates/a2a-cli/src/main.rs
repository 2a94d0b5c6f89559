//! The `a2a` command line: serve agents, talk to any A2A agent, benchmark.

mod commands;
mod output;

use clap::{Parser, Subcommand};

// glibc's allocator showed up as a quarter of the server's CPU time under load (arena
// contention and page churn); jemalloc keeps allocation per-thread and memory flat.
#[global_allocator]
#[cfg(feature = "jemalloc")]
static GLOBAL: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

/// Agent2Agent (A2A) protocol tool: host agents and talk to any A2A agent.
#[derive(Debug, Parser)]
#[command(name = "a2a", version, about, propagate_version = true)]
struct Cli {
    #[command(subcommand)]
    command: Command,
    /// Log lines (on stderr; `A2A_LOG=debug` shows one per request and per task
    /// transition): `text`, or `json` (one object per line, for log collectors).
    #[arg(
        long,
        global = true,
        value_enum,
        default_value = "text",
        env = "A2A_LOG_FORMAT"
    )]
    log_format: LogFormat,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum LogFormat {
    /// Human-readable lines.
    Text,
    /// One JSON object per line.
    Json,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Host the built-in demo agents (or one of them at the root).
    Serve(commands::serve::ServeArgs),
    /// Show an agent's card.
    Card(commands::client::CardArgs),
    /// Send a message and wait for the result.
    Send(commands::client::SendArgs),
    /// Send a message and print the agent's events as they arrive.
    Stream(commands::client::StreamArgs),
    /// Show a task.
    Get(commands::client::GetArgs),
    /// List tasks.
    List(commands::client::ListArgs),
    /// Cancel a task.
    Cancel(commands::client::CancelArgs),
    /// Follow a task's events until it ends.
    Subscribe(commands::client::SubscribeArgs),
    /// Talk to an agent interactively.
    Chat(commands::chat::ChatArgs),
    /// Load-test an agent.
    Bench(commands::bench::BenchArgs),
    /// A bare JSON-RPC endpoint answering a fixed task: the benchmark floor.
    #[command(hide = true)]
    Floor(commands::floor::FloorArgs),
}

fn init_tracing(format: LogFormat) {
    use tracing_subscriber::EnvFilter;
    let filter = EnvFilter::try_from_env("A2A_LOG")
        .or_else(|_| EnvFilter::try_from_default_env())
        .unwrap_or_else(|_| EnvFilter::new("warn"));
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr);
    match format {
        LogFormat::Text => builder.init(),
        LogFormat::Json => builder.json().init(),
    }
}

async fn run(command: Command) -> anyhow::Result<u8> {
    use commands::*;
    match command {
        Command::Serve(a) => serve::run(a).await.map(|()| 0),
        Command::Card(a) => client::card(a).await,
        Command::Send(a) => client::send(a).await,
        Command::Stream(a) => client::stream(a).await,
        Command::Get(a) => client::get(a).await,
        Command::List(a) => client::list(a).await,
        Command::Cancel(a) => client::cancel(a).await,
        Command::Subscribe(a) => client::subscribe(a).await,
        Command::Chat(a) => chat::run(a).await,
        Command::Bench(a) => bench::run(a).await,
        Command::Floor(a) => floor::run(a).await.map(|()| 0),
    }
}

fn main() -> std::process::ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            let _ = e.print();
            // Usage errors are errors (1); status 2 means a task failed (README).
            return std::process::ExitCode::from(u8::from(e.use_stderr()));
        }
    };
    init_tracing(cli.log_format);
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("a2a: cannot start the async runtime: {e}");
            return std::process::ExitCode::FAILURE;
        }
    };
    match runtime.block_on(run(cli.command)) {
        Ok(code) => std::process::ExitCode::from(code),
        Err(e) => {
            eprintln!("a2a: error: {e:#}");
            std::process::ExitCode::from(commands::client::ERROR)
        }
    }
}
