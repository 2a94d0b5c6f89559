//! Helpers: the Python interpreter with the SDK, our host on a free port, the Python
//! reference server as a subprocess.
#![allow(dead_code, unreachable_pub)]

use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;

use a2a_host::AgentHost;
use a2a_server::ServeOptions;

/// The Python interpreter with `a2a-sdk`, or `None` (the test prints that it is skipped).
/// Under `CI=true` a missing interpreter fails the test instead: CI must run interop.
pub fn python() -> Option<String> {
    match std::env::var("A2A_INTEROP_PYTHON") {
        Ok(p) if !p.is_empty() => Some(p),
        _ if std::env::var("CI").as_deref() == Ok("true") => {
            panic!("A2A_INTEROP_PYTHON is not set, and CI=true: run the tests with scripts/test.sh")
        }
        _ => {
            eprintln!(
                "SKIPPED: A2A_INTEROP_PYTHON is not set (scripts/test.sh installs the official \
                 Python SDK and sets it)"
            );
            None
        }
    }
}

pub fn python_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("python")
}

/// Our demo agents on 127.0.0.1:0; returns the base URL.
pub async fn start_host() -> String {
    let host = AgentHost::new(ServeOptions::default()).with_builtin_agents();
    let addr = a2a_server::spawn_local(host.router()).await.unwrap();
    format!("http://{addr}")
}

/// Runs a scenario of `sdk_client.py`; returns its JSON output.
pub async fn sdk_scenario(
    python: &str,
    scenario: &str,
    url: &str,
    protocol: Option<&str>,
) -> serde_json::Value {
    let mut cmd = tokio::process::Command::new(python);
    cmd.arg(python_dir().join("sdk_client.py"))
        .arg(scenario)
        .arg(url);
    match protocol {
        // v1.0 over HTTP+JSON.
        Some("rest") => {
            cmd.args(["--protocol", "1.0", "--binding", "HTTP+JSON"]);
        }
        // v1.0 over gRPC.
        Some("grpc") => {
            cmd.args(["--protocol", "1.0", "--binding", "GRPC"]);
        }
        Some(p) => {
            cmd.arg("--protocol").arg(p);
        }
        None => {}
    }
    let out = tokio::time::timeout(Duration::from_secs(60), cmd.output())
        .await
        .expect("scenario timed out")
        .expect("cannot run python");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "scenario {scenario} ({protocol:?}) failed:\n{stderr}"
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    serde_json::from_str(stdout.trim()).unwrap_or_else(|e| panic!("bad output {stdout:?}: {e}"))
}

/// The Python SDK reference server, killed on drop.
pub struct PythonServer {
    pub url: String,
    child: tokio::process::Child,
}

impl Drop for PythonServer {
    fn drop(&mut self) {
        let _ = self.child.start_kill();
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// The reference server, with HTTP on one free port and gRPC on another.
pub async fn start_python_server(python: &str) -> PythonServer {
    let port = free_port();
    let grpc_port = free_port();
    // The SDK logs warnings of its own as a passing test runs ("Task not found" for the
    // unknown ids the tests ask for): kept in a file, shown only if the server fails to start.
    let log_path = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("python-reference-server-{port}.log"));
    let log = std::fs::File::create(&log_path).expect("the reference server's log file");
    let child = tokio::process::Command::new(python)
        .arg(python_dir().join("reference_server.py"))
        .arg("--port")
        .arg(port.to_string())
        .arg("--grpc-port")
        .arg(grpc_port.to_string())
        .stdout(Stdio::null())
        .stderr(log)
        .kill_on_drop(true)
        .spawn()
        .expect("cannot start the Python reference server");
    let url = format!("http://127.0.0.1:{port}");
    let card = format!("{url}/.well-known/agent-card.json");
    let http = reqwest::Client::new();
    for _ in 0..300 {
        if http
            .get(&card)
            .send()
            .await
            .is_ok_and(|r| r.status().is_success())
        {
            return PythonServer { url, child };
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!(
        "the Python reference server did not come up on port {port}; its log ({}):\n{}",
        log_path.display(),
        std::fs::read_to_string(&log_path).unwrap_or_default()
    );
}
