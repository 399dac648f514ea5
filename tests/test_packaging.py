"""The core's wheel: what ``pip install mskernel`` puts on disk."""

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def test_the_wheel_holds_every_module_and_py_typed(tmp_path):
    """PEP 561: with ``py.typed`` in the package, type checkers read the core's annotations
    (a plugin checked with mypy sees the real signatures of what it calls)."""
    source = tmp_path / "src"
    source.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(REPO / name, source / name)
    shutil.copytree(REPO / "mskernel", source / "mskernel",
                    ignore=shutil.ignore_patterns("__pycache__"))
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps",
                    "--no-build-isolation", "--disable-pip-version-check", "--wheel-dir",
                    str(tmp_path / "dist"), str(source)], check=True, capture_output=True,
                   timeout=300)
    (wheel,) = (tmp_path / "dist").glob("mskernel-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    assert "mskernel/py.typed" in names
    modules = {p.relative_to(REPO).as_posix() for p in (REPO / "mskernel").rglob("*.py")
               if "__pycache__" not in p.parts}
    assert modules <= names
