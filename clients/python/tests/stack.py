"""One real labelgate stack for the whole test run: ``pnpm start`` (scripts/standalone.ts) with its own
data folder (a temp dir: embedded Postgres, anvil state, keys) and free ports, started on first use and
stopped (process group SIGTERM, then SIGKILL) and removed at interpreter exit.

Environment of the stack: private URLs allowed (local webhook receivers and manifests), fast anchors
(``ANCHOR_INTERVAL_MS=500``), a small sandbox rate budget (20 requests per 2 s, to meet 429 for real)
and a production budget no test reaches: tests that send many requests use production customers.
``LABELGATE_TEST_DATA_DIR`` runs it on that data folder (kept); ``LABELGATE_TEST_KEEP_DATA=1`` keeps the
temporary one. ``LABELGATE_TEST_BASE_URL`` + ``LABELGATE_TEST_ADMIN_TOKEN`` + ``LABELGATE_TEST_RPC_URL`` (+
``LABELGATE_TEST_DATABASE_URL`` for the export fixture) point the tests at a stack already running
instead (started with the same settings).
"""

from __future__ import annotations

import atexit
import os
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

import labelgate

REPO = Path(__file__).resolve().parents[3]
START_TIMEOUT_S = float(os.environ.get("LABELGATE_TEST_START_TIMEOUT_S", "240"))
SANDBOX_BUDGET = 20
WINDOW_S = 2
ADMIN_TOKEN = "adm_pytest_" + uuid.uuid4().hex


def free_port() -> int:
    """A TCP port free on 127.0.0.1 now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class Stack:
    base_url: str
    rpc_url: str
    admin_token: str
    data_dir: str | None = None
    process: subprocess.Popen[bytes] | None = None
    log_path: str | None = None
    database_url: str | None = None

    def log_tail(self, lines: int = 40) -> str:
        if not self.log_path or not os.path.exists(self.log_path):
            return ""
        with open(self.log_path, encoding="utf-8", errors="replace") as f:
            return "".join(f.readlines()[-lines:])

    # --- fixtures ---------------------------------------------------------------------------------

    def sql(self, statement: str, params: list[object] | None = None) -> int:
        """Runs one SQL statement on the stack's database (node + the repository's ``pg``), for fixtures the
        API would take minutes to build (bench/manifest.ts does the same); returns the rows affected.
        Raises unittest.SkipTest when the stack's database is unknown (``LABELGATE_TEST_DATABASE_URL``)."""
        import json
        import unittest

        if not self.database_url:
            raise unittest.SkipTest("the stack's database URL is unknown: set LABELGATE_TEST_DATABASE_URL")
        script = (
            "const {Client}=require('pg');let s='';process.stdin.on('data',d=>s+=d).on('end',async()=>{"
            "const r=JSON.parse(s);const c=new Client({connectionString:r.url});await c.connect();"
            "try{const q=await c.query(r.sql,r.params);process.stdout.write(String(q.rowCount??0))}finally{await c.end()}})"
        )
        proc = subprocess.run(
            ["node", "-e", script],
            cwd=REPO,
            input=json.dumps({"url": self.database_url, "sql": statement, "params": params or []}).encode(),
            capture_output=True,
            timeout=300,
        )
        if proc.returncode != 0:
            raise RuntimeError(f"SQL failed: {proc.stderr.decode(errors='replace')[-2000:]}")
        return int(proc.stdout or b"0")

    def admin(self) -> labelgate.AdminClient:
        return labelgate.AdminClient(self.admin_token, base_url=self.base_url)

    def customer(self, *, production: bool = True, quota: int | None = None, **client_options: object) -> tuple[labelgate.Client, str, str]:
        """A new customer: (client, api key, customer id). Production customers have the large rate
        budget (and 100,000 labels of quota); sandbox ones 20 requests per 2 s and 500 labels."""
        reg = labelgate.Client.register("pytest", f"py-{uuid.uuid4().hex}@example.com", base_url=self.base_url)
        key = reg.api_key
        admin = self.admin()
        if production:
            key = str(admin.upgrade_customer(reg.customer_id)["api_key"])
        if quota is not None:
            admin.set_label_quota(reg.customer_id, quota)
        return labelgate.Client(key, base_url=self.base_url, **client_options), key, reg.customer_id  # type: ignore[arg-type]

    def labeler(self, name: str = "pytest-labeler") -> labelgate.LabelerClient:
        created = self.admin().create_labeler(name)
        return labelgate.LabelerClient(created.api_key, base_url=self.base_url)


_lock = threading.Lock()
_stack: Stack | None = None


def get() -> Stack:
    """The shared stack, started on first call."""
    global _stack
    with _lock:
        if _stack is None:
            _stack = _from_env() or _start()
        return _stack


def _from_env() -> Stack | None:
    url = os.environ.get("LABELGATE_TEST_BASE_URL")
    if not url:
        return None
    return Stack(
        url.rstrip("/"),
        os.environ["LABELGATE_TEST_RPC_URL"],
        os.environ["LABELGATE_TEST_ADMIN_TOKEN"],
        database_url=os.environ.get("LABELGATE_TEST_DATABASE_URL"),
    )


def _start() -> Stack:
    data_dir = os.environ.get("LABELGATE_TEST_DATA_DIR") or tempfile.mkdtemp(prefix="lg-pytest-")
    os.makedirs(data_dir, exist_ok=True)
    os.chmod(data_dir, 0o755)  # the embedded Postgres runs as its own user when started as root
    log_path = os.path.join(data_dir, "stack.log")
    env = dict(os.environ)
    for name in ("DATABASE_URL", "REDIS_URL", "EVM_RPC_URL", "LEDGER", "EVM_PRIVATE_KEY", "ANCHOR_CONTRACT_ADDRESS"):
        env.pop(name, None)
    pg_port = free_port()
    env.update(
        DATA_DIR=data_dir,
        PORT="0",
        HOST="127.0.0.1",
        EMBEDDED_PG_PORT=str(pg_port),
        ANVIL_PORT="0",
        METRICS_PORT="0",
        ADMIN_TOKEN=ADMIN_TOKEN,
        ALLOW_PRIVATE_URLS="true",
        LOG_LEVEL="warn",
        ANCHOR_INTERVAL_MS="500",
        RATE_LIMIT_SANDBOX=str(SANDBOX_BUDGET),
        RATE_LIMIT_PRODUCTION="1000000000",
        RATE_LIMIT_WINDOW_SECONDS=str(WINDOW_S),
        RATE_LIMIT_REGISTRATIONS_PER_HOUR="1000000",
        WEBHOOK_RETRY_MAX="3",
    )
    log = open(log_path, "wb")  # noqa: SIM115 (kept open for the child's lifetime)
    proc = subprocess.Popen(
        ["node", "--import", "tsx", "scripts/standalone.ts"],
        cwd=REPO,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    stack = Stack("", "", ADMIN_TOKEN, data_dir, proc, log_path, f"postgresql://postgres:postgres@127.0.0.1:{pg_port}/labelgate")
    atexit.register(_stop, stack, log)
    deadline = time.monotonic() + START_TIMEOUT_S
    api = rpc = None
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"the standalone stack exited with {proc.returncode}:\n{stack.log_tail()}")
        with open(log_path, encoding="utf-8", errors="replace") as f:
            text = f.read()
        m_api = re.search(r"API\s+(http://127\.0\.0\.1:\d+)/v1", text)
        m_rpc = re.search(r"local chain \(anvil\) (http://127\.0\.0\.1:\d+)", text)
        if m_api and m_rpc:
            api, rpc = m_api.group(1), m_rpc.group(1)
            break
        time.sleep(0.25)
    if api is None or rpc is None:
        raise RuntimeError(f"the standalone stack did not start within {START_TIMEOUT_S:g} s:\n{stack.log_tail()}")
    stack.base_url, stack.rpc_url = api, rpc
    return stack


def _stop(stack: Stack, log: object) -> None:
    proc = stack.process
    if proc is not None and proc.poll() is None:
        try:
            os.killpg(proc.pid, signal.SIGTERM)
            proc.wait(timeout=20)
        except (ProcessLookupError, subprocess.TimeoutExpired):
            try:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(timeout=5)
            except (ProcessLookupError, subprocess.TimeoutExpired):
                pass
    if proc is not None:
        try:  # what is left of the group (Postgres, anvil) once the node process is gone
            os.killpg(proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
    close = getattr(log, "close", None)
    if callable(close):
        close()
    keep = os.environ.get("LABELGATE_TEST_KEEP_DATA") == "1" or os.environ.get("LABELGATE_TEST_DATA_DIR")
    if stack.data_dir and not keep:
        shutil.rmtree(stack.data_dir, ignore_errors=True)
