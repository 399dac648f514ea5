"""Module-level functions and sources for pipelines run by worker processes (a worker
imports them by name, so they cannot live inside a test function)."""

import os

import numpy as np


def times_ten(x):
    return x * 10


def with_worker_pid(x):
    """The row and the id of the process that computed it."""
    return x, np.asarray(os.getpid())


def fail_on_13(x):
    if int(x) == 13:
        raise ValueError(f"unlucky value {int(x)}")
    return x


def exit_on_5(x):
    if int(x) == 5:
        os._exit(3)
    return x


class Squares:
    """A random-accessible source."""

    def __init__(self, n):
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        return np.asarray(i), np.asarray(i * i)


class BrokenAt:
    """A random-accessible source whose item ``bad`` raises."""

    def __init__(self, n, bad):
        self.n, self.bad = n, bad

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        if i == self.bad:
            raise KeyError(f"item {i} is missing")
        return (np.asarray(i),)
