"""Test environments for actor processes: CartPole that fails once, in an actor process
(not the learner's), at a given step — by a signal (``"kill"``), an exception (``"raise"``)
or by hanging (``"hang"``) — and then, in the process that replaces it, never again
(``marker`` is the file recording that it failed).  ``marker=""`` fails every time; mode
``"none"`` never."""

from __future__ import annotations

import multiprocessing
import os
import signal
import time

import gymnasium as gym
from gymnasium.envs.classic_control import CartPoleEnv


def in_actor_process() -> bool:
    """A process started by the learner, or an MPI rank other than 0."""
    rank = os.environ.get("OMPI_COMM_WORLD_RANK")
    return multiprocessing.parent_process() is not None or rank not in (None, "0")


class FailingCartPole(CartPoleEnv):
    def __init__(self, mode: str, marker: str, at_step: int = 20, **kwargs) -> None:
        super().__init__(**kwargs)
        self.mode, self.marker, self.at_step, self.steps = mode, marker, at_step, 0

    def step(self, action):
        self.steps += 1
        if self.mode != "none" and self.steps == self.at_step and in_actor_process():
            if self._first_failure():
                if self.mode == "kill":
                    os.kill(os.getpid(), signal.SIGKILL)
                if self.mode == "raise":
                    raise RuntimeError("the simulator lost its state")
                time.sleep(600)   # "hang": the learner's deadline ends it
        return super().step(action)

    def _first_failure(self) -> bool:
        """Whether this process fails now: always without a marker, else only the process
        that creates the marker (O_EXCL: two actors reaching the step together fail once)."""
        if not self.marker:
            return True
        try:
            os.close(os.open(self.marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
        except FileExistsError:
            return False
        return True


gym.register("FailingCartPole-v0", entry_point=FailingCartPole, max_episode_steps=500)
