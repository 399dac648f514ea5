"""Every core op's samples (the conformance kit's table) exported at every opset from 13 to
23, checked by ONNX's checker with strict shape inference and run by ONNX Runtime against
the reference.

An op that the exporter refuses for some dtype must say why, naming the op; refusals are
expected only for complex arithmetic (ONNX has none), the random ops and the state ops.
Models ONNX Runtime has no kernel for are counted as runtime gaps; each op must still run,
and agree, for its float32 samples (or its one dtype) at every opset.
"""

from __future__ import annotations

import os

import pytest
from mskernel_onnx.export import OPSETS, ExportError, to_onnx
from mskernel_sdk import dtype, op_registry, sample_graph, samples_for, tolerance
from onnx_checks import TALLY, OrtCache, check_against_reference, with_float32_io

CORE_OPS = sorted(op.name for op in op_registry() if op.owner == "mskernel")
#: ops with no ONNX export, and the words their error gives as the reason
NOT_EXPORTED = {**{op: "counter-based Threefry" for op in CORE_OPS if op.startswith("random_")},
                "ref_load": "no mutable state", "ref_store": "no mutable state",
                "max_pool_grad": "ONNX has no equivalent of it"}
#: the reasons an export of a sample of an exported op may be refused
EXPECTED_REFUSALS = ("ONNX has no complex arithmetic", "ONNX graphs take tensors only",
                     "ONNX's DFT exists from opset 17")
#: ops whose ONNX form appeared after opset 13: the first opset that has it
FIRST_OPSET = {"fft": 17}
#: (op, dtype) → (rtol, atol) where the oracle is less accurate than the dtype: ONNX Runtime
#: computes float64 Gelu (opset 20) to about 1e-8
ORACLE_TOLERANCE = {("gelu", "float64"): (1e-7, 1e-9)}
#: set MSKERNEL_ONNX_OPSETS=18 (say) to check fewer opsets while working
SELECTED = [int(o) for o in os.environ.get("MSKERNEL_ONNX_OPSETS", "").split(",") if o] or \
    list(OPSETS)

_cache = OrtCache()


@pytest.mark.parametrize("op", [op for op in CORE_OPS if op not in NOT_EXPORTED])
def test_op_exports_and_agrees_with_the_reference(op):
    samples = samples_for(op)
    assert samples, f"no samples for {op}"
    ran_float32 = {opset: 0 for opset in SELECTED}
    for opset in SELECTED:
        for sample in samples:
            graph = sample_graph(sample)
            what = f"{sample} at opset {opset}"
            try:
                model = to_onnx(graph, opset=opset)
            except ExportError as exc:
                message = str(exc)
                assert f"op '{op}'" in message or "graph input" in message, message
                assert any(reason in message for reason in EXPECTED_REFUSALS), message
                TALLY["refused"] += 1
                continue
            bf16 = any(t.dtype.name == "bfloat16" for t in sample.arg_types()) or any(
                v.type.dtype.name == "bfloat16" for v in graph.outputs)
            checked = with_float32_io(graph) if bf16 else graph
            if bf16:
                model = to_onnx(checked, opset=opset)
            rtol, atol = sample.rtol, sample.atol
            if bf16 and rtol is None:
                rtol, atol = tolerance(dtype("bfloat16"))
            rtol, atol = ORACLE_TOLERANCE.get((op, _main_dtype(sample)), (rtol, atol))
            outcome = check_against_reference(model, checked, sample.args, rtol=rtol,
                                              atol=atol, cache=_cache, what=what)
            if outcome.ran and _main_dtype(sample) in ("float32", None):
                ran_float32[opset] += 1
    missing = [opset for opset, n in ran_float32.items()
               if n == 0 and opset >= FIRST_OPSET.get(op, 0)]
    assert not missing, f"no float32 sample of {op} ran under ONNX Runtime at opsets {missing}"


def _main_dtype(sample) -> str | None:
    types = [t for t in sample.arg_types() if hasattr(t, "dtype")]
    floats = [t.dtype.name for t in types if t.dtype.is_floating]
    if floats:
        return floats[0]
    return None if not types or all(t.dtype.is_integer or t.dtype.is_bool for t in types) \
        else types[0].dtype.name


@pytest.mark.parametrize("op", sorted(NOT_EXPORTED))
def test_ops_without_an_onnx_form_are_refused_with_the_reason(op):
    for sample in samples_for(op):
        graph = sample_graph(sample)
        if any(not hasattr(v.type, "dtype") for v in graph.inputs):
            continue  # the state ops take refs, which no ONNX graph input can be
        with pytest.raises(ExportError) as error:
            to_onnx(graph)
        message = str(error.value)
        assert f"op '{op}'" in message and NOT_EXPORTED[op] in message, message
