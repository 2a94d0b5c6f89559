//! Interop tests.
