#!/usr/bin/env bash
# Where a blocking send's server CPU goes, layer by layer, beside the bare floor's: each
# server (`a2a floor`, then `a2a serve --agent conformance` on each store named) is loaded by
# `a2a bench -c32` while `perf record --call-graph dwarf` samples it. Every sample goes to a
# layer: to the store, the JSON, the agent or the task's start when any frame of its stack
# is theirs (so a `malloc` inside the answer's serialization counts as the answer's); else
# to the wrapping layer nearest its leaf (telemetry, the handler, HTTP, the scheduler);
# kernel samples by system call; SQLite's own threads a row each. The layers are printed in
# microseconds of CPU per request, side by side. The floor parses the same request and
# writes an answer of the same shape, so the columns' difference is what the runtime, the
# store and the rest cost.
#
#   scripts/profile-send.sh [A2A_BIN] [STORE...]   (default: target/release/a2a, memory)
#
# STORE: memory, sqlite (a fresh file) or a PostgreSQL URL. Environment: SECONDS_PER_RUN (6),
# CONCURRENCY (32), FREQ (perf's sampling rate, 1500 Hz). Needs `perf` and permission to
# profile another process (root, or kernel.perf_event_paranoid <= 1). Sampling with stacks
# slows each server (by 10-35 % here, the most on SQLite, whose writer thread is sampled
# too); compare the columns of one run, and take rates from bench-all.sh.
set -euo pipefail
cd "$(dirname "$0")/.."

bin="${1:-target/release/a2a}"
shift || true
stores=("$@")
[ ${#stores[@]} -gt 0 ] || stores=(memory)
secs="${SECONDS_PER_RUN:-6}"
conc="${CONCURRENCY:-32}"
freq="${FREQ:-1500}"
for tool in perf jq; do
  command -v "$tool" >/dev/null || { echo "$tool is not installed (apt-get install linux-perf jq)" >&2; exit 1; }
done
[ -x "$bin" ] || { echo "no binary at $bin (cargo build --release -p a2a-cli)" >&2; exit 1; }

work=$(mktemp -d)
server=""
pg_url=""
schema="profile_send_$$"
cleanup() {
  [ -n "$server" ] && kill "$server" 2>/dev/null || true
  wait 2>/dev/null || true
  # Also when a run failed half-way: no schema is left behind.
  if [ -n "$pg_url" ]; then
    psql "$pg_url" -q -c "SET client_min_messages = warning" \
      -c "DROP SCHEMA IF EXISTS $schema CASCADE" >/dev/null 2>&1 || true
  fi
  rm -rf "$work"
}
trap cleanup EXIT
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

profile() { # NAME ARGS... : serves, warms up, records; leaves NAME.txt (perf script) and NAME.n
  local name=$1 p up=""; shift; p=$(free_port)
  local card=()
  if [ "$1" = floor ]; then card=(--no-card); fi
  "$bin" "$@" --port "$p" >"$work/$name.log" 2>&1 &
  server=$!
  # Any HTTP answer means it listens (the floor answers GET / with 405).
  for _ in $(seq 100); do
    if curl -s -o /dev/null "http://127.0.0.1:$p/"; then up=1; break; fi
    sleep 0.1
  done
  if [ -z "$up" ]; then
    echo "$name did not start:" >&2; cat "$work/$name.log" >&2; exit 1
  fi
  local load=("$bin" bench "http://127.0.0.1:$p" -c "$conc" "${card[@]}"
    --message-id-prefix tck-complete-task)
  if ! "${load[@]}" -d 2 >"$work/$name.bench.err" 2>&1; then
    echo "$name: the warm-up failed:" >&2
    cat "$work/$name.bench.err" "$work/$name.log" >&2; exit 1
  fi
  perf record -q -F "$freq" --call-graph dwarf,16384 -o "$work/$name.data" -p "$server" \
    -- sleep "$secs" >/dev/null 2>&1 &
  local rec=$!
  "${load[@]}" -d "$secs" --json 2>"$work/$name.bench.err" | jq -r .ok >"$work/$name.n" || true
  wait "$rec"
  if ! [ "$(cat "$work/$name.n")" -gt 0 ] 2>/dev/null; then
    echo "$name: the load generator completed no request:" >&2
    cat "$work/$name.bench.err" "$work/$name.log" >&2; exit 1
  fi
  kill "$server"; wait "$server" 2>/dev/null || true; server=""
  perf script -i "$work/$name.data" >"$work/$name.txt" 2>/dev/null
  rm -f "$work/$name.data"
}

names=(floor)
profile floor floor
for s in "${stores[@]}"; do
  case "$s" in
    memory) arg=memory; name=memory ;;
    sqlite) arg="sqlite:$work/profile.db"; name=sqlite ;;
    postgres*)
      # A schema of its own, dropped after (by `cleanup`, also on failure).
      pg_url=$s
      psql "$s" -q -c "CREATE SCHEMA $schema" >/dev/null
      sep='?'; case "$s" in *\?*) sep='&';; esac
      arg="${s}${sep}options=-c%20search_path%3D$schema"; name=postgres ;;
    *) echo "unknown store $s" >&2; exit 1 ;;
  esac
  profile "$name" serve --agent conformance --store "$arg"
  names+=("$name")
done

python3 - "$work" "$freq" "$secs" "${names[@]}" <<'EOF'
import collections, re, sys

work, freq, secs, names = sys.argv[1], float(sys.argv[2]), float(sys.argv[3]), sys.argv[4:]

# Layers whose functions run inside no other layer's: a sample is theirs when any frame of
# its stack matches, tried in this order (a `malloc` inside the answer's serialization is
# the answer's).
NESTED = [
    ("store: SQL writer, on the workers", ["a2a_store_sql::writer"]),
    ("store: finished task's stored form", ["Log::freeze"]),
    ("store: eviction of the oldest", ["evict_beyond"]),
    ("store: append (caller's side)", ["TaskStore>::append"]),
    ("JSON: answer written", ["success_body", "error_body", "serde_json::ser"]),
    ("JSON: request parsed", ["jsonrpc::params", "parse_envelope", "serde_json::de"]),
    ("agent and updater", ["AgentExecutor>::execute", "TaskUpdater"]),
    ("runtime: task started", ["TaskRuntime::start", "TaskRuntime::launch", "prepare_with"]),
]
# Layers that wrap others (the request's span and metrics wrap the whole operation): a
# sample is theirs when the frame nearest its leaf that matches any of these is theirs.
WRAPPING = [
    ("telemetry and metrics", ["::observed", "telemetry::", "metrics::", "tracing::"]),
    ("handler, the rest", ["RequestHandler::", "jsonrpc::", "floor::endpoint", "a2a_runtime::",
                           "a2a_server::transport", "a2a_host::"]),
    ("HTTP (hyper, axum, connection)", ["hyper::", "axum::", "a2a_server::listen", "tower::",
                                        "http::", "httparse::"]),
    ("scheduler (tokio)", ["tokio::"]),
]
SYSCALLS = [("write", ["sys_writev", "sys_write", "sys_sendto", "__GI___writev", "libc_write"]),
            ("read", ["sys_recvfrom", "sys_read", "libc_recv"]),
            ("epoll", ["epoll_wait"]),
            ("futex", ["sys_futex", "futex_wait", "futex_wake"]),
            ("disk (pwrite, fsync)", ["sys_pwrite64", "sys_fsync", "sys_fdatasync", "sys_pread64"])]
POOL = "tokio-rt-worker"

def layer_of(thread, frames):
    if thread != POOL and "sqlite" in thread:
        # SQLite's own threads (the writer, the checkpointer, sqlx's): one row each.
        return "thread: " + thread
    if "[kernel" in frames[0]:
        for name, keys in SYSCALLS:
            if any(k in f for f in frames for k in keys):
                return "kernel: " + name
        return "kernel: other (interrupts, scheduling)"
    user = [f for f in frames if "[kernel" not in f]
    for name, keys in NESTED:
        if any(k in f for f in user for k in keys):
            return name
    for f in user:
        for name, keys in WRAPPING:
            if any(k in f for k in keys):
                return name
    return "other"

table = {}
for name in names:
    reqs = int(open(f"{work}/{name}.n").read())
    counts = collections.Counter()
    for sample in open(f"{work}/{name}.txt", errors="replace").read().split("\n\n"):
        lines = [l.strip() for l in sample.strip().split("\n") if l.strip()]
        if len(lines) < 2:
            continue
        frames = [re.sub(r"^[0-9a-f]+ ", "", l) for l in lines[1:]]
        counts[layer_of(lines[0].split()[0], frames)] += 1
    us = 1e6 / freq / reqs
    table[name] = {k: v * us for k, v in counts.items()}
    table[name]["total"] = sum(counts.values()) * us
    print(f"{name}: {reqs / secs:.0f} req/s while sampled")

extra = sorted({k for n in names for k in table[n] if k.startswith("thread: ")})
order = [n for n, _ in NESTED + WRAPPING] + ["other"] + ["kernel: " + n for n, _ in SYSCALLS] + \
    ["kernel: other (interrupts, scheduling)"] + extra
print(f"\nserver CPU per request, µs (sampled at {freq:.0f} Hz)")
print(f"{'layer':40}" + "".join(f"{n:>10}" for n in names))
for layer in order + ["total"]:
    if all(table[n].get(layer, 0) < 0.005 for n in names):
        continue
    print(f"{layer:40}" + "".join(f"{table[n].get(layer, 0):10.2f}" for n in names))
EOF
