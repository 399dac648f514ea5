"""The on-disk cache of the shared objects the fused-elementwise code generator compiles, and
loading them without trusting the disk.

A shared object runs code the moment it is loaded (its constructors), so nothing is loaded
that this user did not compile:

- The cache directory, ``$XDG_CACHE_HOME/mskernel/cpu-jit`` (default ``~/.cache/...``), is
  created with mode 0700.  A directory that is a symlink, is not owned by this user or is
  writable by group or others is refused with a warning; this process then compiles into a
  private temporary directory of its own (0700, removed at exit) instead.
- Objects are content-addressed: ``obj-<sha256 of the bytes>.so``, written to a temporary file
  and renamed into place, never changed after.  A key (the hash of the source, compiler and
  flags) names a reference file, ``key-<key>.ref``, holding the digest of its object, replaced
  atomically after the object is in place; concurrent compilations of one key each leave a
  complete pair.
- Loading opens the reference and the object without following symlinks, requires of each
  (through the open descriptor) a regular file owned by this user and writable by nobody
  else, and hashes the object's bytes through that descriptor and compares them with its
  name.  The bytes checked are copied into this process's private directory (0700, made by
  ``mkdtemp``, removed at exit), and that copy is what ``dlopen`` loads: what runs is exactly
  what was checked, whatever happens to the cache's paths meanwhile.  A file that fails is
  refused with a warning and the source compiled again (privately, when the cache directory
  itself is refused).
"""

from __future__ import annotations

import atexit
import functools
import hashlib
import os
import shutil
import stat
import tempfile
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

def user_id() -> int:
    """The user that must own the cache and its files (the effective user)."""
    return os.geteuid()


def cache_root() -> Path:
    root = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(root) / "mskernel" / "cpu-jit"


class Refused(Exception):
    """A cache directory or file is not safe to use; the message says why."""


def _check_owned_private(info: os.stat_result, what: str, kind: str) -> None:
    """Raise :class:`Refused` unless ``info`` is of the right kind, owned by this user and
    writable by no one else."""
    is_kind = stat.S_ISDIR if kind == "directory" else stat.S_ISREG
    if not is_kind(info.st_mode):
        raise Refused(f"{what} is not a {kind}")
    if info.st_uid != user_id():
        raise Refused(f"{what} is owned by uid {info.st_uid}, not by this user "
                      f"(uid {user_id()})")
    writers = [who for bit, who in ((stat.S_IWGRP, "group"), (stat.S_IWOTH, "others"))
               if info.st_mode & bit]
    if writers:
        raise Refused(f"{what} is writable by {' and '.join(writers)} "
                      f"(mode {stat.S_IMODE(info.st_mode):04o})")


@dataclass(frozen=True)
class CachedObject:
    """A verified shared object: ``path``, in this process's private directory, holds the
    bytes whose SHA-256 is ``digest``; load it with ``dlopen``."""

    path: Path
    digest: str


class ObjectCache:
    """Content-addressed shared objects in one directory this user alone can write (see the
    module's docstring)."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory

    def lookup(self, key: str) -> Optional[CachedObject]:
        """The verified object of ``key``, or ``None`` when there is none; raises
        :class:`Refused` when the files under its name are not safe to load."""
        try:
            ref = self._open(f"key-{key}.ref")
        except FileNotFoundError:
            return None
        try:
            with os.fdopen(ref, "rb") as f:
                digest = f.read(128).decode("ascii", "replace").strip()
        except OSError as exc:
            raise Refused(f"cannot read the reference of key {key}: {exc}") from exc
        if len(digest) != 64 or any(c not in "0123456789abcdef" for c in digest):
            raise Refused(f"the reference of key {key} holds no SHA-256 digest")
        try:
            fd = self._open(f"obj-{digest}.so")
        except FileNotFoundError:
            raise Refused(f"the object the reference of key {key} names is missing") from None
        try:
            data = _read_all(fd)
        finally:
            os.close(fd)
        actual = hashlib.sha256(data).hexdigest()
        if actual != digest:
            raise Refused(f"obj-{digest}.so holds other bytes (SHA-256 {actual})")
        return CachedObject(_private_copy(data, digest), digest)

    def store(self, key: str, built: Path) -> CachedObject:
        """Put the object ``built`` (a file in a directory of :meth:`workspace`) under ``key``
        and return it, verified, as :meth:`lookup` does."""
        digest = hashlib.sha256(built.read_bytes()).hexdigest()
        os.chmod(built, 0o500)  # read-only: objects never change once placed
        os.replace(built, self.directory / f"obj-{digest}.so")
        with tempfile.NamedTemporaryFile("w", dir=self.directory, prefix=".ref-",
                                         delete=False) as ref:  # mode 0600
            ref.write(digest + "\n")
        os.replace(ref.name, self.directory / f"key-{key}.ref")
        opened = self.lookup(key)
        if opened is None:
            raise Refused(f"the object of key {key} vanished from {self.directory}")
        return opened

    def workspace(self) -> tempfile.TemporaryDirectory:
        """A temporary directory beside the cache (same file system, so objects are renamed
        into place), removed when the context exits."""
        return tempfile.TemporaryDirectory(dir=self.directory, prefix=".build-")

    def _open(self, name: str) -> int:
        """An O_NOFOLLOW descriptor of ``name`` in the cache, checked as a private regular
        file (raises FileNotFoundError when absent, :class:`Refused` when unsafe)."""
        path = self.directory / name
        try:
            fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
        except FileNotFoundError:
            raise
        except OSError as exc:  # ELOOP: a symlink
            raise Refused(f"cannot open {path} safely: {exc}") from exc
        try:
            _check_owned_private(os.fstat(fd), str(path), "regular file")
        except Refused:
            os.close(fd)
            raise
        return fd


def _read_all(fd: int) -> bytes:
    """The whole file behind ``fd``, read through it from the start."""
    chunks = []
    offset = 0
    while chunk := os.pread(fd, 1 << 20, offset):
        chunks.append(chunk)
        offset += len(chunk)
    return b"".join(chunks)


def _private_copy(data: bytes, digest: str) -> Path:
    """``data`` as ``obj-<digest>.so`` in this process's private directory (written once per
    digest, atomically)."""
    path = private_directory() / f"obj-{digest}.so"
    if not path.exists():
        with tempfile.NamedTemporaryFile(dir=path.parent, prefix=".copy-", delete=False) as f:
            f.write(data)
        os.replace(f.name, path)
    return path


def _ensure_private_directory(path: Path) -> None:
    """Create ``path`` (and missing parents) with mode 0700, then check it as a private
    directory that is no symlink (raises :class:`Refused`)."""
    missing = []
    for parent in (path, *path.parents):
        if os.path.lexists(parent):
            break
        missing.append(parent)
    for directory in reversed(missing):
        try:
            os.mkdir(directory, 0o700)
        except FileExistsError:
            pass  # another process made it: checked below like any other
    try:
        info = os.lstat(path)
    except OSError as exc:
        raise Refused(f"cannot use {path}: {exc}") from exc
    if stat.S_ISLNK(info.st_mode):
        raise Refused(f"{path} is a symlink")
    _check_owned_private(info, str(path), "directory")


@functools.cache
def private_directory() -> Path:
    """This process's own directory (0700, this user's: ``mkdtemp``), removed at exit: the
    copies it loads, and its cache when the shared one is refused."""
    directory = Path(tempfile.mkdtemp(prefix="mskernel-cpu-jit-"))
    atexit.register(shutil.rmtree, directory, ignore_errors=True)
    return directory


def private_cache(reason: str) -> ObjectCache:
    """This process's own cache, after a warning that says why the shared one is refused."""
    cache = ObjectCache(private_directory() / "cache")
    cache.directory.mkdir(mode=0o700, exist_ok=True)
    warnings.warn(f"cpu.fused_elementwise: {reason}; compiling generated C++ into "
                  f"{cache.directory} for this process instead", RuntimeWarning, stacklevel=3)
    return cache


def open_cache() -> ObjectCache:
    """The user's cache (:func:`cache_root`), created private if missing; a private cache
    for this process (with a warning) when it is unsafe or cannot be created."""
    directory = cache_root()
    try:
        _ensure_private_directory(directory)
    except Refused as exc:
        return private_cache(f"the JIT cache is refused: {exc}")
    except OSError as exc:
        return private_cache(f"cannot create the JIT cache {directory}: {exc}")
    return ObjectCache(directory)
