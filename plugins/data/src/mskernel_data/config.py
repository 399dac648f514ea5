"""``mskernel.dataset.config``: process-wide pipeline settings (MindSpore's
``mindspore.dataset.config`` names).

An iterator reads the settings when it is created, so changing them affects iterators
created afterwards, never one that is running.

- ``seed`` (default 5489, MindSpore's): every random choice of a pipeline — shuffles and
  random transforms — derives from it, so one seed gives one sequence of rows whatever the
  number of workers.
- ``num_parallel_workers`` (default 1): the workers a ``map`` or a file source uses when
  its own ``num_parallel_workers`` is None.  MindSpore's default is 8 C++ threads; here one
  means the work runs in the iterating thread.
- ``prefetch_size`` (default 16): how many rows a parallel stage computes ahead of the
  consumer, on top of one per worker.
- ``multiprocessing_start_method`` (default ``"forkserver"``): how worker processes start.
  ``"fork"`` is refused: it copies the parent's threads' locks in whatever state they are.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

StartMethod = Literal["forkserver", "spawn"]


class DataConfig(BaseModel):
    """The settings an iterator runs with (validated; a snapshot is taken per iterator)."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    seed: int = Field(default=5489, ge=0, lt=2**64)
    num_parallel_workers: int = Field(default=1, ge=1, le=256)
    prefetch_size: int = Field(default=16, ge=1)
    multiprocessing_start_method: StartMethod = "forkserver"


_current = DataConfig()


def current() -> DataConfig:
    """The settings in force now."""
    return _current


def _update(**changes: object) -> None:
    global _current
    _current = DataConfig.model_validate({**_current.model_dump(), **changes})


def set_seed(seed: int) -> None:
    """Seed every shuffle and random transform of iterators created from now on (and
    random transforms called directly)."""
    from .rng import reset_eager_rng

    _update(seed=seed)
    reset_eager_rng()


def get_seed() -> int:
    return _current.seed


def set_num_parallel_workers(num: int) -> None:
    """The default number of workers of ``map`` and file sources."""
    _update(num_parallel_workers=num)


def get_num_parallel_workers() -> int:
    return _current.num_parallel_workers


def set_prefetch_size(size: int) -> None:
    """Rows a parallel stage computes ahead of its consumer (besides one per worker)."""
    _update(prefetch_size=size)


def get_prefetch_size() -> int:
    return _current.prefetch_size


def set_multiprocessing_start_method(start_method: str) -> None:
    """``"forkserver"`` (default: workers fork from a server that has the data modules
    loaded, so they start in milliseconds) or ``"spawn"`` (a fresh interpreter each)."""
    _update(multiprocessing_start_method=start_method)


def get_multiprocessing_start_method() -> str:
    return _current.multiprocessing_start_method
