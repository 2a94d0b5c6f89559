//! The load of a fault scenario: client processes, each running workers that issue blocking
//! sends, streams, continuations, cancels and subscriptions against the demo agents, and
//! record every answer and event they were given (JSON lines), for the checker.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use a2a_client::A2aClient;
use a2a_types::{
    Message, SendMessageConfiguration, SendMessageRequest, SendMessageResponse, StreamResponse,
    Task,
};
use serde::{Deserialize, Serialize};

/// What a client process is asked to do (passed in `A2A_FAULT_CLIENT`, as JSON).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ClientSpec {
    /// Base URLs of the host (replicas, or a proxy in front of them): workers take turns.
    pub bases: Vec<String>,
    pub name: String,
    pub workers: usize,
    pub seconds: f64,
    pub out: PathBuf,
    pub seed: u64,
}

/// The operations.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Op {
    /// A blocking send to `echo` (a task that completes at once).
    Send,
    /// A streamed send to `slow` (one second of work).
    Stream,
    /// A streamed send to `multi`, which asks for input, then the follow-up (blocking).
    Continue,
    /// A task of `slow` (30 s), canceled.
    Cancel,
    /// A streamed send to `slow` (two seconds) followed by a second reader subscribing.
    Subscribe,
}

/// How an operation ended for its client.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    Ok,
    /// An error answer: its JSON-RPC code (-1: the connection failed; -2: other client
    /// errors), and its text.
    Error {
        code: i32,
        message: String,
    },
    /// No answer within the operation's time limit.
    Hang,
}

/// One event a reader was given.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Seen {
    /// The SSE id (the log position), when the server sent one.
    pub id: Option<u64>,
    /// `task:STATE`, `status:STATE`, `artifact:ID` or `message`.
    pub what: String,
}

/// What one operation was told.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Record {
    pub op: Op,
    pub client: String,
    pub started_ms: u64,
    pub ended_ms: u64,
    pub task_id: Option<String>,
    pub outcome: Outcome,
    /// The last state the client was told of (`TASK_STATE_…`).
    pub state: Option<String>,
    /// Artifacts the client was given (ids).
    pub artifacts: Vec<String>,
    /// The events of each reader (streams).
    pub readers: Vec<Vec<Seen>>,
}

pub fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

/// Starts `spec` in a process of its own: this test binary again, running only the
/// `fault_client` test.
pub fn spawn_client(spec: &ClientSpec) -> Child {
    Command::new(std::env::current_exe().unwrap())
        .args([
            "fault_client",
            "--exact",
            "--ignored",
            "--nocapture",
            "--test-threads=1",
        ])
        .env("A2A_FAULT_CLIENT", serde_json::to_string(spec).unwrap())
        .stdout(Stdio::null())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("start a load client")
}

/// Reads the records a client wrote.
pub fn read_records(path: &Path) -> Vec<Record> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect()
}

/// Runs `spec` in this process (the body of the `fault_client` test).
pub fn run_client(spec: ClientSpec) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let out = std::sync::Arc::new(std::sync::Mutex::new(
        std::fs::File::create(&spec.out).unwrap(),
    ));
    rt.block_on(async {
        let deadline = Instant::now() + Duration::from_secs_f64(spec.seconds);
        let mut workers = Vec::new();
        for w in 0..spec.workers {
            let spec = spec.clone();
            let out = out.clone();
            workers.push(tokio::spawn(async move {
                let base = spec.bases[w % spec.bases.len()].clone();
                let mut worker =
                    Worker::new(&base, format!("{}-{w}", spec.name), spec.seed + w as u64);
                while Instant::now() < deadline {
                    let record = worker.one().await;
                    let line = serde_json::to_string(&record).unwrap();
                    writeln!(out.lock().unwrap(), "{line}").unwrap();
                }
            }));
        }
        for w in workers {
            let _ = w.await;
        }
    });
}

/// Time limits: a blocking call, and a whole stream.
const CALL: Duration = Duration::from_secs(30);
const STREAM: Duration = Duration::from_secs(60);

struct Worker {
    base: String,
    name: String,
    rng: u64,
    clients: std::collections::HashMap<&'static str, A2aClient>,
    n: u64,
}

fn code_of(e: &a2a_client::ClientError) -> (i32, String) {
    let code = match e {
        a2a_client::ClientError::Protocol { error, .. } => error.code().0,
        a2a_client::ClientError::Http { .. } => -1,
        _ => -2,
    };
    (code, e.to_string())
}

fn task_artifacts(t: &Task) -> Vec<String> {
    t.artifacts.iter().map(|a| a.artifact_id.clone()).collect()
}

impl Worker {
    fn new(base: &str, name: String, seed: u64) -> Self {
        Self {
            base: base.trim_end_matches('/').to_owned(),
            name,
            rng: seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1,
            clients: Default::default(),
            n: 0,
        }
    }

    fn random(&mut self) -> u64 {
        // xorshift64
        self.rng ^= self.rng << 13;
        self.rng ^= self.rng >> 7;
        self.rng ^= self.rng << 17;
        self.rng
    }

    async fn client(&mut self, agent: &'static str) -> Result<A2aClient, (i32, String)> {
        if let Some(c) = self.clients.get(agent) {
            return Ok(c.clone());
        }
        let url = format!("{}/a2a/{agent}", self.base);
        let c = A2aClient::builder()
            .timeout(CALL)
            .connect(&url)
            .await
            .map_err(|e| code_of(&e))?;
        self.clients.insert(agent, c.clone());
        Ok(c)
    }

    async fn one(&mut self) -> Record {
        self.n += 1;
        let op = match self.random() % 20 {
            0..=7 => Op::Send,
            8..=12 => Op::Stream,
            13..=15 => Op::Continue,
            16..=17 => Op::Cancel,
            _ => Op::Subscribe,
        };
        let mut r = Record {
            op,
            client: self.name.clone(),
            started_ms: now_ms(),
            ended_ms: 0,
            task_id: None,
            outcome: Outcome::Ok,
            state: None,
            artifacts: Vec::new(),
            readers: Vec::new(),
        };
        let limit = if op == Op::Send { CALL } else { STREAM };
        let done = tokio::time::timeout(limit, self.run(op, &mut r)).await;
        r.outcome = match done {
            Ok(Ok(())) => Outcome::Ok,
            Ok(Err((code, message))) => Outcome::Error { code, message },
            Err(_) => Outcome::Hang,
        };
        r.ended_ms = now_ms();
        if !matches!(r.outcome, Outcome::Ok) {
            // A failed call may come from a broken connection: start afresh.
            self.clients.clear();
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        r
    }

    async fn run(&mut self, op: Op, r: &mut Record) -> Result<(), (i32, String)> {
        let tag = format!("{}-{}", self.name, self.n);
        match op {
            Op::Send => {
                let c = self.client("echo").await?;
                let answer = c
                    .send(SendMessageRequest::new(Message::user_text(format!(
                        "task: {tag}"
                    ))))
                    .await
                    .map_err(|e| code_of(&e))?;
                if let SendMessageResponse::Task(t) = answer {
                    r.task_id = Some(t.id.clone());
                    r.state = Some(t.status.state.as_str().to_owned());
                    r.artifacts = task_artifacts(&t);
                }
                Ok(())
            }
            Op::Stream => {
                let c = self.client("slow").await?;
                let stream = c
                    .stream(SendMessageRequest::new(Message::user_text("1")))
                    .await
                    .map_err(|e| code_of(&e))?;
                let (seen, ended) = read(stream, r).await;
                r.readers.push(seen);
                ended
            }
            Op::Continue => {
                let c = self.client("multi").await?;
                let stream = c
                    .stream(SendMessageRequest::new(Message::user_text(format!(
                        "hi {tag}"
                    ))))
                    .await
                    .map_err(|e| code_of(&e))?;
                let (seen, ended) = read(stream, r).await;
                r.readers.push(seen);
                ended?;
                let Some(id) = r.task_id.clone() else {
                    return Err((-2, "no task".into()));
                };
                if r.state.as_deref() != Some("TASK_STATE_INPUT_REQUIRED") {
                    return Err((-2, format!("stream ended in {:?}", r.state)));
                }
                let answer = c
                    .send(SendMessageRequest::new(
                        Message::user_text(format!("more {tag}")).with_task_id(id),
                    ))
                    .await
                    .map_err(|e| code_of(&e))?;
                if let SendMessageResponse::Task(t) = answer {
                    r.state = Some(t.status.state.as_str().to_owned());
                    r.artifacts = task_artifacts(&t);
                }
                Ok(())
            }
            Op::Cancel => {
                let c = self.client("slow").await?;
                let mut conf = SendMessageConfiguration::default();
                conf.return_immediately = true;
                let answer = c
                    .send(
                        SendMessageRequest::new(Message::user_text("30")).with_configuration(conf),
                    )
                    .await
                    .map_err(|e| code_of(&e))?;
                let SendMessageResponse::Task(t) = answer else {
                    return Err((-2, "not a task".into()));
                };
                r.task_id = Some(t.id.clone());
                r.state = Some(t.status.state.as_str().to_owned());
                tokio::time::sleep(Duration::from_millis(200 + self.random() % 300)).await;
                let canceled = c.cancel_task(&t.id).await.map_err(|e| code_of(&e))?;
                r.state = Some(canceled.status.state.as_str().to_owned());
                r.artifacts = task_artifacts(&canceled);
                Ok(())
            }
            Op::Subscribe => {
                let c = self.client("slow").await?;
                let mut first = c
                    .stream(SendMessageRequest::new(Message::user_text("2")))
                    .await
                    .map_err(|e| code_of(&e))?;
                // The first event names the task; then a second reader follows it too.
                let mut seen = Vec::new();
                if let Some(ev) = first.next().await {
                    let ev = ev.map_err(|e| code_of(&e))?;
                    seen.push(note(&ev, r));
                }
                let id = first
                    .task_id()
                    .map(str::to_owned)
                    .ok_or((-2, "no task id".to_owned()))?;
                let second = match c.subscribe(&id).await {
                    Ok(s) => s,
                    Err(e) => {
                        let (rest, _) = read(first, r).await;
                        seen.extend(rest);
                        r.readers.push(seen);
                        return Err(code_of(&e));
                    }
                };
                let (mut r1, mut r2) = (r.clone(), r.clone());
                let ((a, first_ended), (b, second_ended)) =
                    tokio::join!(read(first, &mut r1), read(second, &mut r2));
                seen.extend(a);
                r.readers.push(seen);
                r.readers.push(b);
                for s in r.readers.iter().flatten() {
                    if let Some(state) = s
                        .what
                        .strip_prefix("status:")
                        .or(s.what.strip_prefix("task:"))
                    {
                        r.state = Some(state.to_owned());
                    }
                    if let Some(a) = s.what.strip_prefix("artifact:")
                        && !r.artifacts.iter().any(|x| x == a)
                    {
                        r.artifacts.push(a.to_owned());
                    }
                }
                first_ended.and(second_ended)
            }
        }
    }
}

/// Notes `ev` in the record (task id, state, artifacts) and returns what the reader saw.
fn note(ev: &a2a_client::StreamEvent, r: &mut Record) -> Seen {
    let id = ev.id.as_deref().and_then(|i| i.parse().ok());
    let what = match &ev.response {
        StreamResponse::Task(t) => {
            r.task_id.get_or_insert_with(|| t.id.clone());
            r.state = Some(t.status.state.as_str().to_owned());
            for a in task_artifacts(t) {
                if !r.artifacts.contains(&a) {
                    r.artifacts.push(a);
                }
            }
            format!("task:{}", t.status.state.as_str())
        }
        StreamResponse::StatusUpdate(s) => {
            r.task_id.get_or_insert_with(|| s.task_id.clone());
            r.state = Some(s.status.state.as_str().to_owned());
            format!("status:{}", s.status.state.as_str())
        }
        StreamResponse::ArtifactUpdate(a) => {
            r.task_id.get_or_insert_with(|| a.task_id.clone());
            if !r.artifacts.contains(&a.artifact.artifact_id) {
                r.artifacts.push(a.artifact.artifact_id.clone());
            }
            format!("artifact:{}", a.artifact.artifact_id)
        }
        _ => "message".to_owned(),
    };
    Seen { id, what }
}

/// Reads a stream to its end: what it was given, and how it ended.
async fn read(
    mut stream: a2a_client::TaskStream,
    r: &mut Record,
) -> (Vec<Seen>, Result<(), (i32, String)>) {
    let mut seen = Vec::new();
    while let Some(ev) = stream.next().await {
        match ev {
            Ok(ev) => seen.push(note(&ev, r)),
            Err(e) => return (seen, Err(code_of(&e))),
        }
    }
    (seen, Ok(()))
}
