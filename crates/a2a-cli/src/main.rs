//! The `a2a` command line: serve agents, talk to any A2A agent, benchmark.

mod commands;
mod output;

use a2a_host::telemetry;
use clap::{Parser, Subcommand};

// glibc's allocator showed up as a quarter of the server's CPU time under load (arena
// contention and page churn); jemalloc keeps allocation per-thread and memory flat.
#[global_allocator]
#[cfg(feature = "jemalloc")]
static GLOBAL: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

/// Lets jemalloc give freed memory back to the system from a thread of its own. Without it,
/// unused pages are returned only while the process allocates: a server that has just
/// closed 10 000 streams and gone quiet kept about 300 MiB it no longer used; with it, it is
/// back within about 60 MiB of its idle size in 30 s (docs/benchmarks.md).
fn return_freed_memory() {
    #[cfg(feature = "jemalloc")]
    if let Err(e) = tikv_jemalloc_ctl::background_thread::write(true) {
        tracing::debug!(error = %e, "jemalloc background thread not started");
    }
}

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
        env = "A2A_LOG_FORMAT",
        help_heading = "Telemetry and logging"
    )]
    log_format: LogFormat,
    /// Export traces over OTLP to this collector (base URL, like `http://localhost:4318`;
    /// for gRPC `http://localhost:4317`). The standard `OTEL_EXPORTER_OTLP_ENDPOINT` and
    /// other `OTEL_*` variables work too.
    #[arg(
        long,
        global = true,
        value_name = "URL",
        help_heading = "Telemetry and logging"
    )]
    otlp_endpoint: Option<String>,
    /// OTLP protocol [default: `OTEL_EXPORTER_OTLP_PROTOCOL`, else http/protobuf].
    #[arg(
        long,
        global = true,
        value_enum,
        help_heading = "Telemetry and logging"
    )]
    otlp_protocol: Option<OtlpProtocolArg>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum LogFormat {
    /// Human-readable lines.
    Text,
    /// One JSON object per line.
    Json,
}

/// OTLP wire protocol.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum OtlpProtocolArg {
    /// Protobuf over HTTP (`http/protobuf`, port 4318).
    #[value(name = "http/protobuf", alias = "http")]
    HttpProtobuf,
    /// gRPC (port 4317).
    Grpc,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Host agents: the built-in demo agents, one of them at the root (--agent), or your
    /// own from a config file (--config).
    Serve(Box<commands::serve::ServeArgs>),
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
    /// Manage a task's push notification webhooks.
    Push(commands::push::PushArgs),
    /// Talk to an agent interactively.
    Chat(commands::chat::ChatArgs),
    /// Load-test an agent.
    Bench(commands::bench::BenchArgs),
    /// A bare JSON-RPC endpoint answering a fixed task: the benchmark floor.
    #[command(hide = true)]
    Floor(commands::floor::FloorArgs),
    /// An OTLP/HTTP trace receiver that counts what it gets: for measuring export cost.
    #[command(hide = true)]
    OtlpSink(commands::otlp_sink::OtlpSinkArgs),
}

async fn run(command: Command) -> anyhow::Result<u8> {
    use commands::*;
    use tracing::Instrument as _;
    let in_span = |name: &'static str| telemetry::command_span(name);
    match command {
        Command::Serve(a) => serve::run(*a).await.map(|()| 0),
        Command::Card(a) => client::card(a).instrument(in_span("card")).await,
        Command::Send(a) => client::send(a).instrument(in_span("send")).await,
        Command::Stream(a) => client::stream(a).instrument(in_span("stream")).await,
        Command::Get(a) => client::get(a).instrument(in_span("get")).await,
        Command::List(a) => client::list(a).instrument(in_span("list")).await,
        Command::Cancel(a) => client::cancel(a).instrument(in_span("cancel")).await,
        Command::Subscribe(a) => client::subscribe(a).instrument(in_span("subscribe")).await,
        Command::Push(a) => push::run(a).instrument(in_span("push")).await,
        Command::Chat(a) => chat::run(a).instrument(in_span("chat")).await,
        Command::Bench(a) => bench::run(a).await,
        Command::Floor(a) => floor::run(a).await.map(|()| 0),
        Command::OtlpSink(a) => otlp_sink::run(a).await.map(|()| 0),
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
    let mut settings = telemetry::ExportSettings::default();
    settings.endpoint = cli.otlp_endpoint.clone();
    settings.protocol = cli.otlp_protocol.map(|p| match p {
        OtlpProtocolArg::HttpProtobuf => telemetry::OtlpProtocol::HttpProtobuf,
        OtlpProtocolArg::Grpc => telemetry::OtlpProtocol::Grpc,
    });
    let format = match cli.log_format {
        LogFormat::Text => telemetry::LogFormat::Text,
        LogFormat::Json => telemetry::LogFormat::Json,
    };
    // Inside the runtime: the gRPC exporter runs on it.
    let telemetry = match runtime.block_on(async { telemetry::init(format, &settings) }) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("a2a: error: {e:#}");
            return std::process::ExitCode::from(commands::client::ERROR);
        }
    };
    if matches!(cli.command, Command::Serve(_)) {
        return_freed_memory();
    }
    let result = runtime.block_on(run(cli.command));
    telemetry.shutdown();
    match result {
        Ok(code) => std::process::ExitCode::from(code),
        Err(e) => {
            eprintln!("a2a: error: {e:#}");
            std::process::ExitCode::from(commands::client::ERROR)
        }
    }
}
