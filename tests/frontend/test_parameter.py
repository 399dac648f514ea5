"""Parameters: eager assignment, and traced programs whose parameter reads and writes become
ref_load/ref_store ordered by a state token, written back after each run."""

import numpy as np
import pytest

import mskernel as ms
from mskernel.errors import MskernelError
from mskernel.frontend import functional as F
from mskernel.frontend.control import cond
from mskernel.frontend.trace import trace_program
from mskernel.ir import tensor_type, verify
from mskernel.runtime import compile_graph


def test_eager_assignment_replaces_the_value_and_casts():
    w = ms.Parameter(np.zeros(2, np.float32), name="w")
    w.assign_value(np.array([1.5, 2.5]))
    assert w.dtype is ms.float32
    np.testing.assert_array_equal(w.numpy(), [1.5, 2.5])
    with pytest.raises(MskernelError, match=r"shape \(3,\) to parameter w of shape \(2,\)"):
        w.assign_value(np.zeros(3, np.float32))


def test_traced_updates_are_ordered_by_the_token_and_written_back():
    w = ms.Parameter(np.ones(3, np.float32), name="w")

    def step(x):
        w.assign_value(F.add(w, x))
        return F.add(w, w)

    program = trace_program(step, [tensor_type("f32", (3,))], "step")
    verify(program.graph)
    assert [n.op for n in program.graph.nodes if n.op.startswith("ref_")] == ["ref_load", "ref_store"]
    assert program.params == (w,) and program.has_state
    compiled = compile_graph(program.graph)
    expected = np.ones(3, np.float32)
    for _ in range(3):
        x = np.arange(3, dtype=np.float32)
        args, cells = program.state_arguments()
        out = compiled.run([x, *args])
        program.write_back(cells)
        expected = expected + x
        np.testing.assert_array_equal(out[0].to_host(), 2 * expected)
        np.testing.assert_array_equal(w.numpy(), expected)


def test_regions_read_parameters_but_cannot_assign_them():
    w = ms.Parameter(np.full(2, 3.0, np.float32), name="w")

    def reads(p):
        return cond(F.less(p, 0.0), lambda: F.add(w, 1.0), lambda: F.add(w, 2.0))

    program = trace_program(reads, [tensor_type("f32", ())], "reads")
    (out,) = compile_graph(program.graph).run([np.float32(1.0), *program.state_arguments()[0]])[:1]
    np.testing.assert_array_equal(out.to_host(), [5.0, 5.0])

    def writes(p):
        return cond(F.less(p, 0.0), lambda: w.assign_value(F.add(w, 1.0)), lambda: w)

    with pytest.raises(MskernelError, match="assigning parameter w inside a branch, loop body or vmapped function"):
        trace_program(writes, [tensor_type("f32", ())], "writes")
