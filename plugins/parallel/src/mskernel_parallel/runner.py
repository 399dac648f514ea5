"""The program ``mskernel run`` starts on each rank: ``python -m mskernel_parallel.runner
script.py args...`` runs the script as ``__main__`` (as ``python script.py`` would) and records
how it ended in the rank's status file; a failure — an uncaught exception or a non-zero
``sys.exit`` — ends the process at once (see :mod:`.faults`), so the other ranks never wait
for it."""

from __future__ import annotations

import os
import runpy
import sys
from types import TracebackType
from typing import Optional

from . import faults


def main(argv: list[str]) -> None:
    if not argv:
        sys.exit("usage: python -m mskernel_parallel.runner script.py [args...]")
    rank = faults.launch_rank() or 0
    faults.record(rank, f"pid {os.getpid()}")
    sys.argv = list(argv)
    sys.path.insert(0, os.path.dirname(os.path.abspath(argv[0])))
    try:
        runpy.run_path(argv[0], run_name="__main__")
    except SystemExit as exc:
        code = exc.code
        if code not in (None, 0):
            if not isinstance(code, int):
                sys.stderr.write(f"{code}\n")
            faults.record(rank, f"exit {code if isinstance(code, int) else 1}")
            faults.stop_now()
    except BaseException as exc:  # noqa: BLE001 - every failure ends the rank the same way
        faults.fail(rank, exc, _from_script(exc.__traceback__, os.path.abspath(argv[0])))
    faults.finish(rank)


def _from_script(tb: Optional[TracebackType], script: str) -> Optional[TracebackType]:
    """The traceback from the script's first frame on (without this runner and runpy)."""
    while tb is not None and os.path.abspath(tb.tb_frame.f_code.co_filename) != script:
        tb = tb.tb_next
    return tb


if __name__ == "__main__":
    main(sys.argv[1:])
