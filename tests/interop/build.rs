//! Whether the tests that need the official Python SDK can run here: with
//! `A2A_INTEROP_PYTHON` set (`scripts/test.sh` installs the SDK and sets it; under `CI=true`
//! its absence must fail them) they are built as tests; else they are built ignored, so
//! that cargo's summary counts them as ignored rather than passed.
fn main() {
    println!("cargo::rustc-check-cfg=cfg(a2a_python)");
    println!("cargo::rerun-if-env-changed=A2A_INTEROP_PYTHON");
    println!("cargo::rerun-if-env-changed=CI");
    let ci = std::env::var("CI").as_deref() == Ok("true");
    if ci || std::env::var("A2A_INTEROP_PYTHON").is_ok_and(|v| !v.is_empty()) {
        println!("cargo::rustc-cfg=a2a_python");
    }
}
