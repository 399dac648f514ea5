"""Optimizers (MindSpore's ``nn`` names and signatures; updates checked step by step against
``torch.optim``): :class:`SGD`, :class:`Momentum`, :class:`Adam`, :class:`AdamW`,
:class:`AdamWeightDecay`, :class:`Lamb` and :class:`RMSProp`, on the :class:`Optimizer` base
class (parameter groups, learning rates and schedules, weight decay, state in Parameters)."""

from .adam import Adam, AdamW, AdamWeightDecay, Lamb
from .optimizer import Optimizer, OptimizerError
from .rmsprop import RMSProp
from .sgd import SGD, Momentum

__all__ = ["Adam", "AdamW", "AdamWeightDecay", "Lamb", "Momentum", "Optimizer",
           "OptimizerError", "RMSProp", "SGD"]
