"""Eager dispatch: the kernel cache, devices, fallback, errors with the user's line,
interposers, and tracing with captures and escaped tracers."""

import numpy as np
import pytest

import mskernel as ms
from mskernel.errors import BackendError, OpError
from mskernel.frontend import dispatch
from mskernel.frontend.dispatch import apply, interpose
from mskernel.frontend.tensor import TracedValueError
from mskernel.frontend.trace import EscapedTracerError, trace_function
from mskernel.ir import tensor_type
from mskernel.ops import op_registry
from mskernel.runtime import FallbackWarning, compile_graph
from mskernel.runtime.reference import ReferenceBackend


def test_repeated_eager_op_compiles_once():
    x = ms.Tensor(np.arange(4, dtype=np.float32))
    before = len(dispatch._cache)
    for _ in range(5):
        apply("exp", x)
    assert len(dispatch._cache) - before <= 1
    np.testing.assert_allclose(apply("exp", x).numpy(), np.exp(np.arange(4, dtype=np.float32)))


def test_eager_shape_error_points_at_this_file():
    x, y = ms.Tensor(np.zeros((2, 3), np.float32)), ms.Tensor(np.zeros((4,), np.float32))
    with pytest.raises(OpError, match=r"op 'add' at .*test_dispatch.py:\d+: shapes \[2, 3\] and \[4\]"):
        apply("add", x, y)


def test_kernel_errors_name_the_op_and_line():
    x = ms.Tensor(np.array([1, 2], np.int64))
    z = ms.Tensor(np.array([1, 0], np.int64))
    with pytest.raises(ZeroDivisionError) as info:
        apply("floor_divide", x, z)
    assert any("in op 'floor_divide' at" in n and "test_dispatch.py" in n for n in info.value.__notes__)


def test_tensors_on_different_devices_are_refused():
    other = ReferenceBackend()
    other.name = "reference-2"
    a = ms.Tensor([1.0])
    b = ms.frontend.tensor.Tensor._concrete(other.to_device(np.array([1.0], np.float32), a.type))
    with pytest.raises(BackendError, match=rf"different devices .*on {a.device}.*on reference-2"):
        apply("add", a, b)


class _NoExp(ReferenceBackend):
    """A backend that cannot run 'exp' (eager fallback must move it elsewhere)."""

    def capabilities(self):
        caps = super().capabilities()
        caps.ops.pop("exp")
        return caps


def test_eager_fallback_warns_once_and_returns_to_the_home_device(monkeypatch):
    home = _NoExp()
    home.name = "noexp"
    x = ms.Tensor._concrete(home.to_device(np.array([0.0, 1.0], np.float32), tensor_type("f32", (2,))))
    monkeypatch.setattr(dispatch, "_warned", set())
    preferred = ms.Tensor([0.0]).device  # the best installed backend takes the op
    with pytest.warns(FallbackWarning, match=rf"op 'exp' .*runs on '{preferred}' because 'noexp'"):
        y = apply("exp", x)
    assert y.device == "noexp"
    np.testing.assert_allclose(y.numpy(), np.exp([0.0, 1.0]), rtol=1e-6)
    monkeypatch.setenv("MSKERNEL_FALLBACK", "deny")
    dispatch._cache.clear()
    with pytest.raises(BackendError, match="fallback policy is 'deny'"):
        apply("exp", x)


def test_interposers_see_ops_innermost_last():
    seen = []

    class Record:
        def __init__(self, tag):
            self.tag = tag

        def apply(self, op, args, attrs, regions, inner):
            seen.append((self.tag, op))
            return inner(op, args, attrs, regions)

    x = ms.Tensor([1.0, 2.0])
    with interpose(Record("outer")), interpose(Record("inner")):
        y = apply("neg", x)
    assert seen == [("inner", "neg"), ("outer", "neg")]
    np.testing.assert_array_equal(y.numpy(), [-1.0, -2.0])


def test_tracing_records_ops_with_locations_and_embeds_constants():
    c = ms.Tensor([10.0, 20.0])
    graph, _, captured = trace_function(lambda x: apply("add", x, c), [tensor_type("f32", (2,))], "f")
    assert [n.op for n in graph.nodes] == ["constant", "add"]
    assert "test_dispatch.py" in str(graph.nodes[1].loc) and not captured
    (out,) = compile_graph(graph)(np.array([1.0, 2.0], np.float32))
    np.testing.assert_array_equal(out, [11.0, 22.0])


def test_traced_tensors_refuse_concrete_use_and_cannot_escape():
    leaked = []

    def f(x):
        leaked.append(x)
        with pytest.raises(TracedValueError, match=r"bool\(tensor\) needs a concrete value.*test_dispatch.py"):
            bool(apply("greater", x, x))
        return x

    trace_function(f, [tensor_type("f32", ())], "f")
    with pytest.raises(EscapedTracerError, match="outside its trace"):
        apply("neg", leaked[0])


class _PrimitivesOnly(ReferenceBackend):
    """A backend claiming only the primitive ops."""

    name = "prims"

    def capabilities(self):
        caps = super().capabilities()
        return type(caps)({op: s for op, s in caps.ops.items() if op_registry().get(op).primitive})


def test_an_eager_composite_runs_on_a_backend_claiming_only_primitives(monkeypatch):
    monkeypatch.setenv("MSKERNEL_FALLBACK", "deny")
    home = _PrimitivesOnly()
    values = np.array([[0.5, -1.0, 2.0], [3.0, 0.0, -2.5]], np.float32)
    x = ms.Tensor._concrete(home.to_device(values, tensor_type("f32", (2, 3))))
    y = apply("softmax", x, axis=-1)
    assert y.device == "prims"
    shifted = np.exp(values - values.max(axis=1, keepdims=True))
    np.testing.assert_allclose(y.numpy(), shifted / shifted.sum(axis=1, keepdims=True),
                               rtol=1e-6)
    kernel = next(k for k in dispatch._cache.values() if k.home is home)
    assert [n.op for n in kernel.executable.graph.nodes] == ["max", "neg", "add", "exp", "sum",
                                                             "div"]
