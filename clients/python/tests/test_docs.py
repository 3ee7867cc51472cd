"""What the documentation promises: the package installs offline into a fresh venv with the README's
pip line, the README's example runs as written against a real gateway, and the Flask receiver of the
package README verifies a delivery (when Flask is installed)."""

from __future__ import annotations

import contextlib
import io
import os
import re
import subprocess
import sys
import tempfile
import threading
import unittest
import uuid
from pathlib import Path

from labelgate.webhooks import sign_payload

from . import stack
from .stack import REPO

PACKAGE = REPO / "clients" / "python"


def python_blocks(path: Path, after: str) -> list[str]:
    """The ```python blocks of ``path`` that follow the line ``after``."""
    text = path.read_text(encoding="utf-8")
    start = text.index(after)
    return re.findall(r"```python\n(.*?)```", text[start:], flags=re.S)


def label_when_submitted(proc: subprocess.Popen[str], s: stack.Stack, answer: str, labelers: int, out: list[str]) -> None:
    """Reads the example's output; once it prints ``submitted <task_id>``, labels that task ``labelers`` times."""
    assert proc.stdout is not None
    for line in proc.stdout:
        out.append(line)
        m = re.search(r"submitted (tsk_\w+)", line)
        if m:
            for i in range(labelers):
                lab = s.labeler(f"py-docs-{i}")
                claim = lab.claim(task_id=m.group(1))
                assert claim is not None
                lab.label(claim.claim_id, answer)


class DocsTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        cls.stack = stack.get()

    def _run_example(self, python: str, code: str, cwd: str, answer: str = "cat", labelers: int = 3) -> str:
        """Runs ``code`` in the environment of the README's quick start; ``labelers`` label its task from outside
        once it prints ``submitted <task_id>`` (0: the example labels its own task)."""
        _, key, _ = self.stack.customer()
        env = dict(os.environ, LABELGATE_API_KEY=key, LABELGATE_URL=self.stack.base_url, LABELGATE_RPC_URL=self.stack.rpc_url,
                   ADMIN_TOKEN=self.stack.admin_token, PYTHONUNBUFFERED="1")  # fmt: skip
        env.pop("PYTHONPATH", None)
        proc = subprocess.Popen([python, "-c", code], cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        out: list[str] = []
        reader = threading.Thread(target=label_when_submitted, args=(proc, self.stack, answer, labelers, out))
        reader.start()
        try:
            code_ = proc.wait(timeout=180)
        finally:
            if proc.poll() is None:
                proc.kill()
            reader.join(timeout=30)
            if proc.stdout is not None:
                proc.stdout.close()
        self.assertEqual(code_, 0, "".join(out))
        return "".join(out)

    def test_pip_install_into_a_venv_and_the_readme_example(self) -> None:
        if subprocess.run([sys.executable, "-c", "import ensurepip"], capture_output=True).returncode != 0:
            self.skipTest("this Python has no ensurepip (Debian: apt-get install python3-venv)")
        with tempfile.TemporaryDirectory() as tmp:
            venv = os.path.join(tmp, "venv")
            subprocess.run([sys.executable, "-m", "venv", venv], check=True, capture_output=True, timeout=300)
            py = os.path.join(venv, "bin", "python")
            (pip_line,) = re.findall(r"^pip install --no-build-isolation \./clients/python$", (REPO / "README.md").read_text(), flags=re.M)
            env = dict(os.environ, PIP_NO_INDEX="1", PIP_DISABLE_PIP_VERSION_CHECK="1")  # offline: no registry at all
            installed = subprocess.run([py, "-m", *pip_line.split()], cwd=REPO, env=env, capture_output=True, text=True, timeout=300)
            self.assertEqual(installed.returncode, 0, installed.stdout + installed.stderr)
            where = subprocess.run([py, "-c", "import labelgate, os; print(labelgate.__file__); print(os.path.exists(os.path.join(os.path.dirname(labelgate.__file__), 'py.typed')))"],
                                   cwd=tmp, capture_output=True, text=True, check=True)  # fmt: skip
            self.assertIn(os.path.join(venv, "lib"), where.stdout)
            self.assertTrue(where.stdout.strip().endswith("True"))  # py.typed shipped

            (example,) = python_blocks(REPO / "README.md", "## Python client")[:1]
            self.assertLessEqual(len(example.strip().splitlines()), 16)
            # it finishes on its own: nobody labels its task but itself (issue 40)
            out = self._run_example(py, example, tmp, labelers=0)
        self.assertRegex(out, r"(^|\n)cat (0|1)(\.\d+)? 0x[0-9a-f]{64}\n")
        self.assertIn("anchored on chain: True", out)

    def test_package_readme_quick_start(self) -> None:
        first = python_blocks(PACKAGE / "README.md", "# labelgate for Python")[0]
        # as written, plus the line the labelers wait for
        code = first.replace("result = client.tasks.wait(", 'print("submitted", task.task_id, flush=True)\nresult = client.tasks.wait(', 1)
        env_path = f"import sys; sys.path.insert(0, {str(PACKAGE)!r})\n"
        out = self._run_example(sys.executable, env_path + code, tempfile.gettempdir(), answer="dog")
        self.assertRegex(out, r"\ndog 0\.\d+ 0x[0-9a-f]{64}\n")

    def test_flask_receiver_of_the_package_readme(self) -> None:
        try:
            import flask  # noqa: F401
        except ImportError:
            self.skipTest("Flask is not installed (the package itself needs none)")
        code = python_blocks(PACKAGE / "README.md", "**Flask**")[0]
        secret = "whsec_" + uuid.uuid4().hex
        os.environ["LABELGATE_WEBHOOK_SECRET"] = secret
        try:
            scope: dict[str, object] = {"__name__": "flask_receiver"}
            exec(compile(code, "README.md (Flask)", "exec"), scope)  # noqa: S102 (the README's own code)
        finally:
            del os.environ["LABELGATE_WEBHOOK_SECRET"]
        app = scope["app"]
        import time

        ts = time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime())
        body = (
            '{"event":"task.settled","task_id":"tsk_1","consensus_label":"cat","confidence":0.97,'
            f'"ledger_txid":"0x{"ab" * 32}","settled_at":"{ts}","timestamp":"{ts}"}}'
        ).encode()
        http = app.test_client()  # type: ignore[attr-defined]
        with contextlib.redirect_stdout(io.StringIO()) as printed:
            ok = http.post("/hook", data=body, headers={"X-SVC-Signature": sign_payload(body, secret), "X-SVC-Event-Id": "evt_1"})
        self.assertEqual(ok.status_code, 204)
        self.assertIn("tsk_1 cat 0.97", printed.getvalue())
        bad = http.post("/hook", data=body + b" ", headers={"X-SVC-Signature": sign_payload(body, secret)})
        self.assertEqual((bad.status_code, bad.get_data(as_text=True)), (400, "signature_mismatch"))


if __name__ == "__main__":
    unittest.main()
