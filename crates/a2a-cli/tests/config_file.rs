//! `a2a serve --config FILE`: the example file's agents served and answering, command-line
//! options over the file's `[host]`, and a broken file refused with its line.

mod common;

use common::*;

fn example() -> String {
    format!("{}/../../examples/agents.toml", env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn the_example_config_serves_each_kind() {
    // --port 0 and --store memory override the file's port and store.
    let s = serve(&["--config", &example(), "--store", "memory"]);
    assert!(!s.base.ends_with(":41241"), "{}", s.base);

    let o = a2a(&["send", &format!("{}/a2a/echo", s.base), "hi"]);
    assert!(stdout(&o).contains("hi"), "{}", stderr(&o));

    let o = a2a(&[
        "send",
        &format!("{}/a2a/shout", s.base),
        "hello there",
        "--json",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["task"]["status"]["state"], "TASK_STATE_COMPLETED");
    assert_eq!(v["task"]["artifacts"][0]["parts"][0]["text"], "HELLO THERE");

    let greeter = format!("{}/a2a/greeter", s.base);
    let o = a2a(&["send", &greeter, "hi", "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["task"]["status"]["state"], "TASK_STATE_INPUT_REQUIRED");
    let (task, context) = (
        v["task"]["id"].as_str().unwrap(),
        v["task"]["contextId"].as_str().unwrap(),
    );
    let o = a2a(&[
        "send",
        &greeter,
        "Ada",
        "--task",
        task,
        "--context",
        context,
    ]);
    assert!(stdout(&o).contains("Hello, Ada!"), "{}", stdout(&o));

    let o = a2a(&["card", &format!("{}/a2a/shout", s.base)]);
    assert!(
        stdout(&o).starts_with("Shout (version 1.0.0)\n  Answers in capitals"),
        "{}",
        stdout(&o)
    );
}

#[test]
fn a_broken_config_is_refused_with_its_line() {
    let path = std::env::temp_dir().join(format!("a2a-config-{}.toml", std::process::id()));
    std::fs::write(&path, "[[agents]]\nid = \"x\"\nkind = \"exec\"\n").unwrap();
    let o = a2a(&["serve", "--port", "0", "--config", path.to_str().unwrap()]);
    std::fs::remove_file(&path).ok();
    assert!(!o.status.success());
    let err = stderr(&o);
    assert!(
        err.contains(&format!(
            "{}:3: agent \"x\": `command` is required",
            path.display()
        )),
        "{err}"
    );
}

#[test]
fn a2a_can_be_switched_off_per_agent_and_for_the_host() {
    let dir = std::env::temp_dir().join(format!("a2a-off-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let agents = "[[agents]]\nid = \"echo\"\nkind = \"builtin\"\n\n[[agents]]\nid = \"shout\"\nkind = \"exec\"\ncommand = [\"tr\", \"a-z\", \"A-Z\"]\na2a = false\n";
    let one_off = dir.join("one-off.toml");
    std::fs::write(&one_off, agents).unwrap();
    let all_off = dir.join("all-off.toml");
    std::fs::write(&all_off, format!("[host]\na2a = false\n\n{agents}")).unwrap();

    let s = serve(&["--config", one_off.to_str().unwrap(), "--store", "memory"]);
    assert!(
        a2a(&["card", &format!("{}/a2a/echo", s.base)])
            .status
            .success()
    );
    let o = a2a(&["card", &format!("{}/a2a/shout", s.base)]);
    assert!(!o.status.success(), "shout is switched off");
    drop(s);

    let s = serve(&["--config", all_off.to_str().unwrap(), "--store", "memory"]);
    let o = a2a(&["card", &format!("{}/a2a/echo", s.base)]);
    assert!(!o.status.success(), "A2A is off for the whole host");
    std::fs::remove_dir_all(&dir).ok();
}
