"""Derivatives of the structured control-flow ops ``If`` and ``While``, by differentiating
their regions.

A region is a closed graph.  Its derivative is obtained by *replaying* it — applying its nodes
one by one through :func:`~mskernel_sdk.apply` — inside a fresh tape or tangent
map, within a function that :func:`~mskernel.ops.cond` or :func:`emit_while`
traces into a new region.  The rules therefore emit ordinary ``If``/``While`` nodes, which
enclosing transforms record and differentiate again (higher derivatives), and they work
eagerly too, where ``cond`` runs the taken branch at once.

``If``: the backward (tangent) node takes the same predicate; each branch recomputes its
forward ops and applies their rules (rematerialisation: regions are closed, so the backward
region cannot read the forward region's intermediate values).

``While``: the carried values split into *invariants*, which the body returns unchanged (the
values a loop body closes over, weights for instance), and the *variant* state.  The reverse
pass needs the variant state at every iteration, in reverse order:

- with ``max_iterations = M`` (a bounded loop), a recording loop reruns the forward loop once,
  storing each iteration's state into ``[M, ...]`` buffers, and the backward loop reads them
  back in reverse — O(n) time and O(M · state) memory;
- without a bound, the backward loop recomputes the state of iteration ``k`` from the initial
  state (an inner loop of ``k`` steps) — O(n²) body evaluations, O(state) memory.

Cotangents of invariants accumulate over the iterations.  The forward-mode rule is one loop
carrying the tangents next to the state (it recomputes the primal loop alongside).
"""

from __future__ import annotations

from typing import Any, Callable, Optional, Sequence

from mskernel import int64
from mskernel.ops import cond
from mskernel_sdk import Graph, MskernelError, Tensor, TensorType, apply, trace_function

from .forward import ForwardMode
from .rules._ops import (add, full, gather, greater, less, reshape, scatter_nd, sub, zeros,
                         zeros_like)
from .tape import Tape
from .transform import alias, as_outputs, differentiable

Optionals = tuple[Optional[Tensor], ...]


# -- regions ----------------------------------------------------------------------------------


def replay(region: Graph, inputs: Sequence[Tensor]) -> list[Tensor]:
    """Apply ``region``'s nodes to ``inputs`` through ``apply``; return its outputs."""
    env: dict[Any, Tensor] = dict(zip(region.inputs, inputs))
    for node in region.nodes:
        out = apply(node.op, *(env[v] for v in node.inputs), regions=node.regions, **node.attrs)
        env.update(zip(node.outputs, as_outputs(out)))
    return [env[v] for v in region.outputs]


def region_vjp(region: Graph, inputs: Sequence[Tensor], wrt: Sequence[int],
               seeds: Sequence[tuple[int, Tensor]]) -> list[Tensor]:
    """The cotangents of ``inputs[i]`` for ``i`` in ``wrt`` (zeros where none flows), given
    cotangents ``seeds`` of some outputs (``(output index, cotangent)``)."""
    xs = [alias(x) if i in wrt else x for i, x in enumerate(inputs)]
    tape = Tape()
    with tape.active():
        for i in wrt:
            tape.watch(xs[i])
        outs = replay(region, xs)
    grads = tape.backward((outs[j], ct) for j, ct in seeds)
    return [grads.dense(xs[i]) for i in wrt]


def region_jvp(region: Graph, inputs: Sequence[Tensor],
               seeds: Sequence[tuple[int, Tensor]]) -> tuple[list[Tensor], ForwardMode]:
    """``region``'s outputs on ``inputs`` and the tangent map holding their tangents, given
    tangents ``seeds`` of some inputs (``(input index, tangent)``)."""
    xs = list(inputs)
    for i, _ in seeds:
        xs[i] = alias(xs[i])
    forward = ForwardMode()
    with forward.active():
        for i, tangent in seeds:
            forward.seed(xs[i], tangent)
        outs = replay(region, xs)
    return outs, forward


def _dense(t: Optional[Tensor], like: Tensor) -> Tensor:
    return zeros_like(like) if t is None else t


def _placed(n: int, at: Sequence[int], values: Sequence[Tensor]) -> Optionals:
    result: list[Optional[Tensor]] = [None] * n
    for i, v in zip(at, values):
        result[i] = v
    return tuple(result)


# -- If ---------------------------------------------------------------------------------------


def if_vjp(primals: Sequence[Tensor], outputs: Sequence[Tensor], cotangents: Optionals, *,
           regions: tuple[Graph, Graph]) -> Optionals:
    pred, operands = primals[0], list(primals[1:])
    wrt = [i for i, x in enumerate(operands) if differentiable(x)]
    seeded = [j for j, ct in enumerate(cotangents) if ct is not None]
    if not wrt or not seeded:
        return (None,) * len(primals)
    n = len(operands)

    def backward(region: Graph) -> Callable[..., list[Tensor]]:
        return lambda *args: region_vjp(region, args[:n], wrt, list(zip(seeded, args[n:])))

    grads = cond(pred, backward(regions[0]), backward(regions[1]), *operands,
                 *(cotangents[j] for j in seeded))
    return _placed(len(primals), [1 + i for i in wrt], grads)


def if_jvp(primals: Sequence[Tensor], tangents: Optionals, outputs: Sequence[Tensor], *,
           regions: tuple[Graph, Graph]) -> Optionals:
    pred, operands = primals[0], list(primals[1:])
    seeded = [i for i, t in enumerate(tangents[1:]) if t is not None]
    wanted = [j for j, o in enumerate(outputs) if differentiable(o)]
    if not seeded or not wanted:
        return (None,) * len(outputs)
    n = len(operands)

    def forward(region: Graph) -> Callable[..., list[Tensor]]:
        def run(*args: Tensor) -> list[Tensor]:
            outs, tangent_map = region_jvp(region, args[:n], list(zip(seeded, args[n:])))
            return [tangent_map.dense(outs[j]) for j in wanted]

        return run

    out_tangents = cond(pred, forward(regions[0]), forward(regions[1]), *operands,
                        *(tangents[1 + i] for i in seeded))
    return _placed(len(outputs), wanted, out_tangents)


# -- While ------------------------------------------------------------------------------------


def emit_while(cond_fn: Callable[[list[Tensor]], Tensor],
               body_fn: Callable[[list[Tensor]], list[Tensor]], state: Sequence[Tensor],
               max_iterations: Optional[int]) -> list[Tensor]:
    """Apply a ``While`` op over ``state``; ``cond_fn`` and ``body_fn`` take and return the
    state as a list and must read nothing else (every tensor they need is in the state)."""
    types = [s.type for s in state]
    cond_region, _, cond_captured = trace_function(lambda *s: cond_fn(list(s)), types, "cond")
    body_region, _, body_captured = trace_function(lambda *s: body_fn(list(s)), types, "body")
    if cond_captured or body_captured:
        raise MskernelError("emit_while: the condition or body read a tensor that is not part "
                            "of the loop state; pass every tensor they need in the state")
    out = apply("While", *state, regions=(cond_region, body_region), max_iterations=max_iterations)
    return list(as_outputs(out))


def _index(value: int) -> Tensor:
    return full((), value, int64)


class _Loop:
    """A ``While`` node's regions and the split of its carried values into variant state and
    invariants, with the loops its derivatives are made of."""

    def __init__(self, primals: Sequence[Tensor], regions: tuple[Graph, Graph],
                 max_iterations: Optional[int]) -> None:
        self.cond, self.body = regions
        self.size = len(primals)
        self.bound = max_iterations
        pairs = zip(self.body.inputs, self.body.outputs)
        self.invariant = [i for i, (a, b) in enumerate(pairs) if a is b]
        self.variant = [i for i in range(self.size) if i not in self.invariant]
        for i in self.variant:
            if not isinstance(primals[i].type, TensorType):
                raise MskernelError(
                    f"cannot differentiate a While loop that updates a {primals[i].type} value "
                    "(side effects in a loop body are not differentiable); move the effect "
                    "out of the loop")

    def merged(self, variant: Sequence[Tensor], invariant: Sequence[Tensor]) -> list[Tensor]:
        """The carried values in the node's order."""
        carried: list[Any] = [None] * self.size
        for i, v in zip(self.variant, variant):
            carried[i] = v
        for i, u in zip(self.invariant, invariant):
            carried[i] = u
        return carried

    def step(self, variant: Sequence[Tensor], invariant: Sequence[Tensor]) -> list[Tensor]:
        """The variant state after one iteration."""
        outs = replay(self.body, self.merged(variant, invariant))
        return [outs[i] for i in self.variant]

    def running(self, variant: Sequence[Tensor], invariant: Sequence[Tensor]) -> Tensor:
        return replay(self.cond, self.merged(variant, invariant))[0]

    def record(self, v0: list[Tensor], u: list[Tensor]) -> tuple[Tensor, list[Tensor]]:
        """Rerun the loop from ``v0``: the trip count and, for a bounded loop, the variant
        state of every iteration stacked into ``[max_iterations, ...]`` buffers."""
        nv, nu = len(v0), len(u)
        buffers = [zeros((self.bound, *v.shape), v.dtype) for v in v0] if self.bound is not None \
            else []

        def body(s: list[Tensor]) -> list[Tensor]:
            k, v, inv, bufs = s[0], s[1:1 + nv], s[1 + nv:1 + nv + nu], s[1 + nv + nu:]
            at = reshape(k, shape=(1,))
            stored = [scatter_nd(b, at, x) for b, x in zip(bufs, v)]
            return [add(k, _index(1)), *self.step(v, inv), *inv, *stored]

        final = emit_while(lambda s: self.running(s[1:1 + nv], s[1 + nv:1 + nv + nu]), body,
                           [_index(0), *v0, *u, *buffers], self.bound)
        return final[0], final[1 + nv + nu:]

    def advance(self, v0: list[Tensor], u: list[Tensor], steps: Tensor) -> list[Tensor]:
        """The variant state after ``steps`` iterations from ``v0`` (an inner loop)."""
        nv = len(v0)

        def body(s: list[Tensor]) -> list[Tensor]:
            j, n, v, inv = s[0], s[1], s[2:2 + nv], s[2 + nv:]
            return [add(j, _index(1)), n, *self.step(v, inv), *inv]

        final = emit_while(lambda s: less(s[0], s[1]), body, [_index(0), steps, *v0, *u], None)
        return final[2:2 + nv]

    def backward(self, primals: Sequence[Tensor], lam: list[Tensor], acc: list[Tensor],
                 d_var: list[int], d_inv: list[int]) -> list[Tensor]:
        """Run the reverse pass: ``lam`` are the cotangents of the differentiable variant
        outputs ``d_var``, ``acc`` those of the invariants ``d_inv``; returns the cotangents
        of the same initial values, in the same order."""
        v0 = [primals[i] for i in self.variant]
        u = [primals[i] for i in self.invariant]
        trips, buffers = self.record(v0, u)
        stash = buffers if self.bound is not None else v0
        nl, na, ns = len(lam), len(acc), len(stash)
        wrt = [*d_var, *d_inv]

        def body(s: list[Tensor]) -> list[Tensor]:
            k = sub(s[0], _index(1))
            lam_k, acc_k = s[1:1 + nl], s[1 + nl:1 + nl + na]
            kept = s[1 + nl + na:1 + nl + na + ns]
            inv = s[1 + nl + na + ns:]
            if self.bound is not None:
                v_k = [gather(b, k, axis=0) for b in kept]
            else:
                v_k = self.advance(kept, inv, k)
            grads = region_vjp(self.body, self.merged(v_k, inv), wrt, list(zip(d_var, lam_k)))
            summed = [add(a, g) for a, g in zip(acc_k, grads[nl:])]
            return [k, *grads[:nl], *summed, *kept, *inv]

        final = emit_while(lambda s: greater(s[0], _index(0)), body,
                           [trips, *lam, *acc, *stash, *u], self.bound)
        return final[1:1 + nl + na]


def while_vjp(primals: Sequence[Tensor], outputs: Sequence[Tensor], cotangents: Optionals, *,
              max_iterations: Optional[int], regions: tuple[Graph, Graph]) -> Optionals:
    loop = _Loop(primals, regions, max_iterations)
    d_var = [i for i in loop.variant if differentiable(primals[i])]
    d_inv = [i for i in loop.invariant if differentiable(primals[i])]
    if all(cotangents[i] is None for i in d_var):  # the body passes no cotangent on
        return tuple(cotangents[i] if i in d_inv else None for i in range(len(primals)))
    lam = [_dense(cotangents[i], outputs[i]) for i in d_var]
    acc = [_dense(cotangents[i], outputs[i]) for i in d_inv]
    return _placed(len(primals), d_var + d_inv, loop.backward(primals, lam, acc, d_var, d_inv))


def while_jvp(primals: Sequence[Tensor], tangents: Optionals, outputs: Sequence[Tensor], *,
              max_iterations: Optional[int], regions: tuple[Graph, Graph]) -> Optionals:
    loop = _Loop(primals, regions, max_iterations)
    moving = [i for i in loop.variant if differentiable(primals[i])]
    fixed = [i for i in loop.invariant if tangents[i] is not None]
    n, nm = len(primals), len(moving)
    if not fixed and all(tangents[i] is None for i in moving):
        return (None,) * len(outputs)

    def body(s: list[Tensor]) -> list[Tensor]:
        carried, t_moving, t_fixed = s[:n], s[n:n + nm], s[n + nm:]
        outs, tangent_map = region_jvp(loop.body, carried,
                                       [*zip(moving, t_moving), *zip(fixed, t_fixed)])
        state = [outs[i] if i in loop.variant else carried[i] for i in range(n)]
        return [*state, *(tangent_map.dense(outs[i]) for i in moving), *t_fixed]

    start = [*primals, *(_dense(tangents[i], primals[i]) for i in moving),
             *(tangents[i] for i in fixed)]
    final = emit_while(lambda s: replay(loop.cond, s[:n])[0], body, start, max_iterations)
    return _placed(len(outputs), moving + fixed, final[n:])
