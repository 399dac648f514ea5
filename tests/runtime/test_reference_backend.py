"""The reference backend runs every core op through the full compile path (passes,
partitioning, device arrays) and agrees with the interpreter."""

import numpy as np
import pytest

from mskernel.ir.types import TensorType
from mskernel.runtime import CompileOptions, DeviceArray, RefCell, compile_graph
from mskernel.runtime.interpreter import run_graph
from mskernel.testing import all_samples, assert_close, sample_graph

SAMPLES = list(all_samples(seed=1, owner="mskernel"))


def fresh(args):
    """Copies of the sample's arguments (refs are mutated by running)."""
    return [RefCell(a.type, np.copy(a.value)) if isinstance(a, RefCell) else a for a in args]


@pytest.mark.parametrize("sample", SAMPLES, ids=str)
def test_compiled_reference_run_equals_interpreter(sample):
    graph = sample_graph(sample)
    expected_args = fresh(sample.args)
    expected = run_graph(graph, expected_args)
    compiled = compile_graph(graph, backends=["reference"],
                             options=CompileOptions(opt_level=0, fallback="deny"))
    actual_args = fresh(sample.args)
    actual = compiled.run(actual_args)
    for value, got, want in zip(graph.outputs, actual, expected):
        if isinstance(value.type, TensorType):
            assert isinstance(got, DeviceArray) and got.backend.name == "reference"
            assert_close(got.to_host(), want, value.type.dtype, what=str(sample))
    for got, want in zip(actual_args, expected_args):
        if isinstance(got, RefCell):
            assert_close(got.value.to_host(), want.value, got.type.dtype, what=str(sample))


def test_a_failing_node_is_named_with_the_users_line():
    import mskernel as ms
    from mskernel import ops

    @ms.jit(backend="reference")
    def pick(x, i):
        return ops.gather(x, i, 0) * 2.0

    line = pick.python_function.__code__.co_firstlineno + 2
    with pytest.raises(IndexError, match=rf"node \d+ 'gather' at \S+:{line} of @pick: gather: "
                                         r"index 5 at indices\[1\] is out of range"):
        pick(np.ones((3, 2), np.float32), np.array([0, 5]))
