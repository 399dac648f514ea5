"""Progress bars for long work (training epochs, evaluation), drawn with tqdm.

A bar is drawn only for a person watching: when standard error is a terminal and the ``CI``
environment variable is unset.  Everywhere else — a log file, a pipe, CI — it is disabled and
writes nothing, so logs stay free of carriage-return spam.  ``MSKERNEL_PROGRESS=1`` forces it
on (say, when piping the output through `less -R`) and ``MSKERNEL_PROGRESS=0`` off.

:class:`ProgressBar` is the callback :class:`~mskernel_nn.model.Model` adds to every run;
:func:`progress_bar` gives a bar for work of your own under the same rule.
"""

from __future__ import annotations

import os
import sys
from typing import Any, Optional, TextIO

import numpy as np
from tqdm import tqdm

from .callbacks import Callback, RunContext

__all__ = ["PROGRESS_ENV", "ProgressBar", "progress_bar", "progress_enabled"]

PROGRESS_ENV = "MSKERNEL_PROGRESS"


def progress_enabled(stream: Optional[TextIO] = None) -> bool:
    """Whether bars are drawn: ``MSKERNEL_PROGRESS`` when set, else only on an interactive
    terminal outside CI."""
    forced = os.environ.get(PROGRESS_ENV)
    if forced is not None:
        return forced.strip().lower() not in ("", "0", "false", "no", "off")
    stream = sys.stderr if stream is None else stream
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty()) and not os.environ.get("CI")


def progress_bar(total: Optional[int], desc: str, unit: str = "step", **kwargs: Any) -> tqdm:
    """A tqdm bar over ``total`` items (``None`` or a negative count: unknown), drawn only when
    :func:`progress_enabled`.  It refreshes at most twice a second and vanishes when closed."""
    return tqdm(total=None if total is None or total < 0 else total, desc=desc, unit=unit,
                disable=not progress_enabled(), leave=False, mininterval=0.5,
                dynamic_ncols=True, **kwargs)


class ProgressBar(Callback):
    """A callback drawing one bar per training epoch and one per evaluation pass, with the
    last step's loss; :class:`~mskernel_nn.model.Model` adds one to every run (it draws
    nothing where :func:`progress_enabled` is false)."""

    def __init__(self) -> None:
        self._bar: Optional[tqdm] = None

    def _open(self, total: Optional[int], desc: str) -> None:
        self._close()
        self._bar = progress_bar(total, desc)

    def _advance(self, loss: Any = None) -> None:
        bar = self._bar
        if bar is None:
            return
        bar.update(1)
        if loss is not None and not bar.disable:
            bar.set_postfix(loss=f"{float(np.mean(np.asarray(loss))):.4f}", refresh=False)

    def _close(self) -> None:
        if self._bar is not None:
            self._bar.close()
            self._bar = None

    def on_train_epoch_begin(self, run_context: RunContext) -> None:
        cb = run_context.original_args()
        self._open(cb.batch_num, f"epoch {cb.cur_epoch_num}/{cb.epoch_num}")

    def on_train_step_end(self, run_context: RunContext) -> None:
        outputs = run_context.original_args().net_outputs
        self._advance(outputs[0] if isinstance(outputs, (tuple, list)) else outputs)

    def on_train_epoch_end(self, run_context: RunContext) -> None:
        self._close()

    def on_eval_epoch_begin(self, run_context: RunContext) -> None:
        self._open(run_context.original_args().batch_num, "eval")

    def on_eval_step_end(self, run_context: RunContext) -> None:
        self._advance()

    def on_eval_epoch_end(self, run_context: RunContext) -> None:
        self._close()

    def on_train_end(self, run_context: RunContext) -> None:
        self._close()

    def on_eval_end(self, run_context: RunContext) -> None:
        self._close()
