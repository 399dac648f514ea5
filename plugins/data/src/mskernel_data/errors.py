"""The error a failing input pipeline raises."""

from __future__ import annotations

from mskernel_sdk import MskernelError


class DatasetError(MskernelError, RuntimeError):
    """A dataset could not be built or iterated: a bad argument, an unreadable file, an
    exception inside a map operation (the message names the operation, the row and carries
    the original traceback), or a worker process that died."""
