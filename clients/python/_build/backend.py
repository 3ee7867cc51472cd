"""A PEP 517 build backend (PEP 660 for editable installs) for the labelgate Python client, standard
library only: it builds the pure-Python wheel of the packages named in ``[tool.labelgate-build]`` of
pyproject.toml, with the metadata of its ``[project]`` table (Core Metadata 2.1).

Why not setuptools: the setuptools bundled with Python 3.10/3.11 (65.x) needs the separate ``wheel``
package to build a wheel, which an offline machine may not have, and Python 3.12+ bundles no setuptools.
Formats: PEP 427 (wheel), PEP 376/PEP 627 (RECORD), PEP 517/PEP 660 (hooks), PEP 621 (``[project]``).
"""

from __future__ import annotations

import base64
import hashlib
import io
import os
import re
import tarfile
import zipfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
_TAG = "py3-none-any"


# --- pyproject.toml -------------------------------------------------------------------------------


def _load_toml(text: str) -> dict[str, Any]:
    try:
        import tomllib  # Python 3.11+

        return tomllib.loads(text)
    except ModuleNotFoundError:
        return _mini_toml(text)


def _mini_toml(text: str) -> dict[str, Any]:
    """The subset of TOML this project's pyproject.toml uses (tables, strings, string arrays, inline
    tables of strings), for Python 3.10, which has no tomllib."""
    import ast

    out: dict[str, Any] = {}
    table = out
    buf = ""
    for raw in text.splitlines():
        line = raw.split(" #", 1)[0].strip() if not raw.strip().startswith("#") else ""
        if not line and not buf:
            continue
        if buf:
            buf += " " + line
            if buf.count("[") > buf.count("]"):
                continue
            line, buf = buf, ""
        m = re.fullmatch(r"\[([A-Za-z0-9_.-]+)\]", line)
        if m:
            table = out
            for part in m.group(1).split("."):
                table = table.setdefault(part, {})
            continue
        key, _, value = line.partition("=")
        value = value.strip()
        if value.startswith("[") and value.count("[") > value.count("]"):
            buf = line
            continue
        if value.startswith("{"):
            pairs = re.findall(r'([A-Za-z0-9_-]+)\s*=\s*("(?:[^"\\]|\\.)*")', value)
            table[key.strip()] = {k: ast.literal_eval(v) for k, v in pairs}
        else:
            table[key.strip()] = ast.literal_eval(value.replace("true", "True").replace("false", "False"))
    return out


def _project() -> tuple[dict[str, Any], list[str]]:
    data = _load_toml((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    return data["project"], list(data.get("tool", {}).get("labelgate-build", {}).get("packages", []))


def _dist_name(name: str) -> str:
    return re.sub(r"[-_.]+", "_", name).lower()


def _metadata(project: dict[str, Any]) -> str:
    lines = [
        "Metadata-Version: 2.1",
        f"Name: {project['name']}",
        f"Version: {project['version']}",
    ]
    if project.get("description"):
        lines.append(f"Summary: {project['description']}")
    if project.get("requires-python"):
        lines.append(f"Requires-Python: {project['requires-python']}")
    lic: Any = project.get("license")
    text: Any = lic.get("text") if isinstance(lic, dict) else None  # pyright: ignore[reportUnknownMemberType]
    if isinstance(text, str) and text:
        lines.append(f"License: {text}")
    if project.get("keywords"):
        lines.append(f"Keywords: {','.join(project['keywords'])}")
    for c in project.get("classifiers", []):
        lines.append(f"Classifier: {c}")
    for dep in project.get("dependencies", []):
        lines.append(f"Requires-Dist: {dep}")
    body = ""
    readme = project.get("readme")
    if isinstance(readme, str) and (ROOT / readme).is_file():
        lines.append("Description-Content-Type: text/markdown")
        body = (ROOT / readme).read_text(encoding="utf-8")
    return "\n".join(lines) + "\n\n" + body


# --- wheel ----------------------------------------------------------------------------------------


class _Wheel:
    def __init__(self, path: Path) -> None:
        self.zip = zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED)
        self.records: list[str] = []

    def add(self, arcname: str, data: bytes) -> None:
        info = zipfile.ZipInfo(arcname, date_time=(2020, 1, 1, 0, 0, 0))
        info.external_attr = 0o644 << 16
        info.compress_type = zipfile.ZIP_DEFLATED
        self.zip.writestr(info, data)
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        self.records.append(f"{arcname},sha256={digest},{len(data)}")

    def close(self, dist_info: str) -> None:
        record = f"{dist_info}/RECORD"
        self.records.append(f"{record},,")
        info = zipfile.ZipInfo(record, date_time=(2020, 1, 1, 0, 0, 0))
        info.external_attr = 0o644 << 16
        self.zip.writestr(info, "\n".join(self.records) + "\n")
        self.zip.close()


def _package_files(packages: list[str]) -> list[Path]:
    files: list[Path] = []
    for pkg in packages:
        for path in sorted((ROOT / pkg).rglob("*")):
            if path.is_file() and "__pycache__" not in path.parts and path.suffix not in (".pyc", ".pyo"):
                files.append(path)
    return files


def _write_dist_info(wheel: _Wheel, project: dict[str, Any], dist_info: str) -> None:
    wheel.add(f"{dist_info}/METADATA", _metadata(project).encode("utf-8"))
    wheel.add(
        f"{dist_info}/WHEEL",
        f"Wheel-Version: 1.0\nGenerator: labelgate-build\nRoot-Is-Purelib: true\nTag: {_TAG}\n".encode(),
    )


def _wheel_name(project: dict[str, Any]) -> tuple[str, str]:
    base = f"{_dist_name(project['name'])}-{project['version']}"
    return f"{base}-{_TAG}.whl", f"{base}.dist-info"


def build_wheel(wheel_directory: str, config_settings: dict[str, Any] | None = None, metadata_directory: str | None = None) -> str:
    """PEP 517: builds the wheel into ``wheel_directory``; returns its file name."""
    project, packages = _project()
    name, dist_info = _wheel_name(project)
    wheel = _Wheel(Path(wheel_directory) / name)
    for path in _package_files(packages):
        wheel.add(path.relative_to(ROOT).as_posix(), path.read_bytes())
    _write_dist_info(wheel, project, dist_info)
    wheel.close(dist_info)
    return name


def build_editable(wheel_directory: str, config_settings: dict[str, Any] | None = None, metadata_directory: str | None = None) -> str:
    """PEP 660: a wheel holding a ``.pth`` file that puts this directory on ``sys.path``."""
    project, _ = _project()
    name, dist_info = _wheel_name(project)
    wheel = _Wheel(Path(wheel_directory) / name)
    wheel.add(f"__editable__.{_dist_name(project['name'])}.pth", (str(ROOT) + "\n").encode())
    _write_dist_info(wheel, project, dist_info)
    wheel.close(dist_info)
    return name


def _prepare_metadata(metadata_directory: str) -> str:
    project, _ = _project()
    _, dist_info = _wheel_name(project)
    target = Path(metadata_directory) / dist_info
    target.mkdir(parents=True, exist_ok=True)
    (target / "METADATA").write_text(_metadata(project), encoding="utf-8")
    (target / "WHEEL").write_text(f"Wheel-Version: 1.0\nGenerator: labelgate-build\nRoot-Is-Purelib: true\nTag: {_TAG}\n")
    return dist_info


def prepare_metadata_for_build_wheel(metadata_directory: str, config_settings: dict[str, Any] | None = None) -> str:
    """PEP 517: writes the ``.dist-info`` directory (METADATA, WHEEL)."""
    return _prepare_metadata(metadata_directory)


def prepare_metadata_for_build_editable(metadata_directory: str, config_settings: dict[str, Any] | None = None) -> str:
    """PEP 660: same metadata as the wheel."""
    return _prepare_metadata(metadata_directory)


def build_sdist(sdist_directory: str, config_settings: dict[str, Any] | None = None) -> str:
    """PEP 517: a ``.tar.gz`` of pyproject.toml, the README, the backend, the packages, tests and examples."""
    project, packages = _project()
    base = f"{_dist_name(project['name'])}-{project['version']}"
    name = f"{base}.tar.gz"
    files = [ROOT / "pyproject.toml", ROOT / "README.md", ROOT / "_build" / "backend.py"]
    files += _package_files(packages + ["tests", "examples"])
    pkg_info = _metadata(project).encode("utf-8")
    with tarfile.open(Path(sdist_directory) / name, "w:gz", format=tarfile.PAX_FORMAT) as tar:
        for path in files:
            if path.is_file():
                tar.add(path, arcname=f"{base}/{path.relative_to(ROOT).as_posix()}", recursive=False)
        info = tarfile.TarInfo(f"{base}/PKG-INFO")
        info.size = len(pkg_info)
        info.mode = 0o644
        tar.addfile(info, io.BytesIO(pkg_info))
    return name


def get_requires_for_build_wheel(config_settings: dict[str, Any] | None = None) -> list[str]:
    """PEP 517: nothing beyond the standard library."""
    return []


def get_requires_for_build_sdist(config_settings: dict[str, Any] | None = None) -> list[str]:
    """PEP 517: nothing beyond the standard library."""
    return []


def get_requires_for_build_editable(config_settings: dict[str, Any] | None = None) -> list[str]:
    """PEP 660: nothing beyond the standard library."""
    return []


__all__ = [
    "build_editable",
    "build_sdist",
    "build_wheel",
    "get_requires_for_build_editable",
    "get_requires_for_build_sdist",
    "get_requires_for_build_wheel",
    "prepare_metadata_for_build_editable",
    "prepare_metadata_for_build_wheel",
]

if __name__ == "__main__":  # pragma: no cover - manual check: python _build/backend.py <dir>
    import sys

    print(build_wheel(sys.argv[1] if len(sys.argv) > 1 else os.getcwd()))
