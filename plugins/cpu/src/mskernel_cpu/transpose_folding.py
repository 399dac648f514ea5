"""Transposes folded into matrix products: the ``cpu.fold_matmul_transpose`` pass.

An operand of a ``matmul`` or ``cpu.matmul_bias_act`` that is ``transpose(x)`` swapping only
the last two axes (``nn.Dense`` transposes its weight every forward, and the backward of a
product transposes its operands again) is replaced by ``x`` and the product reads it
transposed: the node becomes a ``cpu.matmul_bias_act`` with ``transpose_a``/``transpose_b``
set (a plain matmul gets no bias and activation ``none``), and the BLAS call reads the
operand with ``CblasTrans`` instead of a kernel materialising the transpose.

A transpose of the last two axes of a product's result (the backward of ``x @ w.T`` computes
the weight's gradient as ``transpose(transpose(x) @ dy)``) becomes the product of the
swapped operands, each read the other way: ``(op(A) op(B))^T = op(B)^T op(A)^T``.  Only
when the product has no bias (its activation, elementwise, commutes with the transpose).

A ``sum`` over the batch axes of a product ``transpose(a) @ b`` of rank-3-or-more operands
with the same batch dims (a weight's gradient over a batch of sequences: one product per
sequence, then their sum) becomes one product over all rows,
``reshape(a, [rows, I])^T @ reshape(b, [rows, O])``, reshaped to the sum's shape: one large
GEMM instead of a batch of small ones, and no batch of partial products to write and sum.
The ``transpose`` of ``a`` may have other users (it stays for them).

Only when the transpose's result (or the product's) is read by the product (the transpose,
the sum) alone, once, and is not a graph output, both operands have rank 2 or more, and the
dtypes are one floating type the fused kernel runs.  Regions are rewritten too.  The pass runs
after ``cpu.fuse_gemm_epilogue`` (whose chains start at a ``matmul``), so it sees the fused
products.
"""

from __future__ import annotations

from math import prod
from typing import Optional

from mskernel_sdk import Graph, Node, PassContext, PassResult, TensorType, Value, make_node

from .gemm_fusion import FUSABLE_DTYPES
from .gemm_ops import MATMUL_OP


class MatmulTransposeFolding:
    name = "cpu.fold_matmul_transpose"

    def run(self, graph: Graph, context: PassContext) -> PassResult:
        new = fold_matmul_transposes(graph, context)
        return PassResult(new, new is not graph)


def swaps_last_two(node: Node) -> bool:
    """Whether ``node`` is a ``transpose`` swapping only its last two axes."""
    if node.op != "transpose" or not isinstance(node.inputs[0].type, TensorType):
        return False
    rank = node.inputs[0].type.rank
    if rank < 2:
        return False
    perm = node.attrs.get("perm")
    if perm is None:
        return rank == 2
    normalized = [axis % rank for axis in perm]
    return normalized == [*range(rank - 2), rank - 1, rank - 2]


def fold_matmul_transposes(graph: Graph, context: PassContext) -> Graph:
    """``graph`` with the transposes feeding its products folded (the same object when
    none is)."""
    users = graph.users()
    producers = graph.producers()
    returned = set(graph.outputs)

    def folded_source(value: Value, product: Node) -> Optional[Node]:
        source = producers.get(value)
        if source is None or not swaps_last_two(source) or value in returned:
            return None
        readers = users.get(value, [])
        if len(readers) != 1 or readers[0] is not product or product.inputs.count(value) != 1:
            return None
        return source

    removed: set[Node] = set()
    replaced: dict[Node, list[Node]] = {}  # a node → the nodes taking its place
    bypassed: set[Node] = set()  # shared transposes some product now reads around
    for node in graph.nodes:
        if not _is_foldable_product(node):
            continue
        sources = [folded_source(v, node) for v in node.inputs[:2]]
        if sources == [None, None]:
            continue
        attrs = dict(node.attrs) if node.op == MATMUL_OP else {"activation": "none"}
        operands = list(node.inputs)
        for i, (flag, source) in enumerate(zip(("transpose_a", "transpose_b"), sources)):
            if source is not None:
                operands[i] = source.inputs[0]
                attrs[flag] = not attrs.get(flag, False)
                removed.add(source)
        replaced[node] = [_product(context, operands, attrs, node)]
    for node in graph.nodes:  # transpose(product) → the product of the swapped operands
        if not swaps_last_two(node) or node in removed:
            continue
        product = producers.get(node.inputs[0])
        if product is None or not _is_foldable_product(product):
            continue
        if users.get(product.output) != [node] or product.output in returned:
            continue
        current = replaced.get(product, [product])[-1]
        if len(current.inputs) != 2:
            continue  # a bias runs along the product's last dim
        attrs = {"activation": current.attrs.get("activation", "none"),
                 "transpose_a": not current.attrs.get("transpose_b", False),
                 "transpose_b": not current.attrs.get("transpose_a", False)}
        removed.add(product)
        replaced[node] = [_product(context, current.inputs[::-1], attrs, node)]
    for node in graph.nodes:  # sum over the batch of transpose(a) @ b → one product
        if node.op != "sum" or node in removed:
            continue
        product = producers.get(node.inputs[0])
        if (product is None or product in removed or not _is_foldable_product(product)
                or users.get(product.output) != [node] or product.output in returned):
            continue
        summed = _batch_summed(context, node, replaced.get(product, [product])[-1], producers)
        if summed is not None:
            replacement, source = summed
            removed.add(product)
            replaced[node] = replacement
            if source is not None:
                bypassed.add(source)
    nodes: list[Node] = []
    changed = bool(replaced)
    for node in graph.nodes:
        if node in removed:
            continue
        if node in replaced:
            nodes.extend(replaced[node])
            continue
        regions = tuple(fold_matmul_transposes(r, context) for r in node.regions)
        if any(new is not old for new, old in zip(regions, node.regions)):
            node = Node(node.op, node.inputs, node.outputs, node.attrs, regions, node.loc)
            changed = True
        nodes.append(node)
    if not changed:
        return graph
    read = {v for node in nodes for v in node.inputs} | returned
    nodes = [n for n in nodes if n not in bypassed or n.output in read]
    return Graph(graph.inputs, tuple(nodes), graph.outputs, graph.name)


def _batch_summed(context: PassContext, total: Node, product: Node,
                  producers: dict) -> Optional[tuple[list[Node], Optional[Node]]]:
    """The nodes computing ``total`` (a ``sum`` of ``product``) as one product over all rows,
    and the shared transpose read around (if any); None when the pattern does not hold."""
    operands = list(product.inputs)
    transposed = product.attrs.get("transpose_a", False)
    source = None
    if product.op == "matmul":
        source = producers.get(operands[0])
        if source is None or not swaps_last_two(source):
            return None
        operands[0], transposed = source.inputs[0], True
    if (len(operands) != 2 or not transposed or product.attrs.get("transpose_b", False)
            or product.attrs.get("activation", "none") != "none"):
        return None
    a, b = operands
    rank = a.type.rank
    axes = total.attrs.get("axes")
    if (rank < 3 or b.type.rank != rank or a.type.shape[:-2] != b.type.shape[:-2]
            or axes is None or sorted(axis % rank for axis in axes) != list(range(rank - 2))):
        return None
    rows = prod(a.type.shape[:-1])
    flat_a = make_node(context, "reshape", a, shape=(rows, a.type.shape[-1]))
    flat_b = make_node(context, "reshape", b, shape=(rows, b.type.shape[-1]))
    nodes = [flat_a, flat_b]
    attrs = {"activation": "none", "transpose_a": True}
    if total.output.type.shape == (a.type.shape[-1], b.type.shape[-1]):
        nodes.append(_product(context, [flat_a.output, flat_b.output], attrs, total))
    else:
        whole = make_node(context, MATMUL_OP, flat_a.output, flat_b.output, **attrs)
        shaped = make_node(context, "reshape", whole.output, shape=total.output.type.shape)
        nodes += [whole, Node("reshape", shaped.inputs, total.outputs, shaped.attrs, (),
                              total.loc)]
    return nodes, source


def _product(context: PassContext, operands: list[Value], attrs: dict, defines: Node) -> Node:
    """A ``cpu.matmul_bias_act`` node of ``operands`` defining ``defines``'s outputs."""
    probe = make_node(context, MATMUL_OP, *operands, **attrs)
    return Node(MATMUL_OP, probe.inputs, defines.outputs, probe.attrs, (), defines.loc)


def _is_foldable_product(node: Node) -> bool:
    if node.op not in ("matmul", MATMUL_OP) or node.regions or len(node.outputs) != 1:
        return False
    types = [v.type for v in (*node.inputs, node.output)]
    if not all(isinstance(t, TensorType) and t.dtype.name in FUSABLE_DTYPES for t in types):
        return False
    return all(t.rank >= 2 for t in types[:2])
