"""GEMM epilogue fusion: the ``cpu.fuse_gemm_epilogue`` pass.

A ``conv`` or ``matmul`` followed by a bias add and/or one activation becomes one
``cpu.conv_bias_act`` / ``cpu.matmul_bias_act`` node (:mod:`.gemm_ops`), whose kernel adds the
bias and applies the activation to each output tile while it is in cache.  The chains:

- ``conv(x, w)`` → ``add`` of a per-channel bias (shape ``[C]`` or ``[1, C, 1, ...]`` aligned
  on the channel axis, as ``nn.Conv2d`` and batch-norm folding add ``bias.reshape(C, 1, 1)``)
  → optionally ``relu``, ``sigmoid``, ``tanh``, ``gelu`` (either formula) or ``silu``;
- ``matmul(a, b)`` (both of rank 2 or more) → ``add`` of a bias along the last dim (``[N]``
  or ``[1, ..., N]``, as ``nn.Dense`` adds its bias) → optionally an activation;
- either without the add, straight into an activation (the fused op then has no bias).

Only when every intermediate is read by the next op of the chain alone and is not a graph
output, the dtypes are one floating type, and the add and activation keep the product's
shape.  A bias that is ``reshape(b)`` of a ``[C]`` value read by the add alone is replaced by
``b``; any other is reshaped to ``[C]`` (a view).  Regions are fused too.  The pass runs before
``cpu.fuse_elementwise``, so the bias add is not taken into an elementwise group first.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping, Optional

from mskernel_sdk import Graph, Node, PassContext, PassResult, TensorType, Value, make_node

from .gemm_ops import CONV_OP, MATMUL_OP, activation_of

FUSABLE_DTYPES = ("float16", "bfloat16", "float32", "float64")


class GemmEpilogueFusion:
    name = "cpu.fuse_gemm_epilogue"

    def run(self, graph: Graph, context: PassContext) -> PassResult:
        new = fuse_gemm_epilogues(graph, context)
        return PassResult(new, new is not graph)


@dataclass
class _Chain:
    """A product and the nodes fused into it: ``members`` (the product first, the node
    whose output the fused node defines last) and the bias value, if any."""

    members: list[Node]
    bias: Optional[Value] = None
    activation: str = "none"
    dropped: list[Node] = field(default_factory=list)  # a bias reshape read by the add alone

    @property
    def product(self) -> Node:
        return self.members[0]


def fuse_gemm_epilogues(graph: Graph, context: PassContext) -> Graph:
    """``graph`` with every fusable chain fused (the same object when none is)."""
    chains = _chains(graph)
    last_of = {chain.members[-1]: chain for chain in chains}
    removed = {n for chain in chains for n in (*chain.members[:-1], *chain.dropped)}
    nodes: list[Node] = []
    changed = bool(chains)
    for node in graph.nodes:
        if node in removed:
            continue
        chain = last_of.get(node)
        if chain is not None:
            nodes.extend(_fused_nodes(chain, context))
            continue
        regions = tuple(fuse_gemm_epilogues(r, context) for r in node.regions)
        if any(new is not old for new, old in zip(regions, node.regions)):
            node = Node(node.op, node.inputs, node.outputs, node.attrs, regions, node.loc)
            changed = True
        nodes.append(node)
    if not changed:
        return graph
    return Graph(graph.inputs, tuple(nodes), graph.outputs, graph.name)


def _chains(graph: Graph) -> list[_Chain]:
    users = graph.users()
    producers = graph.producers()
    returned = set(graph.outputs)

    def sole_user(value: Value) -> Optional[Node]:
        readers = users.get(value, [])
        return readers[0] if len(readers) == 1 and value not in returned else None

    chains = []
    for node in graph.nodes:
        if not _is_product(node):
            continue
        chain = _Chain([node])
        out = node.output
        nxt = sole_user(out)
        if nxt is not None and nxt.op == "add" and nxt.output.type == out.type:
            bias = _bias_operand(nxt, out, node.op)
            if bias is not None:
                chain.members.append(nxt)
                chain.bias = bias
                source = producers.get(bias)
                if (source is not None and source.op == "reshape" and sole_user(bias) is nxt
                        and source.inputs[0].type.shape == (_channels(out, node.op),)):
                    chain.bias = source.inputs[0]
                    chain.dropped.append(source)
                out = nxt.output
                nxt = sole_user(out)
        if nxt is not None and len(nxt.outputs) == 1 and nxt.output.type == out.type:
            activation = activation_of(nxt.op, nxt.attrs)
            if activation is not None:
                chain.members.append(nxt)
                chain.activation = activation
        if len(chain.members) > 1:
            chains.append(chain)
    return chains


def _is_product(node: Node) -> bool:
    if node.op not in ("conv", "matmul") or node.regions or len(node.outputs) != 1:
        return False
    types = [v.type for v in (*node.inputs, node.output)]
    if not all(isinstance(t, TensorType) and t.dtype.name in FUSABLE_DTYPES for t in types):
        return False
    return node.op == "conv" or all(t.rank >= 2 for t in types[:2])


def _channels(y: Value, op: str) -> int:
    return y.type.shape[1] if op == "conv" else y.type.shape[-1]


def _bias_operand(add: Node, y: Value, op: str) -> Optional[Value]:
    """The operand of ``add`` other than ``y`` when it is a bias along ``y``'s channels."""
    if len(add.inputs) != 2 or add.inputs.count(y) != 1:
        return None
    bias = add.inputs[1] if add.inputs[0] is y else add.inputs[0]
    if not isinstance(bias.type, TensorType) or bias.type.dtype != y.type.dtype:
        return None
    rank = y.type.rank
    if bias.type.rank > rank:
        return None
    channel_axis = 1 if op == "conv" else rank - 1
    per_channel = tuple(d if i == channel_axis else 1 for i, d in enumerate(y.type.shape))
    padded = (1,) * (rank - bias.type.rank) + bias.type.shape
    return bias if padded == per_channel else None


def _fused_nodes(chain: _Chain, context: PassContext) -> list[Node]:
    """The fused node (preceded by the bias's reshape when one is needed); it defines the
    chain's last output, so no user needs renaming."""
    product = chain.product
    last = chain.members[-1]
    nodes: list[Node] = []
    operands = list(product.inputs)
    if chain.bias is not None:
        bias = chain.bias
        channels = _channels(product.output, product.op)
        if bias.type.shape != (channels,):
            reshape = make_node(context, "reshape", bias, shape=(channels,))
            nodes.append(reshape)
            bias = reshape.output
        operands.append(bias)
    op = CONV_OP if product.op == "conv" else MATMUL_OP
    attrs: Mapping = {**product.attrs, "activation": chain.activation}
    probe = make_node(context, op, *operands, **attrs)
    nodes.append(Node(op, probe.inputs, (last.output,), probe.attrs, (), last.loc))
    return nodes
