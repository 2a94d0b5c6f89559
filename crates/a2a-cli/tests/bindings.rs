//! `--binding` picks the interface the client speaks: the same commands over JSON-RPC and
//! HTTP+JSON give the same results.

mod common;

use common::*;

#[test]
fn every_command_speaks_rest_when_asked() {
    let s = serve(&[]);
    let echo = format!("{}/a2a/echo", s.base);
    let multi = format!("{}/a2a/multi", s.base);

    let o = a2a(&["card", &echo, "--binding", "rest"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stdout(&o).contains(&format!("using: HTTP+JSON 1.0 at {echo}")),
        "{}",
        stdout(&o)
    );
    let o = a2a(&["card", &echo]);
    assert!(stdout(&o).contains("using: JSONRPC 1.0"), "{}", stdout(&o));

    for binding in ["jsonrpc", "rest"] {
        let o = a2a(&["send", &echo, "task: hi", "--binding", binding, "--json"]);
        assert!(o.status.success(), "{binding}: {}", stderr(&o));
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        assert_eq!(
            v["task"]["status"]["state"], "TASK_STATE_COMPLETED",
            "{binding}"
        );
        let id = v["task"]["id"].as_str().unwrap().to_owned();

        let o = a2a(&["get", &echo, &id, "--binding", binding, "--json"]);
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        assert_eq!(v["artifacts"][0]["parts"][0]["text"], "hi", "{binding}");
        let o = a2a(&["list", &echo, "--binding", binding]);
        assert!(stdout(&o).contains(&id), "{binding}: {}", stdout(&o));
        let o = a2a(&["cancel", &echo, &id, "--binding", binding]);
        assert!(
            !o.status.success(),
            "{binding}: a finished task cannot be canceled"
        );

        for mode in ["send", "stream"] {
            let o = a2a(&[
                "bench",
                &echo,
                "--binding",
                binding,
                "--mode",
                mode,
                "-n",
                "20",
                "-c",
                "2",
                "--json",
            ]);
            assert!(o.status.success(), "{binding} {mode}: {}", stderr(&o));
            let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
            assert_eq!(
                (v["ok"].as_u64(), v["errors"].as_u64()),
                (Some(20), Some(0)),
                "{v}"
            );
            let expected = if binding == "rest" {
                "HTTP+JSON"
            } else {
                "JSONRPC"
            };
            assert_eq!(v["binding"], expected);
        }

        let o = a2a(&["stream", &multi, "start", "--binding", binding]);
        let out = stdout(&o);
        assert!(
            out.contains("[artifact story] Once upon a time."),
            "{binding}: {out}"
        );
        assert!(out.contains("[INPUT_REQUIRED]"), "{binding}: {out}");
    }
}
