"""Helpers of the SDK's tests: installing distributions for real into a folder that
subprocesses put on ``PYTHONPATH``, and running commands in such a process."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Sequence

from mskernel.hooks.discovery import discover

SDK = Path(__file__).resolve().parents[1]
REPO = SDK.parent
DOCS = REPO / "docs" / "plugins.md"


def pip_install(project: Path, site: Path, scratch: Path) -> None:
    """``pip install project`` into ``site`` (no dependencies, no build isolation: the core
    and setuptools are already here), building from a copy so the source tree stays clean."""
    copy = scratch / f"build-{project.name}"
    shutil.copytree(project, copy, ignore=shutil.ignore_patterns(
        "__pycache__", "build", "*.egg-info", ".pytest_cache"))
    run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-build-isolation",
         "--disable-pip-version-check", "--target", str(site), str(copy)], cwd=scratch, check=True)


def environment(home: Path, *paths: Path, installs: Sequence[str] = (),
                **extra: str) -> dict[str, str]:
    """A subprocess environment: ``paths`` then the repository on ``PYTHONPATH``, the kit's
    reports under ``home``.  The plugins installed in this environment itself are switched
    off, except the SDK and ``installs`` (plugins the test installs into ``paths``, which come
    first on the path), so each test sees the distributions it installed and no others."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("MSKERNEL_") and k != "PYTHONPATH"}
    others = sorted({c.name for c in discover()} - {"sdk", *installs})
    env.update(PYTHONPATH=os.pathsep.join(str(p) for p in (*paths, REPO)),
               MSKERNEL_HOME=str(home), MSKERNEL_DISABLE_PLUGINS=",".join(others),
               PYTHONDONTWRITEBYTECODE="1")
    env.update(extra)
    return env


def run(argv: Sequence[str], *, cwd: Path, env: dict[str, str] | None = None,
        check: bool = False) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(list(argv), cwd=cwd, env=env, capture_output=True, text=True,
                          stdin=subprocess.DEVNULL, timeout=300)
    if check and done.returncode != 0:
        raise AssertionError(f"{' '.join(argv)} exited {done.returncode}:\n"
                             f"{done.stdout}\n{done.stderr}")
    return done


def mskernel(*argv: str) -> list[str]:
    """The ``mskernel`` command, run by this interpreter."""
    return [sys.executable, "-m", "mskernel.cli", *argv]


def pytest_argv(*argv: str) -> list[str]:
    return [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *argv]
