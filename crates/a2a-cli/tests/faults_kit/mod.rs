//! The fault suite's parts: `a2a serve` replicas the scenarios kill and restart, a private
//! PostgreSQL, a TCP proxy, the load clients and the checker.
#![allow(dead_code, unreachable_pub)]

pub mod check;
pub mod load;
pub mod postgres;
pub mod proxy;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

pub use check::{Report, check};
pub use load::{ClientSpec, Record};

/// The `a2a` binary the scenarios run: this build's, or `A2A_FAULTS_BIN` (to run the suite
/// against another version, say the previous release).
pub fn bin() -> String {
    std::env::var("A2A_FAULTS_BIN").unwrap_or_else(|_| env!("CARGO_BIN_EXE_a2a").to_owned())
}

/// The long form (`A2A_FAULTS=long`): longer runs, more faults, figures printed.
pub fn long() -> bool {
    std::env::var("A2A_FAULTS").as_deref() == Ok("long")
}

/// `short` normally, `long` in the long form.
pub fn pick<T>(short: T, long: T) -> T {
    if self::long() { long } else { short }
}

pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Scenarios run one at a time (each loads both cores): hold this for the whole scenario.
pub fn one_at_a_time() -> std::sync::MutexGuard<'static, ()> {
    static LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());
    LOCK.lock().unwrap_or_else(|e| e.into_inner())
}

/// A directory for one scenario's files, removed when dropped unless the test failed.
pub struct WorkDir(pub PathBuf);

impl WorkDir {
    pub fn new(name: &str) -> Self {
        let dir = std::env::temp_dir().join(format!("a2a-faults-{name}-{}", a2a_types::new_id()));
        std::fs::create_dir_all(&dir).unwrap();
        Self(dir)
    }

    pub fn path(&self, file: &str) -> PathBuf {
        self.0.join(file)
    }
}

impl Drop for WorkDir {
    fn drop(&mut self) {
        if std::thread::panicking() {
            eprintln!(
                "faults: files of the failed scenario kept in {}",
                self.0.display()
            );
        } else {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }
}

/// An `a2a serve` process on a fixed port, which can be killed and started again there.
pub struct Replica {
    pub name: String,
    child: Option<Child>,
    port: u16,
    args: Vec<String>,
    log: PathBuf,
    pub starts: u32,
}

impl Replica {
    /// Starts `a2a serve --port {free} {args}`, its output in `dir/{name}.log`; waits until
    /// it is ready.
    pub fn start(name: &str, args: &[&str], dir: &Path) -> Self {
        let mut r = Self {
            name: name.to_owned(),
            child: None,
            port: free_port(),
            args: args.iter().map(|s| s.to_string()).collect(),
            log: dir.join(format!("{name}.log")),
            starts: 0,
        };
        r.restart();
        r
    }

    pub fn base(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    pub fn addr(&self) -> std::net::SocketAddr {
        ([127, 0, 0, 1], self.port).into()
    }

    pub fn pid(&self) -> Option<u32> {
        self.child.as_ref().map(Child::id)
    }

    /// SIGKILL: no shutdown of any kind.
    pub fn kill(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }

    /// SIGTERM, and wait for the exit.
    pub fn stop(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = Command::new("kill").arg(c.id().to_string()).status();
            let _ = c.wait();
        }
    }

    /// Starts it again on its port (after a kill), and waits until it answers.
    pub fn restart(&mut self) {
        self.kill();
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&self.log)
            .unwrap();
        let child = Command::new(bin())
            .args(["serve", "--port", &self.port.to_string()])
            .args(&self.args)
            .env("A2A_LOG", "warn")
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .expect("start a2a serve");
        self.child = Some(child);
        self.starts += 1;
        let deadline = Instant::now() + Duration::from_secs(60);
        while !self.answers("/agents") {
            if let Some(status) = self
                .child
                .as_mut()
                .and_then(|c| c.try_wait().ok().flatten())
            {
                panic!(
                    "{} exited ({status}) at start: {}",
                    self.name,
                    std::fs::read_to_string(&self.log).unwrap_or_default()
                );
            }
            assert!(Instant::now() < deadline, "{} did not start", self.name);
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// True when `GET path` answers 200.
    pub fn answers(&self, path: &str) -> bool {
        reqwest::blocking::Client::builder()
            .timeout(Duration::from_secs(2))
            .build()
            .unwrap()
            .get(format!("{}{path}", self.base()))
            .send()
            .is_ok_and(|r| r.status().is_success())
    }

    /// Resident memory, in KiB.
    pub fn rss_kib(&self) -> Option<u64> {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.pid()?)).ok()?;
        status
            .lines()
            .find_map(|l| l.strip_prefix("VmRSS:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
    }

    /// Open file descriptors.
    pub fn open_fds(&self) -> Option<usize> {
        Some(
            std::fs::read_dir(format!("/proc/{}/fd", self.pid()?))
                .ok()?
                .count(),
        )
    }

    pub fn log_text(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }
}

impl Drop for Replica {
    fn drop(&mut self) {
        self.kill();
    }
}

/// Load clients started in processes of their own.
pub struct Load {
    children: Vec<Child>,
    outs: Vec<PathBuf>,
    pub started: Instant,
}

/// Starts `clients` processes of `workers` workers each, for `seconds`, spread over `bases`.
pub fn start_load(
    dir: &WorkDir,
    bases: &[String],
    clients: usize,
    workers: usize,
    seconds: f64,
) -> Load {
    let mut children = Vec::new();
    let mut outs = Vec::new();
    for i in 0..clients {
        let out = dir.path(&format!("client-{i}.jsonl"));
        let spec = ClientSpec {
            bases: bases.to_vec(),
            name: format!("c{i}"),
            workers,
            seconds,
            out: out.clone(),
            seed: 0x5eed + i as u64 * 1000,
        };
        children.push(load::spawn_client(&spec));
        outs.push(out);
    }
    Load {
        children,
        outs,
        started: Instant::now(),
    }
}

impl Load {
    /// Waits for every client to finish; their records.
    pub fn finish(mut self) -> Vec<Record> {
        for c in &mut self.children {
            let status = c.wait().unwrap();
            assert!(status.success(), "a load client failed: {status}");
        }
        self.outs
            .iter()
            .flat_map(|o| load::read_records(o))
            .collect()
    }

    /// Sleeps until `at` after the load started.
    pub fn at(&self, at: Duration) {
        if let Some(left) = at.checked_sub(self.started.elapsed()) {
            std::thread::sleep(left);
        }
    }
}

/// Waits (up to `within`) until no task of the demo agents at `base` is SUBMITTED or WORKING.
pub fn settle(base: &str, within: Duration) {
    let deadline = Instant::now() + within;
    let client = reqwest::blocking::Client::new();
    loop {
        let mut running = 0;
        for agent in ["echo", "slow", "multi"] {
            for state in ["TASK_STATE_WORKING", "TASK_STATE_SUBMITTED"] {
                let body: serde_json::Value = client
                    .post(format!("{base}/a2a/{agent}"))
                    .header("A2A-Version", "1.0")
                    .json(&serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "ListTasks", "params": {"status": state, "pageSize": 1}}))
                    .send()
                    .and_then(|r| r.json())
                    .unwrap_or_default();
                running += body["result"]["totalSize"].as_u64().unwrap_or(1);
            }
        }
        if running == 0 || Instant::now() >= deadline {
            return;
        }
        std::thread::sleep(Duration::from_millis(250));
    }
}

/// Runs the checker against `base`.
pub fn check_blocking(base: &str, records: &[Record]) -> Report {
    tokio::runtime::Runtime::new()
        .unwrap()
        .block_on(check(base, records))
}

/// The same, for a store whose retention deletes finished tasks during the run.
pub fn check_blocking_retained(base: &str, records: &[Record]) -> Report {
    tokio::runtime::Runtime::new()
        .unwrap()
        .block_on(check::check_with(base, records, true))
}

/// Prints the report and fails on any violation.
pub fn conclude(scenario: &str, report: &Report, extra: &str) {
    eprintln!("faults: {scenario}: {report}{extra}");
    assert!(
        report.violations.is_empty(),
        "{scenario}: {} violations:\n{}",
        report.violations.len(),
        report.violations.join("\n")
    );
    assert!(report.ok > 0, "{scenario}: no operation succeeded");
}
