//! Human-readable and JSON output.

use std::io::Write;

use a2a_client::{Outcome, StreamEvent};
use a2a_types::{Artifact, PartContent, StreamResponse, Task};

/// Prints a JSON value on one line.
pub(crate) fn json_line(v: &impl serde::Serialize) {
    match serde_json::to_string(v) {
        Ok(s) => println!("{s}"),
        Err(e) => eprintln!("a2a: cannot print JSON: {e}"),
    }
}

/// Prints a JSON value, indented.
pub(crate) fn json_pretty(v: &impl serde::Serialize) {
    match serde_json::to_string_pretty(v) {
        Ok(s) => println!("{s}"),
        Err(e) => eprintln!("a2a: cannot print JSON: {e}"),
    }
}

/// `1 artifact`, `3 artifacts`.
pub(crate) fn count(n: usize, noun: &str) -> String {
    match n {
        1 => format!("1 {noun}"),
        n => format!("{n} {noun}s"),
    }
}

fn state_name(state: a2a_types::TaskState) -> &'static str {
    state.as_str().trim_start_matches("TASK_STATE_")
}

/// A state as a word in a sentence: `canceled`, `input-required`.
pub(crate) fn state_label(state: a2a_types::TaskState) -> &'static str {
    a2a_types::v03::state_to_v03(state).as_str()
}

/// An outcome as one JSON object: the task or message, or for a stopped wait
/// `{"stopped": "deadline", "taskId", "state", "task"}`.
pub(crate) fn json_outcome(o: &Outcome) {
    match o {
        Outcome::Message(m) => json_pretty(&serde_json::json!({ "message": m })),
        Outcome::Stopped(s) => json_pretty(&serde_json::json!({
            "stopped": match s.reason {
                a2a_client::StopReason::Deadline => "deadline",
                _ => "listener",
            },
            "taskId": s.task_id(),
            "state": s.task.as_ref().map(|t| t.status.state),
            "task": s.task,
        })),
        other => {
            if let Some(t) = other.task() {
                json_pretty(&serde_json::json!({ "task": t }));
            }
        }
    }
}

/// The text of an artifact, with non-text parts described.
pub(crate) fn artifact_text(a: &Artifact) -> String {
    let mut out = String::new();
    for p in &a.parts {
        match &p.content {
            PartContent::Text(t) => out.push_str(t),
            PartContent::Data(d) => out.push_str(&d.to_string()),
            PartContent::Url(u) => out.push_str(&format!("<{u}>")),
            PartContent::Raw(b) => out.push_str(&format!(
                "<{} bytes{}{}>",
                b.len(),
                p.filename
                    .as_deref()
                    .map(|f| format!(" {f}"))
                    .unwrap_or_default(),
                p.media_type
                    .as_deref()
                    .map(|m| format!(" {m}"))
                    .unwrap_or_default()
            )),
            _ => {}
        }
    }
    out
}

fn artifact_label(a: &Artifact) -> String {
    a.name.clone().unwrap_or_else(|| a.artifact_id.clone())
}

/// Prints a task: ids, state, status message, artifacts.
pub(crate) fn print_task(t: &Task) {
    println!("task {}  [{}]", t.id, state_name(t.status.state));
    if !t.context_id.is_empty() {
        println!("  context: {}", t.context_id);
    }
    if let Some(m) = &t.status.message {
        println!("  status:  {}", m.text_content());
    }
    for a in &t.artifacts {
        println!("  artifact {}: {}", artifact_label(a), artifact_text(a));
    }
}

/// Prints an outcome.
pub(crate) fn print_outcome(o: &Outcome) {
    match o {
        Outcome::Message(m) => {
            println!("{}", m.text_content());
            if let Some(c) = &m.context_id {
                eprintln!("(message; context {c})");
            }
        }
        Outcome::InputRequired(i) | Outcome::AuthRequired(i) => {
            print_task(&i.task);
            let what = if matches!(o, Outcome::InputRequired(_)) {
                "input"
            } else {
                "authentication"
            };
            println!(
                "the agent needs {what}: continue with --task {} --context {}",
                i.task_id(),
                i.context_id()
            );
        }
        Outcome::Stopped(s) => {
            // The closing line (the caller's) says that the task goes on.
            if let Some(t) = &s.task {
                print_task(t);
            }
        }
        other => {
            if let Some(t) = other.task() {
                print_task(t);
            }
        }
    }
}

/// Live printing of stream events: status lines and artifact text as it arrives.
#[derive(Debug, Default)]
pub(crate) struct LivePrinter {
    open_artifact: Option<String>,
    /// The caller prints the question of an interrupted state itself (chat).
    prompt_elsewhere: bool,
}

impl LivePrinter {
    /// A printer that leaves the agent's question (INPUT_REQUIRED / AUTH_REQUIRED message)
    /// to the caller, so it is printed once.
    pub(crate) fn leaving_prompts() -> Self {
        Self {
            open_artifact: None,
            prompt_elsewhere: true,
        }
    }

    fn end_line(&mut self) {
        if self.open_artifact.take().is_some() {
            println!();
        }
    }

    pub(crate) fn event(&mut self, ev: &StreamEvent) {
        let mut out = std::io::stdout();
        match &ev.response {
            StreamResponse::Task(t) => {
                self.end_line();
                println!(
                    "task {}  [{}]  context {}",
                    t.id,
                    state_name(t.status.state),
                    t.context_id
                );
            }
            StreamResponse::StatusUpdate(s) => {
                self.end_line();
                let msg = s
                    .status
                    .message
                    .as_ref()
                    .filter(|_| !(self.prompt_elsewhere && s.status.state.is_interrupted()))
                    .map(|m| format!(": {}", m.text_content()))
                    .unwrap_or_default();
                println!("[{}]{msg}", state_name(s.status.state));
            }
            StreamResponse::ArtifactUpdate(a) => {
                let label = artifact_label(&a.artifact);
                let continuing = a.append
                    && self.open_artifact.as_deref() == Some(a.artifact.artifact_id.as_str());
                if !continuing {
                    self.end_line();
                    print!("[artifact {label}] ");
                }
                print!("{}", artifact_text(&a.artifact));
                self.open_artifact = Some(a.artifact.artifact_id.clone());
                if a.last_chunk {
                    self.end_line();
                }
            }
            StreamResponse::Message(m) => {
                self.end_line();
                println!("{}", m.text_content());
            }
            _ => {}
        }
        let _ = out.flush();
    }

    pub(crate) fn finish(&mut self) {
        self.end_line();
    }
}
