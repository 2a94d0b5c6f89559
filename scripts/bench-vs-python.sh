#!/usr/bin/env bash
# Side-by-side load test on loopback, with this project's own `a2a bench`:
#   floor   a bare axum endpoint that parses the same JSON-RPC body and answers a fixed task
#           (what the HTTP stack alone does on this machine)
#   rust    `a2a serve --agent conformance` (blocking SendMessage completes a task)
#   python  the official Python SDK's server running the same agent (tests/interop/python)
# Rounds alternate between servers so that machine noise hits all of them alike; medians are
# reported. Environment: ROUNDS (3), SECONDS_PER_RUN (10), CONCURRENCY (32),
# LONG_SECONDS (0: skip; 300 = the 5-minute memory check on the rust server),
# RUST_STORE (the rust server's --store: memory by default; sqlite:PATH or postgres://…),
# BINDINGS (jsonrpc; a comma-separated list of jsonrpc, rest, grpc: each round loads both
# servers on each binding; the floor speaks JSON-RPC only).
set -euo pipefail
cd "$(dirname "$0")/.."

rounds="${ROUNDS:-3}"
secs="${SECONDS_PER_RUN:-10}"
conc="${CONCURRENCY:-32}"
long="${LONG_SECONDS:-0}"

cargo build --release -q -p a2a-cli
bin=target/release/a2a
venv="${A2A_INTEROP_VENV:-target/interop-venv}"
if [ ! -x "$venv/bin/python" ]; then python3 -m venv "$venv"; fi
"$venv/bin/pip" install --quiet --disable-pip-version-check --upgrade "a2a-sdk[http-server,grpc]" uvicorn
sdk_version=$("$venv/bin/python" -c 'import importlib.metadata as m; print(m.version("a2a-sdk"))')

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
p_floor=$(free_port); p_rust=$(free_port); p_py=$(free_port); p_py_grpc=$(free_port)
bindings="${BINDINGS:-jsonrpc}"
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; }
trap cleanup EXIT

"$bin" floor --port "$p_floor" >/dev/null & pids+=($!)
floor_ready() { curl -s -o /dev/null "http://127.0.0.1:$p_floor/" -X POST -d '{}'; }
"$bin" serve --agent conformance --store "${RUST_STORE:-memory}" --port "$p_rust" >/dev/null & pids+=($!); rust_pid=$!
"$venv/bin/python" tests/interop/python/reference_server.py --port "$p_py" --grpc-port "$p_py_grpc" & pids+=($!)
for _ in $(seq 100); do floor_ready && break; sleep 0.1; done
for p in "$p_rust" "$p_py"; do
  for _ in $(seq 100); do curl -sf -o /dev/null "http://127.0.0.1:$p/.well-known/agent-card.json" && break; sleep 0.1; done
done

rss() { awk '/VmRSS/{print $2}' "/proc/$1/status"; }

# run NAME URL MODE EXTRA... -> one JSON line appended to $results
results=$(mktemp)
run() {
  local name=$1 url=$2 mode=$3; shift 3
  "$bin" bench "$url" --mode "$mode" -c "$conc" -d "$secs" --warmup 1 --json "$@" \
    | jq -c --arg name "$name" --arg mode "$mode" '. + {server: ($name + "/" + (.binding | ascii_downcase)), mode: $mode}' >>"$results" \
    || echo "  ($name $mode: the run failed)" >&2
}

echo "a2a bench, $rounds rounds x ${secs}s, concurrency $conc, a2a-sdk $sdk_version, $(nproc) cores"
rss_start=$(rss "$rust_pid")
for r in $(seq "$rounds"); do
  run floor  "http://127.0.0.1:$p_floor/" send --no-card
  for b in ${bindings//,/ }; do
    run rust   "http://127.0.0.1:$p_rust" send   --binding "$b" --message-id-prefix tck-complete-task
    run python "http://127.0.0.1:$p_py"   send   --binding "$b" --message-id-prefix tck-complete-task
    run rust   "http://127.0.0.1:$p_rust" stream --binding "$b" --message-id-prefix tck-stream-001
    run python "http://127.0.0.1:$p_py"   stream --binding "$b" --message-id-prefix tck-stream-001
  done
done
rss_end=$(rss "$rust_pid")

median() { jq -s --arg s "$1" --arg m "$2" --arg f "$3" \
  '[.[] | select(.server==$s and .mode==$m) | .[$f]] | sort | .[(length/2|floor)]' "$results"; }
p99() { jq -s --arg s "$1" --arg m "$2" \
  '[.[] | select(.server==$s and .mode==$m) | .latency_ms.p99] | sort | .[(length/2|floor)]' "$results"; }
errors() { jq -s --arg s "$1" '[.[] | select(.server==$s) | .errors] | add' "$results"; }

printf '\n%-18s %-7s %12s %12s %10s %8s\n' server mode req/s events/s p99_ms errors
for s in $(jq -rs '[.[].server] | unique | .[]' "$results" | sort -t/ -k2,2 -k1,1); do
  for m in send stream; do
    rps=$(median "$s" "$m" requests_per_second)
    [ "$rps" = "null" ] && continue
    eps=$(median "$s" "$m" events_per_second)
    printf '%-18s %-7s %12.0f %12.0f %10.2f %8s\n' "$s" "$m" "$rps" "$eps" "$(p99 "$s" "$m")" "$(errors "$s")"
  done
done
echo
floor_send=$(median floor/jsonrpc send requests_per_second)
ratio() { jq -n --argjson a "$1" --argjson b "$2" 'if $a == null or $b == null then "n/a" else ($a/$b*10|floor/10|tostring) + "x" end' -r; }
for b in ${bindings//,/ }; do
  [ "$b" = rest ] && b=http+json
  rust_send=$(median "rust/$b" send requests_per_second)
  py_send=$(median "python/$b" send requests_per_second)
  rust_stream=$(median "rust/$b" stream requests_per_second)
  py_stream=$(median "python/$b" stream requests_per_second)
  echo "$b: send rust/python = $(ratio "$rust_send" "$py_send"), rust/floor = $(ratio "$rust_send" "$floor_send"); stream rust/python = $(ratio "$rust_stream" "$py_stream")"
done
echo "rust server RSS: ${rss_start} kB before, ${rss_end} kB after the rounds"

if [ "$long" -gt 0 ]; then
  echo
  echo "memory check: ${long}s of blocking sends against the rust server"
  for i in $(seq 0 30 "$long"); do echo "  t=${i}s RSS $(rss "$rust_pid") kB"; sleep 30 & wait $!; done &
  sampler=$!
  "$bin" bench "http://127.0.0.1:$p_rust" -c "$conc" -d "$long" --warmup 0
  kill "$sampler" 2>/dev/null || true
  echo "  end RSS $(rss "$rust_pid") kB"
fi
