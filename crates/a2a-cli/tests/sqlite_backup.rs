//! After a clean shutdown (SIGTERM), the SQLite database file alone holds every task: the
//! write-ahead log was checkpointed into it, so copying `a2a.db` (as users back it up) copies
//! everything.

mod common;

use std::process::Command;

use common::*;

#[test]
fn the_database_file_alone_holds_every_task_after_sigterm() {
    let dir = tempfile_dir("a2a-sqlite-backup");
    let db = dir.join("a2a.db");
    let store = format!("sqlite:{}", db.display());
    let mut server = serve(&["--store", &store]);
    let echo = format!("{}/a2a/echo", server.base);
    let mut ids = Vec::new();
    for i in 0..5 {
        let o = a2a(&["send", &echo, &format!("task: kept {i}"), "--json"]);
        assert!(o.status.success(), "{}", stderr(&o));
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        ids.push(v["task"]["id"].as_str().unwrap().to_owned());
    }

    let term = Command::new("kill")
        .args(["-TERM", &server.child.id().to_string()])
        .status()
        .unwrap();
    assert!(term.success());
    let exit = server.child.wait().unwrap();
    assert!(exit.success(), "a clean shutdown exits 0: {exit:?}");

    // Only the main file is copied, under another name, into another directory.
    let copy_dir = tempfile_dir("a2a-sqlite-backup-copy");
    let copy = copy_dir.join("backup.db");
    std::fs::copy(&db, &copy).unwrap();
    assert!(!copy_dir.join("backup.db-wal").exists());

    let restored = serve(&["--store", &format!("sqlite:{}", copy.display())]);
    let echo = format!("{}/a2a/echo", restored.base);
    for (i, id) in ids.iter().enumerate() {
        let o = a2a(&["get", &echo, id, "--json"]);
        assert!(
            o.status.success(),
            "task {i} is missing from the copied file: {}",
            stderr(&o)
        );
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        assert_eq!(v["status"]["state"], "TASK_STATE_COMPLETED");
        assert_eq!(v["artifacts"][0]["parts"][0]["text"], format!("kept {i}"));
    }
    drop(restored);
    let _ = std::fs::remove_dir_all(&dir);
    let _ = std::fs::remove_dir_all(&copy_dir);
}

/// A new empty directory under the temporary directory.
fn tempfile_dir(prefix: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("{prefix}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}
