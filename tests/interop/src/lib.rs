//! Interop tests against the official Python A2A SDK live in `tests/`; the Python side is in
//! `python/`. `scripts/test.sh` installs the SDK into a venv and sets `A2A_INTEROP_PYTHON`.
