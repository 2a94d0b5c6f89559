#!/usr/bin/env bash
# A/B of the request path: two `a2a` release binaries (say the previous main's and this
# change's) each serving `--agent conformance` on the same store kind, loaded by the same
# load generators in alternating rounds (A, B, A, B, …); prints every round and the medians.
#
#   scripts/bench-ab.sh OLD_BIN NEW_BIN
#
# Load: blocking sends that complete a task (messageId prefix `tck-complete-task`), by
# `a2a bench` (NEW_BIN's, for both) and by `wrk` with a Lua POST script when wrk is installed
# (`apt-get install wrk`). Environment: STORE (memory; sqlite: a fresh file per server; or a
# PostgreSQL URL: a fresh schema per server, dropped at the end; two servers on one schema
# would each listen for the other's notices, which costs both),
# ROUNDS (3), SECONDS_PER_RUN (8), CONCURRENCY (16 for wrk, 32 for a2a bench),
# SERVE_ARGS (extra `a2a serve` flags for both, e.g. `--auth-token bench=t`),
# AUTH (a bearer token, e.g. `t`: sent by wrk as `Authorization: Bearer t` and by a2a bench),
# BINDING (jsonrpc; grpc or rest: a2a bench alone, over that binding), TEXT (a2a bench's
# message text, e.g. 2 000 characters for answers of a few KB).
# Besides the rates, each run reports the server's CPU time per request (user + system, from
# /proc), which varies much less than the rate on a shared machine; on SQLite, its writer
# thread's; on a PostgreSQL of this machine, the CPU of all its processes per request.
set -euo pipefail
cd "$(dirname "$0")/.."

a_bin="${1:?the A binary (before)}"
b_bin="${2:?the B binary (after)}"
store="${STORE:-memory}"
rounds="${ROUNDS:-3}"
secs="${SECONDS_PER_RUN:-8}"
wrk_conc="${CONCURRENCY:-16}"
bench_conc="${CONCURRENCY:-32}"
work=$(mktemp -d)
pids=()
schemas=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  for s in "${schemas[@]}"; do
    psql "$store" -q -c "DROP SCHEMA IF EXISTS $s CASCADE" >/dev/null 2>&1 || true
  done
  rm -rf "$work"
}
trap cleanup EXIT
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

declare -A port pid
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
# The SQLite writer thread's CPU (its name is cut to 15 characters in /proc); nothing
# without one (the memory store).
writer_ticks() {
  local t
  for t in /proc/"$1"/task/*; do
    if [ "$(cat "$t/comm")" = a2a-sqlite-writ ]; then
      # The comm field has no spaces here, so the fields count as in /proc/PID/stat.
      awk '{print $14 + $15}' "$t/stat"; return
    fi
  done
}
# PostgreSQL's CPU (every process of the local server's user, the backends of both sides
# and the background writers alike), when the store is PostgreSQL on this machine.
pg_ticks() {
  case "$store" in postgres*) ;; *) return ;; esac
  local sum=0 p
  for p in $(pgrep -u postgres 2>/dev/null); do
    sum=$(( sum + $(awk '{print $14 + $15}' "/proc/$p/stat" 2>/dev/null || echo 0) ))
  done
  echo "$sum"
}
tick_us=$(( 1000000 / $(getconf CLK_TCK) ))
start() { # NAME BIN
  local p s; p=$(free_port)
  case "$store" in
    memory) s=memory ;;
    sqlite) s="sqlite:$work/$1.db" ;;
    postgres*)
      local schema sep; schema="ab_$$_$1"
      schemas+=("$schema")
      psql "$store" -q -c "CREATE SCHEMA $schema" >/dev/null
      sep='?'; case "$store" in *\?*) sep='&';; esac
      s="${store}${sep}options=-c%20search_path%3D$schema" ;;
    *) s="$store" ;;
  esac
  # Builds from before `--store` existed serve from memory only.
  local store_args=(--store "$s")
  if ! "$2" serve --help | grep -q -- '--store'; then
    [ "$store" = memory ] || { echo "$2 has no --store: it can only be benchmarked on memory" >&2; exit 1; }
    store_args=()
  fi
  # shellcheck disable=SC2086
  "$2" serve --agent conformance "${store_args[@]}" --port "$p" ${SERVE_ARGS:-} >"$work/$1.log" 2>&1 &
  pids+=($!); port[$1]=$p; pid[$1]=$!
  for _ in $(seq 200); do curl -sf -o /dev/null "http://127.0.0.1:$p/.well-known/agent-card.json" && return; sleep 0.1; done
  echo "the $1 server did not start:" >&2; cat "$work/$1.log" >&2; exit 1
}
start A "$a_bin"
start B "$b_bin"

declare -A wrk_rates bench_rates wrk_cpu bench_cpu wrk_writer bench_writer wrk_pg bench_pg
cpu_per_req() { # TICKS_BEFORE TICKS_AFTER REQUESTS
  python3 -c "print(round(($2 - $1) * $tick_us / max($3, 1), 1))"
}
measure_from() { # SIDE: the server's CPU (its SQLite writer's, PostgreSQL's) from now on
  t0=$(cpu_ticks "${pid[$1]}"); w0=$(writer_ticks "${pid[$1]}"); g0=$(pg_ticks)
}
record() { # TOOL SIDE LABEL RATE REQUESTS: one run's figures since measure_from
  local t1 w1 g1 cpu wcpu gcpu line
  declare -n rates="$1_rates" cpus="$1_cpu" writers="$1_writer" pgs="$1_pg"
  t1=$(cpu_ticks "${pid[$2]}"); w1=$(writer_ticks "${pid[$2]}"); g1=$(pg_ticks)
  cpu=$(cpu_per_req "$t0" "$t1" "$5")
  rates[$2]+="$4 "; cpus[$2]+="$cpu "
  line="round $r $2 $3: $4 req/s, server CPU $cpu us/req"
  if [ -n "$w1" ]; then
    wcpu=$(cpu_per_req "$w0" "$w1" "$5")
    writers[$2]+="$wcpu "
    line+=", SQLite writer $wcpu us/req"
  fi
  if [ -n "$g1" ]; then
    gcpu=$(cpu_per_req "$g0" "$g1" "$5")
    pgs[$2]+="$gcpu "
    line+=", PostgreSQL $gcpu us/req"
  fi
  echo "$line"
}
for r in $(seq "$rounds"); do
  for side in A B; do
    url="http://127.0.0.1:${port[$side]}/"
    if [ "${BINDING:-jsonrpc}" = jsonrpc ] && command -v wrk >/dev/null; then
      measure_from "$side"
      out=$(AUTH="${AUTH:-}" wrk -t1 -c"$wrk_conc" -d"${secs}s" -s scripts/wrk-send.lua "$url")
      record wrk "$side" "wrk -c$wrk_conc" "$(echo "$out" | awk '/Requests\/sec/{print $2}')" \
        "$(echo "$out" | awk '/requests in/{print $1}')"
    fi
    measure_from "$side"
    json=$("$b_bin" bench "$url" -c "$bench_conc" -d "$secs" --warmup 0 --json \
      --message-id-prefix tck-complete-task ${AUTH:+--token "$AUTH"} \
      --binding "${BINDING:-jsonrpc}" ${TEXT:+--text "$TEXT"})
    record bench "$side" "a2a bench ${BINDING:-jsonrpc} -c$bench_conc" \
      "$(echo "$json" | python3 -c 'import json,sys; print(round(json.load(sys.stdin)["requests_per_second"]))')" \
      "$(echo "$json" | python3 -c 'import json,sys; print(json.load(sys.stdin)["ok"])')"
  done
done
median() { tr ' ' '\n' | grep . | sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
for tool in wrk bench; do
  declare -n rates="${tool}_rates" cpus="${tool}_cpu" writers="${tool}_writer" pgs="${tool}_pg"
  [ -n "${rates[A]:-}" ] || continue
  a=$(echo "${rates[A]}" | median); b=$(echo "${rates[B]}" | median)
  ca=$(echo "${cpus[A]}" | median); cb=$(echo "${cpus[B]}" | median)
  extra=""
  if [ -n "${writers[A]:-}" ] && [ -n "${writers[B]:-}" ]; then
    wa=$(echo "${writers[A]}" | median); wb=$(echo "${writers[B]}" | median)
    extra="; SQLite writer A $wa, B $wb us/req; B/A $(python3 -c "print(f'{$wb/max($wa, 0.1):.3f}')")"
  fi
  if [ -n "${pgs[A]:-}" ] && [ -n "${pgs[B]:-}" ]; then
    ga=$(echo "${pgs[A]}" | median); gb=$(echo "${pgs[B]}" | median)
    extra+="; PostgreSQL A $ga, B $gb us/req; B/A $(python3 -c "print(f'{$gb/max($ga, 0.1):.3f}')")"
  fi
  echo "median $tool ($store): A $a, B $b req/s; B/A $(python3 -c "print(f'{$b/$a:.3f}')"); server CPU A $ca, B $cb us/req; B/A $(python3 -c "print(f'{$cb/$ca:.3f}')")$extra"
done
