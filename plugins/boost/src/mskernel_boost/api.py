"""``mskernel.boost``: MindSpore's ``mindspore.boost`` — ``AutoBoost`` and the Boost
algorithms (:mod:`.levels`: ``LessBN``, gradient freezing and accumulation in
``BoostTrainOneStepCell``) — and the THOR optimizer (:mod:`.thor`: ``nn.thor``,
``ConvertModelUtils``)."""

from __future__ import annotations

from .levels.config import AutoBoost
from .levels.freeze import freeze_sequence, parameter_groups
from .levels.less_bn import CommonHeadLastFN, LessBN, adaptive_clip
from .levels.step import BoostTrainOneStepCell
from .thor import THOR, ConvertModelUtils, ThorTrainOneStepCell, thor

__all__ = ["AutoBoost", "BoostTrainOneStepCell", "CommonHeadLastFN", "ConvertModelUtils",
           "LessBN", "THOR", "ThorTrainOneStepCell", "adaptive_clip", "freeze_sequence",
           "parameter_groups", "thor"]
