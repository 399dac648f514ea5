"""Fixtures for the cpu backend's tests: the installed backend (found through its entry point,
as users get it) and compiling graphs on it with fallback denied."""

from __future__ import annotations

from typing import Any, Callable

import pytest

from mskernel.hooks.host import host
from mskernel_sdk import CompileOptions, Graph, compile_graph


@pytest.fixture(scope="session")
def cpu() -> Any:
    host().load_external()
    return host().backends.get("cpu")


@pytest.fixture
def compile_cpu() -> Callable[..., Any]:
    """``compile_cpu(graph)``: the CompiledGraph of ``graph`` on the cpu backend alone (no
    generic passes unless ``opt_level`` says so, so every node reaches its kernel)."""

    def compile_on_cpu(graph: Graph, opt_level: int = 0) -> Any:
        return compile_graph(graph, backends=["cpu"],
                             options=CompileOptions(opt_level=opt_level, fallback="deny"))

    return compile_on_cpu


@pytest.fixture
def executable(compile_cpu: Callable[..., Any]) -> Callable[[Graph], Any]:
    """``executable(graph)``: the CpuExecutable of a graph the cpu backend runs whole."""

    def only_executable(graph: Graph) -> Any:
        (compiled,) = compile_cpu(graph).executables
        return compiled

    return only_executable


@pytest.fixture
def foreign_op(monkeypatch: pytest.MonkeyPatch) -> str:
    """The name of an op no cpu kernel claims — ``tests.running_total(x, axis)``, NumPy's
    cumsum, defined for one test as another plugin would define it — since the cpu backend
    claims every core op."""
    import numpy as np

    from mskernel_sdk import Attr, OpDef, op_registry

    op = OpDef("tests.running_total", ("x",), lambda x, axis: x,
               lambda x, axis: np.cumsum(x, axis=axis, dtype=x.dtype),
               attrs=(Attr("axis", "int"),), owner="tests", doc="cumsum, unclaimed")
    monkeypatch.setitem(op_registry()._ops, op.name, op)
    return op.name
