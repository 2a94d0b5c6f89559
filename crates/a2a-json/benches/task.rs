//! Time to write a task like a blocking send's answer, and a long text with line breaks,
//! `serde_json` against `a2a_json`: `cargo bench -p a2a-json --bench task`. Alternates the
//! two writers and prints the median nanoseconds of each.

use std::hint::black_box;
use std::time::Instant;

use serde_json::json;

const ROUNDS: usize = 7;
const PER_ROUND: u32 = 100_000;

fn main() {
    let task: a2a_types::Task = serde_json::from_value(json!({
        "id": "019aa5d2-8f1e-7c3b-9a41-2d6c0e5b7f13",
        "contextId": "019aa5d2-8f1e-7c3b-9a41-2d6c0e5b7f14",
        "status": {
            "state": "TASK_STATE_COMPLETED",
            "timestamp": "2026-12-06T15:00:00.123Z",
            "message": {
                "messageId": "019aa5d2-8f1e-7c3b-9a41-2d6c0e5b7f15",
                "role": "ROLE_AGENT",
                "contextId": "019aa5d2-8f1e-7c3b-9a41-2d6c0e5b7f14",
                "taskId": "019aa5d2-8f1e-7c3b-9a41-2d6c0e5b7f13",
                "parts": [{"text": "Hello from TCK"}]
            }
        },
        "history": [{
            "messageId": "tck-complete-task-0001",
            "role": "ROLE_USER",
            "contextId": "019aa5d2-8f1e-7c3b-9a41-2d6c0e5b7f14",
            "taskId": "019aa5d2-8f1e-7c3b-9a41-2d6c0e5b7f13",
            "parts": [{"text": "tck-complete-task"}]
        }]
    }))
    .expect("a task");
    let answer = a2a_types::SendMessageResponse::Task(task);
    compare("task answer", &answer);
    // An agent's text: 4 KiB in lines of 80 characters, so escapes all along.
    let line = format!("{}\n", "word ".repeat(16).trim_end());
    compare("text with line breaks", &line.repeat(4096 / line.len()));
}

/// Times both writers on `value`, alternating, and prints their medians.
fn compare<T: serde::Serialize>(what: &str, value: &T) {
    let json = a2a_json::to_string(value).unwrap();
    assert_eq!(json, serde_json::to_string(value).unwrap());
    let mut theirs = Vec::new();
    let mut ours = Vec::new();
    for _ in 0..ROUNDS {
        theirs.push(time(|| serde_json::to_string(black_box(value)).unwrap()));
        ours.push(time(|| a2a_json::to_string(black_box(value)).unwrap()));
    }
    let (theirs, ours) = (median(theirs), median(ours));
    println!(
        "{what} ({} bytes): serde_json {theirs:.0} ns, a2a_json {ours:.0} ns ({:.3}x)",
        json.len(),
        ours / theirs
    );
}

fn time(mut write: impl FnMut() -> String) -> f64 {
    let start = Instant::now();
    for _ in 0..PER_ROUND {
        black_box(write());
    }
    start.elapsed().as_nanos() as f64 / f64::from(PER_ROUND)
}

fn median(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(f64::total_cmp);
    xs[xs.len() / 2]
}
