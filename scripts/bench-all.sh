#!/usr/bin/env bash
# Every figure of docs/benchmarks.md's summary, side by side in one run: blocking sends to the
# bare floor (`a2a floor`) and to `a2a serve --agent conformance` on the memory store, SQLite
# and PostgreSQL, over JSON-RPC and gRPC, with a bearer token and with a JWT; then 10 000
# concurrent streams to `slow` on memory and SQLite with the server's peak and settled memory.
# Servers are loaded in rounds by the same generators (`a2a bench`, and `wrk` for the floor
# and the memory store when installed), each near its reference, every other round in
# reverse order (see `order` below); medians, ratios and server CPU per request
# are printed, each ratio with its range over the rounds (each round's rate against its
# reference's in the same round): on a shared machine one run's ratio moves by ±10 %.
#
#   scripts/bench-all.sh [A2A_BIN]        (default: builds target/release/a2a)
#
# Environment: ROUNDS (3; 0 measures the streams alone), SECONDS_PER_RUN (6), CONCURRENCY
# (32 for a2a bench, 16 for wrk), A2A_TEST_POSTGRES_URL (PostgreSQL; skipped when unset),
# STREAMS (10000; 0 skips them), STREAM_SECONDS (5: how long each stream's task runs).
set -euo pipefail
cd "$(dirname "$0")/.."

if [ $# -ge 1 ]; then
  bin="$1"
else
  cargo build --release -q -p a2a-cli
  bin=target/release/a2a
fi
rounds="${ROUNDS:-3}"
secs="${SECONDS_PER_RUN:-6}"
conc="${CONCURRENCY:-32}"
wrk_conc="${WRK_CONCURRENCY:-16}"
streams="${STREAMS:-10000}"
stream_secs="${STREAM_SECONDS:-5}"
pg="${A2A_TEST_POSTGRES_URL:-}"
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true

work=$(mktemp -d)
pids=()
schema="bench_all_$$"
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  if [ -n "$pg" ]; then psql "$pg" -q -c "DROP SCHEMA IF EXISTS $schema CASCADE" >/dev/null 2>&1 || true; fi
  rm -rf "$work"
}
trap cleanup EXIT
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
wait_up() { # PORT LOG
  # Any HTTP answer will do: the floor serves no card.
  for _ in $(seq 300); do
    [ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$1/.well-known/agent-card.json")" != 000 ] && return
    sleep 0.1
  done
  echo "a server did not start:" >&2; cat "$2" >&2; exit 1
}

declare -A port pid
start() { # NAME ARGS...
  local name=$1 p; shift; p=$(free_port)
  "$bin" "$@" --port "$p" >"$work/$name.log" 2>&1 &
  pids+=($!); pid[$name]=$!; port[$name]=$p
  wait_up "$p" "$work/$name.log"
}

# A JWT for the JWT server: the test key of crates/a2a-cli/tests/fixtures, signed by PyJWT.
fixtures=crates/a2a-cli/tests/fixtures
venv=target/bench-venv
if [ ! -x "$venv/bin/python" ]; then python3 -m venv "$venv"; fi
"$venv/bin/pip" install --quiet --disable-pip-version-check "pyjwt==2.10.1" "cryptography==44.0.0"
jwt=$("$venv/bin/python" - "$fixtures/jwt-es256.pem" <<'PY'
import sys, time, jwt
pem = open(sys.argv[1]).read()
now = int(time.time())
print(jwt.encode({"sub": "bench", "iss": "https://issuer.bench", "aud": "a2a-bench",
                  "iat": now, "exp": now + 3600}, pem, algorithm="ES256",
                 headers={"kid": "test-key"}))
PY
)
mkdir -p "$work/jwks"
printf '{"keys":[%s]}' "$(cat "$fixtures/jwt-es256.jwk.json")" >"$work/jwks/jwks"
jwks_port=$(free_port)
(cd "$work/jwks" && exec python3 -m http.server "$jwks_port" --bind 127.0.0.1 >/dev/null 2>&1) &
pids+=($!)

start floor floor
start memory serve --agent conformance --store memory
start sqlite serve --agent conformance --store "sqlite:$work/bench.db"
if [ -n "$pg" ]; then
  psql "$pg" -q -c "CREATE SCHEMA $schema" >/dev/null
  sep='?'; case "$pg" in *\?*) sep='&';; esac
  start postgres serve --agent conformance --store "${pg}${sep}options=-c%20search_path%3D${schema}"
else
  echo "postgres: skipped (A2A_TEST_POSTGRES_URL is unset)"
fi
start bearer serve --agent conformance --store memory --auth-token bench=t0ken
start jwt serve --agent conformance --store memory --auth-jwks-url "http://127.0.0.1:$jwks_port/jwks" \
  --auth-jwt-issuer https://issuer.bench --auth-jwt-audience a2a-bench
port[grpc]=${port[memory]}; pid[grpc]=${pid[memory]}
# Each server is measured near its reference: the memory store between the floor and gRPC,
# the authenticated servers (whose targets are the tightest) with one server between them
# and it, the durable stores after them. Every other round runs in reverse order, so that a machine
# speeding up or slowing down over the run moves a server and its reference alike.
order=(jwt floor memory grpc bearer sqlite)
if [ -n "$pg" ]; then order+=(postgres); fi

cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
tick_us=$(( 1000000 / $(getconf CLK_TCK) ))
results="$work/results.tsv"
: >"$results"
bench_args() { # NAME: the a2a bench arguments for it
  case "$1" in
    floor) echo "--no-card" ;;
    grpc) echo "--binding grpc" ;;
    bearer) echo "--token t0ken" ;;
    jwt) echo "--token $jwt" ;;
    *) echo "" ;;
  esac
}
record() { # NAME TOOL ROUND RATE REQUESTS CPU_TICKS_BEFORE CPU_TICKS_AFTER
  printf '%s\t%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "$4" "$(( ($7 - $6) * tick_us / ($5 > 0 ? $5 : 1) ))" >>"$results"
}
run_bench() { # NAME ROUND
  local t0 t1 out
  t0=$(cpu_ticks "${pid[$1]}")
  # shellcheck disable=SC2046
  out=$("$bin" bench "http://127.0.0.1:${port[$1]}" -c "$conc" -d "$secs" --warmup 1 --json \
    --message-id-prefix tck-complete-task $(bench_args "$1"))
  t1=$(cpu_ticks "${pid[$1]}")
  record "$1" bench "$2" "$(echo "$out" | jq -r '.requests_per_second | floor')" \
    "$(echo "$out" | jq -r '.ok')" "$t0" "$t1"
}
run_wrk() { # NAME ROUND
  local t0 t1 out
  t0=$(cpu_ticks "${pid[$1]}")
  out=$(AUTH= wrk -t1 -c"$wrk_conc" -d"${secs}s" -s scripts/wrk-send.lua "http://127.0.0.1:${port[$1]}/")
  t1=$(cpu_ticks "${pid[$1]}")
  record "$1" wrk "$2" "$(echo "$out" | awk '/Requests\/sec/{printf "%d", $2}')" \
    "$(echo "$out" | awk '/requests in/{print $1}')" "$t0" "$t1"
}

echo "blocking sends: $rounds rounds x ${secs}s, a2a bench -c$conc, wrk -c$wrk_conc, $(nproc) cores, $(date -u +%F)"
for r in $(seq "$rounds"); do
  round=("${order[@]}")
  if [ $((r % 2)) = 0 ]; then
    round=()
    for ((i = ${#order[@]} - 1; i >= 0; i--)); do round+=("${order[$i]}"); done
  fi
  for n in "${round[@]}"; do
    run_bench "$n" "$r"
    if command -v wrk >/dev/null && { [ "$n" = floor ] || [ "$n" = memory ]; }; then
      run_wrk "$n" "$r"
    fi
  done
done
python3 - "$results" <<'PY'
import sys, statistics, collections
rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[1])]
by = collections.defaultdict(list)
cpu = collections.defaultdict(list)
per_round = collections.defaultdict(dict)
for name, tool, r, rate, c in rows:
    by[(name, tool)].append(int(rate))
    cpu[(name, tool)].append(int(c))
    per_round[(name, tool)][r] = int(rate)
med = {k: statistics.median(v) for k, v in by.items()}

def spread(key, base):
    """The ratio in each round (a server against its reference in the same round): how far
    one run's ratio of medians can be trusted on a machine whose speed drifts."""
    ratios = [per_round[key][r] / per_round[base][r] for r in per_round[key]
              if per_round[base].get(r)]
    return f" (rounds {min(ratios):.2f}-{max(ratios):.2f})" if len(ratios) > 1 else ""
print(f"{'server':10} {'tool':6} {'req/s':>8} {'cpu_us':>7}  ratio")
ref = {"floor": ("floor", None), "memory": ("floor", "vs floor"), "grpc": ("memory", "vs JSON-RPC"),
       "sqlite": ("memory", "vs memory"), "postgres": ("memory", "vs memory"),
       "bearer": ("memory", "vs no auth"), "jwt": ("memory", "vs no auth")}
for (name, tool), v in sorted(med.items(), key=lambda kv: (list(ref).index(kv[0][0]), kv[0][1])):
    base, label = ref[name]
    ratio = (f"{v / med[(base, tool)]:.2f}x {label}{spread((name, tool), (base, tool))}"
             if label and (base, tool) in med else "")
    c = statistics.median(cpu[(name, tool)])
    print(f"{name:10} {tool:6} {v:8.0f} {c:7.0f}  {ratio}")
PY

if [ "$streams" -gt 0 ]; then
  rss() { awk '/VmRSS/{print int($2/1024)}' "/proc/$1/status"; }
  for store in memory sqlite; do
    name="streams-$store"
    case "$store" in
      memory) s=memory ;;
      sqlite) s="sqlite:$work/streams.db" ;;
    esac
    start "$name" serve --agent slow --store "$s" --max-connections 30000
    idle=$(rss "${pid[$name]}")
    peak=$idle
    "$bin" bench "http://127.0.0.1:${port[$name]}" --mode stream -c "$streams" -n "$streams" \
      --text "$stream_secs" --warmup 0 --json >"$work/$name.json" 2>"$work/$name.err" &
    b=$!
    while kill -0 "$b" 2>/dev/null; do
      now=$(rss "${pid[$name]}"); [ "$now" -gt "$peak" ] && peak=$now
      sleep 0.2
    done
    wait "$b" || true
    ended=$(rss "${pid[$name]}")
    sleep 30
    settled=$(rss "${pid[$name]}")
    ok=$(jq -r '.ok' "$work/$name.json" 2>/dev/null || echo "?")
    errors=$(jq -r '.errors' "$work/$name.json" 2>/dev/null || echo "?")
    echo "$streams streams ($store): $ok ok, $errors errors; server RSS idle ${idle} MiB, peak ${peak} MiB, at the end ${ended} MiB, 30 s later ${settled} MiB"
    kill "${pid[$name]}" 2>/dev/null || true
  done
fi
