//! `--binding` picks the interface the client speaks: the same commands over JSON-RPC,
//! HTTP+JSON and gRPC give the same results. `serve --bindings` switches bindings off, and
//! `--grpc-port` serves gRPC on a port of its own.

mod common;

use common::*;

#[test]
fn every_command_speaks_each_binding_when_asked() {
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
    let o = a2a(&["card", &echo, "--binding", "grpc"]);
    let address = s.base.trim_start_matches("http://");
    assert!(
        stdout(&o).contains(&format!("using: GRPC 1.0 at {address}")),
        "{}",
        stdout(&o)
    );

    for binding in ["jsonrpc", "rest", "grpc"] {
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
            let expected = match binding {
                "rest" => "HTTP+JSON",
                "grpc" => "GRPC",
                _ => "JSONRPC",
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

#[test]
fn grpc_on_a_port_of_its_own_and_bindings_switched_off() {
    let s = serve(&["--grpc-port", "0", "--bindings", "jsonrpc,grpc"]);
    let echo = format!("{}/a2a/echo", s.base);
    let o = a2a(&["card", &echo]);
    let out = stdout(&o);
    let interfaces: Vec<&str> = out
        .lines()
        .filter_map(|l| l.trim().strip_prefix("interface: "))
        .collect();
    assert_eq!(interfaces.len(), 3, "no HTTP+JSON: {out}");
    assert!(interfaces[0].starts_with("JSONRPC 1.0"), "{out}");
    assert!(interfaces[2].starts_with("JSONRPC 0.3"), "{out}");
    let address = s.base.trim_start_matches("http://");
    assert!(
        interfaces[1].starts_with("GRPC 1.0 at ")
            && interfaces[1].ends_with(" (tenant a2a/echo)")
            && !interfaces[1].contains(address),
        "gRPC on a port of its own: {out}"
    );

    let o = a2a(&["send", &echo, "task: hi", "--binding", "grpc", "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["task"]["status"]["state"], "TASK_STATE_COMPLETED");
    let o = a2a(&["send", &echo, "hi", "--binding", "rest"]);
    assert!(!o.status.success(), "REST is off");

    let o = a2a(&["serve", "--port", "0", "--bindings", "soap"]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("--bindings"), "{}", stderr(&o));
}
