//! The config file: every kind builds, card fields land in the card, and mistakes are
//! refused with the file, the line and the reason.

use a2a_host::config::HostConfig;

fn error(source: &str) -> String {
    HostConfig::parse(source, "agents.toml")
        .unwrap_err()
        .to_string()
}

#[test]
fn every_kind_builds_with_its_card() {
    let config = HostConfig::parse(
        r#"
[host]
port = 5000
bindings = ["jsonrpc", "grpc"]

[[agents]]
id = "echo"
kind = "builtin"

[[agents]]
id = "upper"
kind = "exec"
name = "Upper"
description = "Capitals"
version = "2.0.0"
command = ["tr", "a-z", "A-Z"]
output_modes = ["text/plain"]
provider = { organization = "Example", url = "https://example.com" }
[[agents.skills]]
id = "up"
name = "Up"
examples = ["hello"]

[[agents]]
id = "fwd"
kind = "remote"
url = "http://127.0.0.1:1/a2a/echo"
binding = "rest"
"#,
        "agents.toml",
    )
    .unwrap();
    assert_eq!(config.host.port, Some(5000));
    let agents = config.build_agents(std::path::Path::new("."));
    let ids: Vec<&str> = agents.iter().map(|a| a.id.as_str()).collect();
    assert_eq!(ids, ["echo", "upper", "fwd"]);
    assert_eq!(
        agents[0].card.name, "Echo Agent",
        "a built-in keeps its card"
    );
    let upper = &agents[1].card;
    assert_eq!(
        (
            upper.name.as_str(),
            upper.description.as_str(),
            upper.version.as_str()
        ),
        ("Upper", "Capitals", "2.0.0")
    );
    assert_eq!(upper.skills[0].examples, ["hello"]);
    assert_eq!(upper.provider.as_ref().unwrap().organization, "Example");
    assert_eq!(upper.capabilities.streaming, Some(true));
    assert_eq!(agents[2].card.name, "fwd", "the name defaults to the id");
}

#[test]
fn mistakes_name_the_file_the_line_and_the_reason() {
    let e = error("[[agents]]\nid = \"a\"\nkind = \"exec\"\ncomand = [\"ls\"]\n");
    assert!(e.starts_with("agents.toml:4: "), "{e}");
    assert!(e.contains("comand"), "{e}");

    let e = error("[[agents]]\nid = \"a\"\nkind = \"exec\"\n");
    assert!(e.starts_with("agents.toml:3: "), "{e}");
    assert!(e.contains("`command` is required"), "{e}");

    let e = error("[[agents]]\nid = \"a\"\nkind = \"magic\"\n");
    assert!(e.contains("unknown kind \"magic\""), "{e}");

    let e = error(
        "[[agents]]\nid = \"a\"\nkind = \"builtin\"\nbuiltin = \"echo\"\n\n[[agents]]\nid = \"a\"\nkind = \"builtin\"\nbuiltin = \"echo\"\n",
    );
    assert!(e.starts_with("agents.toml:7: "), "{e}");
    assert!(e.contains("used twice (first on line 2)"), "{e}");

    let e = error("[[agents]]\nid = \"a\"\nkind = \"builtin\"\n");
    assert!(e.contains("no built-in agent \"a\""), "{e}");

    let e = error("[[agents]]\nid = \"a b\"\nkind = \"builtin\"\n");
    assert!(e.contains("letters, digits"), "{e}");

    let e = error("[[agents]]\nid = \"r\"\nkind = \"remote\"\nurl = \"ftp://x\"\n");
    assert!(e.starts_with("agents.toml:4: "), "{e}");
    assert!(e.contains("\"ftp://x\": must be an http(s) URL"), "{e}");
    let e = error("[[agents]]\nid = \"r\"\nkind = \"remote\"\n");
    assert!(e.starts_with("agents.toml:3: "), "{e}");
    assert!(e.contains("`url` is required"), "{e}");

    let e = error(
        "[[agents]]\nid = \"r\"\nkind = \"remote\"\nurl = \"http://x\"\ncommand = [\"ls\"]\n",
    );
    assert!(
        e.contains("`command` does not apply to kind \"remote\""),
        "{e}"
    );

    let e = error(
        "[[agents]]\nid = \"e\"\nkind = \"exec\"\ncommand = [\"ls\"]\ntimeout_seconds = -1\n",
    );
    assert!(e.starts_with("agents.toml:5: "), "{e}");
    assert!(e.contains("positive number"), "{e}");

    let e = error("[host]\nport = \"high\"\n");
    assert!(e.starts_with("agents.toml:2: "), "{e}");
}

/// The README's config example is a config this host accepts, and so is the example file.
#[test]
fn the_readme_and_example_configs_parse() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    let section = readme
        .split("### Your own agents, from a config file")
        .nth(1)
        .expect("the README's config section");
    let block = section
        .split("```toml\n")
        .nth(1)
        .and_then(|b| b.split("```").next())
        .expect("a toml block in it");
    let config = HostConfig::parse(block, "README.md").unwrap_or_else(|e| panic!("{e}"));
    let kinds: Vec<&str> = config.agents.iter().map(|a| a.kind.name()).collect();
    assert_eq!(kinds, ["builtin", "exec", "llm", "remote"]);

    let example = root.join("examples/agents.toml");
    let config = HostConfig::load(&example).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(config.build_agents(&root.join("examples")).len(), 5);
}
