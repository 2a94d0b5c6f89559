#!/usr/bin/env bash
# Instructions per blocking send, counted rather than timed: each server runs under
# valgrind's callgrind, is warmed up, then answers REQUESTS sends of `a2a bench`; the
# instructions it executed in user space for them (every thread: workers, SQLite's writer
# and checkpointer) are divided by REQUESTS and split by the crate whose source they come
# from (inlined code counts for the crate it was written in), with a few subtrees besides
# (the request parsed, the answer written, the store's append).
#
#   scripts/count-instructions.sh [A2A_BIN...]   (default: target/release/a2a)
#
# With one binary: `a2a floor` and `a2a serve --agent conformance` on each STORES entry,
# side by side. With several (say the previous main's and a change's): the same server of
# each, side by side, for an A/B that the machine's speed does not move. The first binary's
# `a2a bench` loads every server.
#
# Why count: on a shared machine the rate and even the CPU time of one send move by a fifth
# within minutes; the number of instructions moves by well under a percent between runs of
# one build. It is not the time (a cache miss costs hundreds of cycles, an instruction of a
# tight loop a fraction of one; the kernel's part, system calls and wake-ups, is not
# counted), so a change that cuts instructions still needs an A/B of its rate
# (`bench-ab.sh`); but it tells where the code's own work is, and whether a change removed
# any, without noise.
#
# Environment: STORES (memory; also sqlite), REQUESTS (5000), CONCURRENCY (4), KEEP (a
# directory to keep the profiles in, NAME.cg.1, for `callgrind_annotate`), SERVE_ARGS (more
# `a2a serve` flags, e.g. `--auth-token bench=t`) and BENCH_ARGS (more `a2a bench` flags for
# those servers, e.g. `--token t`), MESSAGE_PREFIX (the conformance agent's scenario, by
# messageId prefix: tck-complete-task; tck-stream-artifact-chunked works, sends two artifact
# chunks, then completes), CACHE_SIM (1: callgrind's cache simulation too, for the first-
# and last-level misses a send: a change that cuts instructions but reads more cold lines
# shows there, without the timing's noise; about twice as slow). The servers
# run with one tokio worker (TOKIO_WORKER_THREADS=1: callgrind runs one thread at a time
# anyway, and fewer hand-offs make the count repeatable). Installs valgrind if missing
# (apt-get).
set -euo pipefail
cd "$(dirname "$0")/.."

bins=("$@")
[ ${#bins[@]} -gt 0 ] || bins=(target/release/a2a)
read -r -a stores <<<"${STORES:-memory}"
requests="${REQUESTS:-5000}"
conc="${CONCURRENCY:-4}"
for b in "${bins[@]}"; do
  [ -x "$b" ] || { echo "no binary at $b (cargo build --release -p a2a-cli)" >&2; exit 1; }
done
if ! command -v valgrind >/dev/null || ! command -v callgrind_control >/dev/null; then
  apt-get install -y valgrind >/dev/null
fi
command -v jq >/dev/null || { echo "jq is not installed (apt-get install jq)" >&2; exit 1; }

work=$(mktemp -d)
vg=""
cleanup() {
  [ -n "$vg" ] && kill "$vg" 2>/dev/null || true
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

# send PORT N [ARGS...]: N blocking sends to the server on PORT; a2a bench's JSON summary.
send() {
  local port=$1 n=$2
  shift 2
  "${bins[0]}" bench "http://127.0.0.1:$port/" -c "$conc" -n "$n" --warmup 0 --json \
    --message-id-prefix "${MESSAGE_PREFIX:-tck-complete-task}" "$@"
}

# count NAME BIN ARGS...: runs `BIN ARGS --port P` under callgrind; its profile of REQUESTS
# sends (after a warm-up) is left in $work/NAME.cg.1, its inclusive listing in NAME.incl.
count() {
  local name=$1 bin=$2 port load=() out up=""
  shift 2
  port=$(free_port)
  if [ "$1" = floor ]; then load=(--no-card); else read -r -a load <<<"${BENCH_ARGS:-}"; fi
  local sim=()
  if [ -n "${CACHE_SIM:-}" ]; then sim=(--cache-sim=yes); fi
  TOKIO_WORKER_THREADS=1 valgrind --tool=callgrind "${sim[@]}" --callgrind-out-file="$work/$name.cg" \
    "$bin" "$@" --port "$port" >"$work/$name.log" 2>&1 &
  vg=$!
  # Under valgrind a server takes seconds to start; any HTTP answer means it listens.
  for _ in $(seq 600); do
    if curl -s -o /dev/null -X POST "http://127.0.0.1:$port/"; then up=1; break; fi
    kill -0 "$vg" 2>/dev/null || break
    sleep 0.1
  done
  [ -n "$up" ] || { echo "$name did not start:" >&2; cat "$work/$name.log" >&2; exit 1; }
  out=$(send "$port" 1000 "${load[@]}")
  [ "$(echo "$out" | jq .errors)" = 0 ] || { echo "$name: the warm-up failed: $out" >&2; exit 1; }
  callgrind_control --zero "$vg" >/dev/null 2>&1
  out=$(send "$port" "$requests" "${load[@]}")
  [ "$(echo "$out" | jq .ok)" = "$requests" ] || { echo "$name: $out" >&2; exit 1; }
  callgrind_control --dump "$vg" >/dev/null 2>&1
  kill "$vg"; wait "$vg" 2>/dev/null || true; vg=""
  # The dump after the zeroing is the second part (`.1`); the first holds the warm-up.
  callgrind_annotate --auto=no --threshold=100 --inclusive=yes "$work/$name.cg.1" >"$work/$name.incl" 2>/dev/null
  if [ -n "${KEEP:-}" ]; then mkdir -p "$KEEP" && cp "$work/$name.cg.1" "$KEEP/"; fi
}

# store_arg STORE FILE: the `--store` value for STORE (a SQLite database in FILE).
store_arg() {
  case "$1" in
    memory) echo memory ;;
    sqlite) echo "sqlite:$work/$2.db" ;;
    *) echo "unknown store $1 (memory or sqlite)" >&2; return 1 ;;
  esac
}

for s in "${stores[@]}"; do store_arg "$s" check >/dev/null || exit 1; done

read -r -a serve_args <<<"${SERVE_ARGS:-}"
names=()
if [ ${#bins[@]} -eq 1 ]; then
  count floor "${bins[0]}" floor; names+=(floor)
  for s in "${stores[@]}"; do
    arg=$(store_arg "$s" "$s")
    count "$s" "${bins[0]}" serve --agent conformance --store "$arg" "${serve_args[@]}"
    names+=("$s")
  done
else
  s="${stores[0]}"
  i=0
  for b in "${bins[@]}"; do
    i=$((i + 1))
    arg=$(store_arg "$s" "bin$i")
    count "bin$i" "$b" serve --agent conformance --store "$arg" "${serve_args[@]}"
    names+=("bin$i")
  done
  for j in $(seq ${#bins[@]}); do echo "bin$j: ${bins[$((j - 1))]} ($s)"; done
fi

python3 - "$work" "$requests" "${names[@]}" <<'PY'
import collections, re, sys
work, requests, names = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
line = re.compile(r"^\s*([\d,]+) \([ \d.]+%\)\s+(\S.*?):(.+?)(?: \[[^\]]*\])?$")

def rows(path):
    """(instructions, file, function) of callgrind_annotate's listing at `path`."""
    for l in open(path):
        m = line.match(l)
        if m:
            yield int(m.group(1).replace(",", "")), m.group(2), m.group(3)

def self_by_file(path):
    """Each source file's own instructions, read off callgrind's profile at `path`: cost
    lines count for the file their code came from (`fi=`/`fe=` for inlined code, else
    `fl=`), except the line after `calls=`, which is a call's inclusive cost."""
    names, costs = {}, collections.Counter()
    fl = cur = None
    skip = False
    def name(v):
        m = re.match(r"\((\d+)\)(?: (.*))?", v)
        if not m:
            return v
        if m.group(2) is not None:
            names[m.group(1)] = m.group(2)
        return names.get(m.group(1), "?")
    for l in open(path):
        l = l.rstrip("\n")
        if l.startswith("fl="):
            fl = cur = name(l[3:])
        elif l.startswith(("fi=", "fe=")):
            cur = name(l[3:])
        elif l.startswith("fn="):
            cur = fl
        elif l.startswith(("cfi=", "cfl=")):
            name(l[4:])
        elif l.startswith("calls="):
            skip = True
        elif l[:1].isdigit() or l[:1] in "+-*":
            if skip:
                skip = False
                continue
            parts = l.split()
            if len(parts) > 1 and cur is not None:
                costs[cur] += int(parts[1])
    return costs

def crate(path):
    """The crate a source file belongs to."""
    if m := re.search(r"/registry/src/[^/]+/([A-Za-z0-9_\-]+?)-\d+\.\d+", path):
        return m.group(1)
    if m := re.search(r"/crates/([a-z0-9\-]+)/", path):
        return m.group(1)
    if "/rustc/" in path:
        return "std (core, alloc)"
    if "jemalloc" in path:
        return "jemalloc"
    if path.startswith("./") or "sysdeps" in path or "glibc" in path:
        return "libc (memcpy, …)"
    return "other"

# Subtrees by the function (and the file its code came from) that roots them: the largest
# inclusive count among the matching lines, as recursion and inlining list one subtree on
# several lines.
subtrees = [
    ("request parsed (JSON-RPC params)", r"transport/jsonrpc\.rs$", r"jsonrpc::params$"),
    ("handler: send_message_inner", r"handler/mod\.rs$", r"RequestHandler::send_message_inner::\{\{closure\}\}$"),
    ("  runtime: TaskRuntime::start", r"runtime/mod\.rs$", r"TaskRuntime::start::\{\{closure\}\}$"),
    ("  agent: execute (updater, store)", r"builtin/conformance\.rs$", r"AgentExecutor>::execute::\{\{closure\}\}$"),
    ("    store: append", r"store/memory\.rs$|writer/mod\.rs$|store-sql/src/lib\.rs$", r"TaskStore>::append::\{\{closure\}\}$"),
    ("    store: stored form (codec)", r"store/codec\.rs$", r".*"),
    ("answer written (JSON)", r"handler/mod\.rs$", r"<a2a_server::handler::SendAnswer as serde_core::ser::Serialize>::serialize$"),
    # serde_json's writer (the floor; our server before a2a-json), or a2a-json's.
    ("JSON strings written (all)", r"serde_json.*ser\.rs$|a2a-json/src/string\.rs$", r"^(serde_json::ser::format_escaped_str|a2a_json::string::write_str)$"),
    ("HTTP/1 head parsed (hyper)", r"hyper.*role\.rs$", r"Http1Transaction>::parse$"),
]
by_crate, total, sub = {}, {}, {}
for n in names:
    c = collections.Counter()
    for path, ir in self_by_file(f"{work}/{n}.cg.1").items():
        c[crate(path)] += ir
    by_crate[n] = c
    total[n] = sum(c.values())
    s = {}
    incl = list(rows(f"{work}/{n}.incl"))
    for label, fre, nre in subtrees:
        s[label] = max((ir for ir, path, fn in incl if re.search(fre, path) and re.search(nre, fn)), default=0)
    sub[n] = s

per = lambda x: x / requests
print(f"\ninstructions per blocking send (user space, {requests} sends, callgrind)")
print(f"{'':36}" + "".join(f"{n:>12}" for n in names))
print(f"{'total':36}" + "".join(f"{per(total[n]):12.0f}" for n in names))
if len(names) > 1:
    base = names[0]
    print(f"{'  against the first':36}" + "".join(f"{total[n] / total[base]:11.3f}x" for n in names))
print("\nby crate (where the code was written; inlined code counts for its crate)")
crates = sorted(set().union(*by_crate.values()), key=lambda k: -max(by_crate[n][k] for n in names))
for k in crates:
    if max(per(by_crate[n][k]) for n in names) < 150:
        continue
    print(f"{k:36}" + "".join(f"{per(by_crate[n][k]):12.0f}" for n in names))
print("\nsubtrees (inclusive)")
for label, _, _ in subtrees:
    print(f"{label:36}" + "".join(f"{per(sub[n][label]):12.0f}" for n in names))

def totals(path):
    """callgrind's event totals at `path`, by event name."""
    events = []
    for l in open(path):
        if l.startswith("events:"):
            events = l.split()[1:]
        elif l.startswith("totals:"):
            return dict(zip(events, map(int, l.split()[1:])))
    return {}

cache = {n: totals(f"{work}/{n}.cg.1") for n in names}
if all("D1mr" in cache[n] for n in names):
    print("\ncache misses per send (callgrind's simulated caches, CACHE_SIM=1)")
    for label, keys in [
        ("instruction, first level", ["I1mr"]),
        ("data read, first level", ["D1mr"]),
        ("data write, first level", ["D1mw"]),
        ("last level (instruction and data)", ["ILmr", "DLmr", "DLmw"]),
    ]:
        print(f"{label:36}" + "".join(f"{per(sum(cache[n][k] for k in keys)):12.1f}" for n in names))
PY
