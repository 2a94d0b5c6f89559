#!/usr/bin/env bash
# The task stores side by side: `a2a serve --agent conformance` on `--store memory`, SQLite
# (a fresh file) and PostgreSQL (a fresh schema of A2A_TEST_POSTGRES_URL, skipped when unset),
# loaded with `a2a bench` in alternating rounds; medians are reported with the ratio to memory.
# Blocking sends complete a task (messageId prefix `tck-complete-task`: created + completed);
# streams run `tck-stream-001` (task, working, artifact, completed).
# Environment: ROUNDS (3), SECONDS_PER_RUN (5), CONCURRENCY (32),
# LONG_SECONDS (0: skip; 300 = a 5-minute memory check on each durable store).
set -euo pipefail
cd "$(dirname "$0")/.."

rounds="${ROUNDS:-3}"
secs="${SECONDS_PER_RUN:-5}"
conc="${CONCURRENCY:-32}"
long="${LONG_SECONDS:-0}"
pg="${A2A_TEST_POSTGRES_URL:-}"

cargo build --release -q -p a2a-cli
bin=target/release/a2a
work=$(mktemp -d)
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
pids=()
schema="bench_$$"
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  if [ -n "$pg" ]; then psql "$pg" -q -c "DROP SCHEMA IF EXISTS $schema CASCADE" >/dev/null 2>&1 || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

declare -A port pid
start() { # NAME STORE
  local p; p=$(free_port)
  "$bin" serve --agent conformance --store "$2" --port "$p" >"$work/$1.log" 2>&1 &
  pids+=($!); pid[$1]=$!; port[$1]=$p
  for _ in $(seq 200); do curl -sf -o /dev/null "http://127.0.0.1:$p/.well-known/agent-card.json" && return; sleep 0.1; done
  echo "the $1 server did not start:" >&2; cat "$work/$1.log" >&2; exit 1
}
names=(memory sqlite)
start memory memory
start sqlite "sqlite:$work/bench.db"
if [ -n "$pg" ]; then
  psql "$pg" -q -c "CREATE SCHEMA $schema" >/dev/null
  sep='?'; case "$pg" in *\?*) sep='&';; esac
  start postgres "${pg}${sep}options=-c%20search_path%3D${schema}"
  names+=(postgres)
else
  echo "postgres: skipped (A2A_TEST_POSTGRES_URL is unset)"
fi

rss() { awk '/VmRSS/{print $2}' "/proc/$1/status"; }
results="$work/results.jsonl"
run() { # NAME MODE PREFIX
  "$bin" bench "http://127.0.0.1:${port[$1]}" --mode "$2" -c "$conc" -d "$secs" --warmup 1 --json \
    --message-id-prefix "$3" \
    | jq -c --arg name "$1" --arg mode "$2" '. + {server: $name, mode: $mode}' >>"$results" \
    || echo "  ($1 $2: the run failed)" >&2
}

echo "a2a bench, $rounds rounds x ${secs}s, concurrency $conc, $(nproc) cores, $(date -u +%F)"
for _ in $(seq "$rounds"); do
  for n in "${names[@]}"; do
    run "$n" send tck-complete-task
    run "$n" stream tck-stream-001
  done
done

jq -rs '
  def median: sort | if length == 0 then 0 else .[(length / 2 | floor)] end;
  group_by(.server + " " + .mode)
  | map({server: .[0].server, mode: .[0].mode,
         rps: (map(.requests_per_second) | median), p99: (map(.latency_ms.p99) | median),
         errors: (map(.errors) | add)})
  | (map(select(.server == "memory")) | map({(.mode): .rps}) | add) as $mem
  | (["store", "mode", "req/s", "p99_ms", "vs_memory", "errors"] | @tsv),
    (sort_by(.mode, (if .server == "memory" then 0 elif .server == "sqlite" then 1 else 2 end))[]
     | [.server, .mode, (.rps | floor), (.p99 * 100 | floor / 100),
        ((.rps / $mem[.mode] * 100 | floor) / 100), .errors] | @tsv)
' "$results" | column -t

if [ "$long" -gt 0 ]; then
  for n in "${names[@]}"; do
    [ "$n" = memory ] && continue
    echo
    echo "memory check: ${long}s of blocking sends against --store $n"
    "$bin" bench "http://127.0.0.1:${port[$n]}" --mode send -c "$conc" -d "$long" \
      --message-id-prefix tck-complete-task >"$work/long-$n.txt" 2>&1 &
    bench_pid=$!
    for t in $(seq 0 30 $((long - 1))); do
      echo "  t=${t}s RSS $(rss "${pid[$n]}") kB"
      sleep 30
    done
    wait "$bench_pid" || true
    cat "$work/long-$n.txt"
    echo "  end RSS $(rss "${pid[$n]}") kB"
  done
fi
