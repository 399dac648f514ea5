"""Recurrent layers: ``RNN``, ``GRU`` and ``LSTM``, unrolled over the (static) sequence.

The input projection of every step is one ``matmul`` up front; each step then adds the
recurrent projection and applies the cell.  ONNX's gate orders (GRU ``z r h``, LSTM
``i o f c``), its activation list (with ``activation_alpha``/``beta``), ``clip``,
``direction`` (forward, reverse, bidirectional), ``layout``, ``sequence_lens`` (a finished
sequence keeps its state and outputs zeros), GRU's ``linear_before_reset`` and LSTM's
peepholes and ``input_forget`` are all honoured.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable, Optional, Sequence

from mskernel_sdk import Value

from .common import broadcast, cast, check_unroll, entry, scalar, shape

if TYPE_CHECKING:
    from ..context import NodeContext

Handler = Callable[["NodeContext"], object]
Activation = Callable[[Value], Value]


def _activation(ctx: "NodeContext", name: str, alpha: Optional[float],
                beta: Optional[float]) -> Activation:
    """ONNX's named RNN activations; alpha/beta default as the spec says."""
    def c(v: float, like: Value) -> Value:
        return scalar(ctx, v, like)
    lower = name.lower()
    if lower in ("tanh", "sigmoid", "relu", "softplus"):
        return lambda x: ctx.op(lower, x)
    if lower == "affine":
        return lambda x: ctx.op("add", ctx.op("mul", x, c(alpha or 1.0, x)), c(beta or 0.0, x))
    if lower == "leakyrelu":
        a = 0.01 if alpha is None else alpha
        return lambda x: ctx.op("where", ctx.op("less", x, c(0, x)), ctx.op("mul", x, c(a, x)), x)
    if lower == "thresholdedrelu":
        a = 1.0 if alpha is None else alpha
        return lambda x: ctx.op("where", ctx.op("greater", x, c(a, x)), x, c(0, x))
    if lower == "scaledtanh":
        return lambda x: ctx.op("mul", ctx.op("tanh", ctx.op("mul", x, c(beta or 1.0, x))),
                                c(alpha or 1.0, x))
    if lower == "hardsigmoid":
        a, b = 0.2 if alpha is None else alpha, 0.5 if beta is None else beta
        return lambda x: ctx.op("minimum", ctx.op("maximum", ctx.op(
            "add", ctx.op("mul", x, c(a, x)), c(b, x)), c(0, x)), c(1, x))
    if lower == "elu":
        a = 1.0 if alpha is None else alpha
        return lambda x: ctx.op("where", ctx.op("less", x, c(0, x)),
                                ctx.op("mul", ctx.op("expm1", x), c(a, x)), x)
    if lower == "softsign":
        return lambda x: ctx.op("div", x, ctx.op("add", ctx.op("abs", x), c(1, x)))
    ctx.fail(f"activation {name!r} is not supported")


@dataclass
class _Weights:
    """One direction's weights: recurrent matrix (transposed), recurrent bias, peepholes."""

    r_t: Value
    rb: Optional[Value]
    peep: Optional[list[Value]]


Cell = Callable[["NodeContext", Value, Value, Optional[Value], _Weights, Sequence[Activation],
                 Optional[float]], tuple[Value, Optional[Value]]]


def _clip(ctx: "NodeContext", x: Value, clip: Optional[float]) -> Value:
    if clip is None:
        return x
    return ctx.op("minimum", ctx.op("maximum", x, scalar(ctx, -clip, x)), scalar(ctx, clip, x))


def _rnn_cell(ctx: "NodeContext", xw: Value, h: Value, c: Optional[Value], w: _Weights,
              acts: Sequence[Activation], clip: Optional[float]) -> tuple[Value, Optional[Value]]:
    pre = ctx.op("add", xw, ctx.op("matmul", h, w.r_t))
    if w.rb is not None:
        pre = ctx.op("add", pre, w.rb)
    return acts[0](_clip(ctx, pre, clip)), None


def _gru_cell(ctx: "NodeContext", xw: Value, h: Value, c: Optional[Value], w: _Weights,
              acts: Sequence[Activation], clip: Optional[float]) -> tuple[Value, Optional[Value]]:
    hidden = shape(h)[-1]
    xz, xr, xh = ctx.op("split", xw, axis=-1, sizes=(hidden,) * 3)
    rz_t, rr_t, rh_t = ctx.op("split", w.r_t, axis=-1, sizes=(hidden,) * 3)
    bz, br, bh = (ctx.op("split", w.rb, axis=-1, sizes=(hidden,) * 3) if w.rb is not None
                  else (None, None, None))

    def gate(x: Value, r_t: Value, b: Optional[Value], state: Value) -> Value:
        out = ctx.op("add", x, ctx.op("matmul", state, r_t))
        return out if b is None else ctx.op("add", out, b)

    z = acts[0](_clip(ctx, gate(xz, rz_t, bz, h), clip))
    r = acts[0](_clip(ctx, gate(xr, rr_t, br, h), clip))
    if ctx.attr("linear_before_reset", 0):
        recurrent = ctx.op("matmul", h, rh_t)
        if bh is not None:
            recurrent = ctx.op("add", recurrent, bh)
        candidate = ctx.op("add", xh, ctx.op("mul", r, recurrent))
    else:
        candidate = gate(xh, rh_t, bh, ctx.op("mul", r, h))
    candidate = acts[1](_clip(ctx, candidate, clip))
    one = scalar(ctx, 1, z)
    return ctx.op("add", ctx.op("mul", ctx.op("sub", one, z), candidate), ctx.op("mul", z, h)), None


def _lstm_cell(ctx: "NodeContext", xw: Value, h: Value, c: Optional[Value], w: _Weights,
               acts: Sequence[Activation], clip: Optional[float]) -> tuple[Value, Optional[Value]]:
    assert c is not None
    hidden = shape(h)[-1]
    pre = ctx.op("add", xw, ctx.op("matmul", h, w.r_t))
    if w.rb is not None:
        pre = ctx.op("add", pre, w.rb)
    i, o, f, g = ctx.op("split", pre, axis=-1, sizes=(hidden,) * 4)
    if w.peep is not None:
        pi, _, pf = w.peep
        i = ctx.op("add", i, ctx.op("mul", pi, c))
        f = ctx.op("add", f, ctx.op("mul", pf, c))
    i = acts[0](_clip(ctx, i, clip))
    f = (ctx.op("sub", scalar(ctx, 1, i), i) if ctx.attr("input_forget", 0)
         else acts[0](_clip(ctx, f, clip)))
    g = acts[1](_clip(ctx, g, clip))
    c_new = ctx.op("add", ctx.op("mul", f, c), ctx.op("mul", i, g))
    if w.peep is not None:
        o = ctx.op("add", o, ctx.op("mul", w.peep[1], c_new))
    o = acts[0](_clip(ctx, o, clip))
    return ctx.op("mul", o, acts[2](c_new)), c_new


def recurrent(cell: Cell, gates: int, defaults: tuple[str, ...], has_cell_state: bool
              ) -> Handler:
    def handler(ctx: "NodeContext") -> list[Value]:
        x, w, r = ctx.input(0), ctx.input(1), ctx.input(2)
        batch_first = bool(ctx.attr("layout", 0))
        if batch_first:
            x = ctx.op("transpose", x, perm=(1, 0, 2))
        steps, batch = shape(x)[:2]
        check_unroll(ctx, steps, "the recurrence")
        hidden = ctx.attr("hidden_size", shape(r)[-1])
        direction = ctx.attr("direction", "forward")
        dirs = 2 if direction == "bidirectional" else 1
        names = list(ctx.attr("activations", defaults * dirs))
        alphas = list(ctx.attr("activation_alpha", ()))
        betas = list(ctx.attr("activation_beta", ()))
        acts = [_activation(ctx, n, alphas[k] if k < len(alphas) else None,
                            betas[k] if k < len(betas) else None) for k, n in enumerate(names)]
        clip = ctx.attr("clip", None)
        lens = ctx.optional(4)
        if lens is not None:
            lens = ctx.op("reshape", cast(ctx, lens, "int64"), shape=(batch, 1))
        ys, hs, cs = [], [], []
        for d in range(dirs):
            w_d, r_d = entry(ctx, w, d), entry(ctx, r, d)
            xw = ctx.op("matmul", x, ctx.op("transpose", w_d))
            rb = None
            if ctx.has(3):
                wb, rb = ctx.op("split", entry(ctx, ctx.input(3), d), axis=0,
                                sizes=(gates * hidden,) * 2)
                xw = ctx.op("add", xw, wb)
            peep = None
            if has_cell_state and ctx.has(7):
                peep = list(ctx.op("split", entry(ctx, ctx.input(7), d), axis=0,
                                   sizes=(hidden,) * 3))
            weights = _Weights(ctx.op("transpose", r_d), rb, peep)
            zeros = broadcast(ctx, scalar(ctx, 0, x), (batch, hidden))
            h = entry(ctx, ctx.input(5), d) if ctx.has(5) else zeros
            c = (entry(ctx, ctx.input(6), d) if ctx.has(6) else zeros) if has_cell_state else None
            reverse = direction == "reverse" or d == 1
            outs: list[Optional[Value]] = [None] * steps
            for t in (reversed(range(steps)) if reverse else range(steps)):
                xt = ctx.op("gather", xw, scalar(ctx, t, "int64"), axis=0)
                h_new, c_new = cell(ctx, xt, h, c, weights,
                                    acts[len(defaults) * d:len(defaults) * (d + 1)], clip)
                if lens is not None:
                    alive = ctx.op("less", scalar(ctx, t, "int64"), lens)
                    h = ctx.op("where", alive, h_new, h)
                    if c_new is not None:
                        c = ctx.op("where", alive, c_new, c)
                    outs[t] = ctx.op("where", alive, h_new, zeros)
                else:
                    h, c = h_new, c_new
                    outs[t] = h_new
            ys.append(ctx.op("stack", *outs, axis=1))  # [batch, steps, hidden]
            hs.append(h)
            if c is not None:
                cs.append(c)
        y = ctx.op("stack", *ys, axis=2)  # [batch, steps, dirs, hidden]
        y = ctx.op("transpose", y, perm=(0, 1, 2, 3) if batch_first else (1, 2, 0, 3))
        state = [ctx.op("stack", *vs, axis=1 if batch_first else 0) for vs in (hs, cs) if vs]
        return [y, *state]
    return handler


OPS: dict[str, Handler] = {
    "RNN": recurrent(_rnn_cell, 1, ("Tanh",), False),
    "GRU": recurrent(_gru_cell, 3, ("Sigmoid", "Tanh"), False),
    "LSTM": recurrent(_lstm_cell, 4, ("Sigmoid", "Tanh", "Tanh"), True),
}
