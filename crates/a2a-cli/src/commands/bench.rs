//! `a2a bench`: a load generator built on the client, for any A2A server.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use a2a_client::A2aClient;
use a2a_types::{Message, SendMessageRequest};
use anyhow::{Context, bail};
use clap::{Args, ValueEnum};
use hdrhistogram::Histogram;
use serde_json::json;

use super::bench_conn::{Conn, Target};
use super::common::{ConnectArgs, TimeoutArg};

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum Mode {
    /// Blocking `SendMessage` calls.
    Send,
    /// `SendStreamingMessage` calls, each read to its end.
    Stream,
}

#[derive(Debug, Args)]
pub(crate) struct BenchArgs {
    #[command(flatten)]
    conn: ConnectArgs,
    /// What to call.
    #[arg(long, value_enum, default_value = "send")]
    mode: Mode,
    /// Concurrent connections, each sending one request after another.
    #[arg(long, short = 'c', default_value_t = 32)]
    concurrency: usize,
    /// How long to run, in seconds (ignored with --requests).
    #[arg(long, short = 'd', default_value_t = 10.0)]
    duration: f64,
    /// Stop after this many requests instead.
    #[arg(long, short = 'n')]
    requests: Option<u64>,
    /// Seconds of warm-up load before measuring.
    #[arg(long, default_value_t = 1.0)]
    warmup: f64,
    /// The message text.
    #[arg(long, default_value = "hello")]
    text: String,
    /// Target the agent `/a2a/NAME` under URL (agent hosts).
    #[arg(long)]
    agent: Option<String>,
    /// Prefix of every messageId (drives the TCK agent's scenarios, e.g. `tck-stream-001`).
    #[arg(long)]
    message_id_prefix: Option<String>,
    /// Print the results as JSON.
    #[arg(long)]
    json: bool,
}

#[derive(Debug)]
struct WorkerResult {
    latency_us: Histogram<u64>,
    ok: u64,
    errors: u64,
    events: u64,
    first_error: Option<String>,
}

struct Shared {
    /// Set for `http://` agents: the lean connection path (see `bench_conn`).
    target: Option<Target>,
    mode: Mode,
    text: String,
    prefix: Option<String>,
    stop: AtomicBool,
    measuring: AtomicBool,
    budget: Option<AtomicU64>,
}

impl Shared {
    fn request(&self) -> SendMessageRequest {
        let mut m = Message::user_text(&self.text);
        if let Some(p) = &self.prefix {
            m.message_id = format!("{p}-{}", m.message_id);
        }
        SendMessageRequest::new(m)
    }

    async fn one(&self, client: &A2aClient, conn: &mut Option<Conn>) -> Result<u64, String> {
        if let Some(target) = &self.target {
            if conn.is_none() {
                *conn = Some(
                    Conn::open(target.clone())
                        .await
                        .map_err(|e| format!("{e:#}"))?,
                );
            }
            let c = conn.as_mut().expect("connection just opened");
            let req = self.request();
            let result = match self.mode {
                Mode::Send => c.send(&req).await.map(|()| 0),
                Mode::Stream => c.stream(&req).await,
            };
            if result.is_err() {
                // Start over on a fresh connection.
                *conn = None;
            }
            return result.map_err(|e| format!("{e:#}"));
        }
        match self.mode {
            Mode::Send => client
                .send(self.request())
                .await
                .map(|_| 0)
                .map_err(|e| e.to_string()),
            Mode::Stream => {
                let mut s = client
                    .stream(self.request())
                    .await
                    .map_err(|e| e.to_string())?;
                let mut n = 0;
                while let Some(ev) = s.next().await {
                    ev.map_err(|e| e.to_string())?;
                    n += 1;
                }
                Ok(n)
            }
        }
    }

    fn take_budget(&self) -> bool {
        match &self.budget {
            None => !self.stop.load(Ordering::Relaxed),
            Some(b) => b
                .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| n.checked_sub(1))
                .is_ok(),
        }
    }
}

impl WorkerResult {
    fn new() -> Self {
        Self {
            // 1 µs to 2 minutes, 3 significant digits.
            latency_us: Histogram::new_with_bounds(1, 120_000_000, 3).expect("histogram bounds"),
            ok: 0,
            errors: 0,
            events: 0,
            first_error: None,
        }
    }
}

async fn worker(shared: Arc<Shared>, client: A2aClient) -> WorkerResult {
    let mut r = WorkerResult::new();
    let mut conn = None;
    while shared.take_budget() {
        let start = Instant::now();
        let result = shared.one(&client, &mut conn).await;
        if !shared.measuring.load(Ordering::Relaxed) {
            continue;
        }
        match result {
            Ok(events) => {
                let us = u64::try_from(start.elapsed().as_micros())
                    .unwrap_or(u64::MAX)
                    .max(1);
                let _ = r.latency_us.record(us.min(120_000_000));
                r.ok += 1;
                r.events += events;
            }
            Err(e) => {
                r.errors += 1;
                r.first_error.get_or_insert(e);
            }
        }
    }
    r
}

fn ms(us: u64) -> f64 {
    us as f64 / 1000.0
}

/// Time limit of one call on the library path (plain HTTP uses the lean path).
const CALL_TIMEOUT: TimeoutArg = TimeoutArg { timeout: 60.0 };

pub(crate) async fn run(mut args: BenchArgs) -> anyhow::Result<u8> {
    if args.concurrency == 0 {
        bail!("--concurrency must be at least 1");
    }
    if let Some(agent) = &args.agent {
        args.conn.url = format!("{}/a2a/{agent}", args.conn.url().trim_end_matches('/'));
    }
    let client = args.conn.connect_with(Some(CALL_TIMEOUT)).await?;
    if args.mode == Mode::Stream && !client.supports_streaming() {
        bail!("the agent does not declare streaming; use --mode send");
    }
    let target = match client.endpoint().parse::<http::Uri>() {
        Ok(uri) if uri.scheme_str() == Some("http") => {
            let headers = args.conn.builder(None)?.headers().clone();
            Some(Target {
                uri,
                version: client.protocol_version(),
                headers,
                rest: client.binding() == a2a_types::binding::HTTP_JSON,
            })
        }
        _ => None,
    };
    let shared = Arc::new(Shared {
        target,
        mode: args.mode,
        text: args.text.clone(),
        prefix: args.message_id_prefix.clone(),
        stop: AtomicBool::new(false),
        measuring: AtomicBool::new(args.requests.is_some() || args.warmup <= 0.0),
        budget: args.requests.map(AtomicU64::new),
    });
    // gRPC multiplexes calls on one HTTP/2 connection per client; give each worker its own
    // client (and connection), as each worker has its own connection over HTTP/1.1.
    let own_connection = client.binding() == a2a_types::binding::GRPC;
    let mut workers = Vec::with_capacity(args.concurrency);
    for _ in 0..args.concurrency {
        let client = if own_connection {
            args.conn
                .builder(Some(CALL_TIMEOUT))?
                .with_card(client.card().clone())?
        } else {
            client.clone()
        };
        workers.push(tokio::spawn(worker(shared.clone(), client)));
    }
    if args.requests.is_none() && args.warmup > 0.0 {
        tokio::time::sleep(Duration::from_secs_f64(args.warmup)).await;
        shared.measuring.store(true, Ordering::Relaxed);
    }
    let start = Instant::now();
    if args.requests.is_none() {
        tokio::time::sleep(Duration::from_secs_f64(args.duration)).await;
        shared.stop.store(true, Ordering::Relaxed);
    }
    let mut total = WorkerResult::new();
    for w in workers {
        let r = w.await.context("a bench worker panicked")?;
        total
            .latency_us
            .add(&r.latency_us)
            .context("merging histograms")?;
        total.ok += r.ok;
        total.errors += r.errors;
        total.events += r.events;
        if total.first_error.is_none() {
            total.first_error = r.first_error;
        }
    }
    let elapsed = start.elapsed().as_secs_f64();
    let h = &total.latency_us;
    let rps = total.ok as f64 / elapsed;
    let eps = total.events as f64 / elapsed;
    if args.json {
        crate::output::json_line(&json!({
            "url": client.endpoint(),
            "protocol": client.protocol_version().as_str(),
            "binding": client.binding(),
            "mode": format!("{:?}", args.mode).to_lowercase(),
            "concurrency": args.concurrency,
            "seconds": elapsed,
            "ok": total.ok,
            "errors": total.errors,
            "requests_per_second": rps,
            "events_per_second": eps,
            "latency_ms": {
                "p50": ms(h.value_at_quantile(0.5)),
                "p90": ms(h.value_at_quantile(0.9)),
                "p99": ms(h.value_at_quantile(0.99)),
                "max": ms(h.max()),
            },
            "first_error": total.first_error,
        }));
    } else {
        println!(
            "a2a bench: {:?} x{} for {elapsed:.1} s against {} ({} A2A {})",
            args.mode,
            args.concurrency,
            client.endpoint(),
            client.binding(),
            client.protocol_version().as_str()
        );
        println!("  requests:   {} ok, {} errors", total.ok, total.errors);
        println!("  throughput: {rps:.0} req/s");
        if args.mode == Mode::Stream {
            println!(
                "  events:     {eps:.0} events/s ({:.1} per stream)",
                total.events as f64 / total.ok.max(1) as f64
            );
        }
        println!(
            "  latency:    p50 {:.2} ms  p90 {:.2} ms  p99 {:.2} ms  max {:.2} ms",
            ms(h.value_at_quantile(0.5)),
            ms(h.value_at_quantile(0.9)),
            ms(h.value_at_quantile(0.99)),
            ms(h.max())
        );
        if let Some(e) = &total.first_error {
            println!("  first error: {e}");
        }
    }
    Ok(if total.errors > 0 && total.ok == 0 {
        1
    } else {
        0
    })
}
