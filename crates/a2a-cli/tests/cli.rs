//! The `a2a` binary end to end: `serve`, then every client command against it.

mod common;

use common::*;

#[test]
fn client_commands_against_serve() {
    let s = serve(&[]);
    let echo = format!("{}/a2a/echo", s.base);
    let multi = format!("{}/a2a/multi", s.base);
    let slow = format!("{}/a2a/slow", s.base);

    let o = a2a(&["card", &echo]);
    assert!(o.status.success());
    assert!(stdout(&o).contains("Echo Agent"), "{}", stdout(&o));
    let o = a2a(&["card", &echo, "--json"]);
    let card: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(card["supportedInterfaces"][0]["url"], echo);

    let o = a2a(&["send", &echo, "task: hi there"]);
    assert!(o.status.success());
    assert!(
        stdout(&o).contains("artifact echo: hi there"),
        "{}",
        stdout(&o)
    );
    let o = a2a(&["send", &echo, "task: json please", "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let task_id = v["task"]["id"].as_str().unwrap().to_owned();
    assert_eq!(v["task"]["status"]["state"], "TASK_STATE_COMPLETED");

    let o = a2a(&["get", &echo, &task_id, "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["id"], task_id);
    let o = a2a(&["list", &echo]);
    assert!(stdout(&o).contains(&task_id), "{}", stdout(&o));

    // Streaming, through INPUT_REQUIRED and the continuation.
    let o = a2a(&["stream", &multi, "start"]);
    let out = stdout(&o);
    assert!(o.status.success(), "{out}");
    assert!(out.contains("[artifact story] Once upon a time."), "{out}");
    assert!(out.contains("[INPUT_REQUIRED]"), "{out}");
    let task = out
        .split("--task ")
        .nth(1)
        .unwrap()
        .split_whitespace()
        .next()
        .unwrap()
        .to_owned();
    let o = a2a(&["stream", &multi, "the answer", "--task", &task, "--json"]);
    let last: serde_json::Value = serde_json::from_str(stdout(&o).lines().last().unwrap()).unwrap();
    assert_eq!(
        last["statusUpdate"]["status"]["state"],
        "TASK_STATE_COMPLETED"
    );

    // v0.3 works the same.
    let o = a2a(&["send", &echo, "task: old", "--protocol", "0.3"]);
    assert!(stdout(&o).contains("artifact echo: old"), "{}", stdout(&o));

    // Cancel: a non-blocking send, then cancel by id.
    let o = a2a(&["send", &slow, "go", "--no-wait", "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let id = v["task"]["id"].as_str().unwrap().to_owned();
    let o = a2a(&["cancel", &slow, &id]);
    assert!(o.status.success());
    assert!(stdout(&o).contains("[CANCELED]"), "{}", stdout(&o));
    let o = a2a(&["cancel", &slow, &id]);
    assert_eq!(o.status.code(), Some(1), "canceling twice is an error");
    assert!(String::from_utf8_lossy(&o.stderr).contains("cannot be canceled"));

    // Errors are readable and exit non-zero.
    let o = a2a(&["get", &echo, "no-such-task"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("Task not found"));
    let o = a2a(&["card", &format!("{}/a2a/nobody", s.base)]);
    assert_eq!(o.status.code(), Some(1));
}

#[test]
fn chat_keeps_the_conversation() {
    let s = serve(&[]);
    let o = chat(
        &format!("{}/a2a/multi", s.base),
        b"hello\nmy answer\n/quit\n",
    );
    let out = stdout(&o);
    assert!(o.status.success(), "{out}");
    assert!(out.contains("agent: What should I echo back?"), "{out}");
    // Piped, each turn is on lines of its own, and the second one answers the pending task.
    assert!(out.contains("\nyou: hello\n"), "{out}");
    assert!(
        out.contains("\nanswer: my answer\n"),
        "the second line answers the pending task: {out}"
    );
    assert!(
        !out.contains("you> "),
        "no prompts when input is piped: {out}"
    );
    assert!(out.contains("You said: my answer"), "{out}");
}

#[test]
fn chat_input_that_ends_while_the_agent_waits_is_not_success() {
    let s = serve(&[]);
    let o = chat(&format!("{}/a2a/multi", s.base), b"hello\n");
    let out = stdout(&o);
    assert!(out.contains("agent: What should I echo back?"), "{out}");
    assert_eq!(o.status.code(), Some(3), "{out}");
    let err = stderr(&o);
    assert!(
        err.contains("input ended while the agent waits for an answer"),
        "{err}"
    );
}

#[test]
fn bench_reports_throughput_and_latency() {
    let s = serve(&["--agent", "conformance"]);
    let o = a2a(&[
        "bench",
        &s.base,
        "--requests",
        "300",
        "-c",
        "4",
        "--message-id-prefix",
        "tck-complete-task",
        "--json",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["ok"], 300);
    assert_eq!(v["errors"], 0);
    assert!(v["requests_per_second"].as_f64().unwrap() > 0.0);
    assert!(v["latency_ms"]["p99"].as_f64().unwrap() > 0.0);
    let o = a2a(&[
        "bench",
        &s.base,
        "--requests",
        "100",
        "-c",
        "2",
        "--mode",
        "stream",
        "--message-id-prefix",
        "tck-stream-001",
        "--json",
    ]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["ok"], 100);
    assert!(v["events_per_second"].as_f64().unwrap() > 0.0);
}

#[test]
fn single_agent_at_the_root_with_merged_card() {
    let s = serve(&["--agent", "echo", "--card-compat", "v0.3"]);
    let o = a2a(&["card", &s.base, "--json"]);
    let card: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(
        card["supportedInterfaces"][0]["url"],
        format!("{}/", s.base)
    );
    let o = a2a(&["send", &s.base, "task: root"]);
    assert!(stdout(&o).contains("artifact echo: root"), "{}", stdout(&o));
}
