"""``AutoBoost``: MindSpore's Boost levels and configuration dict.

=========  =======  ===========  ======  =================  ==========
level      less_bn  grad_freeze  adasum  grad_accumulation  dim_reduce
=========  =======  ===========  ======  =================  ==========
``O0``     no       no           no      no                 no
``O1``     yes      yes          no      no                 no
``O2``     yes      yes          yes     no                 no
=========  =======  ===========  ======  =================  ==========

``boost_config_dict`` follows MindSpore's layout (``fn_flag`` defaults to ``False`` here, see
:mod:`.less_bn`): ``{"boost": {"mode": "auto" | "manual" |
"enable_all" | "disable_all", "less_bn": bool, ...}, "less_bn": {"fn_flag", "gc_flag"},
"grad_freeze": {"param_groups", "freeze_type", "freeze_p", "total_steps"},
"grad_accumulation": {"grad_accumulation_step"}}``; ``"manual"`` takes the switches from
``"boost"``, ``"auto"`` from the level.  Here ``less_bn`` also takes ``clip`` (the adaptive
gradient clipping threshold).  AdaSum combines the gradients of data-parallel ranks and
changes nothing in a single process; with several ranks it is refused (the data-parallel
seam reduces by sums only).  ``dim_reduce`` needs principal components computed from saved
checkpoints and is refused.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any, Mapping

__all__ = ["AutoBoost", "BoostConfig", "LEVELS"]

FEATURES = ("less_bn", "grad_freeze", "adasum", "grad_accumulation", "dim_reduce")
LEVELS: dict[str, dict[str, bool]] = {
    "O0": dict.fromkeys(FEATURES, False),
    "O1": {**dict.fromkeys(FEATURES, False), "less_bn": True, "grad_freeze": True},
    "O2": {**dict.fromkeys(FEATURES, False), "less_bn": True, "grad_freeze": True,
           "adasum": True},
}
MODES = ("auto", "manual", "enable_all", "disable_all")


@dataclass
class BoostConfig:
    """The switches and the hyper-parameters of the Boost algorithms (MindSpore's names and
    defaults)."""

    switches: dict[str, bool] = field(default_factory=lambda: dict(LEVELS["O0"]))
    fn_flag: bool = False
    gc_flag: bool = True
    clip: float = 0.01
    param_groups: int = 10
    freeze_type: int = 1
    freeze_p: float = 0.7
    total_steps: int = 65536
    grad_accumulation_step: int = 1

    def enabled(self, feature: str) -> bool:
        return self.switches.get(feature, False)


_SECTIONS = {"less_bn": ("fn_flag", "gc_flag", "clip"),
             "grad_freeze": ("param_groups", "freeze_type", "freeze_p", "total_steps"),
             "grad_accumulation": ("grad_accumulation_step",)}


class AutoBoost:
    """The Boost configuration of ``level`` (``"O0"``, ``"O1"``, ``"O2"``) and
    ``boost_config_dict``; see :mod:`mskernel_boost.levels.config`."""

    def __init__(self, level: str = "O0", boost_config_dict: Any = "") -> None:
        if level not in LEVELS:
            raise ValueError(f"boost_level must be one of {', '.join(LEVELS)}, got {level!r}")
        self.level = level
        self.config = configure(level, boost_config_dict or {})

    @property
    def boost_config(self) -> dict[str, bool]:
        return dict(self.config.switches)

    def network_auto_process_train(self, network: Any, optimizer: Any) -> tuple[Any, Any]:
        """``(network, optimizer)`` with LessBN applied when enabled (MindSpore's hook);
        gradient freezing and accumulation run in :class:`~.step.BoostTrainOneStepCell`."""
        from .less_bn import LessBN

        if self.config.enabled("less_bn"):
            network = LessBN(network, fn_flag=self.config.fn_flag)
        return network, optimizer


def configure(level: str, config: Mapping[str, Any]) -> BoostConfig:
    """The :class:`BoostConfig` of ``level`` changed by a MindSpore-style config dict."""
    if not isinstance(config, Mapping):
        raise TypeError(f"boost_config_dict must be a dict, got {type(config).__name__}")
    boost = config.get("boost", {})
    mode = boost.get("mode", "auto")
    if mode not in MODES:
        raise ValueError(f"boost mode must be one of {', '.join(MODES)}, got {mode!r}")
    switches = dict(LEVELS[level])
    if mode == "manual":
        unknown = set(boost) - set(FEATURES) - {"mode", "loss_scale_group"}
        if unknown:
            raise ValueError(f"boost_config_dict['boost']: unknown switches {sorted(unknown)}")
        switches.update({k: bool(v) for k, v in boost.items() if k in FEATURES})
    elif mode in ("enable_all", "disable_all"):
        switches = dict.fromkeys(FEATURES, mode == "enable_all")
    out = BoostConfig(switches=switches)
    names = {f.name for f in fields(BoostConfig)}
    for section, keys in {**_SECTIONS, "common": ()}.items():
        for key, value in config.get(section, {}).items():
            if key in keys:
                setattr(out, key, value)
            elif key not in ("gradient_split_groups", "device_number") or section != "common":
                raise ValueError(f"boost_config_dict[{section!r}]: unknown key {key!r}"
                                 + ("" if key not in names else " (it belongs elsewhere)"))
    if out.enabled("dim_reduce"):
        raise ValueError("boost: dim_reduce needs principal components computed from saved "
                         "checkpoints, which mskernel-boost does not provide")
    return out
