"""What a plugin says about itself and what the core found out about it."""

from __future__ import annotations

from typing import Literal, Optional

from pydantic import BaseModel, ConfigDict, Field

PluginKind = Literal["backend", "transform", "library"]
PluginStatus = Literal["ok", "broken", "incompatible", "disabled", "unavailable"]


class PluginInfo(BaseModel):
    """Returned by a plugin's ``mskernel_plugin_info`` hook."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    name: str
    version: str
    kind: PluginKind
    provides: list[str] = Field(default_factory=list)
    description: str = ""


class PluginRecord(BaseModel):
    """One row of ``mskernel plugins list``: a discovered plugin and its health.

    ``status``: ``ok`` (loaded, hooks ran), ``broken`` (import or a hook raised),
    ``incompatible`` (its requirement on the core's version is not met; never imported),
    ``disabled`` (switched off by ``MSKERNEL_DISABLE_PLUGINS``; never imported),
    ``unavailable`` (loaded, but it provides only backends none of which can run here).
    ``entry_point`` is the object reference (``mskernel_cpu.plugin``), ``description`` the
    plugin's own one-liner, ``detail`` the traceback of a broken plugin (for ``info`` only).
    """

    name: str
    distribution: str
    version: str
    kind: str = ""
    provides: list[str] = Field(default_factory=list)
    status: PluginStatus
    reason: str = ""
    entry_point: str = ""
    description: str = ""
    detail: Optional[str] = Field(default=None, exclude=True)
