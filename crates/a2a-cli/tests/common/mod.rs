//! Shared helpers: `a2a serve` in a child process, running the binary.
#![allow(dead_code, unreachable_pub)]

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, Command, Output, Stdio};

pub const BIN: &str = env!("CARGO_BIN_EXE_a2a");

pub struct Server {
    pub child: Child,
    pub base: String,
    /// The SQLite file `serve` made for this server alone, removed with it.
    own_store: Option<String>,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        if let Some(path) = self
            .own_store
            .as_deref()
            .and_then(|s| s.strip_prefix("sqlite:"))
        {
            for suffix in ["", "-wal", "-shm"] {
                let _ = std::fs::remove_file(format!("{path}{suffix}"));
            }
        }
    }
}

/// A new SQLite file for one server, in the temporary directory.
pub fn temp_store() -> String {
    use std::sync::atomic::{AtomicU32, Ordering};
    static N: AtomicU32 = AtomicU32::new(0);
    let name = format!(
        "a2a-cli-test-{}-{}.db",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    );
    format!("sqlite:{}", std::env::temp_dir().join(name).display())
}

/// `a2a serve` with `args` on a free port (and its own SQLite file unless `args` say where).
pub fn serve(args: &[&str]) -> Server {
    serve_with(args, None, &[]).0
}

/// [`serve`] with these environment variables set.
pub fn serve_env(args: &[&str], envs: &[(&str, &str)]) -> Server {
    serve_with(args, None, envs).0
}

/// [`serve`], logging at `filter` (an `A2A_LOG` value): the log's lines, as they come.
pub fn serve_logged(args: &[&str], filter: &str) -> (Server, std::sync::mpsc::Receiver<String>) {
    let (server, log) = serve_with(args, Some(filter), &[]);
    (server, log.expect("a log"))
}

fn serve_with(
    args: &[&str],
    log: Option<&str>,
    envs: &[(&str, &str)],
) -> (Server, Option<std::sync::mpsc::Receiver<String>>) {
    let mut cmd = Command::new(BIN);
    cmd.args(["serve", "--port", "0"])
        .args(args)
        .envs(envs.iter().copied());
    let own_store = (!args.contains(&"--store")).then(temp_store);
    if let Some(store) = &own_store {
        cmd.args(["--store", store]);
    }
    if let Some(filter) = log {
        cmd.env("A2A_LOG", filter);
    }
    let (child, base, lines) = start_server(cmd, log.is_some());
    let server = Server {
        child,
        base,
        own_store,
    };
    (server, lines)
}

/// Starts `cmd` (an `a2a serve`), reads its base URL from the banner and keeps draining its
/// output; with `log`, its stderr lines as they come (else stderr is discarded).
pub fn start_server(
    mut cmd: Command,
    log: bool,
) -> (Child, String, Option<std::sync::mpsc::Receiver<String>>) {
    cmd.stderr(if log { Stdio::piped() } else { Stdio::null() });
    let mut child = cmd.stdout(Stdio::piped()).spawn().expect("a2a serve");
    let lines = child.stderr.take().map(|err| {
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(err).lines().map_while(Result::ok) {
                // The receiver may be gone; keep draining so the server never blocks.
                let _ = tx.send(line);
            }
        });
        rx
    });
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    out.read_line(&mut line).unwrap();
    // Keep draining stdout so the server never writes to a closed pipe.
    std::thread::spawn(move || std::io::copy(&mut out, &mut std::io::sink()));
    let base = line
        .split_whitespace()
        .find(|w| w.starts_with("http://") || w.starts_with("https://"))
        .unwrap_or_else(|| panic!("no URL in {line:?}"))
        .trim_end_matches('/')
        .to_owned();
    (child, base, lines)
}

/// Waits up to `within` for a line of `log` that contains every one of `parts`.
pub fn wait_for_line(
    log: &std::sync::mpsc::Receiver<String>,
    parts: &[&str],
    within: std::time::Duration,
) -> Option<String> {
    let deadline = std::time::Instant::now() + within;
    loop {
        let left = deadline.checked_duration_since(std::time::Instant::now())?;
        let line = log.recv_timeout(left).ok()?;
        if parts.iter().all(|p| line.contains(p)) {
            return Some(line);
        }
    }
}

pub fn a2a(args: &[&str]) -> Output {
    Command::new(BIN).args(args).output().expect("run a2a")
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// The id of a task started with `send --no-wait --json`.
pub fn start_task(url: &str, text: &str) -> String {
    let o = a2a(&["send", url, text, "--no-wait", "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    v["task"]["id"].as_str().unwrap().to_owned()
}

/// The state of a task, as `get --json` shows it.
pub fn state_of(url: &str, id: &str) -> String {
    let o = a2a(&["get", url, id, "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    v["status"]["state"].as_str().unwrap_or_default().to_owned()
}

/// `a2a chat URL` with `input` on stdin; its output once stdin is closed.
pub fn chat(url: &str, input: &[u8]) -> Output {
    let mut child = Command::new(BIN)
        .args(["chat", url])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(input).unwrap();
    drop(stdin);
    child.wait_with_output().unwrap()
}

/// A store URL in a new schema of the test PostgreSQL database (`None` when
/// `A2A_TEST_POSTGRES_URL` is unset: printed as skipped; under `CI=true` the test fails).
pub async fn postgres_store() -> Option<String> {
    a2a_store_sql::test_util::postgres_schema_url().await
}

/// Sends `text` to the slow agent at `url` as a stream and returns the task's id once the
/// agent sent its first (`progress`) artifact, i.e. is working and waiting. Only the
/// stream is dropped: the task goes on.
pub async fn slow_task_working(url: &str, text: &str) -> String {
    use a2a_types::{Message, SendMessageRequest, StreamResponse};
    let c = a2a_client::A2aClient::connect(url).await.unwrap();
    let mut stream = c
        .stream(SendMessageRequest::new(Message::user_text(text)))
        .await
        .unwrap();
    let mut task_id = None;
    while let Some(ev) = stream.next().await {
        let ev = ev.unwrap();
        task_id = task_id.or(stream.task_id().map(str::to_owned));
        if matches!(ev.response, StreamResponse::ArtifactUpdate(_)) {
            break;
        }
    }
    task_id.expect("a task")
}

/// Serves `app` on `listener` from a thread with its own runtime, for the rest of the test
/// process (webhook receivers, key sets, cards served by someone else).
pub fn serve_app(listener: std::net::TcpListener, app: axum::Router) {
    listener.set_nonblocking(true).unwrap();
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async move {
            let listener = tokio::net::TcpListener::from_std(listener).unwrap();
            let _ = axum::serve(listener, app).await;
        });
    });
}

/// The test keys, certificates and stores under `tests/fixtures`.
pub const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures");

/// Serves `body` at `GET /jwks` on a loopback port; the URL.
pub fn serve_jwks(body: String) -> String {
    let (listener, addr) = loopback_listener();
    let app = axum::Router::new().route(
        "/jwks",
        axum::routing::get(move || {
            let body = body.clone();
            async move { ([("content-type", "application/json")], body) }
        }),
    );
    serve_app(listener, app);
    format!("http://{addr}/jwks")
}

/// A key set publishing the test key (`fixtures/jwt-es256`, key id `test-key`); its URL.
pub fn jwks_url() -> String {
    let jwk = std::fs::read_to_string(format!("{FIXTURES}/jwt-es256.jwk.json")).unwrap();
    serve_jwks(format!("{{\"keys\":[{jwk}]}}"))
}

/// A token carrying `claims`, signed (ES256, key id `test-key`) with the key in `pem`.
pub fn jwt_signed_by(pem: &str, claims: &serde_json::Value) -> String {
    let mut header = jsonwebtoken::Header::new(jsonwebtoken::Algorithm::ES256);
    header.kid = Some("test-key".into());
    let key = jsonwebtoken::EncodingKey::from_ec_pem(pem.as_bytes()).unwrap();
    jsonwebtoken::encode(&header, claims, &key).unwrap()
}

/// A token carrying `claims`, signed with the test key that [`jwks_url`] publishes.
pub fn test_jwt(claims: serde_json::Value) -> String {
    let pem = std::fs::read_to_string(format!("{FIXTURES}/jwt-es256.pem")).unwrap();
    jwt_signed_by(&pem, &claims)
}

/// Seconds since the epoch.
pub fn unix_now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64
}

/// A listener on a free loopback port, and its address.
pub fn loopback_listener() -> (std::net::TcpListener, std::net::SocketAddr) {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    (listener, addr)
}

/// The value of the sample `{family}{{{label}="{value}"}}` in the server's `/metrics`
/// (0 when absent).
pub fn metric(base: &str, family: &str, label: &str, value: &str) -> f64 {
    let text = reqwest::blocking::get(format!("{base}/metrics"))
        .and_then(|r| r.text())
        .unwrap_or_default();
    let prefix = format!("{family}{{{label}=\"{value}\"}} ");
    text.lines()
        .find_map(|l| l.strip_prefix(&prefix))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(0.0)
}

/// `a2a_connections_refused_total{reason}`.
pub fn refused(base: &str, reason: &str) -> f64 {
    metric(base, "a2a_connections_refused_total", "reason", reason)
}
