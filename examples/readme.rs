//! Example programs of the A2A crates (run one with `cargo run -p a2a-examples --example
//! NAME`), and the README's Rust code compiled as doctests, so that neither can rot.

#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;

/// Each crate's README, compiled the same way.
#[cfg(doctest)]
mod crate_readmes {
    #[doc = include_str!("../crates/a2a-types/README.md")]
    struct Types;
    #[doc = include_str!("../crates/a2a-server/README.md")]
    struct Server;
    #[doc = include_str!("../crates/a2a-client/README.md")]
    struct Client;
    #[doc = include_str!("../crates/a2a-store-sql/README.md")]
    struct StoreSql;
}
