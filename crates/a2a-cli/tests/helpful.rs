//! The command line helps a person: per-command help with examples, URLs without a scheme,
//! the server's own hint on a 404, each error printed once, chat commands.

mod common;

use common::*;

#[test]
fn each_command_lists_only_its_options_with_an_example() {
    for (cmd, has, lacks) in [
        ("send", &["--timeout", "--wait", "Example"][..], &[][..]),
        ("stream", &["--wait", "Ctrl-C", "Example"], &["--timeout"]),
        (
            "subscribe",
            &["--wait", "Example"],
            &["--timeout", "--history"],
        ),
        (
            "cancel",
            &["--timeout", "Example"],
            &["--history", "--wait"],
        ),
        ("get", &["--history", "Example"], &["--wait"]),
        ("list", &["--state", "Example"], &["--wait"]),
        ("card", &["Example"], &["--wait"]),
        ("chat", &["/new", "Example"], &["--wait"]),
    ] {
        let o = a2a(&[cmd, "--help"]);
        assert!(o.status.success(), "{cmd}");
        let help = stdout(&o);
        for h in has {
            assert!(help.contains(h), "`a2a {cmd} --help` lacks {h}:\n{help}");
        }
        for l in lacks {
            assert!(!help.contains(l), "`a2a {cmd} --help` lists {l}:\n{help}");
        }
    }
}

#[test]
fn urls_hints_and_errors() {
    let s = serve(&[]);
    // No scheme: http:// is assumed.
    let bare = format!("{}/a2a/echo", s.base.trim_start_matches("http://"));
    let o = a2a(&["send", &bare, "task: bare"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("artifact echo: bare"), "{}", stdout(&o));

    // A 404 shows what the server said, with the agents it lists.
    let o = a2a(&["card", &format!("{}/a2a/nobody", s.base)]);
    assert_eq!(o.status.code(), Some(1));
    let err = stderr(&o);
    assert!(err.contains("\"nobody\""), "{err}");
    assert!(
        err.contains("agents here: conformance, echo, multi, slow"),
        "{err}"
    );

    // Each error is printed once, in the server's words.
    let o = a2a(&["get", &format!("{}/a2a/echo", s.base), "no-such-task"]);
    let err = stderr(&o);
    assert_eq!(err.matches("Task not found").count(), 1, "{err}");
    assert_eq!(err.trim(), "a2a: error: Task not found: no-such-task");
}

#[test]
fn chat_refuses_unknown_commands_and_asks_once() {
    let s = serve(&[]);
    let o = chat(&format!("{}/a2a/multi", s.base), b"/bogus\nhello\n/quit\n");
    let out = stdout(&o);
    assert!(o.status.success(), "{out}");
    assert!(out.contains("unknown command /bogus"), "{out}");
    assert_eq!(
        out.matches("What should I echo back?").count(),
        1,
        "the question is printed once: {out}"
    );
    // `/bogus` was not sent: the first task the agent saw was `hello`'s.
    assert_eq!(out.matches("[SUBMITTED]").count(), 1, "{out}");
}
