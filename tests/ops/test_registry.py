"""The op registry: definition once, overrides, attribute schemas, errors, rules."""

import numpy as np
import pytest

from mskernel.errors import InferError, OpError, UnknownOpError
from mskernel.ir import GraphBuilder, SourceLoc, tensor_type
from mskernel.ops import Attr, OpDef, OpRegistry, RuleRegistry, op_registry


def identity_op(name="toy.identity", owner="mskernel-toy"):
    return OpDef(name, ("x",), lambda x, scale: x, lambda x, scale: x * scale,
                 attrs=(Attr("scale", "float", 1.0),), owner=owner)


def test_redefinition_is_an_error_unless_declared_override():
    reg = OpRegistry()
    reg.define(identity_op())
    with pytest.raises(OpError, match=r"'toy.identity' is already defined by mskernel-toy"):
        reg.define(identity_op(owner="mskernel-other"))
    reg.define(identity_op(owner="mskernel-other"), override=True)
    assert reg.get("toy.identity").owner == "mskernel-other"
    assert reg.overrides["toy.identity"] == ("mskernel-toy", "mskernel-other")


def test_owner_stamped_by_the_host_replaces_the_default():
    reg = OpRegistry()
    reg.define(identity_op(owner="mskernel"), owner="mskernel-quantum")
    assert reg.get("toy.identity").owner == "mskernel-quantum"


def test_unknown_op_suggests_close_names():
    with pytest.raises(UnknownOpError, match=r"unknown op 'sigmod'.*did you mean 'sigmoid'"):
        op_registry().get("sigmod")


def test_attribute_schema_validation_names_op_and_attribute():
    op = op_registry().get("gelu")
    assert op.bind_attrs({}) == {"approximate": "none"}
    with pytest.raises(OpError, match=r"op 'gelu'.*unknown attribute\(s\) approx; accepted: approximate"):
        op.bind_attrs({"approx": "tanh"})
    with pytest.raises(OpError, match=r"attribute 'approximate' expects str, got 3"):
        op.bind_attrs({"approximate": 3})
    with pytest.raises(OpError, match=r"op 'cast'.*missing required attribute 'dtype'"):
        op_registry().get("cast").bind_attrs({})


@pytest.mark.parametrize("kind,good,bad", [
    ("int", 3, True), ("int", np.int64(3), 3.5), ("float", 2, "x"), ("bool", False, 0),
    ("ints", (1, 2), (1, 2.5)), ("dtype", "f32", "float8"), ("int?", None, "1"),
])
def test_attr_kinds_accept_and_reject(kind, good, bad):
    spec = Attr("a", kind)
    spec.coerce(good)
    with pytest.raises(InferError, match=f"attribute 'a' expects {kind.replace('?', '[?]')}"):
        spec.coerce(bad)


def test_arity_errors_list_the_expected_inputs():
    b = GraphBuilder()
    x = b.input(tensor_type("f32", (2,)))
    with pytest.raises(OpError, match=r"op 'add' at f.py:3: expects 2 input\(s\) \(x, y\), got 1"):
        b.op("add", x, loc=SourceLoc("f.py", 3))


def test_inference_errors_carry_the_source_location():
    b = GraphBuilder()
    x, y = b.input(tensor_type("f32", (2,))), b.input(tensor_type("i32", (2,)))
    with pytest.raises(OpError, match=r"op 'add' at train.py:42: operands must have the same dtype"):
        b.op("add", x, y, loc=SourceLoc("train.py", 42))


def test_rule_registry_records_owners_and_refuses_silent_replacement():
    rules = RuleRegistry()
    rules.register("vjp", "exp", object(), owner="mskernel-autodiff")
    assert rules.has("vjp", "exp") and rules.ops_with("vjp") == {"exp"}
    with pytest.raises(OpError, match=r"'vjp' rule for op 'exp' is already registered by mskernel-autodiff"):
        rules.register("vjp", "exp", object(), owner="mskernel-other")


def test_variadic_input_must_be_last():
    with pytest.raises(ValueError, match="variadic input"):
        OpDef("bad", ("*xs", "y"), lambda *a: a[0], lambda *a: a[0])


def test_mskernel_ops_names_each_thing_once():
    import mskernel.ops
    import mskernel.ops.registry as registry_module
    from mskernel.frontend import functional

    assert mskernel.ops.registry is registry_module  # the module, never a function
    assert mskernel.ops.OpDef is registry_module.OpDef
    assert mskernel.ops.exp is functional.exp  # what users call
    assert op_registry().get("exp").owner == "mskernel"
