#!/usr/bin/env bash
# Runs every test: unit, integration (real servers on loopback), interop with the official
# Python A2A SDK (installed from PyPI into a venv under target/), and the official conformance
# suites (scripts/tck.sh; the TCK's location comes from A2A_TCK, default ../shared/tck).
set -euo pipefail
cd "$(dirname "$0")/.."

venv="${A2A_INTEROP_VENV:-target/interop-venv}"
if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv"
fi
# The official SDK at a pinned version (interop results must not drift with its releases;
# raise it on purpose), with its HTTP server and gRPC extras, and uvicorn to run the
# reference server.
"$venv/bin/pip" install --quiet --disable-pip-version-check "a2a-sdk[http-server,grpc]==1.3.0" "uvicorn==0.54.0"
echo "interop: $("$venv/bin/python" -c 'import importlib.metadata as m; print("a2a-sdk", m.version("a2a-sdk"))')"
export A2A_INTEROP_PYTHON="$PWD/$venv/bin/python"

# The request-parser fuzzer (crates/a2a-server/tests/fuzz_parsers.rs) runs this long; in
# CI a minute, elsewhere 5 s unless A2A_FUZZ_SECONDS says otherwise.
if [ "${CI:-}" = "true" ]; then
  export A2A_FUZZ_SECONDS="${A2A_FUZZ_SECONDS:-60}"
fi
cargo test --workspace "$@"

# The official conformance suites (TCK) against the built binary; see README "Conformance".
A2A_BIN="$PWD/target/debug/a2a" scripts/tck.sh
