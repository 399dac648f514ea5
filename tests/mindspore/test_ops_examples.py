"""Examples from the docstrings of MindSpore's ``mindspore.ops`` functions, with ``mindspore``
renamed ``mskernel``: each runs as written and its ``output`` must hold the values MindSpore
documents (compared as numbers: MindSpore's printed dtypes are not always its own).

An example needing a name or a signature mskernel lacks is an expected failure naming it, as
long as the installed mskernel lacks it (a probe asks), and an ordinary test afterwards."""

from __future__ import annotations

import inspect

import numpy as np
import pytest

import mskernel
from mskernel import Tensor, ops
from mskernel import dtype as mstype


def _parameters(name: str) -> list[str]:
    fn = getattr(ops, name, None)
    return list(inspect.signature(fn).parameters) if fn is not None else []


def _takes(name: str, **keywords) -> bool:
    try:
        getattr(ops, name)(Tensor([1.0, 2.0]), **keywords)
    except TypeError:
        return False
    return True


#: what an example needs → whether the installed mskernel has it
PROBES = {
    "ops.eye(n, m, dtype)": lambda: _parameters("eye")[:3] == ["n", "m", "dtype"],
    "ops.argmax(..., dim=)": lambda: _takes("argmax", dim=0),
    "ops.one_hot(indices, depth, on_value, off_value, axis)":
        lambda: _parameters("one_hot")[2:4] == ["on_value", "off_value"],
}


def example(code: str, expected, needs: str = ""):
    """A parametrized case; ``needs`` names what it requires, which is an ``ops`` member
    (``"ops.cat"``) unless :data:`PROBES` knows how to tell."""
    present = PROBES.get(needs, lambda: hasattr(ops, needs.removeprefix("ops.")))
    marks = [pytest.mark.xfail(strict=True, reason=needs)] if needs and not present() else []
    return pytest.param(code, np.array(expected), marks=marks, id=code.split("ops.")[-1][:40])


EXAMPLES = [
    example("output = ops.arange(1, 6)", [1, 2, 3, 4, 5]),
    example("output = ops.arange(0, 3, 1.2)", [0, 1.2, 2.4]),
    example("output = ops.arange(7, 1, -2)", [7, 5, 3]),
    example("output = ops.eye(2)", [[1, 0], [0, 1]]),
    example("output = ops.eye(2, 2, mindspore.int32)", [[1, 0], [0, 1]],
            "ops.eye(n, m, dtype)"),
    example("output = ops.eye(1, 2, mindspore.float64)", [[1, 0]], "ops.eye(n, m, dtype)"),
    example("a = Tensor(np.arange(4).reshape((2, 2)), mstype.float32)\n"
            "b = Tensor(np.ones((2, 2)), mstype.float16)\n"
            "condition = a < 3\n"
            "output = ops.where(condition, a, b)", [[0, 1], [2, 1]]),
    example("x = Tensor(np.array([[0, 1], [2, 1]]).astype(np.float32))\n"
            "output = ops.ravel(x)", [0, 1, 2, 1]),
    example("output = ops.full((2, 2), 1)", [[1, 1], [1, 1]]),
    example("output = ops.ones((2, 2), mindspore.float32)", [[1, 1], [1, 1]]),
    example("x = Tensor(np.array([[0, 1], [2, 1]]).astype(np.int32))\n"
            "output = ops.ones_like(x)", [[1, 1], [1, 1]]),
    example("output = ops.zeros((2, 2), mindspore.float32)", [[0, 0], [0, 0]]),
    example("x = Tensor(np.arange(4).reshape(2, 2))\n"
            "output = ops.zeros_like(x, dtype=mindspore.float32)", [[0, 0], [0, 0]]),
    example("input = Tensor(np.array([[1, 2], [3, 4]]), mindspore.float32)\n"
            "multiples = (2, 3)\n"
            "output = ops.tile(input, multiples)",
            [[1, 2, 1, 2, 1, 2], [3, 4, 3, 4, 3, 4]] * 2),
    example("input_x1 = Tensor(np.array([[0, 1], [2, 1]]).astype(np.float32))\n"
            "input_x2 = Tensor(np.array([[0, 1], [2, 1]]).astype(np.float32))\n"
            "output = ops.cat((input_x1, input_x2))", [[0, 1], [2, 1], [0, 1], [2, 1]],
            "ops.cat"),
    example("x = Tensor(np.array([[1, 20, 5], [67, 8, 9], [130, 24, 15]]).astype(np.float32))\n"
            "output = ops.argmax(x, dim=-1)", [1, 0, 0], "ops.argmax(..., dim=)"),
    example("input_x = Tensor(np.array([[1, 2, 3, 4], [5, 6, 7, 8]]), mindspore.int32)\n"
            "output = ops.reverse(input_x, axis=[1])", [[4, 3, 2, 1], [8, 7, 6, 5]],
            "ops.reverse"),
    example("indices = Tensor(np.array([0, 1, 2]), mindspore.int32)\n"
            "depth, on_value, off_value = 3, Tensor(1.0, mindspore.float32), "
            "Tensor(0.0, mindspore.float32)\n"
            "output = ops.one_hot(indices, depth, on_value, off_value, axis=-1)", np.eye(3),
            "ops.one_hot(indices, depth, on_value, off_value, axis)"),
    example("output = ops.fill(mindspore.float32, (2, 2), 1)", [[1, 1], [1, 1]], "ops.fill"),
    example("start = Tensor(0, mstype.int32)\nend = Tensor(10, mstype.int32)\n"
            "step = Tensor(4, mstype.int32)\noutput = ops.range(start, end, step)", [0, 4, 8],
            "ops.range"),
    example("x = Tensor(np.array([1, 2, 5, 2]), mindspore.int32)\n"
            "output = ops.unique(x)[1]", [0, 1, 2, 1], "ops.unique"),
    example("sorted_sequence = Tensor(np.array([[0, 1, 3, 5, 7], [2, 4, 6, 8, 10]]), "
            "mindspore.float32)\n"
            "values = Tensor(np.array([[3, 6, 9], [3, 6, 9]]), mindspore.float32)\n"
            "output = ops.searchsorted(sorted_sequence, values)", [[2, 4, 5], [1, 2, 4]],
            "ops.searchsorted"),
    example("input_x = np.arange(9).astype('float32')\n"
            "output = ops.chunk(Tensor(input_x), 3)[1]", [3, 4, 5], "ops.chunk"),
]


@pytest.mark.parametrize("code, expected", EXAMPLES)
def test_docstring_example(code, expected):
    scope = {"np": np, "mindspore": mskernel, "Tensor": Tensor, "ops": ops, "mstype": mstype}
    exec(code, scope)
    output = scope["output"]
    assert isinstance(output, Tensor)
    np.testing.assert_allclose(output.asnumpy(), expected, rtol=1e-6)
