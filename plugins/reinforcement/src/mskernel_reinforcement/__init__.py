"""mskernel-reinforcement: reinforcement learning on mskernel, in the shape of MindSpore
Reinforcement — what an algorithm computes (actors, learners, policies, replay buffers) apart
from how it runs (how many actors, in how many processes).

Users reach it as ``mskernel.rl`` (:mod:`mskernel_reinforcement.api`).
"""

__version__ = "0.1.0"
