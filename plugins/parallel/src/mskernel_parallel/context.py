"""The auto-parallel context: MindSpore's ``set_auto_parallel_context`` as a typed,
validated configuration of this plugin (:class:`AutoParallelContext`), process-wide like
MindSpore's.

    from mskernel.parallel import set_auto_parallel_context, ParallelMode
    set_auto_parallel_context(parallel_mode=ParallelMode.DATA_PARALLEL, gradients_mean=True)

``parallel_mode`` takes :class:`ParallelMode` members or their strings.  ``stand_alone``
(the default) trains each process alone; ``data_parallel`` makes mskernel-nn's
``TrainOneStepCell`` and ``Model`` combine gradients over the world's ranks and mskernel-data's
datasets read one shard per rank.  The sharded modes (``semi_auto_parallel``,
``auto_parallel``, ``hybrid_parallel``) are refused here, naming what runs them: strategies
recorded with ``mskernel.shard`` (or planned by ``AutoParallel``) and ``ShardedSGD``.
"""

from __future__ import annotations

import enum
from typing import Any, Literal, Optional, Union

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from .errors import CommunicationError


class ParallelMode(str, enum.Enum):
    """MindSpore's parallel modes (``ParallelMode.DATA_PARALLEL == "data_parallel"``)."""

    STAND_ALONE = "stand_alone"
    DATA_PARALLEL = "data_parallel"
    HYBRID_PARALLEL = "hybrid_parallel"
    SEMI_AUTO_PARALLEL = "semi_auto_parallel"
    AUTO_PARALLEL = "auto_parallel"


SUPPORTED_MODES = (ParallelMode.STAND_ALONE, ParallelMode.DATA_PARALLEL)


class CommFusion(BaseModel):
    """How gradients are fused into buckets for the all-reduce (MindSpore's ``comm_fusion``
    ``{"allreduce": {"mode": ..., "config": ...}}``): ``"size"`` — buckets of at most
    ``config`` MB, in backward order (the last layers' first); ``"index"`` — ``config`` lists
    the indices of the gradient list where buckets end (MindSpore's
    ``all_reduce_fusion_config``); ``"auto"`` — 25 MB buckets."""

    model_config = ConfigDict(frozen=True)
    mode: Literal["auto", "size", "index"] = "auto"
    config: Union[float, list[int], None] = None


class AutoParallelContext(BaseModel):
    """The configuration ``set_auto_parallel_context`` edits.  ``device_num`` and
    ``global_rank`` default to the communicator's (and must agree with it when given);
    ``parameter_broadcast`` sends rank 0's parameters to the others when a training step is
    built; ``full_batch`` gives every rank the whole dataset instead of a shard."""

    model_config = ConfigDict(frozen=True, extra="forbid", validate_assignment=True)
    parallel_mode: ParallelMode = ParallelMode.STAND_ALONE
    gradients_mean: bool = False
    device_num: Optional[int] = Field(default=None, ge=1)
    global_rank: Optional[int] = Field(default=None, ge=0)
    parameter_broadcast: bool = False
    full_batch: bool = False
    comm_fusion: CommFusion = CommFusion()

    @field_validator("parallel_mode", mode="before")
    @classmethod
    def _mode(cls, value: Any) -> Any:
        return value.lower() if isinstance(value, str) else value


_context = AutoParallelContext()


def auto_parallel_context() -> AutoParallelContext:
    """The current context."""
    return _context


def set_auto_parallel_context(**kwargs: Any) -> None:
    """Change the named fields of the context (MindSpore's keyword names;
    ``all_reduce_fusion_config=[i, j]`` is ``comm_fusion={"allreduce": {"mode": "index",
    "config": [i, j]}}``)."""
    global _context
    if "all_reduce_fusion_config" in kwargs:
        indices = list(kwargs.pop("all_reduce_fusion_config"))
        kwargs["comm_fusion"] = {"allreduce": {"mode": "index", "config": indices}}
    if "comm_fusion" in kwargs:
        fusion = kwargs["comm_fusion"]
        kwargs["comm_fusion"] = fusion.get("allreduce", {}) if isinstance(fusion, dict) else fusion
    try:
        updated = AutoParallelContext(**{**_context.model_dump(), **kwargs})
    except ValidationError as exc:
        known = ", ".join([*AutoParallelContext.model_fields, "all_reduce_fusion_config"])
        raise CommunicationError(f"set_auto_parallel_context: {_first_error(exc)} "
                                 f"(fields: {known})") from None
    if updated.parallel_mode not in SUPPORTED_MODES:
        raise CommunicationError(
            f"set_auto_parallel_context: parallel_mode '{updated.parallel_mode.value}' is not "
            f"wired into Model and TrainOneStepCell; the context runs "
            f"{' and '.join(m.value for m in SUPPORTED_MODES)}.  For sharded training record "
            "strategies with mskernel.shard or Cell.shard (or plan them with "
            "mskernel.parallel.AutoParallel) and train with mskernel.parallel.ShardedSGD")
    _context = updated


def _first_error(exc: ValidationError) -> str:
    error = exc.errors()[0]
    where = ".".join(str(p) for p in error["loc"])
    return f"{where}: {error['msg']}"


def get_auto_parallel_context(attr_key: str) -> Any:
    """The value of one field (``parallel_mode`` as its string, as MindSpore returns it)."""
    if attr_key not in AutoParallelContext.model_fields:
        raise CommunicationError(f"get_auto_parallel_context: no field {attr_key!r}; fields: "
                                 f"{', '.join(AutoParallelContext.model_fields)}")
    value = getattr(_context, attr_key)
    return value.value if isinstance(value, ParallelMode) else value


def reset_auto_parallel_context() -> None:
    """Back to the defaults (stand-alone)."""
    global _context
    _context = AutoParallelContext()
