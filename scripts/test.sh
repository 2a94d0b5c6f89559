#!/usr/bin/env bash
# Runs every test: unit, integration (real servers on loopback), interop with the official
# Python A2A SDK (installed from PyPI into a venv under target/), and the official conformance
# suites (scripts/tck.sh; the TCK's location comes from A2A_TCK, default ../shared/tck).
#
# It ends with a summary: what ran, what was skipped and why, and what to set to run it.
# Tests whose requirement is missing are built ignored (cargo counts them as ignored, with
# the reason); under CI=true nothing may be missing. Full output: target/test-logs/.
set -uo pipefail
cd "$(dirname "$0")/.."

logs=target/test-logs
mkdir -p "$logs"
ci=false
[ "${CI:-}" = true ] && ci=true

# The official SDK at a pinned version (interop results must not drift with its releases;
# raise it on purpose), with its HTTP server and gRPC extras, and uvicorn to run the
# reference server.
sdk_pin="a2a-sdk[http-server,grpc]==1.3.0"
venv="${A2A_INTEROP_VENV:-target/interop-venv}"
python_note=""
if { [ -x "$venv/bin/python" ] || python3 -m venv "$venv" >"$logs/python-venv.log" 2>&1; } &&
  "$venv/bin/pip" install --quiet --disable-pip-version-check "$sdk_pin" "uvicorn==0.54.0" \
    >>"$logs/python-venv.log" 2>&1; then
  version=$("$venv/bin/python" -c 'import importlib.metadata as m; print(m.version("a2a-sdk"))')
  echo "interop: a2a-sdk $version"
  export A2A_INTEROP_PYTHON="$PWD/$venv/bin/python"
  python_note="ran against a2a-sdk $version"
else
  # Without the SDK the interop tests are built ignored (and fail under CI=true).
  unset A2A_INTEROP_PYTHON
  python_note="SKIPPED: could not install $sdk_pin into $venv (python3 with venv and PyPI needed; see $logs/python-venv.log)"
  echo "interop: $python_note"
fi

# The inspector's browser tests drive Debian's chromium through chromedriver: installed here
# when missing on a root Debian machine; else those tests are built ignored (and fail under
# CI=true).
browser_note=""
if ! command -v chromium >/dev/null 2>&1 || ! command -v chromedriver >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "browser: installing chromium and chromium-driver (Debian packages)"
    export DEBIAN_FRONTEND=noninteractive
    apt-get install -y -q chromium chromium-driver >"$logs/apt-chromium.log" 2>&1 ||
      { apt-get update -q >>"$logs/apt-chromium.log" 2>&1 &&
        apt-get install -y -q chromium chromium-driver >>"$logs/apt-chromium.log" 2>&1; } ||
      echo "browser: could not install them (see $logs/apt-chromium.log)"
  fi
fi
if command -v chromium >/dev/null 2>&1 && command -v chromedriver >/dev/null 2>&1; then
  browser_note="ran in $(chromium --version 2>/dev/null | head -1)"
else
  browser_note="SKIPPED: no chromium and chromedriver (Debian: apt-get install chromium chromium-driver; or set A2A_CHROMIUM and A2A_CHROMEDRIVER)"
fi

# The request-parser fuzzer (crates/a2a-server/tests/fuzz_parsers.rs) runs this long; in
# CI a minute, elsewhere 5 s unless A2A_FUZZ_SECONDS says otherwise.
if [ "$ci" = true ]; then
  export A2A_FUZZ_SECONDS="${A2A_FUZZ_SECONDS:-60}"
fi

# Every test binary runs, even after one fails, so that the summary names every failure.
cargo test --workspace --no-fail-fast "$@" 2>&1 | tee "$logs/cargo-test.log"
cargo_status=${PIPESTATUS[0]}

# The official conformance suites (TCK) against the built binary; see README "Conformance".
tck_status=0
if [ -x target/debug/a2a ]; then
  A2A_BIN="$PWD/target/debug/a2a" scripts/tck.sh 2>&1 | tee "$logs/tck.log"
  tck_status=${PIPESTATUS[0]}
else
  echo "tck: not run: the a2a binary was not built" | tee "$logs/tck.log"
  tck_status=1
fi

# The summary.
{
  echo
  echo "== test summary =="
  awk '
    /^test result: / {
      for (i = 1; i <= NF; i++) {
        if ($(i+1) ~ /^passed;?/) passed += $i
        if ($(i+1) ~ /^failed;?/) failed += $i
        if ($(i+1) ~ /^ignored;?/) ignored += $i
      }
      binaries++
    }
    END { printf "cargo test: %d passed, %d failed, %d ignored (%d test binaries)\n", passed, failed, ignored, binaries }
  ' "$logs/cargo-test.log"
  grep -E '^test .* \.\.\. FAILED$' "$logs/cargo-test.log" | sed -E 's/^test (.*) \.\.\. FAILED$/  FAILED: \1/'
  grep -E '^error: could not compile' "$logs/cargo-test.log" | sed 's/^/  BUILD /'
  # Ignored tests, by reason. Those "started by" another test are parts of a test that ran.
  grep -E '^test .* \.\.\. ignored, ' "$logs/cargo-test.log" |
    sed -E 's/^test .* \.\.\. ignored, //' | sort | uniq -c |
    while read -r n reason; do
      case "$reason" in
        *"started by"*) echo "  ran as part of another test ($n): $reason" ;;
        *) echo "  SKIPPED ($n ignored): $reason" ;;
      esac
    done
  echo "python SDK interop: $python_note"
  echo "inspector browser tests: $browser_note"
  tck_line=$(grep -E '^tck: ' "$logs/tck.log" | tail -1)
  case "$tck_line" in
    *skipped*) echo "conformance (TCK): SKIPPED: no TCK found; set A2A_TCK (a folder with run-tck.sh and both suites) or A2A_TCK_V10 and A2A_TCK_V03 (checkouts of github.com/a2aproject/a2a-tck): see the README's Conformance section" ;;
    "") echo "conformance (TCK): no result (see $logs/tck.log)" ;;
    *) echo "conformance (TCK): ${tck_line#tck: }" ;;
  esac
  grep -E '^== TCK .*: skipped' "$logs/tck.log" | sed -E 's/^== TCK /  SKIPPED: TCK /'
  grep -E '^== TCK |^TCK ' "$logs/tck.log" | grep -vE 'skipped' | sed 's/^/  /' 
  if [ "$cargo_status" -eq 0 ] && [ "$tck_status" -eq 0 ]; then
    echo "result: PASSED"
  else
    echo "result: FAILED (cargo test exit $cargo_status, tck exit $tck_status)"
  fi
  echo "full output: $logs/cargo-test.log, $logs/tck.log"
} | tee "$logs/summary.txt"

[ "$cargo_status" -eq 0 ] && [ "$tck_status" -eq 0 ]
