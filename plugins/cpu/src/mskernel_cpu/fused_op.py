"""The private op ``cpu.fused_elementwise``: elementwise ops computed in one pass over the
output (made by the ``cpu.fuse_elementwise`` pass, :mod:`.fusion`; run by
``csrc/kernels/fused_elementwise.cpp``).

Its one region is a DAG of core elementwise ops over the node's operands, returning one value.
A node may also come from a file or a hand-built graph, so the type rule checks everything the
kernel assumes of the region, not only its signature:

- the operands are the region's inputs, tensors of no complex dtype, each broadcasting to the
  output's shape (the kernel reads every input at the output's index);
- each region node is a core elementwise op (``core_ops("elementwise")``) with no region,
  one output and inputs defined before it in the region, its output type exactly what its own
  rule gives, of no complex dtype, and broadcasting to the output's shape (an elementwise op
  commutes with broadcasting, so computing it at the output's shape is exact);
- the region returns a value of the output's type defined in it (an input or a node);
- the program fits the kernel's :data:`MAX_REGISTERS` registers (the operands, one per node,
  and one to copy a result that is not the last node's).
"""

from __future__ import annotations

from typing import Any, Callable, Mapping, Sequence

from mskernel_sdk import (
    FUSED_TRAIT, Graph, InferError, Node, OpDef, OpError, TensorType, Type, Value, core_ops,
)

FUSED_OP = "cpu.fused_elementwise"

#: Registers of the fused kernel's interpreter: the node's inputs plus one per op.
MAX_REGISTERS = 32

Shape = tuple[int, ...]


def broadcasts_to(shape: Shape, out: Shape) -> bool:
    """Whether ``shape`` broadcasts to ``out`` (NumPy's rule, ``out`` unchanged)."""
    if len(shape) > len(out):
        return False
    return all(d == 1 or d == o for d, o in zip(reversed(shape), reversed(out)))


def _value_type(value: Any, what: str, out: Shape) -> TensorType:
    """The tensor type of a region value the kernel computes at the output's shape."""
    t = value.type if isinstance(value, Value) else None
    if not isinstance(t, TensorType):
        raise InferError(f"{what} must be a tensor, got {t if t is not None else value!r}")
    if t.dtype.is_complex:
        raise InferError(f"{what} is {t}: the fused kernel computes no complex dtype")
    if not broadcasts_to(t.shape, out):
        raise InferError(f"{what} has shape {list(t.shape)}, which does not broadcast to the "
                         f"output's shape {list(out)}")
    return t


def _check_node(k: int, node: Any, defined: set[Value], out: Shape,
                fusable: Mapping[str, OpDef]) -> None:
    where = f"region node {k}"
    if not isinstance(node, Node):
        raise InferError(f"{where} is a {type(node).__name__}, not a Node")
    where = f"{where} ('{node.op}')"
    opdef = fusable.get(node.op)
    if opdef is None:
        raise InferError(f"{where}: only core elementwise ops can be fused")
    if node.regions or len(node.outputs) != 1:
        raise InferError(f"{where} must have no region and one output")
    for i, v in enumerate(node.inputs):
        if v not in defined:
            raise InferError(f"{where}: input {i} is not a region input or the output of an "
                             "earlier region node")
    inputs = [_value_type(v, f"{where} input {i}", out) for i, v in enumerate(node.inputs)]
    result = _value_type(node.outputs[0], f"{where} output", out)
    try:
        attrs = opdef.bind_attrs(node.attrs, loc=node.loc)
        (expected,) = opdef.infer_types(inputs, attrs, loc=node.loc)
    except OpError as exc:
        raise InferError(f"{where}: {exc}") from None
    if expected != result:
        raise InferError(f"{where}: its output is {result}, but '{node.op}' of "
                         f"{', '.join(map(str, inputs))} gives {expected}")


def fused_infer(*operands: Type, regions: Sequence[Graph]) -> Type:
    """The type rule (see the module's docstring)."""
    (region,) = regions
    if not isinstance(region, Graph):
        raise InferError(f"the region must be a Graph, got {type(region).__name__}")
    if region.input_types != tuple(operands):
        raise InferError(f"the region takes {list(map(str, region.input_types))}, but the "
                         f"operands are {list(map(str, operands))}")
    if len(region.outputs) != 1:
        raise InferError(f"the region must return one value, it returns {len(region.outputs)}")
    result = region.outputs[0]
    if not isinstance(result, Value) or not isinstance(result.type, TensorType):
        raise InferError(f"the region must return a tensor, it returns {result!r}")
    out = result.type.shape
    defined: set[Value] = set()
    for i, v in enumerate(region.inputs):
        _value_type(v, f"operand {i}", out)
        defined.add(v)
    fusable = core_ops("elementwise")  # what the kernel computes (cast and where included)
    for k, node in enumerate(region.nodes):
        _check_node(k, node, defined, out, fusable)
        defined.add(node.outputs[0])
    if result not in defined:
        raise InferError("the region returns a value it does not define")
    _value_type(result, "the result", out)
    copies = 0 if region.nodes and result is region.nodes[-1].outputs[0] else 1
    registers = len(region.inputs) + len(region.nodes) + copies
    if registers > MAX_REGISTERS:
        raise InferError(f"the region needs {registers} registers (operands and ops), more "
                         f"than the kernel's {MAX_REGISTERS}")
    return result.type


def _fused_reference(*operands: Any, regions: Sequence[Graph], run_region: Callable) -> Any:
    return run_region(regions[0], *operands)[0]


FUSED_OPDEF = OpDef(
    FUSED_OP, ("*operands",), fused_infer, _fused_reference, num_regions=1,
    traits=frozenset({FUSED_TRAIT}),
    doc="elementwise ops computed in one pass (made by the cpu fusion pass): the region, a "
        "DAG of core elementwise ops of the operands, each broadcasting to the output's "
        "shape, gives the one output")
