"""``mskernel.boost``: the THOR optimizer (:mod:`.thor`) — MindSpore's ``nn.thor`` and
``ConvertModelUtils``."""

from __future__ import annotations

from .thor import THOR, ConvertModelUtils, ThorTrainOneStepCell, thor

__all__ = ["ConvertModelUtils", "THOR", "ThorTrainOneStepCell", "thor"]
