"""Runs the TypeScript reference (tests/ts_reference.ts: the SDK's verifySettlement, the webhook
verifier's constructEvent, the chain package's canonicalJson) on the same inputs as the Python code."""

from __future__ import annotations

import json
import subprocess
from typing import Any

from .stack import REPO


def run(request: dict[str, Any], timeout_s: float = 180) -> Any:
    """The reference's answer to ``request`` (see ts_reference.ts). Raises RuntimeError when it fails."""
    proc = subprocess.run(
        ["node", "--import", "tsx", "clients/python/tests/ts_reference.ts"],
        cwd=REPO,
        input=json.dumps(request).encode(),
        capture_output=True,
        timeout=timeout_s,
    )
    if proc.returncode != 0:
        raise RuntimeError(f"ts_reference.ts failed ({proc.returncode}): {proc.stderr.decode(errors='replace')[-2000:]}")
    return json.loads(proc.stdout)
