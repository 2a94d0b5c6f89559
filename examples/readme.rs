//! Example programs of the A2A crates (run one with `cargo run -p a2a-examples --example
//! NAME`), and the README's Rust code compiled as doctests, so that neither can rot.

#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
