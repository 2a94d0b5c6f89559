//! An error's message never repeats its source's: printed as a chain (`{:#}` in anyhow,
//! `caused by:` lines in logs), each cause appears once.

use std::error::Error;

use a2a_server::UpdaterError;
use a2a_server::store::StoreError;

fn chain(e: &dyn Error) -> Vec<String> {
    let mut out = vec![e.to_string()];
    let mut next = e.source();
    while let Some(cause) = next {
        out.push(cause.to_string());
        next = cause.source();
    }
    out
}

fn assert_no_repeats(e: &dyn Error) {
    let parts = chain(e);
    for (i, outer) in parts.iter().enumerate() {
        for inner in &parts[i + 1..] {
            assert!(
                !outer.contains(inner.as_str()),
                "{outer:?} repeats its cause {inner:?}: {parts:?}"
            );
        }
    }
}

#[test]
fn store_and_updater_errors_name_each_cause_once() {
    let backend = || StoreError::Backend(Box::new(std::io::Error::other("disk on fire")));
    assert_no_repeats(&backend());
    assert_no_repeats(&UpdaterError::Store(backend()));
    let bad_json = serde_json::from_str::<u32>("x").unwrap_err();
    assert_no_repeats(&StoreError::Serialization(bad_json));
    // The cause is still told, once.
    assert!(format!("{}", UpdaterError::Store(backend())).contains("disk on fire"));
}
