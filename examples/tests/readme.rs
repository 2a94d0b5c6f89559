//! The README's first program is `examples/streaming_agent.rs`, the example the tests run,
//! and it stays within 20 lines of code (comments and blank lines aside).

#[test]
fn readme_shows_the_tested_streaming_agent() {
    let readme = include_str!("../../README.md");
    let example = include_str!("../streaming_agent.rs");
    let code = &example[example.find("use ").expect("the example has imports")..];
    assert!(
        readme.contains(code),
        "README.md must show examples/streaming_agent.rs from its first `use` on, verbatim"
    );
    let lines = code
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with("//"))
        .count();
    assert!(lines <= 20, "the first program has {lines} lines of code");
}
