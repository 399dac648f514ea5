"""``mskernel.context``: MindSpore's execution settings, mapped onto mskernel's own switches.

MindSpore scripts start with ``set_context(mode=GRAPH_MODE, device_target="CPU")``; here that
call sets what mskernel already has a scoped switch for, and nothing is a hidden global:

- ``mode``: :data:`PYNATIVE_MODE` (the default: ops run one by one, prints and breakpoints
  work) or :data:`GRAPH_MODE` — calling a top-level ``nn.Cell`` then runs it compiled by
  ``mskernel.jit``, once per input signature, as MindSpore's graph mode does;
- ``device_target`` and ``device_id``: :func:`mskernel.set_device`;
- ``jit_syntax_level`` (:data:`STRICT`, :data:`COMPATIBLE`, :data:`LAX`): recorded.
  mskernel's graph mode has one syntax level: Python runs while the function is traced, so
  what :data:`LAX` allows in MindSpore works wherever the values involved are known when
  tracing, and tensor-dependent control flow is converted (see ``mskernel.jit``);
- ``max_call_depth``, ``pynative_synchronize``, ``save_graphs``, ``save_graphs_path``:
  accepted and recorded; they change nothing here (tracing inlines calls without a depth
  limit, eager ops run synchronously, and ``MSKERNEL_DUMP_IR=dir`` writes the graphs).

Any other key is an error naming the keys this module knows.  :func:`get_context` reads a
setting back.
"""

from __future__ import annotations

import warnings
from typing import Any, Final, Literal, Optional

from pydantic import BaseModel, ConfigDict

__all__ = ["COMPATIBLE", "GRAPH_MODE", "LAX", "PYNATIVE_MODE", "STRICT", "ContextSettings",
           "get_context", "set_context"]

#: MindSpore's values for the two execution modes.
GRAPH_MODE: Final = 0
PYNATIVE_MODE: Final = 1
#: MindSpore's values for ``jit_syntax_level``.
STRICT: Final = 0
COMPATIBLE: Final = 1
LAX: Final = 2


class ContextSettings(BaseModel):
    """The settings :func:`set_context` accepts, validated."""

    model_config = ConfigDict(validate_assignment=True, extra="forbid")

    mode: Literal[0, 1] = PYNATIVE_MODE
    device_target: Optional[str] = None
    device_id: int = 0
    jit_syntax_level: Literal[0, 1, 2] = LAX
    max_call_depth: int = 1000
    pynative_synchronize: bool = False
    save_graphs: Any = False
    save_graphs_path: str = "."


_settings = ContextSettings()
#: ``mode`` read on every cell call, kept apart from the model for speed
_mode = [PYNATIVE_MODE]


def set_context(**kwargs: Any) -> None:
    """Change the settings named by ``kwargs`` (see :mod:`mskernel.context`)."""
    unknown = sorted(set(kwargs) - set(ContextSettings.model_fields))
    if unknown:
        raise ValueError(f"set_context: unknown setting(s) {', '.join(unknown)}; mskernel knows "
                         f"{', '.join(ContextSettings.model_fields)}")
    checked = ContextSettings.model_validate({**_settings.model_dump(), **kwargs})
    if "device_target" in kwargs or "device_id" in kwargs:
        from .frontend.device import set_device

        set_device(checked.device_target or _device_name(), checked.device_id)
    if kwargs.get("save_graphs"):
        warnings.warn("set_context(save_graphs=...) writes nothing in mskernel; set the "
                      "environment variable MSKERNEL_DUMP_IR to a directory to get every graph "
                      "before and after each pass", stacklevel=2)
    for key, value in checked.model_dump().items():
        setattr(_settings, key, value)
    _mode[0] = _settings.mode


def get_context(key: str) -> Any:
    """The value of setting ``key``; ``device_target`` is the backend new tensors go to."""
    if key == "mode":
        return _mode[0]
    if key not in ContextSettings.model_fields:
        raise ValueError(f"get_context: unknown setting {key!r}; mskernel knows "
                         f"{', '.join(ContextSettings.model_fields)}")
    if key == "device_target" and _settings.device_target is None:
        return _device_name()
    return getattr(_settings, key)


def _device_name() -> str:
    from .frontend.device import get_device

    return get_device()
