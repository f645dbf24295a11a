"""The package as PyPI would get it: hatchling builds the wheel and the sdist; the wheel holds the typed
package, declares Python 3.9+ and no dependency, and installs and imports in a bare environment with no
index at all."""

from __future__ import annotations

import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

SDK = Path(__file__).resolve().parent.parent


def run(*args: str, cwd: Path = SDK) -> str:
    done = subprocess.run(list(args), cwd=cwd, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def test_wheel_and_sdist(tmp_path):
    run(sys.executable, "-m", "hatchling", "build", "-d", str(tmp_path / "dist"))
    [wheel] = (tmp_path / "dist").glob("conversation_analytics-*.whl")
    [sdist] = (tmp_path / "dist").glob("conversation_analytics-*.tar.gz")
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        metadata = next(archive.read(n).decode() for n in names if n.endswith(".dist-info/METADATA"))
    package = {n.split("/", 1)[1] for n in names if n.startswith("conversation_analytics/")}
    assert {"__init__.py", "py.typed", "api_types.py", "_client.py", "_async.py", "_core.py"} <= package
    assert "Requires-Python: >=3.9" in metadata
    # Dependencies: only the dev extra's.
    requires = [line for line in metadata.splitlines() if line.startswith("Requires-Dist:")]
    assert requires and all("extra ==" in line for line in requires), requires
    with tarfile.open(sdist) as archive:
        members = {m.name.split("/", 1)[1] for m in archive.getmembers() if "/" in m.name}
    assert {"pyproject.toml", "README.md", "src/conversation_analytics/py.typed", "tests/conftest.py"} <= members

    venv = tmp_path / "venv"
    run(sys.executable, "-m", "venv", str(venv))
    pip, python = venv / "bin" / "pip", venv / "bin" / "python"
    run(str(pip), "install", "--no-index", "--disable-pip-version-check", "--quiet", str(wheel))
    imported = run(str(python), "-c", "import conversation_analytics as c; print(c.__version__, c.AsyncClient)")
    assert imported.startswith("0.")
