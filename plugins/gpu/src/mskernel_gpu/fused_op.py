"""The private op ``gpu.fused``: elementwise ops, and optionally the reduction of their
result, computed by one generated kernel (:mod:`.codegen`), made by the fusion pass
(:mod:`.fusion`).

``gpu.fused(*operands, reduce=, inner=)`` with one region: a DAG of ops the generator
computes (:data:`.codegen.FUSABLE`) over the region's inputs — the operands — each
broadcasting to the shape of the region's result, the *domain*.  With ``reduce`` "none" the
output is the region's result; with "sum", "max" or "min" it is that reduction over the last
``inner`` axes of the domain (float dtypes only), the reduced axes dropped.

A node may come from a file or a hand-built graph, so the type rule checks everything the
kernel assumes of the region, not only its signature: each node's op and dtypes, that it
reads only values defined before it, that its output type is what its own rule gives, and
that every value broadcasts to the domain.
"""

from __future__ import annotations

from typing import Any, Callable, Iterator, Sequence

import numpy as np

from mskernel_sdk import (
    FUSED_TRAIT, Attr, Graph, GraphBuilder, InferError, Node, OpDef, OpError, OpSample,
    TensorType, Type, Value, core_ops, random_array, tensor_type,
)

from .codegen import FLOATS, REDUCTIONS, fusable

FUSED_OP = "gpu.fused"
#: values a region may hold (operands + nodes): what one thread keeps in registers
MAX_VALUES = 48


def broadcasts_to(shape: Sequence[int], out: Sequence[int]) -> bool:
    if len(shape) > len(out):
        return False
    return all(d == 1 or d == o for d, o in zip(reversed(shape), reversed(out)))


def _tensor(value: Any, what: str, domain: Sequence[int]) -> TensorType:
    t = value.type if isinstance(value, Value) else None
    if not isinstance(t, TensorType):
        raise InferError(f"{what} must be a tensor, got {t if t is not None else value!r}")
    if not broadcasts_to(t.shape, domain):
        raise InferError(f"{what} has shape {list(t.shape)}, which does not broadcast to the "
                         f"domain {list(domain)}")
    return t


def check_region(region: Any, operands: Sequence[Type]) -> TensorType:
    """The type of the region's result, after checking the region (see the module doc)."""
    if not isinstance(region, Graph):
        raise InferError(f"the region must be a Graph, got {type(region).__name__}")
    if region.input_types != tuple(operands):
        raise InferError(f"the region takes {list(map(str, region.input_types))}, but the "
                         f"operands are {list(map(str, operands))}")
    if len(region.outputs) != 1 or len(region.inputs) + len(region.nodes) > MAX_VALUES:
        raise InferError(f"the region must return one value and hold at most {MAX_VALUES} "
                         "values")
    result = region.outputs[0]
    if not isinstance(result, Value) or not isinstance(result.type, TensorType):
        raise InferError(f"the region must return a tensor, it returns {result!r}")
    domain = result.type.shape
    defined = set(region.inputs)
    for i, v in enumerate(region.inputs):
        _tensor(v, f"operand {i}", domain)
    ops = core_ops()
    for k, node in enumerate(region.nodes):
        where = f"region node {k} ('{getattr(node, 'op', node)}')"
        if not isinstance(node, Node) or not fusable(node) or node.op not in ops:
            raise InferError(f"{where}: not an op the generated kernel computes")
        if any(v not in defined for v in node.inputs):
            raise InferError(f"{where}: reads a value not defined before it")
        inputs = [_tensor(v, f"{where} input {i}", domain) for i, v in enumerate(node.inputs)]
        output = _tensor(node.outputs[0], f"{where} output", domain)
        try:
            opdef = ops[node.op]
            (expected,) = opdef.infer_types(inputs, opdef.bind_attrs(node.attrs, loc=node.loc),
                                            loc=node.loc)
        except OpError as exc:
            raise InferError(f"{where}: {exc}") from None
        if expected != output:
            raise InferError(f"{where}: its output is {output}, but its rule gives {expected}")
        defined.add(node.outputs[0])
    if result not in defined:
        raise InferError("the region returns a value it does not define")
    return result.type


def fused_infer(*operands: Type, regions: Sequence[Graph], reduce: str, inner: int,
                keepdims: bool) -> Type:
    result = check_region(regions[0], operands)
    if reduce == "none":
        if inner != 0:
            raise InferError(f"inner must be 0 without a reduction, got {inner}")
        return result
    if reduce not in REDUCTIONS:
        raise InferError(f"reduce must be none, {', '.join(REDUCTIONS)}; got {reduce!r}")
    if result.dtype.name not in FLOATS:
        raise InferError(f"a fused reduction takes a float result, got {result}")
    if not 1 <= inner <= result.rank:
        raise InferError(f"inner must reduce 1 to {result.rank} trailing axes, got {inner}")
    kept = (1,) * inner if keepdims else ()
    return result.with_shape(result.shape[:-inner] + kept)


def _reference(*operands: Any, regions: Sequence[Graph], run_region: Callable, reduce: str,
               inner: int, keepdims: bool) -> Any:
    (value,) = run_region(regions[0], *operands)
    if reduce == "none":
        return value
    axes = tuple(range(value.ndim - inner, value.ndim))
    return getattr(np, {"sum": "sum", "max": "max", "min": "min"}[reduce])(
        value, axis=axes, keepdims=keepdims).astype(value.dtype, copy=False)


FUSED_OPDEF = OpDef(
    FUSED_OP, ("*operands",), fused_infer, _reference,
    attrs=(Attr("reduce", "str", "none"), Attr("inner", "int", 0),
           Attr("keepdims", "bool", False)), num_regions=1,
    traits=frozenset({FUSED_TRAIT}),
    doc="elementwise ops, and optionally a sum/max/min over the trailing axes of their "
        "result, in one generated CUDA kernel (made by the gpu fusion pass)")


def _softmax_numerator(dt: str, shape: tuple[int, ...]) -> Graph:
    b = GraphBuilder("exp_shifted")
    x = b.input(tensor_type(dt, shape), "x")
    m = b.input(tensor_type(dt, shape[:-1] + (1,)), "m")
    return b.build([b.op("exp", b.op("add", x, b.op("neg", m)))])


def samples(rng: np.random.Generator) -> Iterator[OpSample]:
    """Fused chains with broadcasting, each reduction, float16/bfloat16 rounding, ints."""
    for dt in ("float32", "float64", "float16", "bfloat16"):
        for shape in ((3, 5), (2, 3, 4), (4, 0)):
            region = _softmax_numerator(dt, shape)
            x = random_array(rng, shape, dt)
            m = random_array(rng, shape[:-1] + (1,), dt)
            yield OpSample(FUSED_OP, (x, m), {"reduce": "none", "inner": 0},
                           dtypes=(dt, dt), regions=(region,))
            if shape[-1]:
                for reduce, keepdims in zip(REDUCTIONS, (False, True, False)):
                    yield OpSample(FUSED_OP, (x, m),
                                   {"reduce": reduce, "inner": 1, "keepdims": keepdims},
                                   dtypes=(dt, dt), regions=(region,))
    b = GraphBuilder("int_chain")
    a, c = (b.input(tensor_type("int8", (4, 6)), n) for n in "ac")
    region = b.build([b.op("maximum", b.op("mul", a, c), b.op("add", a, c))])
    ints = tuple(random_array(rng, (4, 6), "int8") for _ in range(2))
    yield OpSample(FUSED_OP, ints, {"reduce": "none", "inner": 0}, dtypes=("int8", "int8"),
                   regions=(region,))
