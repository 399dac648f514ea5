"""The algorithms, by name: ``"ppo"`` (:mod:`.ppo`), ``"a2c"`` (:mod:`.a2c`), ``"dqn"``
(:mod:`.dqn`) and ``"sac"`` (:mod:`.sac`), and :func:`register_algorithm` for others.
Built-in algorithms are imported when first named."""

from __future__ import annotations

from importlib import import_module

from .base import Algorithm, Learner, Plan

__all__ = ["Algorithm", "Learner", "Plan", "algorithm_class", "algorithm_names",
           "register_algorithm"]

#: name → "module:class" of the built-in algorithms
_BUILTIN = {"a2c": ".a2c:A2C", "dqn": ".dqn:DQN", "ppo": ".ppo:PPO", "sac": ".sac:SAC"}
_REGISTERED: dict[str, type[Algorithm]] = {}


def register_algorithm(cls: type[Algorithm]) -> type[Algorithm]:
    """Make ``cls`` configurable by its ``name`` (usable as a class decorator).  A name
    taken by another class is an error."""
    name = getattr(cls, "name", None)
    if not isinstance(name, str) or not name:
        raise TypeError(f"{cls.__name__} needs a class attribute 'name'")
    known = _REGISTERED.get(name)
    if known is not None and known is not cls or known is None and name in _BUILTIN \
            and f"{cls.__module__}:{cls.__qualname__}" != _builtin_path(name):
        raise ValueError(f"an algorithm named {name!r} is already registered")
    _REGISTERED[name] = cls
    return cls


def _builtin_path(name: str) -> str:
    module, cls = _BUILTIN[name].split(":")
    return f"{__name__}{module}:{cls}"


def algorithm_class(name: str) -> type[Algorithm]:
    """The algorithm registered as ``name``."""
    if name not in _REGISTERED and name in _BUILTIN:
        module, cls = _BUILTIN[name].split(":")
        register_algorithm(getattr(import_module(module, __name__), cls))
    try:
        return _REGISTERED[name]
    except KeyError:
        raise ValueError(f"unknown algorithm {name!r}; known: {algorithm_names()}") from None


def algorithm_names() -> list[str]:
    return sorted(set(_BUILTIN) | set(_REGISTERED))
