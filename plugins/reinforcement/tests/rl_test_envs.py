"""Test environments for actor processes: CartPole that fails once, in an actor process,
at a given step — by a signal (``"kill"``), an exception (``"raise"``) or by hanging
(``"hang"``) — and then, in the process that replaces it, never again (``marker`` is the
file recording that it failed).  ``marker=""`` fails every time."""

from __future__ import annotations

import multiprocessing
import os
import signal
import time
from pathlib import Path

import gymnasium as gym
from gymnasium.envs.classic_control import CartPoleEnv


class FailingCartPole(CartPoleEnv):
    def __init__(self, mode: str, marker: str, at_step: int = 20, **kwargs) -> None:
        super().__init__(**kwargs)
        self.mode, self.marker, self.at_step, self.steps = mode, marker, at_step, 0

    def step(self, action):
        self.steps += 1
        if self.steps == self.at_step and multiprocessing.parent_process() is not None:
            if not self.marker or not Path(self.marker).exists():
                if self.marker:
                    Path(self.marker).touch()
                if self.mode == "kill":
                    os.kill(os.getpid(), signal.SIGKILL)
                if self.mode == "raise":
                    raise RuntimeError("the simulator lost its state")
                time.sleep(600)   # "hang": the learner's deadline ends it
        return super().step(action)


gym.register("FailingCartPole-v0", entry_point=FailingCartPole, max_episode_steps=500)
