"""Errors a user's mistake produces name the op, the shapes and the user's line: a bad index
gives the same message in eager mode and under ``@jit`` (NumPy's wording, with the op, the
index as written, the axis, the tensor's type and file:line), and a ``@jit`` function that
returns something other than tensors names its return statement."""

import inspect
import re

import numpy as np
import pytest

import mskernel
from mskernel.errors import MskernelError
from mskernel.frontend.tensor import TracedValueError

Tensor = mskernel.Tensor
HERE = __file__
X = np.arange(4 * 5 * 6, dtype=np.float32).reshape(4, 5, 6)


def line_of(marker):
    """The line of this file that ends with the comment ``marker``."""
    lines, _ = inspect.findsource(inspect.getmodule(line_of))
    (number,) = [i + 1 for i, line in enumerate(lines) if line.rstrip().endswith(marker)]
    return number


class _Keys:
    def __getitem__(self, key):
        return key


K = _Keys()


def index(x, key):
    return x[key]  # index


def eager_and_jit(fn):
    """What ``fn(Tensor(X))`` raises in eager mode and under ``@jit``, as (type, message)."""
    caught = []
    for run in (fn, mskernel.jit(fn)):
        with pytest.raises(Exception) as error:
            run(Tensor(X))
        caught.append((error.type, str(error.value)))
    return caught


BAD_KEYS = [
    (K[4], IndexError, "index 4 is out of bounds for axis 0 with size 4"),
    (K[-5], IndexError, "index -5 is out of bounds for axis 0 with size 4"),
    (K[0, -6], IndexError, "index -6 is out of bounds for axis 1 with size 5"),
    (K[:, [0, 7]], IndexError, "index 7 is out of bounds for axis 1 with size 5"),
    (K[..., [[1], [-7]]], IndexError, "index -7 is out of bounds for axis 2 with size 6"),
    (K[1.5], IndexError, "only integers, slices (`:`), ellipsis (`...`), None and integer or "
                         "boolean arrays are valid indices, got 1.5"),
    (K[0, "a"], IndexError, "only integers, slices (`:`), ellipsis (`...`), None and integer or "
                            "boolean arrays are valid indices, got 'a'"),
    (K[[0.5]], IndexError, "arrays used as indices must be of integer type, got float64"),
    (K[0, 0, 0, 0], IndexError, "too many indices for tensor: tensor is 3-dimensional, but 4 "
                                "were indexed"),
    (K[[0, 1], :, [0, 1, 2]], IndexError, "shape mismatch: indexing arrays could not be "
                                          "broadcast together with shapes (2,) (3,)"),
    (K[True], TypeError, "a bool is not an index; use None to add an axis or a bool array as "
                         "a mask"),
    (K[::0], ValueError, "slice step cannot be zero"),
]


@pytest.mark.parametrize("key, kind, reason", BAD_KEYS, ids=[r[:40] for _, _, r in BAD_KEYS])
def test_a_bad_index_names_the_op_the_index_the_tensor_and_the_line(key, kind, reason):
    expected = f"op 'getitem' at {HERE}:{line_of('# index')}: {reason} (tensor: f32[4,5,6])"
    eager, traced = eager_and_jit(lambda x: index(x, key))
    assert eager == (kind, expected)
    assert traced == eager  # one mechanism for both


def test_functional_gathers_and_scatters_name_their_op():
    x = Tensor(X)
    with pytest.raises(IndexError) as caught:
        mskernel.ops.take(x, [0, -9], axis=1)  # take
    assert str(caught.value) == (f"op 'gather' at {HERE}:{line_of('# take')}: index -9 is out of "
                                 "bounds for axis 1 with size 5 (tensor: f32[4,5,6])")
    with pytest.raises(IndexError, match=re.escape(
            f"op 'gather_nd' at {HERE}:{line_of('# gather_nd')}: indices of shape [2, 4] must "
            "hold index tuples of length 1 to 3")):
        mskernel.ops.gather_nd(x, np.zeros((2, 4), np.int64))  # gather_nd
    with pytest.raises(IndexError, match=re.escape(
            f"op 'scatter' at {HERE}:{line_of('# scatter')}: index 6 is out of bounds for axis 2 "
            "with size 6 (tensor: f32[4,5,6])")):
        mskernel.ops.scatter(x, 2, np.full((4, 5, 1), 6), np.zeros((4, 5, 1), np.float32))  # scatter


def test_functional_updates_name_the_method():
    with pytest.raises(IndexError) as caught:
        Tensor(X).at[2, 5].add(1.0)  # at
    assert str(caught.value) == (f"op 'at[].add' at {HERE}:{line_of('# at')}: index 5 is out of "
                                 "bounds for axis 1 with size 5 (tensor: f32[4,5,6])")


def test_a_traced_index_out_of_range_is_reported_as_written():
    @mskernel.jit
    def pick(x, i):
        return x[i]

    for written in (-5, 4):
        with pytest.raises(IndexError, match=rf"gather: index {written} at indices\[0\] is out "
                                             r"of range for axis 0 of size 4"):
            pick(Tensor(X), Tensor(np.array([written])))
    np.testing.assert_array_equal(pick(Tensor(X), Tensor(np.array([-4, 3]))).numpy(),
                                  X[[-4, 3]])


def test_a_traced_mask_names_the_op_and_the_line():
    @mskernel.jit
    def masked(x):
        return x[x > 3]  # mask

    with pytest.raises(TracedValueError) as caught:
        masked(Tensor(X))
    message = str(caught.value)
    assert message.startswith(f"op 'getitem' at {HERE}:{line_of('# mask')}: indexing with a "
                              "traced boolean mask (bool[4,5,6])")
    assert message.endswith("(tensor: f32[4,5,6])")


# -- what a jitted function returns --------------------------------------------------------------


def test_a_jitted_function_returning_an_object_names_its_return_statement():
    @mskernel.jit
    def label(x):
        return {1, 2}  # return a set

    with pytest.raises(MskernelError) as caught:
        label(Tensor(X))
    assert str(caught.value) == (
        f"@label returned a value of type set at {HERE}:{line_of('# return a set')}; traced "
        "functions may return tensors, numbers and tuples/lists/dicts of them")


def test_a_jitted_function_returns_constants_as_python_values():
    @mskernel.jit
    def label(x):
        return "done", 2, x

    text, number, tensor = label(Tensor(X))
    assert (text, number) == ("done", 2) and isinstance(tensor, Tensor)


class Net:
    @mskernel.jit
    def forward(self, x, flag):
        if flag:
            return x  # first return
        return {"out": x, "note": object()}  # second return


def test_several_return_statements_are_all_named_and_methods_work_too():
    with pytest.raises(MskernelError) as caught:
        Net().forward(Tensor(X), False)
    lines = f"{line_of('# first return')}, {line_of('# second return')}"
    assert str(caught.value).startswith(
        f"@forward returned a value of type object at one of {HERE}:{lines}; ")


def test_a_lambda_names_where_it_is_defined():
    double = mskernel.jit(lambda x: (x, {"b"}))  # lambda
    with pytest.raises(MskernelError, match=re.escape(
            f"@<lambda> returned a value of type set (defined at {HERE}:{line_of('# lambda')})")):
        double(Tensor(X))
