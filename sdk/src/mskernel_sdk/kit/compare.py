"""Running a graph on the backend under test and on the reference interpreter, and saying in
one line per problem where they disagree."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional, Sequence

import numpy as np
from mskernel.ir import Graph
from mskernel.ir.types import TensorType
from mskernel.runtime import CompileOptions, DeviceArray, RefCell, compile_graph
from mskernel.runtime.backend import FallbackPolicy
from mskernel.runtime.interpreter import run_graph
from mskernel.testing import mismatch

from .subject import Subject


class CheckFailure(Exception):
    """A check found the backend disagreeing with the specification; the message says how."""


class NotRun(Exception):
    """A check could not run (nothing to check, or a prerequisite is missing); the message
    says why.  It is reported as not run — never as passed."""


@dataclass(frozen=True)
class RunPolicy:
    """How a graph is compiled for the backend under test.  ``placed_on_subject`` requires
    every tensor output to be produced by the backend under test (single-op checks).
    ``tolerances`` gives, per graph output, an ``(rtol, atol)`` pair that replaces ``rtol`` and
    ``atol`` there (``atol`` may hold one value per element: the accumulation bound of
    :func:`mskernel.testing.tolerance_for_reduction`)."""

    opt_level: int
    fallback: FallbackPolicy
    placed_on_subject: bool
    rtol: Optional[float] = None
    atol: Optional[float] = None
    tolerances: tuple[tuple[float, Any], ...] = ()


#: A single op, every node on the backend under test, no generic passes.
SINGLE_OP = RunPolicy(opt_level=0, fallback="deny", placed_on_subject=True)


def fresh(args: Sequence[Any]) -> list[Any]:
    """Independent copies of graph arguments (cells are mutated by running)."""
    return [RefCell(a.type, np.copy(a.value)) if isinstance(a, RefCell)
            else np.copy(a) if isinstance(a, np.ndarray) else a for a in args]


def run_and_compare(subject: Subject, graph: Graph, args: Sequence[Any],
                    policy: RunPolicy) -> list[str]:
    """Run ``graph`` on the subject (preferred, with ``policy``) and on the reference
    interpreter; return every disagreement: outputs, cells, storage dtypes and shapes
    returned by ``to_host``, and arguments the backend wrote to."""
    expected_args = fresh(args)
    expected = run_graph(graph, expected_args)
    actual_args = fresh(args)
    pristine = fresh(args)
    try:
        compiled = compile_graph(graph, backends=[subject.name], options=CompileOptions(
            opt_level=policy.opt_level, fallback=policy.fallback))
        outputs = compiled.run(actual_args)
    except Exception as exc:
        return [f"raised {type(exc).__name__}: {_first_line(exc)}"]
    problems: list[str] = []
    for i, (value, got, want) in enumerate(zip(graph.outputs, outputs, expected)):
        if isinstance(value.type, TensorType):
            bounds = policy.tolerances[i] if i < len(policy.tolerances) else None
            problems += _tensor_problems(subject, f"output {i}", value.type, got, want, policy,
                                         bounds=bounds)
    for i, (got, want) in enumerate(zip(actual_args, expected_args)):
        if isinstance(got, RefCell):
            problems += _tensor_problems(subject, f"cell {i}", got.type, got.value, want.value,
                                         policy, on_subject=False)
    for i, (now, before) in enumerate(zip(actual_args, pristine)):
        if isinstance(now, np.ndarray) and not np.array_equal(now, before, equal_nan=True):
            problems.append(f"input {i} was written to: a backend must not change its inputs")
    return problems


def _tensor_problems(subject: Subject, what: str, type_: TensorType, got: Any, want: Any,
                     policy: RunPolicy, on_subject: bool = True,
                     bounds: Optional[tuple[float, Any]] = None) -> list[str]:
    if not isinstance(got, DeviceArray):
        return [f"{what} is a {type(got).__name__}, not a DeviceArray"]
    if on_subject and policy.placed_on_subject and got.backend is not subject.backend:
        return [f"{what} was produced by backend '{got.backend.name}', not '{subject.name}'"]
    host = got.to_host()
    if not isinstance(host, np.ndarray):
        return [f"{what}: to_host returned a {type(host).__name__}, not a numpy array"]
    storage = type_.dtype.storage
    if host.shape != type_.shape or host.dtype != storage:
        return [f"{what}: to_host returned {host.dtype}{list(host.shape)}, but {type_} is "
                f"stored as {storage}{list(type_.shape)}"]
    rtol, atol = bounds or (policy.rtol, policy.atol)
    reason = mismatch(host, want, type_.dtype, rtol, atol)
    return [f"{what}: {reason}"] if reason else []


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else ""
