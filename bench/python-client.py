"""`pnpm bench:python`: the Python client's overhead per call against raw urllib, on a local gateway.

Three ways to make the same call, alternated in rounds (A B C, A B C, ...) so the machine's load drifts
over all of them alike:
- `urllib`: what a script without the client writes: `urllib.request.urlopen` with the bearer header, then
  `json.loads` of the body (a new connection per call: urllib has no keep-alive);
- `client`: `labelgate.Client` (kept-alive connection, retry bookkeeping, typed errors, the answer decoded
  into a dataclass);
- `http.client`: raw `http.client` on one kept-alive connection plus `json.loads`: the same transport as
  the client without any of its logic, so `client / http.client` is the client's own overhead.

Each call is `GET /v1/tasks/{id}` (the task body: 30 fields) or, with `--route me`, `GET /v1/customers/me`.
Per way: the median over rounds of the wall time per call, and of the CPU time of this Python process per
call (what the client itself costs; the gateway's time is in the wall time only). The verdict compares the
client's wall time per call with urllib's (target: at most 10% more). Prints a table on stderr and one JSON
line on stdout.

Options: `--rounds` (default 10), `--calls` per way and round (default 200), `--route task|me`,
`--base-url` and `--api-key` (default: start a standalone stack of its own: `pnpm start`'s
scripts/standalone.ts with a temporary data folder, or `--data-dir DIR` to keep it there).
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import platform
import statistics
import sys
import time
import urllib.parse
import urllib.request
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "clients" / "python"))

import labelgate  # noqa: E402


def load() -> str:
    try:
        with open("/proc/loadavg") as f:
            return " ".join(f.read().split()[:3])
    except OSError:
        return "n/a"


def main() -> None:
    ap = argparse.ArgumentParser(description="the Python client's overhead per call against raw urllib")
    ap.add_argument("--rounds", type=int, default=10)
    ap.add_argument("--calls", type=int, default=200)
    ap.add_argument("--route", choices=["task", "me"], default="task")
    ap.add_argument("--base-url")
    ap.add_argument("--api-key")
    ap.add_argument("--data-dir", help="data folder of the stack this bench starts (kept); default a temporary one")
    args = ap.parse_args()

    if args.base_url and args.api_key:
        base_url, key = args.base_url.rstrip("/"), args.api_key
    else:
        if args.data_dir:
            os.environ["LABELGATE_TEST_DATA_DIR"] = os.path.abspath(args.data_dir)
        from tests import stack  # clients/python/tests/stack.py: the stack the client's tests run on

        s = stack.get()
        _, key, _ = s.customer()  # production tier: no rate limit within reach
        base_url = s.base_url
        print(f"stack: {base_url} (data {s.data_dir})", file=sys.stderr)

    client = labelgate.Client(key, base_url=base_url)
    if args.route == "task":
        task = client.tasks.create(type="image_classification", data_url="https://images.example/bench.jpg",
                                   label_spec={"question": "bench: which?", "options": ["cat", "dog"]}, metadata={"bench": True})  # fmt: skip
        path = f"/v1/tasks/{task.task_id}"
        via_client: Callable[[], object] = lambda: client.tasks.get(task.task_id)  # noqa: E731
    else:
        path = "/v1/customers/me"
        via_client = client.account.get

    url = base_url + path
    headers = {"Authorization": f"Bearer {key}", "Accept": "application/json"}

    def via_urllib() -> object:
        with urllib.request.urlopen(urllib.request.Request(url, headers=headers), timeout=60) as res:  # noqa: S310
            return json.loads(res.read())

    parts = urllib.parse.urlsplit(base_url)
    conn = http.client.HTTPConnection(parts.hostname or "127.0.0.1", parts.port, timeout=60)

    def via_http_client() -> object:
        conn.request("GET", path, headers=headers)
        res = conn.getresponse()
        body = res.read()
        if res.status != 200:
            raise RuntimeError(f"HTTP {res.status}: {body[:200]!r}")
        return json.loads(body)

    ways: dict[str, Callable[[], object]] = {"urllib": via_urllib, "client": via_client, "http.client": via_http_client}
    for f in ways.values():  # warm-up: connections, caches, the gateway's statement plans
        for _ in range(20):
            f()

    wall: dict[str, list[float]] = {k: [] for k in ways}
    cpu: dict[str, list[float]] = {k: [] for k in ways}
    loads = [load()]
    started = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    for r in range(args.rounds):
        order = list(ways) if r % 2 == 0 else list(reversed(ways))  # A B C, C B A, ...: no way always goes first
        for name in order:
            f = ways[name]
            if name == "http.client":
                conn.close()  # idle since its last round: the server (5 s keep-alive) may have closed it
            c0, w0 = time.process_time(), time.perf_counter()
            for _ in range(args.calls):
                f()
            w1, c1 = time.perf_counter(), time.process_time()
            wall[name].append((w1 - w0) / args.calls * 1000)
            cpu[name].append((c1 - c0) / args.calls * 1000)
        loads.append(load())
        print(f"round {r + 1}/{args.rounds}: " + ", ".join(f"{k} {wall[k][-1]:.3f} ms" for k in ways), file=sys.stderr)

    med = {k: statistics.median(v) for k, v in wall.items()}
    med_cpu = {k: statistics.median(v) for k, v in cpu.items()}
    # per round ratios (the ways of one round ran back to back), then their median
    ratio_urllib = statistics.median(c / u for c, u in zip(wall["client"], wall["urllib"]))
    ratio_raw = statistics.median(c / h for c, h in zip(wall["client"], wall["http.client"]))
    result = {
        "bench": "python-client",
        "route": f"GET {'/v1/tasks/{id}' if args.route == 'task' else '/v1/customers/me'}",
        "rounds": args.rounds,
        "calls_per_round": args.calls,
        "wall_ms_per_call": {k: round(v, 4) for k, v in med.items()},
        "python_cpu_ms_per_call": {k: round(v, 4) for k, v in med_cpu.items()},
        "client_vs_urllib": round(ratio_urllib, 4),
        "client_vs_http_client": round(ratio_raw, 4),
        "target": "client_vs_urllib <= 1.10",
        "pass": ratio_urllib <= 1.10,
        "machine": f"{platform.node()}, {os.cpu_count()} cores, Python {platform.python_version()}",
        "load_avg": loads,
        "started": started,
    }
    print(file=sys.stderr)
    print(f"{'way':<12} {'wall ms/call':>13} {'CPU ms/call':>12}", file=sys.stderr)
    for k in ways:
        print(f"{k:<12} {med[k]:>13.3f} {med_cpu[k]:>12.3f}", file=sys.stderr)
    print(f"client / urllib = {ratio_urllib:.3f} (target <= 1.10: {'pass' if result['pass'] else 'FAIL'}); "
          f"client / http.client = {ratio_raw:.3f}", file=sys.stderr)  # fmt: skip
    print(json.dumps(result))
    client.close()
    conn.close()


if __name__ == "__main__":
    main()
