"""Writing a file atomically: a reader sees the previous file or the complete new one, and a
writer killed mid-save leaves nothing behind for long.

The data goes to a temporary file in the target's directory, is fsynced and renamed over the
target, and the directory is fsynced so that the rename survives a crash.  Where the OS has
``O_TMPFILE`` (Linux), the temporary file has no name while it is written, so a writer killed
then leaves nothing; it is linked under a temporary name (through ``/proc/self/fd``) just
before the rename.  Elsewhere it is named from the start.  A temporary name carries the
writer's pid — ``.model.msk.<pid>.<16 hex digits>.tmp`` — and every save first removes the
temporaries of the same target left by writers that are no longer running.
"""

from __future__ import annotations

import errno
import os
import re
import secrets
import stat
from typing import BinaryIO, Sequence, Union

Chunk = Union[bytes, memoryview]

_PROC_FD = "/proc/self/fd"
_TEMP_SUFFIX = re.compile(r"(?P<pid>[0-9]+)\.[0-9a-f]{16}\.tmp")


def write_atomically(path: str, chunks: Sequence[Chunk]) -> None:
    """Write the concatenated ``chunks`` to ``path`` atomically.  On any failure the
    temporary file is removed and ``path`` is left as it was."""
    directory = os.path.dirname(os.path.abspath(path))
    remove_stale_temporaries(path)
    name = f".{os.path.basename(path)}.{os.getpid()}.{secrets.token_hex(8)}.tmp"
    temp = os.path.join(directory, name)
    if not _write_unnamed(directory, name, chunks):
        _write_named(temp, chunks)
    try:
        os.replace(temp, path)
    except BaseException:
        _unlink(temp)
        raise
    _fsync_directory(directory)


def remove_stale_temporaries(path: str) -> list[str]:
    """Remove the temporary files of ``path`` whose writer process is gone (killed mid-save);
    return their names.  Only regular files of this user named as :func:`write_atomically`
    names them are touched; a temporary whose pid is running (or reused) is kept."""
    if os.name != "posix":  # no cheap, harmless liveness probe (os.kill(pid, 0) kills there)
        return []
    directory, base = os.path.split(os.path.abspath(path))
    prefix = f".{base}."
    try:
        names = os.listdir(directory)
    except OSError:
        return []
    removed = []
    for name in names:
        match = _TEMP_SUFFIX.fullmatch(name[len(prefix):]) if name.startswith(prefix) else None
        if match is None or _running(int(match["pid"])):
            continue
        temp = os.path.join(directory, name)
        try:
            info = os.lstat(temp)
            if stat.S_ISREG(info.st_mode) and info.st_uid == os.getuid():
                os.unlink(temp)
                removed.append(name)
        except FileNotFoundError:
            pass  # removed by a concurrent save
    return removed


def _running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError):
        return True  # another user's process, or not a pid of this system: not ours to judge
    return True


def _write_unnamed(directory: str, name: str, chunks: Sequence[Chunk]) -> bool:
    """Write through an ``O_TMPFILE`` file of ``directory`` and link it there as ``name``;
    ``False`` (nothing written) where the OS or the filesystem cannot."""
    flag = getattr(os, "O_TMPFILE", 0)
    if not flag or not os.path.isdir(_PROC_FD):
        return False
    dir_fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
    try:
        try:
            fd = os.open(".", flag | os.O_WRONLY, 0o666, dir_fd=dir_fd)
        except OSError as exc:
            if exc.errno in (errno.EOPNOTSUPP, errno.EISDIR, errno.EINVAL):
                return False
            raise
        with os.fdopen(fd, "wb") as f:
            _write_durably(f, chunks)
            try:  # with a dir_fd os.link calls linkat(AT_SYMLINK_FOLLOW); link(2) would not
                os.link(f"{_PROC_FD}/{f.fileno()}", name, dst_dir_fd=dir_fd,  # follow it
                        follow_symlinks=True)
            except OSError:  # a /proc of another namespace, a security module: write anew
                return False
    finally:
        os.close(dir_fd)
    return True


def _write_named(temp: str, chunks: Sequence[Chunk]) -> None:
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0), 0o666)
    try:
        with os.fdopen(fd, "wb") as f:
            _write_durably(f, chunks)
    except BaseException:
        _unlink(temp)
        raise


def _write_durably(f: BinaryIO, chunks: Sequence[Chunk]) -> None:
    for chunk in chunks:
        f.write(chunk)
    f.flush()
    os.fsync(f.fileno())


def _unlink(path: str) -> None:
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass


def _fsync_directory(directory: str) -> None:
    """Make the rename durable (POSIX); some filesystems cannot sync a directory, which
    then leaves durability to them as for any other program."""
    if os.name != "posix":
        return
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    except OSError as exc:
        if exc.errno not in (errno.EINVAL, errno.ENOTSUP):
            raise
    finally:
        os.close(fd)
