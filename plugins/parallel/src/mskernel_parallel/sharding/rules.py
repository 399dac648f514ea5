"""Sharding rules: how an op's operands and results may be split, as data.

A rule is registered per op under the rule kind ``"sharding"``::

    @hookimpl
    def mskernel_register_rules(rules):
        rules.register("sharding", "my.op", my_rule)   # returns mskernel.parallel.OpSharding

``rule(input_types, attrs) -> OpSharding | None`` names every dimension of every tensor
operand and result with a *letter*.  Dimensions with the same letter are split the same way;
a letter found in operands but in no result is *contracted*: when it is split, each rank
computes a partial result, combined by ``reductions[letter]`` (a matmul's inner dimension:
``"sum"``).  A dimension named ``None`` is never split — the op needs it whole (softmax's
axis, a convolution's spatial dimensions).  An op without a rule (or whose rule returns
``None``) runs on whole, replicated operands.  ``local_attrs(attrs, splits)`` gives the
attributes of the op on each rank's blocks, when those differ (a reshape's target shape),
from the number of blocks per letter.

Given a layout of some operands, the propagation pass gives each letter the mesh axes that
split it, and so the layouts of the other operands and of the results (with the partial
state of the contracted letters): :mod:`.propagate`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Optional, Sequence

from mskernel_sdk import TensorType, core_ops, normalize_axes, op_registry

Letters = tuple[Optional[str], ...]
LocalAttrs = Callable[[Mapping[str, Any], Mapping[str, int]], dict[str, Any]]
SHARDING_RULE = "sharding"
#: reductions whose partial results combine by the same reduction
PARTIAL_REDUCTIONS = {"sum": "sum", "mean": "mean", "max": "max", "min": "min", "prod": "prod"}


@dataclass(frozen=True)
class OpSharding:
    """One letter (or ``None``: never split) per dimension of each tensor operand and
    result; how contracted letters' partial results combine; the op's attributes per rank."""

    inputs: tuple[Letters, ...]
    outputs: tuple[Letters, ...]
    reductions: Mapping[str, str] = field(default_factory=dict)
    local_attrs: Optional[LocalAttrs] = None

    def splittable(self, letter: str) -> bool:
        """Whether splitting ``letter`` is allowed: it is in a result, or its partial results
        combine by a reduction."""
        return any(letter in out for out in self.outputs) or letter in self.reductions


Rule = Callable[[Sequence[TensorType], Mapping[str, Any]], Optional[OpSharding]]


def _dims(prefix: str, rank: int) -> Letters:
    return tuple(f"{prefix}{i}" for i in range(rank))


def _aligned(t: TensorType, out: Letters, out_shape: Sequence[int]) -> Letters:
    """``t``'s letters when broadcast (aligned right) to ``out``: a broadcast dimension of
    size 1 is never split."""
    offset = len(out) - t.rank
    return tuple(None if n == 1 and out_shape[offset + i] != 1 else out[offset + i]
                 for i, n in enumerate(t.shape))


def elementwise(types: Sequence[TensorType], attrs: Mapping[str, Any]) -> OpSharding:
    """Every elementwise and broadcasting op: result dimensions are shared with the operands
    (aligned right); broadcast dimensions are whole."""
    rank = max(t.rank for t in types)
    shape = [1] * rank
    for t in types:
        for i, n in enumerate(t.shape):
            j = rank - t.rank + i
            shape[j] = max(shape[j], n)
    out = _dims("d", rank)
    return OpSharding(tuple(_aligned(t, out, shape) for t in types), (out,))


def matmul(types: Sequence[TensorType], attrs: Mapping[str, Any]) -> Optional[OpSharding]:
    """``x @ y`` with NumPy's broadcasting of batch dimensions: rows ``m``, columns ``n``,
    the contracted ``k`` (partial sums)."""
    x, y = types
    batch_rank = max(x.rank - 2, y.rank - 2, 0)
    batch = _dims("b", batch_rank)
    batch_shape = [max(a, b) for a, b in zip(
        (1,) * (batch_rank - max(x.rank - 2, 0)) + tuple(x.shape[:-2]),
        (1,) * (batch_rank - max(y.rank - 2, 0)) + tuple(y.shape[:-2]))]

    def batch_of(t: TensorType) -> Letters:
        b = TensorType(t.dtype, tuple(t.shape[:-2]))
        return _aligned(b, batch, batch_shape) if t.rank > 2 else ()

    xs = batch_of(x) + (("m",) if x.rank >= 2 else ()) + ("k",)
    ys = ("k",) if y.rank == 1 else batch_of(y) + ("k", "n")
    out = batch + (("m",) if x.rank >= 2 else ()) + (("n",) if y.rank >= 2 else ())
    return OpSharding((xs, ys), (out,), {"k": "sum"})


def einsum(types: Sequence[TensorType], attrs: Mapping[str, Any]) -> Optional[OpSharding]:
    """An explicit equation without ellipsis (``"bsh,hf->bsf"``): its own letters; a letter
    repeated within one operand (a diagonal) is never split."""
    equation = attrs["equation"].replace(" ", "")
    if "..." in equation or "->" not in equation:
        return None
    operands, result = equation.split("->")
    terms = operands.split(",")
    inputs = tuple(tuple(c if term.count(c) == 1 else None for c in term) for term in terms)
    contracted = {c for term in terms for c in term if c not in result}
    return OpSharding(inputs, (tuple(result),), {c: "sum" for c in contracted})


def reduction(op: str) -> Rule:
    """A reduction over ``axes``: reduced dimensions split over ranks leave partial results
    for sum, mean, max, min and prod, combined by the same reduction; for the others
    (logsumexp, variance, …) reduced dimensions stay whole."""
    combine = PARTIAL_REDUCTIONS.get(op)

    def rule(types: Sequence[TensorType], attrs: Mapping[str, Any]) -> OpSharding:
        (x,) = types
        letters = _dims("d", x.rank)
        axes = set(normalize_axes(attrs.get("axes"), x.rank))
        xs = tuple(None if i in axes and combine is None else c for i, c in enumerate(letters))
        if attrs.get("keepdims"):
            out = tuple(None if i in axes else c for i, c in enumerate(letters))
        else:
            out = tuple(c for i, c in enumerate(letters) if i not in axes)
        reductions = {letters[i]: combine for i in axes} if combine else {}
        return OpSharding((xs,), (out,), reductions)
    return rule


def along_axis(types: Sequence[TensorType], attrs: Mapping[str, Any]) -> OpSharding:
    """An op along one ``axis`` (softmax, log_softmax, cumulative sums): that axis whole."""
    (x,) = types
    axis = attrs["axis"] % x.rank if x.rank else 0
    letters = tuple(None if i == axis else c for i, c in enumerate(_dims("d", x.rank)))
    return OpSharding((letters,), (letters,))


def layer_norm(types: Sequence[TensorType], attrs: Mapping[str, Any]) -> OpSharding:
    """Layer norm over the dimensions from ``axis`` on: those whole (scale and bias
    replicated), the leading ones split freely; the mean and rstd results follow."""
    x, scale, bias = types
    first = attrs["axis"] % x.rank
    lead = _dims("d", first)
    rest = (None,) * (x.rank - first)
    return OpSharding((lead + rest, (None,) * scale.rank, (None,) * bias.rank),
                      (lead + rest, lead + rest, lead + rest))


def conv(types: Sequence[TensorType], attrs: Mapping[str, Any]) -> OpSharding:
    """A convolution: the batch ``b`` and output channels ``o`` split freely, the input
    channels ``c`` with partial sums (one group only), spatial dimensions whole (no halo
    exchange)."""
    x, w = types
    grouped = attrs.get("groups", 1) != 1
    spatial = (None,) * (x.rank - 2)
    c = None if grouped else "c"
    return OpSharding((("b", c) + spatial, (None if grouped else "o", c) + spatial),
                      (("b", None if grouped else "o") + spatial,), {} if grouped else {"c": "sum"})


def embedding(types: Sequence[TensorType], attrs: Mapping[str, Any]) -> OpSharding:
    """``table[ids]``: the ids' dimensions and the embedding dimension split freely; the
    vocabulary whole."""
    table, ids = types
    idl = _dims("i", ids.rank)
    return OpSharding(((None, "e"), idl), (idl + ("e",),))


def gather(types: Sequence[TensorType], attrs: Mapping[str, Any]) -> OpSharding:
    """``take(x, indices, axis)``: ``x``'s other dimensions and the indices' split freely,
    the gathered axis whole."""
    x, indices = types
    axis = attrs["axis"] % x.rank
    xl = tuple(None if i == axis else c for i, c in enumerate(_dims("x", x.rank)))
    il = _dims("i", indices.rank)
    return OpSharding((xl, il), (xl[:axis] + il + xl[axis + 1:],))


def transpose(types: Sequence[TensorType], attrs: Mapping[str, Any]) -> OpSharding:
    (x,) = types
    perm = attrs.get("perm") or tuple(reversed(range(x.rank)))
    letters = _dims("d", x.rank)
    return OpSharding((letters,), (tuple(letters[p % x.rank] for p in perm),))


def _regrouped(shape_in: Sequence[int], shape_out: Sequence[int]) -> tuple[Letters, Letters]:
    """Letters for a reshape: dimensions grouped into runs of equal product; in each run the
    outermost dimension (of size > 1) on both sides shares a letter — splitting it cuts the
    run's elements into the same contiguous blocks — and the rest are whole."""
    ins: list[Optional[str]] = [None] * len(shape_in)
    outs: list[Optional[str]] = [None] * len(shape_out)
    i = j = run = 0
    while i < len(shape_in) and j < len(shape_out):
        if shape_in[i] == 1:
            i += 1
            continue
        if shape_out[j] == 1:
            j += 1
            continue
        letter, first_i, first_j = f"r{run}", i, j
        a, b = shape_in[i], shape_out[j]
        while a != b:
            if a < b:
                i += 1
                a *= shape_in[i]
            else:
                j += 1
                b *= shape_out[j]
        ins[first_i], outs[first_j] = letter, letter
        i, j, run = i + 1, j + 1, run + 1
    return tuple(ins), tuple(outs)


def reshape(types: Sequence[TensorType], attrs: Mapping[str, Any],
            out_shape: Sequence[int]) -> OpSharding:
    (x,) = types
    ins, outs = _regrouped(x.shape, out_shape)

    def local(attrs: Mapping[str, Any], splits: Mapping[str, int]) -> dict[str, Any]:
        shape = tuple(n // splits.get(c, 1) if c else n for n, c in zip(out_shape, outs))
        return {**attrs, "shape": shape}
    return OpSharding((ins,), (outs,), local_attrs=local)


def _out_shape(op: str, types: Sequence[TensorType], attrs: Mapping[str, Any]) -> tuple[int, ...]:
    (out,) = op_registry().get(op).infer_types(list(types), attrs)
    return tuple(out.shape)


def reshape_rule(types: Sequence[TensorType], attrs: Mapping[str, Any]) -> OpSharding:
    return reshape(types, attrs, _out_shape("reshape", types, attrs))


def regroup_rule(op: str) -> Rule:
    """expand_dims and squeeze: reshapes whose attributes hold on every rank's block."""
    def rule(types: Sequence[TensorType], attrs: Mapping[str, Any]) -> OpSharding:
        ins, outs = _regrouped(types[0].shape, _out_shape(op, types, attrs))
        return OpSharding((ins,), (outs,))
    return rule


def broadcast_to(types: Sequence[TensorType], attrs: Mapping[str, Any]) -> OpSharding:
    (x,) = types
    shape = tuple(attrs["shape"])
    out = _dims("d", len(shape))

    def local(attrs: Mapping[str, Any], splits: Mapping[str, int]) -> dict[str, Any]:
        return {**attrs, "shape": tuple(n // splits.get(c, 1) for n, c in zip(shape, out))}
    return OpSharding((_aligned(x, out, shape),), (out,), local_attrs=local)


def concat(types: Sequence[TensorType], attrs: Mapping[str, Any]) -> OpSharding:
    """concat and split: every dimension but ``axis`` split freely."""
    rank = types[0].rank
    axis = attrs["axis"] % rank
    letters = tuple(None if i == axis else c for i, c in enumerate(_dims("d", rank)))
    return OpSharding((letters,) * len(types), (letters,))


def split(types: Sequence[TensorType], attrs: Mapping[str, Any]) -> OpSharding:
    (x,) = types
    axis = attrs["axis"] % x.rank
    letters = tuple(None if i == axis else c for i, c in enumerate(_dims("d", x.rank)))
    return OpSharding((letters,), (letters,) * len(attrs["sizes"]))


def slice_rule(types: Sequence[TensorType], attrs: Mapping[str, Any]) -> OpSharding:
    (x,) = types
    axes = set(normalize_axes(attrs.get("axes"), x.rank)) if attrs.get("axes") is not None \
        else set(range(len(attrs["starts"])))
    letters = tuple(None if i in axes else c for i, c in enumerate(_dims("d", x.rank)))
    return OpSharding((letters,), (letters,))


def one_hot(types: Sequence[TensorType], attrs: Mapping[str, Any]) -> OpSharding:
    (ids,) = types
    letters = _dims("d", ids.rank)
    axis = attrs["axis"] % (ids.rank + 1)
    return OpSharding((letters,), (letters[:axis] + (None,) + letters[axis:],))


def rules() -> list[tuple[str, Rule]]:
    """(op, rule) for the core's ops."""
    table: list[tuple[str, Rule]] = [(name, elementwise) for name in core_ops("elementwise")]
    table += [(name, reduction(name)) for name, opdef in core_ops("reduction").items()
              if any(a.name == "axes" for a in opdef.attrs)]
    table += [
        ("matmul", matmul), ("einsum", einsum), ("softmax", along_axis),
        ("log_softmax", along_axis), ("cumsum", along_axis), ("cumprod", along_axis),
        ("layer_norm", layer_norm), ("conv", conv), ("embedding", embedding),
        ("gather", gather), ("transpose", transpose), ("reshape", reshape_rule),
        ("expand_dims", regroup_rule("expand_dims")), ("squeeze", regroup_rule("squeeze")),
        ("broadcast_to", broadcast_to), ("concat", concat), ("split", split),
        ("slice", slice_rule), ("one_hot", one_hot),
    ]
    return table
