//! Upgrading a task store written before principals were qualified by their source (schema
//! version 3): each owner still sees exactly its tasks, and a principal of another source
//! with the same name sees none of them. The stores in `fixtures/legacy-owners/` were
//! written by the previous version's `a2a serve` (see `make.sh` there): two tasks of the
//! token principal `alice`, one of `bob`, one of the API-key principal `carol` and one of the
//! JWT subject `dave`, each saying whose it is.

mod common;

use common::*;
use serde_json::{Value, json};

/// `Authorization` for a JWT of subject `sub` from the configured issuer and audience.
fn jwt(sub: &str) -> String {
    let claims = json!({"sub": sub, "iss": "https://issuer.test", "aud": "a2a-test", "exp": unix_now() + 300});
    format!("Bearer {}", test_jwt(claims))
}

/// Serves `store` with the credentials the fixture was written with and checks who sees what.
fn each_owner_sees_exactly_its_tasks(store: &str) {
    let jwks = jwks_url();
    let s = serve(&[
        "--store",
        store,
        "--auth-token",
        "alice=t-alice,bob=t-bob",
        "--auth-api-key",
        "carol=k-carol",
        "--auth-jwks-url",
        &jwks,
        "--auth-jwt-issuer",
        "https://issuer.test",
        "--auth-jwt-audience",
        "a2a-test",
    ]);
    let echo = format!("{}/a2a/echo", s.base);
    let listed = |header: (&str, &str)| -> Vec<Value> {
        let body: Value = reqwest::blocking::Client::new()
            .post(&echo)
            .header("A2A-Version", "1.0")
            .header(header.0, header.1)
            .json(&json!({"jsonrpc": "2.0", "id": 1, "method": "ListTasks", "params": {"historyLength": 5}}))
            .send()
            .unwrap()
            .json()
            .unwrap();
        body["result"]["tasks"]
            .as_array()
            .unwrap_or_else(|| panic!("{body}"))
            .clone()
    };
    let dave = jwt("dave");
    for (who, header, count) in [
        ("alice", ("authorization", "Bearer t-alice"), 2),
        ("bob", ("authorization", "Bearer t-bob"), 1),
        ("carol", ("x-api-key", "k-carol"), 1),
        ("dave", ("authorization", dave.as_str()), 1),
    ] {
        let tasks = listed(header);
        assert_eq!(tasks.len(), count, "{who}: {tasks:?}");
        for task in &tasks {
            assert!(
                task["history"]
                    .to_string()
                    .contains(&format!("task: {who}")),
                "{who} sees a task that is not theirs: {task}"
            );
            // Readable one by one too (the owner event was qualified, not only the column).
            let got: Value = reqwest::blocking::Client::new()
                .post(&echo)
                .header("A2A-Version", "1.0")
                .header(header.0, header.1)
                .json(&json!({"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": {"id": task["id"]}}))
                .send()
                .unwrap()
                .json()
                .unwrap();
            assert_eq!(got["result"]["id"], task["id"], "{who}: {got}");
        }
    }
    // The same names from another source see nothing of theirs.
    let jwt_alice = jwt("alice");
    assert!(listed(("authorization", jwt_alice.as_str())).is_empty());
    let jwt_carol = jwt("carol");
    assert!(listed(("authorization", jwt_carol.as_str())).is_empty());
    // New tasks are owned as before the upgrade.
    let o = a2a(&["send", &echo, "task: alice", "--token", "t-alice"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(listed(("authorization", "Bearer t-alice")).len(), 3);
}

#[test]
fn an_sqlite_store_of_the_previous_version() {
    let store = temp_store();
    let path = store.strip_prefix("sqlite:").unwrap();
    std::fs::copy(format!("{FIXTURES}/legacy-owners/v3.db"), path).unwrap();
    each_owner_sees_exactly_its_tasks(&store);
    // Started again, nothing is left to qualify and nothing changes.
    each_owner_sees_exactly_its_tasks_again(&store);
    for suffix in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{path}{suffix}"));
    }
}

/// After a first upgrade (and one more task of alice's): the counts hold on a second start.
fn each_owner_sees_exactly_its_tasks_again(store: &str) {
    let s = serve(&["--store", store, "--auth-token", "alice=t-alice,bob=t-bob"]);
    let o = a2a(&[
        "list",
        &format!("{}/a2a/echo", s.base),
        "--token",
        "t-alice",
        "--json",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["tasks"].as_array().map(Vec::len), Some(3), "{v}");
}

#[cfg_attr(
    not(a2a_postgres),
    ignore = "needs PostgreSQL: set A2A_TEST_POSTGRES_URL"
)]
#[test]
fn a_postgres_store_of_the_previous_version() {
    let dump =
        std::fs::read_to_string(format!("{FIXTURES}/legacy-owners/v3-postgres.sql")).unwrap();
    let rt = tokio::runtime::Runtime::new().unwrap();
    let Some(store) = rt.block_on(a2a_store_sql::test_util::postgres_schema_from(&dump)) else {
        return;
    };
    each_owner_sees_exactly_its_tasks(&store);
}
