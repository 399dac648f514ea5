"""Tensor operators and methods against NumPy: arithmetic, reflected and NumPy-on-the-left
operators, comparisons (and identity hashing), methods delegating to ``mskernel.ops``,
iteration, and ``repr``."""

from __future__ import annotations

import operator

import numpy as np
import pytest

import mskernel
from mskernel.frontend.tensor import TracedValueError
from mskernel.frontend.trace import trace_function
from mskernel.ir.dtypes import dtype as to_dtype
from mskernel.ir.types import TensorType
from mskernel.testing import assert_close

Tensor = mskernel.Tensor


def check(result, expected, dtype=None) -> None:
    expected = np.asarray(expected)
    dt = to_dtype(dtype if dtype is not None else expected.dtype)
    assert isinstance(result, Tensor)
    assert result.dtype is dt, f"dtype {result.dtype}, expected {dt}"
    assert result.shape == expected.shape
    assert_close(result.numpy(), expected, dt)


A = np.array([[1.5, -2.0, 3.25], [0.5, 4.0, -1.0]], np.float32)
B = np.array([2.0, 0.5, -3.0], np.float32)
I = np.array([[7, -3, 5], [2, 8, -6]], np.int32)
J = np.array([3, 2, 4], np.int32)

ARITHMETIC = [operator.add, operator.sub, operator.mul, operator.truediv, operator.floordiv,
              operator.mod, operator.pow]


@pytest.mark.parametrize("op", ARITHMETIC, ids=lambda op: op.__name__)
def test_arithmetic_operators(op):
    pos_a = np.abs(A) if op is operator.pow else A
    check(op(Tensor(pos_a), Tensor(B)), op(pos_a, B))
    check(op(Tensor(pos_a), 2), op(pos_a, np.float32(2)))  # a weak scalar keeps float32
    check(op(3, Tensor(B)) if op is not operator.pow else op(3, Tensor(J)),
          op(np.float32(3), B) if op is not operator.pow else op(np.int32(3), J))
    expected_int = op(I, J)
    if op is operator.truediv:
        expected_int = expected_int.astype(np.float32)  # integer division gives float32
    check(op(Tensor(I), Tensor(J)), expected_int)


@pytest.mark.parametrize("op", [operator.and_, operator.or_, operator.xor, operator.lshift,
                                operator.rshift], ids=lambda op: op.__name__)
def test_bitwise_operators(op):
    x, y = np.abs(I), J
    check(op(Tensor(x), Tensor(y)), op(x, y))
    check(op(Tensor(x), 1), op(x, np.int32(1)))
    check(op(1, Tensor(y)), op(np.int32(1), y))
    if op not in (operator.lshift, operator.rshift):
        m, n = A > 0, B > 0
        check(op(Tensor(m), Tensor(n)), op(m, n))


def test_unary_operators():
    check(-Tensor(A), -A)
    check(abs(Tensor(A)), np.abs(A))
    check(~Tensor(I), ~I)
    check(~Tensor(A > 0), ~(A > 0))
    t = Tensor(A)
    assert +t is t


@pytest.mark.parametrize("op", [operator.eq, operator.ne, operator.lt, operator.le, operator.gt,
                                operator.ge], ids=lambda op: op.__name__)
def test_comparisons_are_elementwise(op):
    check(op(Tensor(A), Tensor(B)), op(A, B))
    check(op(Tensor(I), 2), op(I, 2))
    check(op(2.0, Tensor(A)), op(2.0, A))


def test_equality_with_non_arrays_and_hashing_by_identity():
    t, u = Tensor(B), Tensor(B)
    assert (t == None) is False  # noqa: E711 - Python's fallback, not an elementwise op
    assert (t != "text") is True
    assert hash(t) == id(t) and hash(t) != hash(u)
    cache = {t: "t", u: "u"}
    assert cache[t] == "t" and cache[u] == "u"


def test_numpy_on_the_left_defers_to_the_tensor():
    for result in (np.ones(3, np.float32) + Tensor(B), np.float32(2) * Tensor(B),
                   np.ones((2, 3), np.float32) @ Tensor(B)):
        assert isinstance(result, Tensor)
    check(np.ones(3, np.float32) - Tensor(B), 1 - B)
    check(np.eye(3, dtype=np.float32) @ Tensor(B), B)
    check(Tensor(A) @ B, A @ B)
    check(np.array([[1, 0]], np.float32) @ Tensor(A), A[:1])


# -- methods ----------------------------------------------------------------------------------


def test_reduction_methods():
    x = Tensor(A)
    check(x.sum(), A.sum())
    check(x.sum(1), A.sum(1))
    check(x.sum(axis=0, keepdims=True), A.sum(0, keepdims=True))
    check(x.mean(), A.mean())
    check(x.max(), A.max())
    check(x.min(0), A.min(0))
    check(x.argmax(), np.argmax(A))
    check(x.argmin(axis=1), np.argmin(A, axis=1))
    check(x.prod(), A.prod())
    check(x.std(ddof=1), A.std(ddof=1))
    check(x.var(1), A.var(1))
    check((x > 0).all(1), (A > 0).all(1))
    check((x > 0).any(), (A > 0).any())
    check(x.cumsum(1), A.cumsum(1))
    check(Tensor(I).cumprod(), I.cumprod())


def test_shape_methods():
    x = Tensor(A)
    check(x.reshape(3, 2), A.reshape(3, 2))
    check(x.reshape((-1,)), A.reshape(-1))
    check(x.reshape(6), A.reshape(6))
    check(x.transpose(), A.T)
    check(x.T, A.T)
    c = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    check(Tensor(c).transpose(1, 0, 2), c.transpose(1, 0, 2))
    check(Tensor(c).transpose((2, 0, 1)), c.transpose(2, 0, 1))
    check(Tensor(c).permute(2, 1, 0), c.transpose(2, 1, 0))
    check(Tensor(c).mT, np.swapaxes(c, -1, -2))
    check(Tensor(c).flatten(), c.flatten())
    check(Tensor(c).flatten(1), c.reshape(2, 12))
    check(Tensor(c).ravel(), c.ravel())
    check(Tensor(c[:, :1]).squeeze(), c[:, 0])
    check(x.expand_dims(0), A[None])
    check(x.unsqueeze(-1), A[..., None])
    check(x.swapaxes(0, 1), A.swapaxes(0, 1))
    check(x.flip(1), A[:, ::-1])
    check(x.repeat(2, axis=0), A.repeat(2, axis=0))
    check(x.tile((1, 2)), np.tile(A, (1, 2)))
    check(x.take([2, 0], axis=1), A[:, [2, 0]])
    check(x.broadcast_to((4, 2, 3)), np.broadcast_to(A, (4, 2, 3)))
    top, bottom = x.split(2)
    check(top, A[:1])
    check(bottom, A[1:])


def test_math_and_conversion_methods():
    x = Tensor(A)
    check(x.astype("int32"), A.astype(np.int32))
    check(x.astype(mskernel.float64), A.astype(np.float64))
    check(x.exp(), np.exp(A))
    check(x.abs().sqrt(), np.sqrt(np.abs(A)))
    check(x.abs().log(), np.log(np.abs(A)))
    check(x.tanh(), np.tanh(A))
    check(x.sigmoid(), 1 / (1 + np.exp(-A)))
    check(x.relu(), np.maximum(A, 0))
    check(x.clip(-1, 1), np.clip(A, -1, 1))
    check(x.clip(max=0.5), np.minimum(A, 0.5))
    check(x.round(), np.round(A))
    check(x.floor(), np.floor(A))
    check(x.matmul(Tensor(B)), A @ B)
    check(x.dot(B), A.dot(B))
    check(x.softmax(), np.exp(A) / np.exp(A).sum(-1, keepdims=True))
    check(x.sort()[0], np.sort(A))  # (values, indices), as MindSpore and PyTorch
    check(x.argsort(axis=0), np.argsort(A, axis=0, kind="stable"))
    values, indices = x.topk(2)
    check(values, -np.sort(-A)[:, :2])
    z = Tensor(np.array([1 + 2j, -3j], np.complex64))
    check(z.real, np.array([1.0, 0.0], np.float32))
    check(z.imag, np.array([2.0, -3.0], np.float32))
    check(z.conj(), np.array([1 - 2j, 3j], np.complex64))
    assert x.tolist() == A.tolist()


# -- iteration and repr -----------------------------------------------------------------------


def test_iteration_over_the_first_axis():
    rows = list(Tensor(A))
    assert len(rows) == 2
    for row, expected in zip(rows, A):
        check(row, expected)
    a, b = Tensor(B[:2])
    assert a.item() == B[0] and b.item() == B[1]
    with pytest.raises(TypeError, match="0-d"):
        iter(Tensor(1.0))
    assert 4.0 in Tensor(A) and 5.0 not in Tensor(A)
    check(round(Tensor(A), 1), np.round(A, 1))


def test_iterating_a_traced_tensor_is_a_clear_error():
    def unpack(x):
        first, second = x
        return first

    with pytest.raises(TracedValueError, match="cannot iterate over a traced f32\\[2\\] tensor"):
        trace_function(unpack, [TensorType(mskernel.float32, (2,))], "unpack")


def test_repr_is_numpys_with_the_dtype():
    assert repr(Tensor([1.0, 2.5])) == "Tensor([1. , 2.5], dtype=float32)"
    assert repr(Tensor([[1, 2], [3, 4]], "int8")) == (
        "Tensor([[1, 2],\n        [3, 4]], dtype=int8)")
    assert repr(Tensor(True)) == "Tensor(True, dtype=bool)"
    assert repr(Tensor([1.5, -2.25, 384.0], "bfloat16")) == (
        "Tensor([1.5, -2.25, 384.], dtype=bfloat16)")
    seen = []
    trace_function(lambda x: seen.append(repr(x)) or x, [TensorType(mskernel.int32, (3,))], "r")
    assert seen == ["Tensor(traced, shape=(3,), dtype=int32)"]
