"""The IR's text form: printing and parsing back give the same graph and the same text, for
every sample of every core op and for hand-written graphs with regions, refs, tokens, names,
locations, odd strings and odd floats; bad text gives a ParseError saying where and what."""

import math
import re
import struct

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from hypothesis.extra import numpy as hnp

from mskernel.errors import InferError, ParseError
from mskernel.ir import (
    ALL_DTYPES, TOKEN, Graph, GraphBuilder, Node, RefType, SourceLoc, Value, float32, tensor_type,
)
from mskernel.ir.dtypes import round_to_bfloat16
from mskernel.ir.parser import MAX_NESTING, parse_graph
from mskernel.ir.printer import print_graph
from mskernel.ops import elementwise, op_registry
from mskernel.ops.registry import Attr, OpDef, OpRegistry
from mskernel.ops.rules import tensor
from mskernel.testing import sample_graph, samples_for


# -- structural comparison ---------------------------------------------------------------------

def exact_key(value):
    """A key equal only for bit-identical attribute values of the same Python type."""
    if isinstance(value, np.ndarray):
        return ("ndarray", value.dtype.str, value.shape, value.tobytes())
    if isinstance(value, np.generic):
        return ("scalar", value.dtype.str, value.tobytes())
    if isinstance(value, tuple):
        return ("tuple",) + tuple(exact_key(v) for v in value)
    if isinstance(value, float):
        return ("float", struct.pack("<d", value))
    if isinstance(value, complex):
        return ("complex", struct.pack("<dd", value.real, value.imag))
    return (type(value).__name__, value)


def assert_same_graph(a: Graph, b: Graph, env=None) -> None:
    """``a`` and ``b`` are the same graph up to value identity."""
    env = {} if env is None else env
    assert a.name == b.name

    def bind(xs, ys):
        assert len(xs) == len(ys)
        for x, y in zip(xs, ys):
            assert x.type == y.type and x.name == y.name, (x, y)
            env[x] = y

    bind(a.inputs, b.inputs)
    assert len(a.nodes) == len(b.nodes)
    for n, m in zip(a.nodes, b.nodes):
        assert (n.op, n.loc) == (m.op, m.loc)
        assert [env[v] for v in n.inputs] == list(m.inputs)
        assert sorted(n.attrs) == sorted(m.attrs)
        for k in n.attrs:
            assert exact_key(n.attrs[k]) == exact_key(m.attrs[k]), (n.op, k)
        assert len(n.regions) == len(m.regions)
        for r, s in zip(n.regions, m.regions):
            assert_same_graph(r, s, env)
        bind(n.outputs, m.outputs)
    assert [env[v] for v in a.outputs] == list(b.outputs)


def round_trip(graph: Graph, registry=None) -> str:
    text = print_graph(graph)
    parsed = parse_graph(text, registry)
    assert print_graph(parsed) == text
    assert_same_graph(graph, parsed)
    return text


# -- every sample of every core op ---------------------------------------------------------------

@pytest.mark.parametrize("op", sorted(op.name for op in op_registry() if op.owner == "mskernel"))
def test_every_core_sample_round_trips(op):
    for sample in samples_for(op):
        round_trip(sample_graph(sample))


# -- a registry with region, state and attribute-carrying ops ------------------------------------

def _if_infer(cond, *args, regions):
    cond = tensor(cond, "cond")
    if cond.shape != () or not cond.dtype.is_bool:
        raise InferError(f"cond must be a bool scalar, got {cond}")
    then, else_ = regions
    for region in regions:
        if region.input_types != args:
            raise InferError(f"region @{region.name} takes {region.input_types}, given {args}")
    if then.output_types != else_.output_types:
        raise InferError("branches return different types")
    return then.output_types


def _if(cond, *args, regions, run_region):
    return tuple(run_region(regions[0] if cond else regions[1], *args))


def _load_infer(ref, token):
    return ref.value, TOKEN


def _store_infer(ref, value, token):
    if value != ref.value:
        raise InferError(f"cannot store {value} into {ref}")
    return TOKEN


def _store(ref, value, token):
    ref.value = value
    return token


TEST_OPS = [
    OpDef("test.if", ("cond", "*args"), _if_infer, _if, num_regions=2),
    OpDef("test.load", ("ref", "token"), _load_infer, lambda r, t: (r.value, t), effectful=True),
    OpDef("test.store", ("ref", "value", "token"), _store_infer, _store, effectful=True),
    OpDef("test.annotate", ("x",), lambda x, value: x, lambda x, value: x,
          attrs=(Attr("value", "any", None),)),
    OpDef("test.sink", ("*xs",), lambda *xs: (), lambda *xs: ()),
    OpDef("return", ("x",), lambda x: x, lambda x: x),
    OpDef("weird op/name", ("x",), lambda x: x, lambda x: x),
]


@pytest.fixture(scope="module")
def reg():
    registry = OpRegistry()
    registry.define_all(elementwise.OPS)
    registry.define_all(TEST_OPS)
    return registry


def branch(registry, name, t, op=None):
    b = GraphBuilder(name, registry)
    x = b.input(t)
    return b.build([b.op(op, x) if op else x])


def example_graph(registry):
    f = tensor_type("f32", (2, 1))
    b = GraphBuilder("main", registry)
    x = b.input(f, name="x")
    p = b.input(RefType(f), name="fc.bias")
    tok = b.input(TOKEN)
    c = b.input(tensor_type("bool", ()), name="c")
    y = b.op("add", x, x, loc=SourceLoc("model.py", 12))
    w, tok = b.op("test.load", p, tok)
    (z,) = b.op("test.if", c, y, regions=[branch(registry, "then", f, "neg"),
                                          branch(registry, "else", f)])
    tok = b.op("test.store", p, z, tok)
    return b.build([y, z, w, tok])


EXAMPLE_TEXT = """\
graph @main(%0: f32[2,1] "x", %1: !ref<f32[2,1]> "fc.bias", %2: !token, %3: bool[] "c") {
  %4 = add(%0, %0) : f32[2,1]  loc("model.py":12)
  %5, %6 = test.load(%1, %2) : f32[2,1], !token
  %7 = test.if(%3, %4) : f32[2,1] {
    then(%8: f32[2,1]) {
      %9 = neg(%8) : f32[2,1]
      return %9
    }
    else(%10: f32[2,1]) {
      return %10
    }
  }
  %11 = test.store(%1, %7, %6) : !token
  return %4, %7, %5, %11
}
"""


def without_builder_locations(text):
    """``text`` less the locations GraphBuilder gave the nodes this file made without one."""
    return re.sub(rf'  loc\("{re.escape(__file__)}":\d+\)', "", text)


def test_printed_form_is_the_documented_one(reg):
    graph = example_graph(reg)
    assert without_builder_locations(print_graph(graph)) == EXAMPLE_TEXT
    assert without_builder_locations(str(graph)) == EXAMPLE_TEXT


def test_the_documented_example_is_real_printer_output():
    from mskernel.ir import printer

    example = [line[4:] for line in printer.__doc__.splitlines() if line.startswith("    ")]
    text = "\n".join(example) + "\n"
    assert print_graph(parse_graph(text)) == text


def test_regions_refs_tokens_names_and_locations_round_trip(reg):
    round_trip(example_graph(reg), reg)


def test_nested_regions_quoted_names_and_zero_output_nodes_round_trip(reg):
    f, flag = tensor_type("f64", (3,)), tensor_type("bool", ())
    inner = GraphBuilder("inner then", reg)
    x = inner.input(f, name="")
    inner_then = inner.build([inner.op("exp", x, loc=SourceLoc('dir "a"\\b.py', -1))])
    then = GraphBuilder("then", reg)
    c, y = then.input(flag), then.input(f)
    (z,) = then.op("test.if", c, y, regions=[inner_then, branch(reg, "return", f)])
    otherwise = GraphBuilder("else", reg)
    otherwise.input(flag)
    y2 = otherwise.input(f)
    b = GraphBuilder("graph with spaces", reg)
    c, y = b.input(flag), b.input(f)
    (out,) = b.op("test.if", c, c, y, regions=[
        then.build([z]), otherwise.build([otherwise.op("neg", y2)])])
    b.op("test.sink", b.op("return", out), b.op("weird op/name", y))
    b.op("test.sink")
    text = round_trip(b.build([]), reg)
    assert text.startswith('graph @"graph with spaces"(')
    for piece in ('"inner then"(%', '"return"(%', '"return"(%', '"weird op/name"(%',
                  'loc("dir \\"a\\"\\\\b.py":-1)', "  test.sink() : ()\n", "\n  return\n}"):
        assert piece in without_builder_locations(text), piece


# -- attribute values --------------------------------------------------------------------------

def annotated(reg, value, *, name=None, loc=None):
    b = GraphBuilder("main", reg)
    x = b.input(tensor_type("f32", (2,)), name=name)
    return b.build([b.op("test.annotate", x, value=value, loc=loc)])


def attr_text(reg, value):
    text = round_trip(annotated(reg, value), reg)
    return text.split("{value=", 1)[1].rsplit("} :", 1)[0]


SIGNALING_NAN = struct.unpack("<d", b"\1\0\0\0\0\0\xf0\x7f")[0]


@pytest.mark.parametrize("value, printed", [
    (None, "none"), (True, "true"), (False, "false"), (0, "0"), (-7, "-7"),
    (2**100, str(2**100)), (1.0, "1.0"), (-0.0, "-0.0"), (0.1, "0.1"), (1e300, "1e+300"),
    (5e-324, "5e-324"), (float("inf"), "inf"), (float("-inf"), "-inf"), (float("nan"), "nan"),
    (-math.nan, "nan(0xfff8000000000000)"), (SIGNALING_NAN, "nan(0x7ff0000000000001)"),
    (complex(1.5, -0.0), "complex(1.5, -0.0)"),
    (complex(-math.nan, math.inf), "complex(nan(0xfff8000000000000), inf)"),
    ("", '""'), ("a b", '"a b"'),
    ("q\"\\\n\t\x00\x7f\u2028\ud800é€😀\U000e0001",
     '"q\\"\\\\\\n\\t\\u0000\\u007f\\u2028\\ud800é€😀\\U000e0001"'),
    (float32, "f32"), ((), "()"), ((1,), "(1,)"),
    ((1, (2.0, ("x", None)), ()), '(1, (2.0, ("x", none)), ())'),
])
def test_attribute_values_print_readably_and_read_back_exactly(reg, value, printed):
    assert attr_text(reg, value) == printed


@pytest.mark.parametrize("dt", ALL_DTYPES, ids=str)
def test_dtype_attributes_are_their_short_names(reg, dt):
    assert attr_text(reg, dt) == dt.short


@pytest.mark.parametrize("storage", sorted({dt.storage for dt in ALL_DTYPES}, key=str), ids=str)
def test_array_constants_of_every_storage_dtype_are_bit_exact(reg, storage):
    info = np.iinfo(storage) if storage.kind in "iu" else None
    if storage.kind == "b":
        values = [True, False, True, True]
    elif info is not None:
        values = [info.min, info.max, 0, 1]
    else:
        finfo = np.finfo(storage)
        values = [float(finfo.tiny) / 4, float(finfo.max), -0.0, float("nan")]
    arr = np.array(values, dtype=storage).reshape(2, 2)
    if storage.kind == "c":
        arr = arr + 1j * arr[::-1]
    text = attr_text(reg, arr)
    assert text.startswith(f"dense<{tensor_type(storage, (2, 2))}: [")
    assert attr_text(reg, arr[:0]) == f"dense<{tensor_type(storage, (0, 2))}: []>"
    assert attr_text(reg, arr[0, 0]).startswith(f"scalar<{tensor_type(storage).dtype.short}: ")


def test_bfloat16_constants_and_nan_payloads_are_bit_exact(reg):
    bf16 = round_to_bfloat16(np.array([0.1, -3e38, 1e-40, -0.0], np.float32))
    assert attr_text(reg, bf16) == "dense<f32[4]: [0.100097656, -3.0040553e+38, 9.1835e-41, -0.0]>"
    odd_nans = np.array([0x7FC00001, 0xFFC00000, 0x7F800001], np.uint32).view(np.float32)
    assert attr_text(reg, odd_nans) == "dense<f32[3]: 0x0100c07f0000c0ff0100807f>"
    assert attr_text(reg, odd_nans[1]) == "scalar<f32: 0x0000c0ff>"


def test_non_native_byte_order_arrays_keep_their_values(reg):
    big = np.array([1.5, -2.0], dtype=">f8")
    parsed = parse_graph(print_graph(annotated(reg, big)), reg)
    value = parsed.nodes[0].attrs["value"]
    assert value.dtype == np.float64 and value.tolist() == [1.5, -2.0]


def test_unprintable_attribute_types_are_named(reg):
    x = Value(tensor_type("f32", ()))
    node = Node("test.annotate", (x,), (Value(x.type),), {"value": {"a": 1}})
    with pytest.raises(TypeError, match="op 'test.annotate'.*attribute 'value'.*dict"):
        print_graph(Graph((x,), (node,), node.outputs))


_texts = st.text(st.characters(exclude_categories=()), max_size=12)
_numpy_dtypes = st.sampled_from(sorted({dt.storage for dt in ALL_DTYPES}, key=str))
_leaves = st.one_of(
    st.none(), st.booleans(), st.integers(), st.floats(), _texts,
    st.complex_numbers(allow_nan=True, allow_infinity=True),
    st.sampled_from(ALL_DTYPES),
    _numpy_dtypes.flatmap(lambda d: hnp.arrays(d, hnp.array_shapes(min_dims=0, max_dims=3,
                                                                    min_side=0, max_side=3))),
    _numpy_dtypes.flatmap(hnp.from_dtype),
)
_values = st.recursive(_leaves, lambda inner: st.lists(inner, max_size=3).map(tuple),
                       max_leaves=8)


@settings(max_examples=150, deadline=None)
@given(value=_values, name=st.one_of(st.none(), _texts), file=_texts, line=st.integers())
def test_any_attribute_name_and_location_round_trip(reg, value, name, file, line):
    round_trip(annotated(reg, value, name=name, loc=SourceLoc(file, line)), reg)


# -- parse errors ------------------------------------------------------------------------------

GOOD = """\
graph @main(%0: f32[2,3] "x") {
  %1 = add(%0, %0) : f32[2,3]
  return %1
}
"""


def parse_error(text, registry=None) -> str:
    with pytest.raises(ParseError) as info:
        parse_graph(text, registry)
    return str(info.value)


@pytest.mark.parametrize("old, new, message", [
    ("graph @main", "grap @main", "1:1: expected 'graph', found 'grap'"),
    ("add(%0, %0)", "ad(%0, %0)", "2:8: unknown op 'ad': no installed plugin defines it; "
                                  "did you mean "),
    (": f32[2,3]\n  return", ": f32[2,4]\n  return",
     "2:8: op 'add' infers result type(s) f32[2,3] but the text says f32[2,4]"),
    ("add(%0, %0)", "add(%0, %7)", "2:16: value %7 is not defined before this use"),
    ("%1 = add", "%0 = add", "2:3: value %0 is defined twice"),
    ("%1 = add", "%1, %2 = add", "2:12: op 'add' defines 2 value(s) but lists 1 result type(s)"),
    ('"x"', '"x', "1:26: unterminated string literal"),
    ('"x"', '"\\q"', "1:27: invalid escape sequence '\\\\q' in string"),
    ("f32[2,3] \"x\"", "f33[2,3]", "1:17: unknown dtype 'f33'"),
    ("f32[2,3] \"x\"", "!tok", "1:18: unknown type !tok; expected !token or !ref<...>"),
    ("(%0, %0)", "(%0, %0) {alpha=1}", "op 'add': unknown attribute(s) alpha; accepted: none"),
    ("(%0, %0)", "(%0 %0)", "2:15: expected ')', found '%0'"),
    ("  return %1\n", "", "3:1: expected 'return' ending the graph, found '}'"),
    ("}\n", "} }\n", "4:3: expected end of input after the graph, found '}'"),
    ("f32[2,3]\n", "f32[2,3] $\n", "2:31: unexpected character '$'"),
])
def test_parse_errors_say_where_and_what(old, new, message):
    assert old in GOOD
    error = parse_error(GOOD.replace(old, new, 1))
    assert message in error
    line, col = (int(n) for n in error.split(":", 2)[:2])
    source_line, caret = error.splitlines()[1:3]
    assert source_line == "  " + GOOD.replace(old, new, 1).split("\n")[line - 1]
    assert caret == "  " + " " * (col - 1) + "^"


def test_type_rule_errors_name_the_op_and_line():
    text = GOOD.replace("add(%0, %0) : f32[2,3]", "logical_not(%0) : bool[2,3]")
    assert parse_error(text).startswith("2:8: op 'logical_not': expects a bool input")


def test_regions_are_closed(reg):
    text = EXAMPLE_TEXT.replace("%9 = neg(%8)", "%9 = neg(%0)")
    assert "6:16: value %0 is not defined before this use (regions see only their own" \
        in parse_error(text, reg)


def test_literals_are_checked(reg):
    def text(value):
        return GOOD.replace("add(%0, %0) : f32[2,3]",
                            f"test.annotate(%0) {{value={value}}} : f32[2,3]")

    assert "needs 4 element(s), got 3" in parse_error(text("dense<i8[2,2]: [1, 2, 3]>"), reg)
    assert "element out of range for i8" in parse_error(text("dense<i8[1]: [300]>"), reg)
    assert "expected true or false, found '1'" in parse_error(text("dense<bool[1]: [1]>"), reg)
    assert "not a whole number of 4-byte elements" in parse_error(
        text("dense<f32[1]: 0x000000>"), reg)
    assert "bfloat16 values are stored as f32" in parse_error(text("dense<bf16[1]: [1.0]>"), reg)
    assert "0x1 is not the bits of a 64-bit NaN" in parse_error(text("nan(0x1)"), reg)
    parsed = parse_graph(text("dense<f32[2]: [1, -inf]>"), reg)
    assert parsed.nodes[0].attrs["value"].tolist() == [1.0, -math.inf]



def test_text_no_printer_writes_is_refused_with_a_parse_error(reg):
    def text(value):
        return GOOD.replace("add(%0, %0) : f32[2,3]",
                            f"test.annotate(%0) {{value={value}}} : f32[2,3]")

    assert parse_error(text("(" * 101 + ")" * 101), reg).startswith(
        "2:133: tuples nested more than 100 deep")
    parse_graph(text("(" * 100 + ")" * 100), reg)
    assert parse_error(text("(" * 100_000), reg).startswith("2:133: tuples nested more than")
    assert parse_error(text("-" + "7" * 4301), reg).startswith(
        "2:33: an integer of 4301 digits, more than 4300")
    assert parse_error(GOOD.replace("f32[2,3] \"x\"", "f32[" + "1" * 5000 + "]"), reg) \
        .startswith("1:21: an integer of 5000 digits")
    assert "dense constant of type f32[0,100000000000000000000]: " in parse_error(
        text("dense<f32[0,100000000000000000000]: []>"), reg)


def test_regions_nest_at_most_max_nesting_deep(reg):
    f, c = tensor_type("f32", (2, 1)), tensor_type("bool", ())

    def leaf():
        b = GraphBuilder("leaf", reg)
        b.input(c)
        return b.build([b.input(f)])

    def nested(depth):
        if depth == 0:
            return leaf()
        b = GraphBuilder("level", reg)
        cond, x = b.input(c), b.input(f)
        return b.build(list(b.op("test.if", cond, cond, x,
                                 regions=[nested(depth - 1), leaf()])))

    parse_graph(print_graph(nested(MAX_NESTING)), reg)
    deep = print_graph(nested(MAX_NESTING + 1))
    assert f"regions nested more than {MAX_NESTING} deep" in parse_error(deep, reg)


def test_a_type_rule_failing_on_odd_attributes_is_a_parse_error(reg):
    def fragile(x, *, k):
        return tensor_type(x.dtype, x.shape[k:])  # a rule that never expected a string k

    registry = OpRegistry()
    registry.define(OpDef("test.fragile", ("x",), fragile, lambda x, k: x,
                          attrs=(Attr("k", "any", None),)))
    text = GOOD.replace("add(%0, %0)", 'test.fragile(%0) {k="1"}')
    assert parse_error(text, registry).startswith(
        "2:8: op 'test.fragile' cannot take these inputs and attributes (TypeError: ")

def test_comments_and_layout_are_free(reg):
    text = ("// a comment\ngraph@main(%a:f32[2,3]){%b=add(%a,%a):f32[2,3] // trailing\n"
            "return %b}")
    assert print_graph(parse_graph(text)) == GOOD.replace(' "x"', "")


def test_parsed_attributes_are_bound_by_the_registry():
    parsed = parse_graph(GOOD.replace("add(%0, %0)", "clip(%0) {min=-1}"))
    assert parsed.nodes[0].attrs == {"min": -1.0, "max": None}
    assert isinstance(parsed.nodes[0].attrs["min"], float)
