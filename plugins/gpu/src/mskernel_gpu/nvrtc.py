"""Compiling generated CUDA C with NVRTC, cached on disk by the source's hash.

NVRTC needs no device.  On a machine with a GPU it compiles for the device's own
architecture (``sm_XY``) into a cubin, machine code the driver loads as it is: a driver older
than NVRTC (of the same CUDA major version) runs it, where it could not compile NVRTC's newer
PTX.  Without a device (the CPU-side tests) it compiles for a virtual architecture
(``compute_80``: Ampere, the oldest with bfloat16 conversions) into PTX.

The cache, ``$XDG_CACHE_HOME/mskernel/gpu-kernels`` (default ``~/.cache/...``), is a
directory this user alone can write (created 0700; one that is a symlink, someone else's, or
writable by group or others is refused with a warning, and this process compiles without
caching).  A file is ``<sha256 of source, architecture and NVRTC version>.bin``, written to a
temporary file and renamed into place; its first line is the SHA-256 of the compiled code
after it.  Reading opens it without following symlinks, requires a regular file of this
user's writable by nobody else, and compares the digest, so code that was tampered with or
cut short is compiled again (with a warning) instead of loaded: a cubin is machine code the
GPU runs.
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
    return Path(root) / "mskernel" / "gpu-kernels"


def nvrtc_version() -> tuple[int, int]:
    load_library("nvrtc")
    from cupy_backends.cuda.libs import nvrtc

    major, minor = nvrtc.getVersion()
    return int(major), int(minor)


def compile_source(source: str, name: str, arch: str = DEFAULT_ARCH,
                   options: Sequence[str] = ()) -> bytes:
    """``source`` compiled for ``arch`` (no device needed): a cubin for a real architecture
    (``sm_90``), PTX for a virtual one (``compute_80``)."""
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
        code = nvrtc.getCUBIN(program) if arch.startswith("sm_") else nvrtc.getPTX(program)
    finally:
        nvrtc.destroyProgram(program)
    return code if isinstance(code, bytes) else code.encode()


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


class KernelCache:
    """Compiled kernels by key, in one private directory (see the module's docstring)."""

    def __init__(self, directory: Optional[Path] = None) -> None:
        self.directory = directory or cache_root()
        refused = _private_directory(self.directory)
        if refused:
            warnings.warn(f"gpu.fused: the kernel cache is refused ({refused}); kernels are "
                          "compiled for this process only", RuntimeWarning, stacklevel=2)
        self.usable = refused is None

    def key(self, source: str, arch: str) -> str:
        text = f"{nvrtc_version()}\n{arch}\n{source}"
        return hashlib.sha256(text.encode()).hexdigest()

    def compiled(self, source: str, name: str, arch: str = DEFAULT_ARCH) -> bytes:
        """``source`` compiled for ``arch``: from the cache when a verified copy is there,
        else compiled and stored."""
        key = self.key(source, arch)
        if self.usable:
            cached = self._read(key)
            if cached is not None:
                return cached
        code = compile_source(source, name, arch)
        if self.usable:
            self._write(key, code)
        return code

    def _read(self, key: str) -> Optional[bytes]:
        path = self.directory / f"{key}.bin"
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
        digest, _, code = data.partition(b"\n")
        if (not stat.S_ISREG(info.st_mode) or info.st_uid != os.geteuid()
                or info.st_mode & (stat.S_IWGRP | stat.S_IWOTH)):
            reason = "not a private regular file of this user"
        elif hashlib.sha256(code).hexdigest().encode() != digest:
            reason = "its content does not match its digest"
        else:
            return code
        warnings.warn(f"gpu.fused: {path} refused ({reason}); compiling again",
                      RuntimeWarning, stacklevel=3)
        return None

    def _write(self, key: str, code: bytes) -> None:
        with tempfile.NamedTemporaryFile(dir=self.directory, prefix=".kernel-",
                                         delete=False) as f:  # mode 0600
            f.write(hashlib.sha256(code).hexdigest().encode() + b"\n" + code)
        os.replace(f.name, self.directory / f"{key}.bin")


@functools.cache
def default_cache() -> KernelCache:
    return KernelCache()
