"""Compiling generated CUDA C to PTX with NVRTC, cached on disk by the source's hash.

NVRTC needs no device: it compiles for a virtual architecture (``compute_XY``), and the
driver finishes the PTX for the device it loads on.  The target is the device's own
capability when there is one, else ``compute_80`` (Ampere, the oldest with bfloat16
arithmetic), which every later GPU runs.

The cache, ``$XDG_CACHE_HOME/mskernel/gpu-ptx`` (default ``~/.cache/...``), is a directory
this user alone can write (created 0700; one that is a symlink, someone else's, or writable
by group or others is refused with a warning, and this process compiles without caching).
A file is ``<sha256 of source, options and NVRTC version>.ptx``, written to a temporary file
and renamed into place; its first line is the SHA-256 of the PTX after it.  Reading opens
it without following symlinks, requires a regular file of this user's writable by nobody
else, and compares the digest, so PTX that was tampered with or cut short is compiled again
(with a warning) instead of loaded.  PTX is text the driver compiles, never native code run
at load, but what a kernel computes is what the cache says, hence the care.
"""

from __future__ import annotations

import functools
import hashlib
import os
import stat
import tempfile
import warnings
from pathlib import Path
from typing import Optional, Sequence

from .probe import load_library

DEFAULT_ARCH = "compute_80"


class CompileError(RuntimeError):
    """NVRTC rejected a generated kernel; the message holds its log and the source."""


def cache_root() -> Path:
    root = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(root) / "mskernel" / "gpu-ptx"


def nvrtc_version() -> tuple[int, int]:
    load_library("nvrtc")
    from cupy_backends.cuda.libs import nvrtc

    major, minor = nvrtc.getVersion()
    return int(major), int(minor)


def compile_to_ptx(source: str, name: str, arch: str = DEFAULT_ARCH,
                   options: Sequence[str] = ()) -> str:
    """PTX of ``source`` for the virtual architecture ``arch`` (no device needed)."""
    load_library("nvrtc")
    from cupy_backends.cuda.libs import nvrtc

    program = nvrtc.createProgram(source, f"{name}.cu", [], [])
    try:
        flags = [f"--gpu-architecture={arch}", "--std=c++17", *options]
        try:
            nvrtc.compileProgram(program, flags)
        except nvrtc.NVRTCError as exc:
            log = nvrtc.getProgramLog(program)
            raise CompileError(f"NVRTC could not compile {name} ({exc}):\n{log}\n"
                               f"--- source ---\n{source}") from None
        ptx = nvrtc.getPTX(program)
    finally:
        nvrtc.destroyProgram(program)
    return ptx.decode() if isinstance(ptx, bytes) else ptx


def _private_directory(path: Path) -> Optional[str]:
    """``None`` when ``path`` is (or was made) a directory only this user can write; else
    why it is refused."""
    try:
        path.mkdir(mode=0o700, parents=True, exist_ok=True)
        info = os.lstat(path)
    except OSError as exc:
        return f"cannot create {path}: {exc}"
    if stat.S_ISLNK(info.st_mode) or not stat.S_ISDIR(info.st_mode):
        return f"{path} is not a directory (or is a symlink)"
    if info.st_uid != os.geteuid():
        return f"{path} is owned by uid {info.st_uid}, not by this user"
    if info.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        return f"{path} is writable by others (mode {stat.S_IMODE(info.st_mode):04o})"
    return None


class PtxCache:
    """Compiled kernels by key, in one private directory (see the module's docstring)."""

    def __init__(self, directory: Optional[Path] = None) -> None:
        self.directory = directory or cache_root()
        refused = _private_directory(self.directory)
        if refused:
            warnings.warn(f"gpu.fused: the PTX cache is refused ({refused}); kernels are "
                          "compiled for this process only", RuntimeWarning, stacklevel=2)
        self.usable = refused is None

    def key(self, source: str, arch: str) -> str:
        text = f"{nvrtc_version()}\n{arch}\n{source}"
        return hashlib.sha256(text.encode()).hexdigest()

    def ptx(self, source: str, name: str, arch: str = DEFAULT_ARCH) -> str:
        """The PTX of ``source``: from the cache when a verified copy is there, else compiled
        and stored."""
        key = self.key(source, arch)
        if self.usable:
            cached = self._read(key)
            if cached is not None:
                return cached
        ptx = compile_to_ptx(source, name, arch)
        if self.usable:
            self._write(key, ptx)
        return ptx

    def _read(self, key: str) -> Optional[str]:
        path = self.directory / f"{key}.ptx"
        try:
            fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
        except FileNotFoundError:
            return None
        except OSError as exc:
            warnings.warn(f"gpu.fused: {path} refused ({exc}); compiling again",
                          RuntimeWarning, stacklevel=3)
            return None
        with os.fdopen(fd, "rb") as f:
            info = os.fstat(f.fileno())
            data = f.read()
        digest, _, ptx = data.partition(b"\n")
        if (not stat.S_ISREG(info.st_mode) or info.st_uid != os.geteuid()
                or info.st_mode & (stat.S_IWGRP | stat.S_IWOTH)):
            reason = "not a private regular file of this user"
        elif hashlib.sha256(ptx).hexdigest().encode() != digest:
            reason = "its content does not match its digest"
        else:
            return ptx.decode()
        warnings.warn(f"gpu.fused: {path} refused ({reason}); compiling again",
                      RuntimeWarning, stacklevel=3)
        return None

    def _write(self, key: str, ptx: str) -> None:
        data = ptx.encode()
        with tempfile.NamedTemporaryFile(dir=self.directory, prefix=".ptx-",
                                         delete=False) as f:  # mode 0600
            f.write(hashlib.sha256(data).hexdigest().encode() + b"\n" + data)
        os.replace(f.name, self.directory / f"{key}.ptx")


@functools.cache
def default_cache() -> PtxCache:
    return PtxCache()
