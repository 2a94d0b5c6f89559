//! The checker: compares what every client was told with what the store holds once the
//! faults are over, against the guarantees the README states.

use std::collections::{BTreeMap, HashMap};

use a2a_client::A2aClient;
use a2a_types::{Task, TaskState};

use super::load::{Op, Outcome, Record};

/// What a scenario's load did and what the checker found.
#[derive(Debug, Default)]
pub struct Report {
    pub operations: usize,
    pub ok: usize,
    /// Error answers by JSON-RPC code (-1: the connection failed).
    pub errors: BTreeMap<i32, usize>,
    pub tasks: usize,
    pub violations: Vec<String>,
    /// The longest time, in ms, between two successful operations, over the whole run.
    pub longest_gap_ms: u64,
}

impl std::fmt::Display for Report {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} operations ({} ok, errors by code {:?}), {} tasks checked, {} invariant violations, longest time without a successful operation {:.1} s",
            self.operations,
            self.ok,
            self.errors,
            self.tasks,
            self.violations.len(),
            self.longest_gap_ms as f64 / 1000.0
        )
    }
}

fn agent_of(op: Op) -> &'static str {
    match op {
        Op::Send => "echo",
        Op::Continue => "multi",
        Op::Stream | Op::Cancel | Op::Subscribe => "slow",
    }
}

/// Reads every task the records name from the host at `base` and checks:
/// - no acknowledged event lost: a task a client was told of exists; a terminal state a
///   client was told is the task's state; every artifact a client was given is in the task;
/// - no event seen twice by a stream, resumed or not (event ids strictly increase);
/// - every task reached a terminal or interrupted state;
/// - a task's events are in one order for every reader (two readers agree on each id);
/// - a task canceled did no further work (no `result` artifact);
/// - every operation was answered within its time limit, and no existing task was ever
///   answered "not found".
pub async fn check(base: &str, records: &[Record]) -> Report {
    check_with(base, records, false).await
}

/// [`check`], where finished tasks may have been deleted since (a store with a short
/// retention): a task the client was told ended may be gone.
pub async fn check_with(base: &str, records: &[Record], finished_may_be_gone: bool) -> Report {
    let mut report = Report {
        operations: records.len(),
        ..Report::default()
    };
    let mut clients: HashMap<&str, A2aClient> = HashMap::new();
    for agent in ["echo", "slow", "multi"] {
        let c = A2aClient::connect(&format!("{}/a2a/{agent}", base.trim_end_matches('/')))
            .await
            .unwrap_or_else(|e| panic!("the checker cannot reach {base}: {e}"));
        clients.insert(agent, c);
    }
    let mut finals: HashMap<String, Option<Task>> = HashMap::new();
    for r in records {
        match &r.outcome {
            Outcome::Ok => report.ok += 1,
            Outcome::Error { code, .. } => *report.errors.entry(*code).or_default() += 1,
            Outcome::Hang => report.violations.push(format!(
                "{:?} by {} got no answer within its time limit (task {:?})",
                r.op, r.client, r.task_id
            )),
        }
        let Some(id) = &r.task_id else { continue };
        if !finals.contains_key(id) {
            let c = &clients[agent_of(r.op)];
            let task = match c.get_task(id, Some(0)).await {
                Ok(t) => Some(t),
                Err(a2a_client::ClientError::Protocol {
                    error: a2a_types::A2aError::TaskNotFound { .. },
                    ..
                }) => None,
                Err(e) => panic!("the checker cannot read task {id}: {e}"),
            };
            finals.insert(id.clone(), task);
        }
    }
    report.tasks = finals.values().filter(|t| t.is_some()).count();
    for r in records {
        check_record(r, &finals, finished_may_be_gone, &mut report.violations);
    }
    for (id, task) in &finals {
        if let Some(t) = task {
            let s = t.status.state;
            if !(s.is_terminal() || s.is_interrupted()) {
                report
                    .violations
                    .push(format!("task {id} was left {}", s.as_str()));
            }
        }
    }
    let mut ok_times: Vec<u64> = records
        .iter()
        .filter(|r| r.outcome == Outcome::Ok)
        .map(|r| r.ended_ms)
        .collect();
    ok_times.sort_unstable();
    let first = records.iter().map(|r| r.started_ms).min().unwrap_or(0);
    let last = records.iter().map(|r| r.ended_ms).max().unwrap_or(0);
    let mut prev = first;
    for t in ok_times.iter().copied().chain([last]) {
        report.longest_gap_ms = report.longest_gap_ms.max(t.saturating_sub(prev));
        prev = t;
    }
    report
}

fn check_record(
    r: &Record,
    finals: &HashMap<String, Option<Task>>,
    finished_may_be_gone: bool,
    v: &mut Vec<String>,
) {
    let Some(id) = &r.task_id else { return };
    let task = finals.get(id).and_then(Option::as_ref);
    let told = r.outcome == Outcome::Ok || r.readers.iter().any(|x| !x.is_empty());
    let told_finished = r
        .state
        .as_deref()
        .and_then(TaskState::from_name)
        .is_some_and(TaskState::is_terminal);
    let Some(task) = task else {
        if told && !(finished_may_be_gone && told_finished) {
            v.push(format!(
                "{:?}: task {id}, which the client was told of, is gone",
                r.op
            ));
        }
        return;
    };
    if let Outcome::Error {
        code: -32001,
        message,
    } = &r.outcome
    {
        v.push(format!(
            "{:?}: existing task {id} answered as not found: {message}",
            r.op
        ));
    }
    let final_state = task.status.state;
    if let Some(told_state) = r.state.as_deref().and_then(TaskState::from_name)
        && told_state.is_terminal()
        && told_state != final_state
    {
        v.push(format!(
            "{:?}: task {id}: the client was told {} but it is {}",
            r.op,
            told_state.as_str(),
            final_state.as_str()
        ));
    }
    for a in &r.artifacts {
        if !task.artifacts.iter().any(|x| &x.artifact_id == a) {
            v.push(format!(
                "{:?}: task {id}: artifact {a} given to the client is lost",
                r.op
            ));
        }
    }
    for (i, reader) in r.readers.iter().enumerate() {
        let ids: Vec<u64> = reader.iter().filter_map(|s| s.id).collect();
        if ids.windows(2).any(|w| w[1] <= w[0]) {
            v.push(format!(
                "{:?}: task {id}: reader {i} saw events out of order or twice: {ids:?}",
                r.op
            ));
        }
    }
    if let [a, b] = &r.readers[..] {
        // A task snapshot (what a subscription starts with) stands for the state at its id:
        // only events proper are compared.
        let event = |s: &&super::load::Seen| !s.what.starts_with("task:");
        let first: HashMap<u64, &str> = a
            .iter()
            .filter(event)
            .filter_map(|s| Some((s.id?, s.what.as_str())))
            .collect();
        for s in b.iter().filter(event) {
            if let Some(i) = s.id
                && let Some(w) = first.get(&i)
                && *w != s.what
            {
                v.push(format!(
                    "task {id}: event {i} was {w} for one reader and {} for another",
                    s.what
                ));
            }
        }
    }
    if r.op == Op::Cancel
        && r.outcome == Outcome::Ok
        && r.state.as_deref() == Some("TASK_STATE_CANCELED")
        && task
            .artifacts
            .iter()
            .any(|a| a.name.as_deref() == Some("result"))
    {
        v.push(format!(
            "task {id} produced its result after it was canceled"
        ));
    }
}
