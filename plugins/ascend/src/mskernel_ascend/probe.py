"""What of the CANN runtime this machine has: the pyACL bindings, ``libascendcl.so``, the
toolkit layout, the ATC compiler, the driver's ``npu-smi`` tool and the NPU device files.

:func:`probe` only looks (file system, ``PATH``, ``importlib.util.find_spec``); it imports
nothing of CANN and runs no tool, so it is cheap enough for ``availability()``.  Each check is
a :class:`Finding` saying what was looked for, where, and what was found, so that
``mskernel plugins info ascend`` shows exactly what is missing.
"""

from __future__ import annotations

import ctypes.util
import glob
import importlib.util
import os
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

#: The environment variables CANN's ``set_env.sh`` sets to the toolkit's root, in the order
#: the toolkit's own scripts read them.
HOME_VARIABLES = ("ASCEND_HOME_PATH", "ASCEND_TOOLKIT_HOME")
#: Where the CANN installer puts the toolkit when no variable says otherwise (as root, then
#: as a user).
DEFAULT_ROOTS = ("/usr/local/Ascend/ascend-toolkit/latest", "~/Ascend/ascend-toolkit/latest")
#: The driver's device files: one per NPU.
DEVICE_FILES = "/dev/davinci[0-9]*"


@dataclass(frozen=True)
class Finding:
    """One thing looked for: ``what`` (``"libascendcl.so"``), whether it was ``found``, and
    ``detail``: where it was found, or where it was looked for."""

    what: str
    found: bool
    detail: str

    def __str__(self) -> str:
        return f"{self.what}: {'found at ' if self.found else 'not found; looked in '}{self.detail}"


@dataclass(frozen=True)
class CannProbe:
    """Everything :func:`probe` looked for.  ``toolkit_root`` is the CANN toolkit's root
    directory when one was found."""

    toolkit_root: Optional[Path]
    findings: tuple[Finding, ...]

    def finding(self, what: str) -> Finding:
        return next(f for f in self.findings if f.what == what)

    @property
    def runtime_ready(self) -> bool:
        """Whether a model can be loaded and run: pyACL, libascendcl.so and an NPU."""
        return all(self.finding(w).found for w in ("acl", "libascendcl.so", "NPU devices"))

    @property
    def missing(self) -> list[Finding]:
        return [f for f in self.findings if not f.found]

    def summary(self) -> str:
        """One line: what was found and what was not, with where it was looked for."""
        return "; ".join(str(f) for f in self.findings)


def toolkit_root() -> tuple[Optional[Path], Finding]:
    """The CANN toolkit's root: the first of ``ASCEND_HOME_PATH``, ``ASCEND_TOOLKIT_HOME``
    and the installer's default places that is a directory."""
    candidates = [(f"${v}", os.environ[v]) for v in HOME_VARIABLES if os.environ.get(v)]
    candidates += [(p, p) for p in DEFAULT_ROOTS]
    for label, raw in candidates:
        path = Path(raw).expanduser()
        if path.is_dir():
            return path, Finding("CANN toolkit", True, f"{path} (from {label})")
    unset = [f"${v} (unset)" for v in HOME_VARIABLES if not os.environ.get(v)]
    looked = [f"{label}={raw}" if label.startswith("$") else raw for label, raw in candidates]
    return None, Finding("CANN toolkit", False, ", ".join(unset + looked))


def _find_library(root: Optional[Path]) -> Finding:
    dirs = [root / "lib64", root / "runtime" / "lib64"] if root else []
    dirs += [Path(d) for d in os.environ.get("LD_LIBRARY_PATH", "").split(os.pathsep) if d]
    for directory in dirs:
        candidate = directory / "libascendcl.so"
        if candidate.is_file():
            return Finding("libascendcl.so", True, str(candidate))
    found = ctypes.util.find_library("ascendcl")
    if found:
        return Finding("libascendcl.so", True, f"{found} (the dynamic linker's cache)")
    where = [str(d) for d in dirs] + ["the dynamic linker's cache"]
    return Finding("libascendcl.so", False, ", ".join(where))


def _find_tool(name: str, root: Optional[Path], extra: tuple[str, ...] = ()) -> Finding:
    on_path = shutil.which(name)
    if on_path:
        return Finding(name, True, on_path)
    places = ([str(root / "bin" / name)] if root else []) + list(extra)
    for place in places:
        if os.access(place, os.X_OK):
            return Finding(name, True, place)
    return Finding(name, False, ", ".join(["$PATH", *places]))


def _find_acl() -> Finding:
    spec = importlib.util.find_spec("acl")
    if spec is not None:
        return Finding("acl", True, spec.origin or "an importable module")
    return Finding("acl", False, "the Python path (pyACL's acl module: source CANN's "
                                 "set_env.sh, which adds it to PYTHONPATH)")


def _find_devices() -> Finding:
    devices = sorted(glob.glob(DEVICE_FILES))
    if devices:
        return Finding("NPU devices", True, ", ".join(devices))
    return Finding("NPU devices", False, DEVICE_FILES)


def probe() -> CannProbe:
    """Look for CANN and an NPU on this machine (see the module doc)."""
    root, root_finding = toolkit_root()
    findings = (root_finding, _find_acl(), _find_library(root),
                _find_tool("atc", root),
                _find_tool("npu-smi", None, ("/usr/local/sbin/npu-smi",
                                             "/usr/local/Ascend/driver/tools/npu-smi")),
                _find_devices())
    return CannProbe(root, findings)
