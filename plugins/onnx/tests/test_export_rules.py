"""A plugin exports its own ops by attaching a translator under the rule kind
``onnx_export``; without one, the error names the plugin's distribution."""

from __future__ import annotations

import numpy as np
import pytest

from mskernel_onnx.export import ONNX_EXPORT_RULE, ExportError, check_onnx, to_onnx
from mskernel_sdk import (
    GraphBuilder, OpDef, hookimpl, register_plugin, run_reference, tensor_type,
)
from onnx_checks import run_ort


def _softsign(x):
    return x / (1 + np.abs(x))


def _translate(ctx, node, x):
    return ctx.op("Softsign", x)


class Acme:
    """A plugin defining two ops, exporting one of them."""

    @hookimpl
    def mskernel_register_ops(self, registry):
        registry.define(OpDef("acme.softsign", ("x",), lambda x: x, _softsign))
        registry.define(OpDef("acme.secret", ("x",), lambda x: x, lambda x: x * 0))

    @hookimpl
    def mskernel_register_rules(self, rules):
        rules.register(ONNX_EXPORT_RULE, "acme.softsign", _translate)


@pytest.fixture(scope="module", autouse=True)
def acme():
    register_plugin(Acme(), "acme")


def graph_of(op):
    b = GraphBuilder(op.replace(".", "_"))
    x = b.input(tensor_type("f32", (3, 4)), name="x")
    return b.build([b.op("exp", b.op(op, x))])


def test_a_plugin_op_with_a_translator_exports(rng):
    graph = graph_of("acme.softsign")
    model = to_onnx(graph)
    check_onnx(model)
    x = rng.standard_normal((3, 4)).astype(np.float32)
    (got,) = run_ort(model, [x])
    np.testing.assert_allclose(got, run_reference(graph, [x])[0], rtol=1e-6)


def test_a_plugin_op_without_one_names_its_distribution():
    with pytest.raises(ExportError, match=r"op 'acme.secret' at .*test_export_rules.py:\d+ "
                                          r"\(f32\[3,4\]\): it is defined by mskernel-acme, "
                                          r"which attaches no ONNX translation"):
        to_onnx(graph_of("acme.secret"))
