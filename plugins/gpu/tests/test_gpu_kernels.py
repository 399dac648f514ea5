"""The kernel table's array code, and the ops the program runs itself (constants, refs,
control flow), against the reference semantics, on NumPy.

Every kernel is written once against the array library it is handed (CuPy on the device);
here the same code runs on NumPy, through the same :class:`~mskernel_gpu.executable.Program`
steps (bfloat16 widening and rounding included), on every sample of every claimed core op.
On a GPU, the conformance kit runs the same samples on CuPy
(``benchmarks/gpu/run_on_gpu.sh``)."""

from __future__ import annotations

import numpy as np
import pytest

from mskernel.hooks.host import host
from mskernel.testing import sample_tolerances
from mskernel_sdk import (
    DeviceArray, RefCell, TensorType, assert_close, rule_registry, run_reference, sample_graph,
    samples_for,
)

from mskernel_gpu.backend import GpuBackend
from mskernel_gpu.executable import Program
from mskernel_gpu.fused_op import FUSED_OP
from mskernel_gpu.kernels import host_lib
from mskernel_gpu.storage import from_bfloat16_bits, to_device_storage


class HostBackend:
    name = "gpu-test"


def device_args(graph, args):
    out = []
    for v, a in zip(graph.inputs, args):
        if isinstance(v.type, TensorType):
            out.append(to_device_storage(np, np.asarray(a), v.type.dtype))
        elif isinstance(a, RefCell):
            cell = RefCell(a.type, DeviceArray(HostBackend(), a.type,
                                               to_device_storage(np, a.value, a.type.dtype)))
            out.append(cell)
        else:
            out.append(a)
    return out


def to_reference(value, array):
    """Device storage as reference storage (``value``: a Value or a RefCell)."""
    if value.type.dtype.name == "bfloat16":
        return from_bfloat16_bits(np, array)
    return array


def claimed_ops() -> list[str]:
    """Every op the backend claims but the generated kernels (which need a device)."""
    return sorted(op for op in GpuBackend().capabilities().ops if op != FUSED_OP)


@pytest.mark.parametrize("op", claimed_ops())
def test_kernel_agrees_with_reference(op):
    host().load_external()
    failures = []
    # two copies of each sample: running mutates their ref cells
    for sample, own in zip(samples_for(op), samples_for(op)):
        graph = sample_graph(sample)
        with np.errstate(all="ignore"):
            expected = run_reference(graph, list(sample.args))
            program = Program(graph, host_lib())
            args = device_args(graph, own.args)
            actual = program.run(args)
        for cell, want_cell in zip(args, sample.args):  # what the stores left in the cells
            if isinstance(cell, RefCell):
                got = to_reference(cell, np.asarray(cell.value.data))
                assert_close(got, want_cell.value, cell.type.dtype, what=f"{sample} cell")
        dtypes = [v.type.dtype if isinstance(v.type, TensorType) else None for v in graph.outputs]
        bounds = sample_tolerances(sample, dtypes, rule_registry())
        for value, got, want, (rtol, atol) in zip(graph.outputs, actual, expected, bounds):
            if not isinstance(value.type, TensorType):
                continue
            try:
                assert_close(to_reference(value, np.asarray(got)), want, value.type.dtype,
                             rtol=rtol, atol=atol, what=str(sample))
            except AssertionError as exc:
                failures.append(str(exc)[:400])
    assert not failures, "\n".join(failures)
