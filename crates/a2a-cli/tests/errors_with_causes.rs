//! Errors name their cause once, with a hint where one helps: a server that is down, a
//! `--timeout` that runs out on a task that keeps running, a config file that is not there;
//! and the wording of counts.

mod common;

use common::*;

#[test]
fn a_server_that_is_down_is_named_once_with_the_cause_and_a_hint() {
    // A loopback port nothing listens on (the listener is dropped at once).
    let url = format!("http://127.0.0.1:{}/a2a/echo", loopback_listener().1.port());
    for args in [
        vec!["card", url.as_str()],
        vec!["send", url.as_str(), "hi"],
        vec!["send", url.as_str(), "hi", "--no-card"],
    ] {
        let o = a2a(&args);
        assert_eq!(o.status.code(), Some(1), "{args:?}");
        let err = stderr(&o);
        assert!(err.contains("connection refused"), "{args:?}: {err}");
        assert!(err.contains("is the server running?"), "{args:?}: {err}");
        assert!(
            !err.contains("error sending request"),
            "the HTTP stack's own text repeats the URL: {err}"
        );
        let port = url.split(':').nth(2).unwrap().split('/').next().unwrap();
        assert_eq!(
            err.matches(&format!("127.0.0.1:{port}")).count(),
            1,
            "the address once: {err}"
        );
        assert_eq!(err.lines().count(), 1, "one line: {err}");
    }
}

#[test]
fn a_send_whose_timeout_runs_out_names_the_task_that_keeps_running() {
    let s = serve(&["--store", "memory"]);
    let slow = format!("{}/a2a/slow", s.base);
    let o = a2a(&["send", &slow, "30", "--timeout", "1"]);
    assert_eq!(o.status.code(), Some(1));
    let err = stderr(&o);
    assert!(err.contains("timed out after 1 s"), "{err}");
    assert!(err.contains("is working and keeps running"), "{err}");
    let task = err
        .split("task ")
        .nth(1)
        .and_then(|t| t.split_whitespace().next())
        .unwrap_or_else(|| panic!("no task id in {err}"))
        .to_owned();
    // What arrived so far is printed, and the task is still running on the server.
    assert!(stdout(&o).contains("artifact progress"), "{}", stdout(&o));
    assert_eq!(state_of(&slow, &task), "TASK_STATE_WORKING");
    let o = a2a(&["cancel", &slow, &task]);
    assert!(o.status.success(), "{}", stderr(&o));
}

#[test]
fn a_blocking_send_whose_timeout_runs_out_says_the_task_may_go_on() {
    let s = serve(&["--store", "memory"]);
    let slow = format!("{}/a2a/slow", s.base);
    let o = a2a(&["send", &slow, "30", "--timeout", "1", "--blocking"]);
    assert_eq!(o.status.code(), Some(1));
    let err = stderr(&o);
    assert!(err.contains("no answer within 1 s"), "{err}");
    assert!(err.contains("does not cancel"), "{err}");
    assert!(err.contains("--no-wait"), "{err}");
}

#[test]
fn a_config_file_that_is_not_there_is_named_without_a_line() {
    let o = a2a(&["serve", "--config", "nope.toml", "--port", "0"]);
    assert_eq!(o.status.code(), Some(1));
    let err = stderr(&o);
    assert!(
        err.contains("nope.toml: cannot read it: no such file"),
        "{err}"
    );
    assert!(!err.contains("nope.toml:0"), "{err}");
}

#[test]
fn counts_are_worded_for_people() {
    let s = serve(&["--store", "memory"]);
    let echo = format!("{}/a2a/echo", s.base);
    let o = a2a(&["list", &echo]);
    assert!(stdout(&o).contains("no tasks"), "{}", stdout(&o));
    let o = a2a(&["send", &echo, "task: one", "--wait", "30"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("(1 artifact)"), "{}", stdout(&o));
    let o = a2a(&["list", &echo]);
    assert!(stdout(&o).lines().any(|l| l == "1 task"), "{}", stdout(&o));
}
