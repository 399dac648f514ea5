"""Conformance: every sample of every op the cpu backend claims, compiled on the cpu backend
alone (fallback denied), agrees with the reference interpreter within the dtype's tolerance
(exactly for integers and bools), outputs and ref cells alike.  Ops added to the backend are
picked up here automatically."""

from __future__ import annotations

import numpy as np
import pytest

from mskernel.hooks.host import host
from mskernel_sdk import (
    SAMPLES_RULE, DeviceArray, RefCell, TOKEN_VALUE, TensorType, TokenType, assert_close,
    rule_registry, run_reference, sample_graph, samples_for,
)

from mskernel_cpu.fusion import FUSED_OP
from mskernel_cpu.storage import device_dtype


def claimed_ops() -> list[str]:
    """The ops the backend claims but ``cpu.fused_elementwise``, whose regions only its pass
    builds (test_cpu_fusion.py checks it against the unfused graphs)."""
    host().load_external()
    return sorted(op for op in host().backends.get("cpu").capabilities().ops if op != FUSED_OP)


def to_host(value):
    return value.to_host() if isinstance(value, DeviceArray) else value


def test_every_claimed_op_has_samples():
    assert set(claimed_ops()) <= rule_registry().ops_with(SAMPLES_RULE)


@pytest.mark.parametrize("op", claimed_ops())
def test_samples_agree_with_reference(op, compile_cpu):
    # Two copies of each sample: running mutates their ref cells.
    failures = []
    for expected_sample, sample in zip(samples_for(op), samples_for(op)):
        try:
            check_sample(expected_sample, sample, compile_cpu)
        except AssertionError as exc:
            failures.append(f"{sample}: {exc}")
    assert not failures, "\n".join(failures)


def check_sample(expected_sample, sample, compile_cpu):
    graph = sample_graph(sample)
    with np.errstate(all="ignore"):
        expected = run_reference(graph, list(expected_sample.args))
    actual = compile_cpu(graph).run(list(sample.args))
    what = str(sample)
    for value, got, want in zip(graph.outputs, actual, expected):
        if isinstance(value.type, TensorType):
            assert isinstance(got, DeviceArray) and got.backend.name == "cpu", what
            assert got.data.dtype == device_dtype(value.type.dtype), what
            host_value = got.to_host()
            assert host_value.dtype == want.dtype and host_value.shape == want.shape, what
            assert_close(host_value, want, value.type.dtype, rtol=sample.rtol, atol=sample.atol,
                         what=what)
        elif isinstance(value.type, TokenType):
            assert got is TOKEN_VALUE
        else:
            assert isinstance(got, RefCell)
    for got, want in zip(sample.args, expected_sample.args):
        if isinstance(got, RefCell):
            assert isinstance(got.value, DeviceArray) and got.value.backend.name == "cpu", what
            assert_close(to_host(got.value), want.value, got.type.dtype, what=what)
