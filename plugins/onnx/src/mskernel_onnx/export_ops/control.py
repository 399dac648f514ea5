"""Structured control flow → ONNX.  ``If`` branches read the node's operands from the
enclosing scope.  ``While`` becomes ``Loop``: the cond region runs once on the initial values
before the loop and, inside the body, on the values the body region returns."""

from __future__ import annotations

from typing import Callable, Sequence

import onnx

from mskernel_sdk import Graph, Node, tensor_type

from ..export import Context, Scope, value_info

Build = Callable[[Scope], tuple[list[onnx.ValueInfoProto], list[onnx.ValueInfoProto]]]


def _branch(region: Graph, operands: Sequence[str]) -> Build:
    def build(scope: Scope) -> tuple[list[onnx.ValueInfoProto], list[onnx.ValueInfoProto]]:
        scope.bind_all(region.inputs, operands)
        return [], scope.run(region.nodes, region.outputs)
    return build


def _if(ctx: Context, node: Node, pred: str, *operands: str) -> list[str]:
    then_region, else_region = node.regions
    out = ctx.op("If", pred, outputs=len(node.outputs),
                 then_branch=ctx.subgraph("then", _branch(then_region, operands)),
                 else_branch=ctx.subgraph("else", _branch(else_region, operands)))
    return [out] if isinstance(out, str) else out


def _while(ctx: Context, node: Node, *init: str) -> list[str]:
    cond, body = node.regions
    first = ctx.region(cond, init)[0]

    def build(scope: Scope) -> tuple[list[onnx.ValueInfoProto], list[onnx.ValueInfoProto]]:
        iteration, keep_going = ctx.fresh("iteration"), ctx.fresh("cond_in")
        carried = [ctx.fresh(f"carried_{i}") for i in range(len(init))]
        inputs = [value_info(iteration, tensor_type("int64", ())),
                  value_info(keep_going, tensor_type("bool", ())),
                  *(value_info(name, v.type) for name, v in zip(carried, node.inputs))]
        scope.bind_all(body.inputs, carried)
        for inner in body.nodes:
            scope.translate(inner)
        scope.bind_all(cond.inputs, [scope.lookup(v) for v in body.outputs])
        for inner in cond.nodes:
            scope.translate(inner)
        return inputs, scope.outputs([*cond.outputs, *body.outputs])

    bound = node.attrs["max_iterations"]
    trip_count = ctx.scalar_int(bound) if bound is not None else ""
    out = ctx.op("Loop", trip_count, first, *init, outputs=len(init),
                 body=ctx.subgraph("body", build))
    return [out] if isinstance(out, str) else out


TRANSLATORS = {"If": _if, "While": _while}
