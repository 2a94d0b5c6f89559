//! The `a2a` command line: serve agents, talk to any A2A agent, benchmark.

mod commands;

use clap::{Parser, Subcommand};

// glibc's allocator showed up as a quarter of the server's CPU time under load (arena lock
// contention between worker threads); mimalloc keeps allocation per-thread.
#[global_allocator]
static GLOBAL: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

/// Agent2Agent (A2A) protocol tool: host agents and talk to any A2A agent.
#[derive(Debug, Parser)]
#[command(name = "a2a", version, about, propagate_version = true)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Host the built-in demo agents (or one of them at the root).
    Serve(commands::serve::ServeArgs),
    /// A bare JSON-RPC endpoint answering a fixed task: the benchmark floor.
    #[command(hide = true)]
    Floor(commands::floor::FloorArgs),
}

fn init_tracing() {
    use tracing_subscriber::EnvFilter;
    let filter = EnvFilter::try_from_env("A2A_LOG")
        .or_else(|_| EnvFilter::try_from_default_env())
        .unwrap_or_else(|_| EnvFilter::new("warn,a2a=info"));
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .init();
}

fn main() -> std::process::ExitCode {
    let cli = Cli::parse();
    init_tracing();
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
    let result = runtime.block_on(async {
        match cli.command {
            Command::Serve(args) => commands::serve::run(args).await,
            Command::Floor(args) => commands::floor::run(args).await,
        }
    });
    match result {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("a2a: error: {e:#}");
            std::process::ExitCode::FAILURE
        }
    }
}
