"""Table-driven checks over every core op: each has samples; each sample's reference result has
the shape and dtype the op's rule inferred."""

import numpy as np
import pytest

from mskernel.ir.dtypes import bfloat16
from mskernel.ir.types import TensorType
from mskernel.ops import op_registry, rule_registry
from mskernel.runtime.interpreter import run_node
from mskernel.testing import SAMPLES_RULE, all_samples, sample_graph

CORE_OPS = sorted(op.name for op in op_registry() if op.owner == "mskernel")
SAMPLES = list(all_samples(owner="mskernel"))


def test_every_core_op_has_samples():
    missing = sorted(set(CORE_OPS) - rule_registry().ops_with(SAMPLES_RULE))
    assert not missing, f"ops without samples: {missing}"


@pytest.mark.parametrize("sample", SAMPLES, ids=str)
def test_reference_agrees_with_inferred_types(sample):
    graph = sample_graph(sample)
    (node,) = graph.nodes
    opdef = op_registry().get(node.op)
    extra = {}
    if node.regions:
        from mskernel.runtime.interpreter import run_graph
        extra = {"regions": node.regions,
                 "run_region": lambda region, *a: run_graph(region, a)}
    with np.errstate(all="ignore"):
        raw = opdef.reference(*sample.args, **node.attrs, **extra)
    raw = raw if isinstance(raw, tuple) else (raw,)
    assert len(raw) == len(node.outputs)
    for value, result in zip(node.outputs, raw):
        if not isinstance(value.type, TensorType):
            continue
        arr = np.asarray(result)
        assert arr.shape == value.type.shape, (sample, arr.shape, value.type)
        if value.type.dtype is not bfloat16:
            assert arr.dtype == value.type.dtype.storage, (sample, arr.dtype, value.type)
    run_node(node, list(sample.args), op_registry())
