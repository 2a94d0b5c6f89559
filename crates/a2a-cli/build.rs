//! Whether the tests that need PostgreSQL (`a2a_postgres`: `A2A_TEST_POSTGRES_URL` is set),
//! its server programs (`a2a_initdb`: the fault suite runs a private cluster) or root
//! (`a2a_root`: the fault suite mounts a small filesystem) or a browser (`a2a_browser`:
//! chromium and chromedriver, for the inspector's tests) can run here: then they are
//! built as tests, and also under `CI=true`, where what they need missing must fail them;
//! else they are built ignored, so that cargo's summary counts them as ignored, not passed.
fn main() {
    println!("cargo::rustc-check-cfg=cfg(a2a_postgres)");
    println!("cargo::rustc-check-cfg=cfg(a2a_root)");
    println!("cargo::rustc-check-cfg=cfg(a2a_initdb)");
    println!("cargo::rustc-check-cfg=cfg(a2a_browser)");
    println!("cargo::rerun-if-env-changed=A2A_TEST_POSTGRES_URL");
    println!("cargo::rerun-if-env-changed=CI");
    let ci = std::env::var("CI").as_deref() == Ok("true");
    if ci || std::env::var("A2A_TEST_POSTGRES_URL").is_ok_and(|v| !v.is_empty()) {
        println!("cargo::rustc-cfg=a2a_postgres");
    }
    let root = std::process::Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "0");
    if ci || root {
        println!("cargo::rustc-cfg=a2a_root");
    }
    if ci || initdb_here() {
        println!("cargo::rustc-cfg=a2a_initdb");
    }
    // The inspector's browser tests: Debian's chromium and its chromedriver.
    println!("cargo::rerun-if-env-changed=A2A_CHROMIUM");
    println!("cargo::rerun-if-env-changed=A2A_CHROMEDRIVER");
    if ci || (on_path("A2A_CHROMIUM", "chromium") && on_path("A2A_CHROMEDRIVER", "chromedriver")) {
        println!("cargo::rustc-cfg=a2a_browser");
    }
}

/// Whether the program `name` (or the one the variable `var` names) can be run.
fn on_path(var: &str, name: &str) -> bool {
    let program = std::env::var(var).unwrap_or_else(|_| name.to_owned());
    std::process::Command::new(program)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

/// Whether PostgreSQL's server programs are installed (the fault suite runs a private
/// cluster with them): `pg_config --bindir`, else Debian's layout.
fn initdb_here() -> bool {
    let from_pg_config = std::process::Command::new("pg_config")
        .arg("--bindir")
        .output()
        .ok()
        .filter(|o| o.status.success())
        .is_some_and(|o| {
            std::path::Path::new(String::from_utf8_lossy(&o.stdout).trim())
                .join("initdb")
                .exists()
        });
    from_pg_config
        || std::fs::read_dir("/usr/lib/postgresql")
            .is_ok_and(|dirs| dirs.flatten().any(|d| d.path().join("bin/initdb").exists()))
}
