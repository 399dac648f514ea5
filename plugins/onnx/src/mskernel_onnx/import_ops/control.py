"""Control flow: ``If``, ``Loop`` and ``Scan`` as the core's structured ``If`` and ``While``.

ONNX subgraphs read values of the enclosing graphs by name; the core's regions are closed, so
what a body reads becomes an operand of the node (``If``) or a carried value passed through
unchanged (``While``).

- ``If`` with a condition known at import time is just the taken branch, which may then
  return anything (sequences, shapes that differ from the other branch's).  Otherwise both
  branches must return tensors of the same types.
- ``Loop(M, cond, v...)`` is a ``While`` carrying the iteration number, the condition, the
  loop-carried values and a buffer per scan output, written at the iteration number with
  ``scatter_nd``.  Scan outputs need a static length: ``M`` known and a body that never stops
  the loop early.  A loop carrying a sequence (whose length changes each iteration) is
  unrolled instead, which needs ``M`` known.
- ``Scan`` (opset 9 on) is a ``While`` over the scan axis: each iteration gathers its slices
  and writes its outputs into buffers; directions and axes are honoured.  Opset 8's batched
  ``Scan`` runs one loop per batch entry.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable, Optional, Sequence

import numpy as np

from onnx import GraphProto

from mskernel_sdk import Value, tensor_type

from ..errors import NeedsValue, OnnxImportError
from ..values import OnnxValue
from .common import axis, broadcast, check_unroll, entry, move_axis, scalar, shape

if TYPE_CHECKING:
    from ..context import NodeContext, Region

Handler = Callable[["NodeContext"], object]
_I64 = tensor_type("int64", ())
_BOOL = tensor_type("bool", ())


def _tensors(ctx: "NodeContext", values: Sequence[OnnxValue], what: str) -> list[Value]:
    for v in values:
        if not isinstance(v, Value):
            ctx.fail(f"{what} must be tensors when the condition is not known at import time, "
                     f"got a {type(v).__name__}")
    return list(values)  # type: ignore[arg-type]


# --- If ----------------------------------------------------------------------------------------


def _if(ctx: "NodeContext") -> list[OnnxValue]:
    cond = ctx.input(0)
    known = ctx.emitter.known(cond)
    if known is None and not _returns_tensors(ctx):
        known = ctx.known(cond, "the condition of an If whose branches return sequences or "
                                "optionals")
    if known is not None:
        return ctx.inline(ctx.attr("then_branch" if bool(np.asarray(known)) else "else_branch"))
    branches = []
    for name in ("then_branch", "else_branch"):
        region = ctx.region(name.split("_")[0])
        outputs = region.close(_tensors(ctx, region.run(ctx.attr(name)), f"{name} outputs"))
        branches.append((region, outputs))
    (then, then_out), (other, else_out) = branches
    for i, (a, b) in enumerate(zip(then_out, else_out)):
        if a.type != b.type:
            ctx.fail(f"output {i} is {a.type} in then_branch but {b.type} in else_branch; "
                     "mskernel's If needs one type per output")
    operands = list(dict.fromkeys(then.captured() + other.captured()))
    regions = (then.build(then_out, operands), other.build(else_out, operands))
    pred = ctx.op("reshape", cond, shape=()) if shape(cond) != () else cond
    return list(ctx.op("If", pred, *operands, regions=regions))


def _returns_tensors(ctx: "NodeContext") -> bool:
    """Whether both branches declare tensor outputs (or leave their types open)."""
    for name in ("then_branch", "else_branch"):
        for info in ctx.attr(name).output:
            if info.type.WhichOneof("value") not in (None, "tensor_type"):
                return False
    return True


# --- Loop --------------------------------------------------------------------------------------


def _loop(ctx: "NodeContext") -> list[OnnxValue]:
    body = ctx.attr("body")
    carried = [ctx.value(i) for i in range(2, ctx.num_inputs)]
    if any(not isinstance(v, Value) for v in carried):
        return _unrolled_loop(ctx, body, _trip_count(ctx, "a loop carrying a sequence"),
                              carried)
    try:
        return _while_loop(ctx, body, carried)  # type: ignore[arg-type]
    except NeedsValue:
        raise
    except OnnxImportError as exc:
        if not ctx.has(0):
            raise
        # the body needs the iteration number as a constant (a Slice at it, say): unroll
        trips = _trip_count(ctx, f"a loop whose body cannot be a region ({exc})")
        return _unrolled_loop(ctx, body, trips, carried)


def _known_trip_count(ctx: "NodeContext") -> Optional[int]:
    if not ctx.has(0):
        return None
    known = ctx.emitter.known(ctx.input(0))
    return None if known is None else int(np.asarray(known).reshape(()))


def _trip_count(ctx: "NodeContext", what: str) -> int:
    if not ctx.has(0):
        ctx.fail(f"{what} needs a trip count")
    return int(ctx.known(ctx.input(0), f"the trip count of {what}").reshape(()))


def _while_loop(ctx: "NodeContext", body: GraphProto, carried: list[Value]) -> list[OnnxValue]:
    trips = _known_trip_count(ctx)
    cond = ctx.optional(1) or ctx.constant(np.array(True))
    cond = ctx.op("reshape", cond, shape=()) if shape(cond) != () else cond
    region = ctx.region("body")
    i = region.input(_I64, body.input[0].name)
    c = region.input(_BOOL, body.input[1].name)
    region.bind(body.input[0].name, i)
    region.bind(body.input[1].name, c)
    states = []
    for info, v in zip(body.input[2:], carried):
        states.append(region.input(v.type, info.name))  # type: ignore[arg-type]
        region.bind(info.name, states[-1])
    outputs = _tensors(ctx, region.run(body), "Loop body outputs")
    next_cond = outputs[0]
    next_states = outputs[1:1 + len(states)]
    scans = outputs[1 + len(states):]
    for k, (old, new) in enumerate(zip(states, next_states)):
        if old.type != new.type:
            ctx.fail(f"loop-carried value {k} changes type from {old.type} to {new.type}; "
                     "mskernel's While carries values of fixed types")
    if scans:
        always = next_cond is c or ctx.emitter.known(next_cond) is not None and bool(
            np.asarray(ctx.emitter.known(next_cond)))
        if not always:
            ctx.fail("scan outputs need a static length, but the body may stop the loop early")
        if not bool(np.asarray(ctx.known(cond, "the initial condition of a loop with scan "
                                               "outputs"))):
            ctx.fail("a loop with scan outputs that never runs has outputs of unknown shape")
        trips = _trip_count(ctx, "a loop with scan outputs")
    limit = None if trips is not None or not ctx.has(0) else ctx.input(0)
    buffers, init_buffers = [], []
    for s in scans:
        assert trips is not None
        init_buffers.append(broadcast(ctx, scalar(ctx, 0, s), (trips, *shape(s))))
        buffers.append(region.input(init_buffers[-1].type))
    written = [_write_row(region, buf, i, s) for buf, s in zip(buffers, scans)]
    extra = []
    if limit is not None:
        extra.append(region.input(limit.type))
    step = region.emitter.op("add", i, region.emitter.local(scalar(ctx, 1, "int64")))
    body_out = region.close([step, next_cond, *next_states, *written, *extra])
    captured = region.captured()
    body_graph = region.build(body_out + region.close(_captured_inner(region)), captured)
    cond_graph = _loop_condition(ctx, [v.type for v in body_graph.inputs], trips,
                                 limit_at=2 + len(states) + len(buffers) if extra else None)
    init = [ctx.constant(np.array(0, np.int64)), cond, *carried, *init_buffers,
            *([limit] if limit is not None else []), *captured]
    results = ctx.op("While", *init, regions=(cond_graph, body_graph))
    finals = list(results[2:2 + len(states)])
    gathered = list(results[2 + len(states):2 + len(states) + len(buffers)])
    return [*finals, *gathered]


def _captured_inner(region: "Region") -> list[Value]:
    return [inner for _, inner in region.emitter.captures.values()]


def _write_row(region: "Region", buffer: Value, index: Value, row: Value) -> Value:
    """``buffer`` with row ``index`` replaced by ``row``."""
    e = region.emitter
    at = e.op("reshape", index, shape=(1, 1))
    return e.op("scatter_nd", buffer, at, e.op("expand_dims", row, axes=(0,)))


def _loop_condition(ctx: "NodeContext", types: Sequence[object], trips: Optional[int],
                    limit_at: Optional[int]) -> object:
    """The ``While`` cond region: the carried condition, and the iteration number below the
    trip count (``trips`` if known, else the carried value at ``limit_at``, if any)."""
    region = ctx.region("cond")
    values = [region.input(t) for t in types]  # type: ignore[arg-type]
    e = region.emitter
    go = values[1]
    if trips is not None:
        go = e.op("logical_and", go, e.op("less", values[0], e.local(scalar(ctx, trips, "int64"))))
    elif limit_at is not None:
        limit = e.op("reshape", values[limit_at], shape=())
        go = e.op("logical_and", go, e.op("less", values[0], limit))
    return region.build([go])


def _unrolled_loop(ctx: "NodeContext", body: GraphProto, trips: int,
                   carried: list[OnnxValue]) -> list[OnnxValue]:
    """The loop unrolled: each iteration's body imported in turn (for loops carrying
    sequences, whose length changes every iteration, and bodies that need the iteration
    number as a constant).  The condition must then be known at import time."""
    check_unroll(ctx, trips, "the loop")
    cond = ctx.optional(1)
    state = list(carried)
    rows: list[list[Value]] = []
    for n in range(trips):
        if cond is not None:
            go = ctx.known(cond, "the condition of an unrolled loop")
            if not bool(np.asarray(go)):
                break
        outputs = ctx.inline(body, [ctx.constant(np.array(n, np.int64)),
                                    cond if cond is not None else ctx.constant(np.array(True)),
                                    *state])
        cond, state = outputs[0], outputs[1:1 + len(state)]  # type: ignore[assignment]
        rows.append(_tensors(ctx, outputs[1 + len(state):], "scan outputs"))
    scans = [ctx.op("stack", *column, axis=0) for column in zip(*rows)] if rows else []
    return [*state, *scans]


# --- Scan --------------------------------------------------------------------------------------


def scan(ctx: "NodeContext", states: list[Value], inputs: list[Value]) -> list[Value]:
    """One ``Scan`` (opset 9 semantics) over ``inputs``, carrying ``states``."""
    body = ctx.attr("body")
    n_in = len(inputs)
    in_axes = [axis(ctx, a, len(shape(x))) for a, x in
               zip(ctx.attr("scan_input_axes", (0,) * n_in), inputs)]
    in_reverse = list(ctx.attr("scan_input_directions", (0,) * n_in))
    lengths = {shape(x)[a] for x, a in zip(inputs, in_axes)}
    if len(lengths) != 1:
        ctx.fail(f"scan inputs have different lengths {sorted(lengths)} along their axes")
    length = lengths.pop()
    region = ctx.region("body")
    e = region.emitter
    i = region.input(_I64)
    state_in = []
    for info, v in zip(body.input, states):
        state_in.append(region.input(v.type, info.name))
        region.bind(info.name, state_in[-1])
    last = e.local(scalar(ctx, length - 1, "int64"))
    for info, x, a, rev in zip(body.input[len(states):], inputs, in_axes, in_reverse):
        at = e.op("sub", last, i) if rev else i
        region.bind(info.name, e.op("gather", x, at, axis=a))
    outputs = _tensors(ctx, region.run(body), "Scan body outputs")
    state_out, slices = outputs[:len(states)], outputs[len(states):]
    for k, (old, new) in enumerate(zip(state_in, state_out)):
        if old.type != new.type:
            ctx.fail(f"scan state {k} changes type from {old.type} to {new.type}")
    init_buffers = [broadcast(ctx, scalar(ctx, 0, s), (length, *shape(s))) for s in slices]
    buffers = [region.input(b.type) for b in init_buffers]
    n_out = len(slices)
    out_reverse = list(ctx.attr("scan_output_directions", (0,) * n_out))
    written = []
    for buf, s, rev in zip(buffers, slices, out_reverse):
        written.append(_write_row(region, buf, e.op("sub", last, i) if rev else i, s))
    step = e.op("add", i, e.local(scalar(ctx, 1, "int64")))
    body_out = region.close([step, *state_out, *written])
    captured = region.captured()
    body_graph = region.build(body_out + region.close(_captured_inner(region)), captured)
    cond = ctx.region("cond")
    values = [cond.input(v.type) for v in body_graph.inputs]
    go = cond.emitter.op("less", values[0], cond.emitter.local(scalar(ctx, length, "int64")))
    cond_graph = cond.build([go])
    init = [ctx.constant(np.array(0, np.int64)), *states, *init_buffers, *captured]
    results = ctx.op("While", *init, regions=(cond_graph, body_graph))
    finals = list(results[1:1 + len(states)])
    out_axes = ctx.attr("scan_output_axes", (0,) * n_out)
    gathered = []
    for buf, a in zip(results[1 + len(states):1 + len(states) + n_out], out_axes):
        gathered.append(move_axis(ctx, buf, 0, axis(ctx, a, len(shape(buf)))))
    return [*finals, *gathered]


def _scan(ctx: "NodeContext") -> list[Value]:
    n_in = ctx.attr("num_scan_inputs")
    if ctx.version >= 9:
        values = ctx.inputs()
        return scan(ctx, values[:len(values) - n_in], values[len(values) - n_in:])
    # opset 8: inputs are (sequence_lens, states..., scan inputs...) with a batch axis 0
    if ctx.has(0):
        ctx.fail("sequence_lens is not supported; give full-length sequences")
    values = [ctx.input(k) for k in range(1, ctx.num_inputs)]
    states, inputs = values[:len(values) - n_in], values[len(values) - n_in:]
    batch = shape(values[0])[0]
    check_unroll(ctx, batch, "a batched (opset 8) Scan")
    per_batch = []
    for b in range(batch):
        per_batch.append(scan(ctx, [entry(ctx, v, b) for v in states],
                              [entry(ctx, v, b) for v in inputs]))
    return [ctx.op("stack", *column, axis=0) for column in zip(*per_batch)]


OPS: dict[str, Handler] = {"If": _if, "Loop": _loop, "Scan": _scan}
