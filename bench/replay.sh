#!/usr/bin/env bash
# Replay benchmark: starts a standalone labelgate (`pnpm start`: embedded Postgres, BullMQ on its
# Postgres backend) on its own port and data directory, replays one crowd dataset through it, prints the
# replay's JSON line on stdout, and stops the server and deletes its data directory.
#
#   bench/replay.sh DATASET_DIR [replay options...]
#   bench/replay.sh ../shared/data/crowd/dog --limit 300
#
# The replay log (phases, latency per route) goes to stderr, followed by one `bench:` line with the
# labeling rate (labels/s of the label phase) and the p50 of the claim and label routes.
# Environment: BENCH_PORT (default 3310), BENCH_PG_PORT (default 54369), BENCH_DATA_DIR (default a new
# directory under /tmp), BENCH_KEEP_DATA=1 keeps the data directory.
set -euo pipefail

if [[ $# -lt 1 || "$1" == -* ]]; then
  echo "usage: bench/replay.sh DATASET_DIR [replay options, e.g. --limit 300]" >&2
  exit 2
fi
dataset="$(cd "$1" && pwd)"
shift

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
port="${BENCH_PORT:-3310}"
pg_port="${BENCH_PG_PORT:-54369}"
data_dir="${BENCH_DATA_DIR:-$(mktemp -d /tmp/labelgate-bench.XXXXXX)}"
mkdir -p "$data_dir"
# embedded Postgres runs initdb as the `postgres` user when started as root: it must reach the directory
chmod 755 "$data_dir"
server_log="$(mktemp /tmp/labelgate-bench-server.XXXXXX.log)"
replay_log="$(mktemp /tmp/labelgate-bench-replay.XXXXXX.log)"
server_pid=""

stop_server() {
  if [[ -n "$server_pid" ]] && kill -0 "$server_pid" 2>/dev/null; then
    # The server runs in its own process group (setsid): stop exactly that group.
    kill -TERM -- "-$server_pid" 2>/dev/null || true
    for _ in $(seq 1 100); do
      kill -0 "$server_pid" 2>/dev/null || break
      sleep 0.1
    done
    kill -KILL -- "-$server_pid" 2>/dev/null || true
  fi
  server_pid=""
}

cleanup() {
  local rc=$?
  stop_server
  if [[ $rc -ne 0 && -s "$server_log" ]]; then
    echo "bench: server log (last 30 lines):" >&2
    tail -n 30 "$server_log" >&2
  fi
  rm -f "$server_log" "$replay_log"
  if [[ "${BENCH_KEEP_DATA:-0}" != "1" ]]; then rm -rf "$data_dir"; fi
  exit $rc
}
trap cleanup EXIT
trap 'exit 130' INT TERM

if curl -sf "http://127.0.0.1:$port/v1/health" >/dev/null 2>&1; then
  echo "bench: port $port is already serving; set BENCH_PORT" >&2
  exit 1
fi

cd "$root"
PORT="$port" EMBEDDED_PG_PORT="$pg_port" DATA_DIR="$data_dir" LOG_LEVEL=warn setsid pnpm -s start >"$server_log" 2>&1 &
server_pid=$!

for i in $(seq 1 240); do
  if curl -sf "http://127.0.0.1:$port/v1/health" >/dev/null 2>&1; then break; fi
  if ! kill -0 "$server_pid" 2>/dev/null; then
    echo "bench: the server exited before becoming healthy" >&2
    exit 1
  fi
  if [[ $i -eq 240 ]]; then
    echo "bench: the server was not healthy after 120 s" >&2
    exit 1
  fi
  sleep 0.5
done

pnpm -s replay --dataset "$dataset" --base-url "http://127.0.0.1:$port" --admin-token "$(cat "$data_dir/admin-token")" "$@" \
  2> >(tee "$replay_log" >&2)
# let the process substitution flush the log before it is read
sleep 0.2

# `label (3030 labels) 148.4 s` and `latency POST /v1/labeling/claims: n=... p50 842, ...`
summary="$(awk '
  match($0, /label \(([0-9]+) labels\) ([0-9.]+) s/, m) { if (m[2] > 0) rate = sprintf("%.1f", m[1] / m[2]) }
  /latency POST \/v1\/labeling\/claims:/ { if (match($0, /p50 ([0-9]+)/, m)) claim = m[1] }
  /latency POST \/v1\/labeling\/claims\/:id\/label/ { if (match($0, /p50 ([0-9]+)/, m)) label = m[1] }
  END { printf "bench: %s labels/s in the label phase; p50 claim %s ms, label %s ms", rate, claim, label }
' "$replay_log")"
echo "$summary" >&2
