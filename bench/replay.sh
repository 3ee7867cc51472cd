#!/usr/bin/env bash
# Replay benchmark: starts a standalone labelgate (`pnpm start`: embedded Postgres, BullMQ on its
# Postgres backend) on its own port and data directory, replays one crowd dataset through it, prints the
# replay's JSON line on stdout, and stops the server and deletes its data directory.
#
#   bench/replay.sh DATASET_DIR [replay options...]
#   bench/replay.sh data/crowd/dog --limit 300
#
# The replay log (phases, latency per route) goes to stderr, followed by one `bench:` line with the
# labeling rate (labels/s of the label phase), the p50 of the claim and label routes, and the CPU time
# the server (Node and its embedded Postgres) spent during the replay.
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

# `setsid` makes the server a session of its own; pnpm starts the script in a new process group inside it.
session_groups() { ps -eo sid=,pgid= | awk -v s="$server_pid" '$1 == s { print $2 }' | sort -u; }
session_alive() { [[ -n "$(ps -eo sid= | awk -v s="$server_pid" '$1 == s')" ]]; }

# CPU seconds used so far by the server's session and its descendants (Postgres backends start sessions
# of their own), as "node postgres": live processes' own time plus the time of children they reaped.
session_cpu() {
  local f
  for f in /proc/[0-9]*/stat; do cat "$f" 2>/dev/null; done | awk -v s="$server_pid" -v tck="$(getconf CLK_TCK)" '
    {
      i = index($0, ") "); if (!i) next
      pid = $1; comm[pid] = substr($0, index($0, "(") + 1, i - index($0, "(") - 1)
      split(substr($0, i + 2), f, " ")
      ppid[pid] = f[2]; sid[pid] = f[4]; t[pid] = f[12] + f[13] + f[14] + f[15]
    }
    END {
      for (p in sid) if (sid[p] == s) mine[p] = 1
      do { added = 0; for (p in ppid) if (!(p in mine) && (ppid[p] in mine)) { mine[p] = 1; added = 1 } } while (added)
      for (p in mine) if (comm[p] ~ /^postgres/) pg += t[p]; else nd += t[p]
      printf "%.2f %.2f\n", nd / tck, pg / tck
    }'
}

stop_server() {
  if [[ -n "$server_pid" ]] && session_alive; then
    # Stop exactly the process groups of the server's session (the Node server stops its Postgres).
    local g
    for g in $(session_groups); do kill -TERM -- "-$g" 2>/dev/null || true; done
    for _ in $(seq 1 150); do
      session_alive || break
      sleep 0.1
    done
    for g in $(session_groups); do kill -KILL -- "-$g" 2>/dev/null || true; done
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

read -r node_before pg_before < <(session_cpu)
pnpm -s replay --dataset "$dataset" --base-url "http://127.0.0.1:$port" --admin-token "$(cat "$data_dir/admin-token")" "$@" \
  2> >(tee "$replay_log" >&2)
read -r node_after pg_after < <(session_cpu)
# let the process substitution flush the log before it is read
sleep 0.2

# `label (3030 labels) 148.4 s` and `latency POST /v1/labeling/claims: n=... p50 842, ...`
# The server's CPU over the whole replay (every phase), per label: unlike labels/s, it hardly depends on
# what else the machine is running.
summary="$(awk -v node="$node_before $node_after" -v pg="$pg_before $pg_after" '
  match($0, /label \(([0-9]+) labels\) ([0-9.]+) s/, m) { labels = m[1]; if (m[2] > 0) rate = sprintf("%.1f", m[1] / m[2]) }
  /latency POST \/v1\/labeling\/claims:/ { if (match($0, /p50 ([0-9]+)/, m)) claim = m[1] }
  /latency POST \/v1\/labeling\/claims\/:id\/label/ { if (match($0, /p50 ([0-9]+)/, m)) label = m[1] }
  END {
    split(node, n, " "); node = n[2] - n[1]; split(pg, p, " "); pg = p[2] - p[1]
    printf "bench: %s labels/s in the label phase; p50 claim %s ms, label %s ms; ", rate, claim, label
    printf "server CPU %.1f s node + %.1f s postgres", node, pg
    if (labels > 0) printf " (%.1f + %.1f ms per label)", 1000 * node / labels, 1000 * pg / labels
  }
' "$replay_log")"
echo "$summary" >&2
