//! Every exit status the README's table lists is the one the commands return, and each one
//! in the table is produced by a real run here (the table is read from README.md).

mod common;

use std::collections::BTreeSet;
use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};

use common::*;

/// The statuses of the README's exit-status table (rows `| N | … |` under `### Exit status`).
fn readme_codes() -> BTreeSet<u8> {
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../README.md"))
        .expect("README.md");
    let section = readme
        .split("### Exit status")
        .nth(1)
        .expect("the README has an `### Exit status` section");
    section
        .lines()
        .skip_while(|l| !l.starts_with('|'))
        .take_while(|l| l.starts_with('|'))
        .filter_map(|l| l.trim_matches('|').split('|').next()?.trim().parse().ok())
        .collect()
}

#[test]
fn exit_statuses_match_the_readme() {
    let s = serve(&[]);
    let echo = format!("{}/a2a/echo", s.base);
    let slow = format!("{}/a2a/slow", s.base);
    let multi = format!("{}/a2a/multi", s.base);
    let conformance = format!("{}/a2a/conformance", s.base);
    let seen = std::cell::RefCell::new(BTreeSet::new());
    let expect = |code: u8, args: &[&str]| {
        let o = a2a(args);
        assert_eq!(
            o.status.code(),
            Some(i32::from(code)),
            "{args:?}\nstdout: {}\nstderr: {}",
            stdout(&o),
            stderr(&o)
        );
        seen.borrow_mut().insert(code);
        o
    };

    // 0: done.
    expect(0, &["send", &echo, "task: hello"]);
    expect(0, &["send", &multi, "start"]); // waits for input: not a failure
    expect(0, &["card", &echo]);
    let id = start_task(&slow, "30");
    expect(0, &["get", &slow, &id]);
    expect(0, &["list", &slow]);
    expect(0, &["cancel", &slow, &id]);

    // 1: errors.
    let o = expect(1, &["cancel", &slow, &id]); // already canceled
    assert!(stderr(&o).contains("cannot be canceled"), "{}", stderr(&o));
    expect(1, &["get", &echo, "no-such-task"]);
    expect(1, &["get", &echo]); // usage error
    expect(1, &["card", &format!("{}/a2a/nobody", s.base)]);

    // 2: the task ended failed, rejected or canceled.
    expect(
        2,
        &[
            "send",
            &conformance,
            "x",
            "--message-id",
            "tck-reject-task-1",
        ],
    );
    let id = start_task(&slow, "30");
    let mut sub = Command::new(env!("CARGO_BIN_EXE_a2a"))
        .args(["subscribe", &slow, &id])
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(sub.stdout.take().unwrap()).lines();
    let first = lines.next().unwrap().unwrap();
    assert!(first.contains(&id), "{first}");
    expect(0, &["cancel", &slow, &id]);
    let rest: Vec<String> = lines.map_while(Result::ok).collect();
    let status = sub.wait().unwrap();
    assert_eq!(status.code(), Some(2), "subscribe saw the cancel: {rest:?}");
    seen.borrow_mut().insert(2);
    assert_eq!(
        rest.last().map(String::as_str),
        Some("canceled"),
        "no reason given, so just the state: {rest:?}"
    );

    // 3: stopped waiting; the task goes on. (130 has its own test below.)
    seen.borrow_mut().insert(130);
    let o = expect(3, &["stream", &slow, "30", "--wait", "0.25"]);
    let out = stdout(&o);
    let id = out
        .split_whitespace()
        .nth(1)
        .expect("the task line comes first")
        .to_owned();
    assert!(out.contains("keeps running"), "{out}");
    assert!(out.contains(&format!("a2a cancel {slow} {id}")), "{out}");
    assert_eq!(state_of(&slow, &id), "TASK_STATE_WORKING");
    expect(0, &["cancel", &slow, &id]);
    let o = a2a(&["get", &slow, &id, "--json"]);
    let task: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(task["status"]["state"], "TASK_STATE_CANCELED");
    let artifacts: Vec<&str> = task["artifacts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["name"].as_str().unwrap())
        .collect();
    assert_eq!(artifacts, ["progress"], "canceled before the result");
    let o = expect(3, &["send", &slow, "30", "--wait", "0.25"]);
    assert!(stdout(&o).contains("keeps running"), "{}", stdout(&o));

    assert_eq!(
        seen.into_inner(),
        readme_codes(),
        "the README's table and the commands agree"
    );
}

#[cfg(unix)]
#[test]
fn ctrl_c_stops_following_and_leaves_the_task_running() {
    let s = serve(&[]);
    let slow = format!("{}/a2a/slow", s.base);
    let mut child = Command::new(env!("CARGO_BIN_EXE_a2a"))
        .args(["stream", &slow, "30"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let first = lines.next().unwrap().unwrap();
    let id = first.split_whitespace().nth(1).unwrap().to_owned();
    // Wait until the agent is working, then interrupt.
    for line in lines.by_ref() {
        if line.unwrap().contains("[WORKING]") {
            break;
        }
    }
    let killed = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(130));
    let err = stderr(&o);
    assert!(err.contains("keeps running"), "{err}");
    assert!(err.contains(&format!("a2a cancel {slow} {id}")), "{err}");
    assert_eq!(state_of(&slow, &id), "TASK_STATE_WORKING");
    let o = a2a(&["cancel", &slow, &id]);
    assert!(o.status.success());
}
