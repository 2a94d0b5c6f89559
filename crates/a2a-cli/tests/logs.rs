//! `A2A_LOG=debug` shows one line per request and per task transition, with the ids;
//! `--log-format json` makes each line a JSON object.

mod common;

use std::time::Duration;

use common::*;

#[test]
fn debug_logs_name_each_request_and_transition() {
    let (s, log) = serve_logged(
        &["--agent", "echo", "--store", "memory"],
        "a2a_server=debug,a2a_runtime=debug",
    );
    let o = a2a(&["send", &s.base, "task: logged", "--json", "--blocking"]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let task = v["task"]["id"].as_str().unwrap().to_owned();
    let wait = Duration::from_secs(10);
    assert!(
        wait_for_line(&log, &["task state", &task, "TASK_STATE_COMPLETED"], wait).is_some(),
        "no transition line for {task}"
    );
    let line = wait_for_line(&log, &["request", "SendMessage", &task, "ok"], wait)
        .unwrap_or_else(|| panic!("no request line for {task}"));
    // Its stderr is a pipe, not a terminal: no colour codes.
    assert!(
        !line.contains('\x1b'),
        "colour codes in a piped log: {line:?}"
    );
    let o = a2a(&["list", &s.base]);
    assert!(o.status.success());
    assert!(wait_for_line(&log, &["request", "ListTasks", "ok"], wait).is_some());
    let o = a2a(&["get", &s.base, "no-such-task"]);
    assert!(!o.status.success());
    let line = wait_for_line(&log, &["request", "GetTask", "no-such-task"], wait).unwrap();
    assert!(line.contains("-32001"), "{line}");
}

#[test]
fn json_log_lines_are_objects() {
    let (s, log) = serve_logged(
        &[
            "--agent",
            "echo",
            "--store",
            "memory",
            "--log-format",
            "json",
        ],
        "a2a_server=debug,a2a_runtime=debug",
    );
    let o = a2a(&["send", &s.base, "task: as json", "--blocking"]);
    assert!(o.status.success());
    let line = wait_for_line(&log, &["\"request\""], Duration::from_secs(10)).unwrap();
    let v: serde_json::Value = serde_json::from_str(&line).unwrap();
    assert_eq!(v["fields"]["method"], "SendMessage", "{v}");
    assert_eq!(v["level"], "DEBUG");
}
