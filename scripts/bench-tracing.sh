#!/usr/bin/env bash
# The cost of trace export: `a2a serve --agent echo --store memory` without export ("off")
# and exporting every span over OTLP/HTTP to `a2a otlp-sink` (a receiver that checks and
# counts them), loaded with `a2a bench` in alternating rounds; medians are reported with
# the ratio to "off", and the spans the sink received per request.
# Set BASELINE_BIN to another `a2a` binary (say, one built before tracing existed) to add it
# as "baseline".
# Besides throughput it reports the server's CPU time per request (from /proc), which is
# steadier than throughput on a shared machine.
# Environment: ROUNDS (3), SECONDS_PER_RUN (5), CONCURRENCY (32), AGENT (echo, or
# conformance), SAMPLER (unset: every span; say "parentbased_traceidratio:0.1"),
# BASELINE_BIN (unset), SINK_DECODE (unset: the sink walks the protobuf structure; set: it
# decodes every span in full, which costs the machine more CPU). The sink's own CPU per
# request is reported too: it shares the cores with the server and the load generator.
set -euo pipefail
cd "$(dirname "$0")/.."

rounds="${ROUNDS:-3}"
secs="${SECONDS_PER_RUN:-5}"
conc="${CONCURRENCY:-32}"
agent="${AGENT:-echo}"
# With AGENT=conformance, blocking sends create and complete a task (created, completed)
# and streams run four events (task, working, artifact, completed).
prefix=()
[ "$agent" = conformance ] && prefix=(--message-id-prefix)

cargo build --release -q -p a2a-cli
bin=target/release/a2a
work=$(mktemp -d)
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

wait_http() { # URL LOG
  for _ in $(seq 200); do curl -sf -o /dev/null "$1" && return; sleep 0.1; done
  echo "$1 did not come up:" >&2; cat "$2" >&2; exit 1
}
sink_port=$(free_port)
sink_args=()
[ -n "${SINK_DECODE:-}" ] && sink_args=(--decode)
"$bin" otlp-sink --port "$sink_port" "${sink_args[@]}" >"$work/sink.log" 2>&1 &
pids+=($!); sink_pid=$!
wait_http "http://127.0.0.1:$sink_port/stats" "$work/sink.log"
spans() { curl -sf "http://127.0.0.1:$sink_port/stats" | jq .spans; }

declare -A port pid
start() { # NAME BINARY ARGS...
  local name=$1 b=$2 p; shift 2; p=$(free_port)
  "$b" serve --agent "$agent" --store memory --port "$p" "$@" >"$work/$name.log" 2>&1 &
  pids+=($!); pid[$name]=$!; port[$name]=$p
  wait_http "http://127.0.0.1:$p/.well-known/agent-card.json" "$work/$name.log"
}
names=(off export)
start off "$bin"
# Spans leave in batches as soon as 512 are queued; the queue is deep enough for a burst.
sampler="${SAMPLER:-parentbased_always_on}"
OTEL_BSP_MAX_QUEUE_SIZE=65536 OTEL_SERVICE_NAME=bench \
  OTEL_TRACES_SAMPLER="${sampler%%:*}" OTEL_TRACES_SAMPLER_ARG="${sampler#*:}" \
  start export "$bin" --otlp-endpoint "http://127.0.0.1:$sink_port"
if [ -n "${BASELINE_BIN:-}" ]; then
  start baseline "$BASELINE_BIN"
  names=(baseline "${names[@]}")
fi

results="$work/results.jsonl"
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
run() { # NAME MODE
  local before after t0 t1 s0 s1 id=()
  if [ "$agent" = conformance ]; then
    id=("${prefix[@]}" "$([ "$2" = send ] && echo tck-complete-task || echo tck-stream-001)")
  fi
  before=$(spans); t0=$(cpu_ticks "${pid[$1]}"); s0=$(cpu_ticks "$sink_pid")
  "$bin" bench "http://127.0.0.1:${port[$1]}" --mode "$2" -c "$conc" -d "$secs" --warmup 0 --json \
    "${id[@]}" >"$work/run.json" || { echo "  ($1 $2: the run failed)" >&2; return; }
  t1=$(cpu_ticks "${pid[$1]}")
  sleep 1 # the last batch
  after=$(spans); s1=$(cpu_ticks "$sink_pid")
  jq -c --arg name "$1" --arg mode "$2" --argjson spans "$((after - before))" \
    --argjson cpu "$(( (t1 - t0) * 1000000 / $(getconf CLK_TCK) ))" \
    --argjson sink "$(( (s1 - s0) * 1000000 / $(getconf CLK_TCK) ))" \
    '. + {server: $name, mode: $mode, spans: $spans, cpu_us: $cpu, sink_us: $sink}' \
    "$work/run.json" >>"$results"
}

echo "a2a bench against --agent $agent, $rounds rounds x ${secs}s, concurrency $conc, $(nproc) cores, $(date -u +%F)"
# Warm each server up once.
for n in "${names[@]}"; do
  "$bin" bench "http://127.0.0.1:${port[$n]}" --mode send -c "$conc" -d 1 >/dev/null 2>&1 || true
done
for _ in $(seq "$rounds"); do
  for n in "${names[@]}"; do
    run "$n" send
    run "$n" stream
  done
done

jq -rs '
  def median: sort | if length == 0 then 0 else .[(length / 2 | floor)] end;
  group_by(.server + " " + .mode)
  | map({server: .[0].server, mode: .[0].mode,
         rps: (map(.requests_per_second) | median), p99: (map(.latency_ms.p99) | median),
         spans_per_req: (map(.spans / (.ok + 0.0001)) | median),
         cpu_per_req: (map(.cpu_us / (.ok + 0.0001)) | median),
         sink_per_req: (map(.sink_us / (.ok + 0.0001)) | median),
         errors: (map(.errors) | add)})
  | (map(select(.server == "off")) | map({(.mode): .rps}) | add) as $off
  | (map(select(.server == "off")) | map({(.mode): .cpu_per_req}) | add) as $offcpu
  | (["server", "mode", "req/s", "p99_ms", "vs_off", "server_cpu_us/req", "cpu_vs_off", "spans/req", "sink_cpu_us/req", "errors"] | @tsv),
    (sort_by(.mode, .server)[]
     | [.server, .mode, (.rps | floor), (.p99 * 100 | floor / 100),
        ((.rps / $off[.mode] * 1000 | floor) / 1000), ((.cpu_per_req * 10 | floor) / 10),
        ((.cpu_per_req / $offcpu[.mode] * 1000 | floor) / 1000),
        ((.spans_per_req * 100 | floor) / 100), ((.sink_per_req * 10 | floor) / 10),
        .errors] | @tsv)
' "$results" | column -t
