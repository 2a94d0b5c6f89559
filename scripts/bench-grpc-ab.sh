#!/usr/bin/env bash
# A/B of gRPC against JSON-RPC, client and server together: each of two `a2a` release
# binaries serves `--agent conformance --store memory` and is loaded by its own `a2a bench`,
# first over JSON-RPC then over gRPC, in alternating rounds (A, B, A, B, ...). Each run prints
# the rate, the server's CPU per call and the client's (user + system, from /proc and
# time(1)): on a machine the two share, the gRPC rate's ratio to JSON-RPC's is about the
# ratio of their summed CPU per call, so both sides count.
#
#   scripts/bench-grpc-ab.sh OLD_BIN NEW_BIN
#
# Environment: ROUNDS (3), SECONDS_PER_RUN (5), CONCURRENCY (32), BINDINGS ("jsonrpc grpc").
set -euo pipefail
cd "$(dirname "$0")/.."

a_bin="${1:?the A binary (before)}"
b_bin="${2:?the B binary (after)}"
rounds="${ROUNDS:-3}"
secs="${SECONDS_PER_RUN:-5}"
conc="${CONCURRENCY:-32}"
work=$(mktemp -d)
server=""
cleanup() {
  [ -n "$server" ] && kill "$server" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
tick_us=$(( 1000000 / $(getconf CLK_TCK) ))

for r in $(seq "$rounds"); do
  for side in A B; do
    bin=$a_bin; [ "$side" = B ] && bin=$b_bin
    port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
    "$bin" serve --agent conformance --store memory --port "$port" >"$work/serve.log" 2>&1 &
    server=$!
    for _ in $(seq 100); do
      [ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port/.well-known/agent-card.json")" != 000 ] && break
      sleep 0.1
    done
    for binding in ${BINDINGS:-jsonrpc grpc}; do
      t0=$(cpu_ticks "$server")
      /usr/bin/time -f "%U %S" -o "$work/time" "$bin" bench "http://127.0.0.1:$port" \
        -c "$conc" -d "$secs" --warmup 1 --json --message-id-prefix tck-complete-task \
        --binding "$binding" >"$work/out.json"
      t1=$(cpu_ticks "$server")
      ok=$(jq -r '.ok' "$work/out.json")
      rate=$(jq -r '.requests_per_second | floor' "$work/out.json")
      # The client's time includes its warm-up second: a slight overstatement, the same for both.
      client=$(awk -v ok="$ok" '{printf "%.1f", ($1 + $2) * 1e6 / ok}' "$work/time")
      server_us=$(awk -v a="$t0" -v b="$t1" -v t="$tick_us" -v ok="$ok" 'BEGIN {printf "%.1f", (b - a) * t / ok}')
      echo "round $r $side $binding: $rate req/s, server CPU $server_us us/call, client CPU $client us/call"
    done
    kill "$server"; wait "$server" 2>/dev/null || true
    server=""
  done
done
