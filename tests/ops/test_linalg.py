"""matmul and einsum: reference semantics against PyTorch on float64, and error messages."""

import numpy as np
import pytest
import torch

from mskernel.errors import OpError
from mskernel.ir import GraphBuilder, tensor_type
from mskernel.ir.dtypes import complex128, float64
from mskernel.runtime.interpreter import run_graph
from mskernel.testing import OpSample, assert_close, sample_graph


def run(op, *arrays, **attrs):
    return run_graph(sample_graph(OpSample(op, arrays, attrs)), list(arrays))[0]


def build(op, *shapes, dt="f32", **attrs):
    b = GraphBuilder()
    return b.op(op, *[b.input(tensor_type(dt, shape)) for shape in shapes], **attrs)


def normal(*shapes, seed=0):
    rng = np.random.default_rng(seed)
    return [rng.normal(size=shape) for shape in shapes]


@pytest.mark.parametrize("sx, sy", [
    ((3, 4), (4, 5)), ((4,), (4,)), ((4,), (4, 5)), ((3, 4), (4,)), ((6,), (3, 6, 2)),
    ((2, 3, 4), (4,)), ((2, 1, 3, 4), (5, 4, 2)), ((1, 3, 4), (2, 1, 4, 5)),
    ((0, 4), (4, 3)), ((3, 0), (0, 2)), ((2, 0, 3), (1, 3, 4)),
], ids=str)
def test_matmul_matches_torch(sx, sy):
    x, y = normal(sx, sy)
    expected = torch.matmul(torch.from_numpy(x), torch.from_numpy(y)).numpy()
    actual = run("matmul", x, y)
    assert actual.shape == expected.shape
    assert_close(actual, expected, float64)


def test_matmul_of_integers_is_exact_and_keeps_the_dtype():
    x = np.arange(6, dtype=np.int32).reshape(2, 3)
    y = np.arange(12, dtype=np.int32).reshape(3, 4)
    actual = run("matmul", x, y)
    assert actual.dtype == np.int32
    np.testing.assert_array_equal(actual, torch.matmul(torch.from_numpy(x),
                                                       torch.from_numpy(y)).numpy())


def test_matmul_of_complex_matches_torch():
    xr, xi, yr, yi = normal((3, 4), (3, 4), (4, 2), (4, 2))
    x, y = xr + 1j * xi, yr + 1j * yi
    expected = torch.matmul(torch.from_numpy(x), torch.from_numpy(y)).numpy()
    assert_close(run("matmul", x, y), expected, complex128)


def test_matmul_inner_mismatch_names_both_shapes():
    with pytest.raises(OpError, match=r"op 'matmul' at .+: inner dimensions of shapes \[2, 3\] and "
                                      r"\[4, 5\] differ \(3 != 4\)"):
        build("matmul", (2, 3), (4, 5))
    with pytest.raises(OpError, match=r"shapes \[4\] and \[2, 3, 5\] differ \(4 != 3\)"):
        build("matmul", (4,), (2, 3, 5))


def test_matmul_batch_mismatch_names_the_batch_dimensions():
    with pytest.raises(OpError, match=r"batch dimensions \[2\] and \[3\] of shapes \[2, 3, 4\] "
                                      r"and \[3, 4, 5\] cannot be broadcast"):
        build("matmul", (2, 3, 4), (3, 4, 5))


def test_matmul_rejects_scalars_bools_and_mixed_dtypes():
    with pytest.raises(OpError, match=r"rank >= 1, got shapes \[\] and \[3\]"):
        build("matmul", (), (3,))
    with pytest.raises(OpError, match=r"expects a numeric input, got bool\[2,2\]"):
        build("matmul", (2, 2), (2, 2), dt="bool")
    b = GraphBuilder()
    x, y = b.input(tensor_type("f32", (2, 2))), b.input(tensor_type("f64", (2, 2)))
    with pytest.raises(OpError, match="same dtype"):
        b.op("matmul", x, y)


EINSUM_CASES = [
    ("ij,jk->ik", [(3, 4), (4, 5)]),
    ("ij,jk", [(3, 4), (4, 5)]),
    ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]),
    ("...ij,...jk->...ik", [(2, 1, 3, 4), (5, 4, 2)]),
    ("...ij,...jk", [(2, 1, 3, 4), (5, 4, 2)]),
    ("i...j,j...->...", [(2, 3, 4), (4, 3)]),
    ("...i->...", [(2, 3, 4)]),
    ("i,i", [(5,)] * 2),
    ("i,i->", [(5,)] * 2),
    ("i,j->ij", [(3,), (4,)]),
    ("ij->ji", [(3, 4)]),
    ("ba", [(3, 4)]),
    ("ii->i", [(4, 4)]),
    ("ii", [(4, 4)]),
    ("iij->j", [(3, 3, 2)]),
    ("ij->", [(3, 4)]),
    ("ab,bc,cd->ad", [(2, 3), (3, 4), (4, 2)]),
    ("Ab,bA", [(3, 4), (4, 3)]),
    ("bA,Ab", [(3, 4), (4, 3)]),
    ("ij,jk->ik", [(3, 0), (0, 2)]),
    (" i j , j k -> k i ", [(3, 4), (4, 5)]),
]


@pytest.mark.parametrize("equation, shapes", EINSUM_CASES, ids=[e for e, _ in EINSUM_CASES])
def test_einsum_matches_torch(equation, shapes):
    operands = normal(*shapes)
    expected = torch.einsum(equation, *map(torch.from_numpy, operands)).numpy()
    actual = run("einsum", *operands, equation=equation)
    assert actual.shape == expected.shape
    assert_close(actual, expected, float64)


def test_einsum_broadcasts_size1_subscripts_like_numpy():
    x, y = normal((3, 1), (4, 5))
    actual = run("einsum", x, y, equation="ij,jk->ik")
    assert_close(actual, np.einsum("ij,jk->ik", x, y), float64)
    assert_close(actual, x @ y.sum(0, keepdims=True), float64)  # x[i, 0] * sum_j y[j, k]


def test_einsum_implicit_output_orders_subscripts_capitals_first():
    (x,) = normal((2, 3))
    np.testing.assert_array_equal(run("einsum", x, equation="bA"), x.T)


def test_einsum_of_integers_keeps_the_dtype():
    x = np.arange(6, dtype=np.int64).reshape(2, 3)
    actual = run("einsum", x, x, equation="ij,ij->i")
    assert actual.dtype == np.int64
    np.testing.assert_array_equal(actual, [5, 50])


@pytest.mark.parametrize("equation, shapes, message", [
    ("ij,jk->ik", [(2, 3), (4, 5)], r"subscript 'j' has size 3 in operand 0 but 4 in operand 1"),
    ("ij,jk", [(2, 3)], r"equation 'ij,jk' has 2 input term\(s\) but 1 operand\(s\)"),
    ("ij", [(2, 3, 4)], r"input term 0 'ij' names 2 dimension\(s\) but operand 0 has rank 3"),
    ("ijk...", [(2, 3)], r"input term 0 'ijk\.\.\.' names 3 dimension\(s\) but .* rank 2"),
    ("ii->i", [(2, 3)], r"subscript 'i' repeats in input term 0 'ii' with different sizes 2 "
                        r"and 3"),
    ("i->j", [(2,)], r"output subscript 'j' does not appear in any input term"),
    ("i->ii", [(2,)], r"output subscript 'i' appears more than once"),
    ("...i->i", [(2, 3)], r"'\.\.\.' stands for 1 dimension\(s\) \[2\], so the output term 'i' "
                          r"must contain '\.\.\.'"),
    ("i.->i", [(2, 3)], r"input term 0 'i\.' has a '\.' that is not part of an ellipsis"),
    ("i-j", [(2, 3)], r"input term 0 'i-j' has the invalid subscript '-'"),
    ("i->i->i", [(2,)], r"equation 'i->i->i' has more than one '->'"),
    ("...i...", [(2, 3)], r"input term 0 '\.\.\.i\.\.\.' has more than one ellipsis"),
    ("...i,...i", [(2, 3), (4, 3)], r"the dimensions under '\.\.\.' \(\[2\] and \[4\]\) cannot be "
                                    r"broadcast"),
])
def test_einsum_errors_name_the_problem(equation, shapes, message):
    with pytest.raises(OpError, match=rf"op 'einsum' at .+: {message}"):
        build("einsum", *shapes, equation=equation)


def test_einsum_needs_an_operand_and_an_equation():
    with pytest.raises(OpError, match="at least one operand"):
        build("einsum", equation="->")
    with pytest.raises(OpError, match="missing required attribute 'equation'"):
        build("einsum", (2,))
