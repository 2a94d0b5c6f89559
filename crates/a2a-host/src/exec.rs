//! `exec` agents: a command run once per message, in a process group of its own.
//!
//! The program gets the message text on stdin and, in its environment, `A2A_TASK_ID`,
//! `A2A_CONTEXT_ID`, `A2A_MESSAGE` (the whole message, JSON) and `A2A_HISTORY` (the
//! conversation so far, a JSON array of messages: the context's earlier tasks and this task's
//! earlier turns; see [`RequestContext::thread`]). When traces are exported, `TRACEPARENT`
//! (and `TRACESTATE`) carry the W3C trace context of the task's span, so a program that
//! calls other agents (say with `a2a send`, which reads them) continues the trace.
//!
//! - `text` output: stdout streams out as chunks of the artifact `output` as it is produced.
//! - `jsonl` output: each stdout line is one JSON object: `{"status": "working", "text": …}`,
//!   `{"artifact": NAME, "text": …, "append": bool, "last_chunk": bool}`,
//!   `{"input_required": PROMPT}` (the task waits for the next message, which runs the
//!   program again with the history), `{"complete": TEXT}` or `{"fail": REASON}`. Other lines
//!   are added to the artifact `output`.
//!
//! Exit 0 completes the task (unless it asked for input); another exit fails it with the end
//! of stderr. A run that exceeds its timeout is killed and fails. Cancel sends SIGTERM to the
//! whole process group, then SIGKILL after a grace period; and whatever happens to the run,
//! nothing of its process group outlives it.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::{ExitStatus, Stdio};
use std::time::Duration;

use a2a_server::{AgentError, AgentExecutor, RequestContext, TaskUpdater, async_trait};
use a2a_types::{Artifact, Part};
use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;
use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, Command};

/// How the program's stdout is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum OutputMode {
    /// Stdout is the answer, streamed as artifact chunks.
    #[default]
    Text,
    /// One JSON event per line.
    JsonLines,
}

impl OutputMode {
    /// `text` or `jsonl`.
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "text" => Some(Self::Text),
            "jsonl" | "json-lines" => Some(Self::JsonLines),
            _ => None,
        }
    }
}

/// Runs a command per message.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ExecAgent {
    /// The program and its arguments.
    pub command: Vec<String>,
    /// How stdout is read.
    pub output: OutputMode,
    /// Working directory.
    pub workdir: Option<PathBuf>,
    /// Extra environment.
    pub env: BTreeMap<String, String>,
    /// Longest a run may take.
    pub timeout: Duration,
    /// Between SIGTERM and SIGKILL.
    pub kill_grace: Duration,
}

impl ExecAgent {
    /// Runs `command` (program, then arguments), text output, 5-minute timeout, 5-second
    /// kill grace.
    pub fn new(command: Vec<String>) -> Self {
        Self {
            command,
            output: OutputMode::Text,
            workdir: None,
            env: BTreeMap::new(),
            timeout: Duration::from_secs(300),
            kill_grace: Duration::from_secs(5),
        }
    }
}

/// Kills the process group when dropped: nothing of a run outlives it, even when the
/// runtime aborts the executor.
struct GroupGuard(Option<Pid>);

impl GroupGuard {
    fn signal(&self, signal: Signal) {
        if let Some(pgid) = self.0 {
            // ESRCH: the group is gone already.
            let _ = killpg(pgid, signal);
        }
    }
}

impl Drop for GroupGuard {
    fn drop(&mut self) {
        self.signal(Signal::SIGKILL);
    }
}

/// The last `limit` bytes of what a reader produces.
async fn tail(mut reader: impl tokio::io::AsyncRead + Unpin, limit: usize) -> String {
    let mut kept: Vec<u8> = Vec::new();
    let mut buf = [0u8; 4096];
    while let Ok(n) = reader.read(&mut buf).await {
        if n == 0 {
            break;
        }
        kept.extend_from_slice(&buf[..n]);
        if kept.len() > 2 * limit {
            kept.drain(..kept.len() - limit);
        }
    }
    let start = kept.len().saturating_sub(limit);
    String::from_utf8_lossy(&kept[start..]).trim().to_owned()
}

/// What reading stdout ended with.
enum Ending {
    /// Stdout closed.
    Eof,
    /// The program asked for input.
    InputRequired,
    /// The program said how the task ends (`complete` / `fail`).
    Final,
}

impl ExecAgent {
    fn spawn(
        &self,
        ctx: &RequestContext,
        history: &[a2a_types::Message],
    ) -> std::io::Result<Child> {
        let mut cmd = Command::new(&self.command[0]);
        cmd.args(&self.command[1..])
            .envs(&self.env)
            .env("A2A_TASK_ID", &ctx.task_id)
            .env("A2A_CONTEXT_ID", &ctx.context_id)
            .env(
                "A2A_MESSAGE",
                serde_json::to_string(&ctx.message).unwrap_or_default(),
            )
            .env(
                "A2A_HISTORY",
                serde_json::to_string(history).unwrap_or_default(),
            )
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0)
            .kill_on_drop(true);
        if let Some(dir) = &self.workdir {
            cmd.current_dir(dir);
        }
        if let Some((parent, state)) = a2a_client::trace::current_trace_context() {
            cmd.env("TRACEPARENT", parent);
            if let Some(state) = state {
                cmd.env("TRACESTATE", state);
            }
        }
        cmd.spawn()
    }

    /// Reads stdout to its end, turning it into task events.
    async fn relay(
        &self,
        stdout: tokio::process::ChildStdout,
        u: &TaskUpdater,
    ) -> Result<Ending, AgentError> {
        let mut started = false;
        match self.output {
            OutputMode::Text => {
                let mut stdout = stdout;
                let mut buf = vec![0u8; 8192];
                let mut pending: Vec<u8> = Vec::new();
                loop {
                    let n = stdout.read(&mut buf).await.map_err(io_error)?;
                    if n == 0 {
                        break;
                    }
                    pending.extend_from_slice(&buf[..n]);
                    // Only whole UTF-8 characters go out; a split one waits for its rest.
                    let valid = match std::str::from_utf8(&pending) {
                        Ok(s) => s.len(),
                        Err(e) => e.valid_up_to(),
                    };
                    if valid == 0 {
                        continue;
                    }
                    let text = String::from_utf8_lossy(&pending[..valid]).into_owned();
                    pending.drain(..valid);
                    u.artifact_chunk(output_chunk(text), started, false).await?;
                    started = true;
                }
                if started {
                    u.artifact_chunk(output_chunk(String::new()), true, true)
                        .await?;
                }
                Ok(Ending::Eof)
            }
            OutputMode::JsonLines => {
                let mut lines = BufReader::new(stdout).lines();
                while let Some(line) = lines.next_line().await.map_err(io_error)? {
                    if line.trim().is_empty() {
                        continue;
                    }
                    let event: Option<serde_json::Map<String, Value>> =
                        serde_json::from_str(&line).ok();
                    let Some(event) = event else {
                        u.artifact_chunk(output_chunk(format!("{line}\n")), started, false)
                            .await?;
                        started = true;
                        continue;
                    };
                    let text =
                        |key: &str| event.get(key).and_then(Value::as_str).map(str::to_owned);
                    if let Some(prompt) = text("input_required") {
                        u.require_input(Some(u.agent_text(prompt))).await?;
                        return Ok(Ending::InputRequired);
                    }
                    if let Some(done) = text("complete") {
                        u.complete(Some(u.agent_text(done))).await?;
                        return Ok(Ending::Final);
                    }
                    if let Some(reason) = text("fail") {
                        u.fail(Some(u.agent_text(reason))).await?;
                        return Ok(Ending::Final);
                    }
                    if let Some(name) = text("artifact") {
                        let flag = |k: &str| event.get(k).and_then(Value::as_bool).unwrap_or(false);
                        let artifact = Artifact::new(
                            name.clone(),
                            vec![Part::text(text("text").unwrap_or_default())],
                        )
                        .with_name(name);
                        u.artifact_chunk(artifact, flag("append"), flag("last_chunk"))
                            .await?;
                        continue;
                    }
                    if let Some(state) = text("status") {
                        let message = text("text").map(|t| u.agent_text(t));
                        match state.as_str() {
                            "working" => u.start_work(message).await?,
                            other => {
                                return Err(AgentError::from(format!(
                                    "the program sent status {other:?}; use \"working\", or input_required / complete / fail"
                                )));
                            }
                        }
                        continue;
                    }
                    u.artifact_chunk(output_chunk(format!("{line}\n")), started, false)
                        .await?;
                    started = true;
                }
                Ok(Ending::Eof)
            }
        }
    }
}

fn output_chunk(text: String) -> Artifact {
    Artifact::new("output", vec![Part::text(text)]).with_name("output")
}

fn io_error(e: std::io::Error) -> AgentError {
    AgentError::from(format!("reading the program's output: {e}"))
}

fn describe(status: ExitStatus) -> String {
    use std::os::unix::process::ExitStatusExt;
    match (status.code(), status.signal()) {
        (Some(code), _) => format!("exit status {code}"),
        (None, Some(sig)) => format!("killed by signal {sig}"),
        _ => status.to_string(),
    }
}

#[async_trait]
impl AgentExecutor for ExecAgent {
    async fn execute(&self, ctx: RequestContext, u: TaskUpdater) -> Result<(), AgentError> {
        let history = ctx
            .thread()
            .await
            .map_err(|e| AgentError::from(format!("reading the conversation: {e}")))?;
        let mut child = self
            .spawn(&ctx, &history)
            .map_err(|e| AgentError::from(format!("cannot run {:?}: {e}", self.command[0])))?;
        let guard = GroupGuard(
            child
                .id()
                .and_then(|id| i32::try_from(id).ok())
                .map(Pid::from_raw),
        );
        u.start_work(None).await?;
        if let Some(mut stdin) = child.stdin.take() {
            let text = ctx.user_text();
            // A program that does not read its input closes the pipe: that is fine.
            let _ = stdin.write_all(text.as_bytes()).await;
        }
        let stderr = tokio::spawn(tail(child.stderr.take().expect("piped stderr"), 2000));
        let stdout = child.stdout.take().expect("piped stdout");
        let run = async {
            let ending = self.relay(stdout, &u).await?;
            let status = child.wait().await.map_err(io_error)?;
            Ok::<_, AgentError>((ending, status))
        };
        let outcome = tokio::select! {
            r = run => Some(r),
            () = ctx.cancellation.cancelled() => None,
            () = tokio::time::sleep(self.timeout) => {
                guard.signal(Signal::SIGTERM);
                tokio::time::sleep(self.kill_grace.min(Duration::from_secs(1))).await;
                drop(guard);
                return Err(AgentError::from(format!(
                    "the program ran longer than its timeout ({:.0} s) and was stopped",
                    self.timeout.as_secs_f64()
                )));
            }
        };
        let Some(result) = outcome else {
            // Canceled: ask the whole group to stop, then make sure it has.
            guard.signal(Signal::SIGTERM);
            let _ = tokio::time::timeout(self.kill_grace, child.wait()).await;
            drop(guard);
            return Ok(());
        };
        let (ending, status) = result?;
        // Whatever the program left running in its group goes with it.
        drop(guard);
        let stderr = stderr.await.unwrap_or_default();
        match ending {
            Ending::InputRequired | Ending::Final => Ok(()),
            Ending::Eof if status.success() => {
                u.complete(None).await?;
                Ok(())
            }
            Ending::Eof => {
                let why = if stderr.is_empty() {
                    describe(status)
                } else {
                    format!("{}: {stderr}", describe(status))
                };
                u.fail(Some(u.agent_text(why))).await?;
                Ok(())
            }
        }
    }
}
