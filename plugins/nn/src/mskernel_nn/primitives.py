"""MindSpore's primitive classes — ``ops.ReduceMean(keep_dims=True)(x, 1)``,
``ops.MatMul(transpose_b=True)(a, b)``, ``ops.Conv2D(8, 3)(x, w)`` — made from one table.

Each row of :data:`TABLE` declares a class: its MindSpore name, the functional op it calls
(a name in ``mskernel.ops``, or an adapter of this module when MindSpore's primitive computes
something the functional ops spell differently), its ``__init__`` attributes with their
defaults, its ``__call__`` inputs (MindSpore's names; ``name=default`` for optional ones) and
the argument mapping: comma-separated entries ``name`` (positional) or ``keyword=name``,
where ``name`` is an input or an attribute (or a Python literal), optionally followed by
``|converter`` (:data:`CONVERTERS`); without one, the inputs and then the attributes are
passed in order.  :func:`primitive_class` makes the class and its docstring from the row;
``help(ops.ReduceMean)`` shows both.  The plugin exposes every class as ``mskernel.ops.<Name>``.
"""

from __future__ import annotations

import ast
import inspect
from dataclasses import dataclass
from typing import Any, Callable

from mskernel import dtype as to_dtype, int32, ops as F, random
from mskernel_sdk import Tensor

from .functional import activations, losses, spatial
from .functional.losses import soft_loss
from .initializer import next_key


@dataclass(frozen=True)
class Row:
    """One primitive class: see the module doc for the fields' grammar."""

    name: str
    op: str
    init: str = ""
    inputs: str = "x"
    call: str = ""


def _every(axis: Any) -> Any:
    """MindSpore's ``axis=()``, every axis, as ``None``."""
    return None if axis == () or axis == [] else axis


#: converter name → function applied to a value before it is passed on.
CONVERTERS: dict[str, Callable[[Any], Any]] = {"every": _every, "dtype": to_dtype}


# -- adapters: MindSpore's primitive computes what the functional ops spell otherwise -----------


def matmul_transposed(x: Any, y: Any, transpose_a: bool, transpose_b: bool) -> Tensor:
    """``op(x) @ op(y)``, ``op`` swapping the last two axes where asked."""
    a, b = F.asarray(x), F.asarray(y)
    return F.matmul(F.swapaxes(a, -1, -2) if transpose_a else a,
                    F.swapaxes(b, -1, -2) if transpose_b else b)


def arg_extreme(x: Any, axis: int, output_type: Any, largest: bool = True) -> Tensor:
    """The index of the largest (smallest) element along ``axis``, as ``output_type``."""
    return F.astype((F.argmax if largest else F.argmin)(x, axis), output_type)


def arg_extreme_with_value(x: Any, axis: int, keep_dims: bool,
                           largest: bool = True) -> tuple[Tensor, Tensor]:
    """``(index, value)`` of the largest (smallest) element along ``axis``."""
    index = (F.argmax if largest else F.argmin)(x, axis, keepdims=True)
    value = F.take_along_axis(x, index, axis)
    if not keep_dims:
        index, value = F.squeeze(index, axis), F.squeeze(value, axis)
    return F.astype(index, int32), value


def sort_with_indices(x: Any, axis: int, descending: bool) -> tuple[Tensor, Tensor]:
    """``(values, indices)`` of a stable sort along ``axis``."""
    order = F.argsort(x, axis, descending=descending)
    return F.take_along_axis(x, order, axis), F.astype(order, int32)


def reduce_sum(x: Any, axis: Any, keep_dims: bool, skip_mode: bool) -> Tensor:
    """The sum over ``axis``; with ``skip_mode`` an empty ``axis`` leaves ``x`` as it is."""
    if skip_mode and _every(axis) is None:
        return F.asarray(x)
    return F.sum(x, _every(axis), keep_dims)


def squared_difference(x: Any, y: Any) -> Tensor:
    """``(x - y) ** 2``."""
    return F.square(F.subtract(x, y))


def add_n(inputs: Any) -> Tensor:
    """The elementwise sum of a list of tensors."""
    return F.sum(F.stack(list(inputs)), 0)


def bias_add(x: Any, bias: Any, data_format: str) -> Tensor:
    """``x + bias`` with the bias along the channel axis (1 for ``NC...``, last for ``N...C``)."""
    t = F.asarray(x)
    if data_format.upper().startswith("NC"):
        return F.add(t, F.reshape(bias, (-1,) + (1,) * (t.ndim - 2)))
    return F.add(t, bias)


def conv2d(x: Any, weight: Any, out_channel: int, kernel_size: Any, mode: int, pad_mode: str,
           pad: Any, stride: Any, dilation: Any, group: int, data_format: str) -> Tensor:
    """MindSpore's ``Conv2D``: NCHW, ``pad_mode`` ``"valid"``, ``"same"`` or ``"pad"`` (then
    ``pad`` is one int or ``(top, bottom, left, right)``)."""
    if data_format != "NCHW":
        raise ValueError(f"Conv2D: data_format {data_format!r} is not supported; use NCHW")
    from .layers.conv import pad_pairs  # the layers load on first use

    w = F.asarray(weight)
    if w.shape[0] != out_channel:
        raise ValueError(f"Conv2D: weight {w.type} has {w.shape[0]} output channels, "
                         f"out_channel is {out_channel}")
    return F.conv2d(x, w, None, _two(stride), pad_pairs(pad_mode, pad, 2), _two(dilation),
                    group)


def _two(value: Any) -> Any:
    """MindSpore's 4-element ``stride``/``dilation`` (``(1, 1, h, w)``) as ``(h, w)``."""
    return tuple(value[2:]) if isinstance(value, (list, tuple)) and len(value) == 4 else value


def pool2d(x: Any, kernel_size: Any, strides: Any, pad_mode: str, data_format: str,
           largest: bool = True) -> Tensor:
    """MindSpore's ``MaxPool``/``AvgPool``: NCHW, ``pad_mode`` ``"valid"`` or ``"same"``."""
    if data_format != "NCHW":
        raise ValueError(f"pooling: data_format {data_format!r} is not supported; use NCHW")
    pool = F.max_pool2d if largest else F.avg_pool2d
    return pool(x, _two(kernel_size), _two(strides), pad_mode.lower())


def softmax_cross_entropy(logits: Any, labels: Any) -> tuple[Tensor, Tensor]:
    """``(loss [N], dloss/dlogits)`` of softmax cross-entropy against probability labels."""
    log_probs = F.log_softmax(logits, -1)
    target = F.astype(labels, log_probs.dtype)
    return soft_loss(log_probs, target, None, 0.0), F.subtract(F.exp(log_probs), target)


def sparse_softmax_cross_entropy(logits: Any, labels: Any, is_grad: bool) -> Tensor:
    """The mean softmax cross-entropy against class indices (its gradient with ``is_grad``)."""
    log_probs = F.log_softmax(logits, -1)
    hot = F.one_hot(labels, log_probs.shape[-1], dtype=log_probs.dtype)
    if is_grad:
        return F.divide(F.subtract(F.exp(log_probs), hot), log_probs.shape[0])
    return F.mean(soft_loss(log_probs, hot, None, 0.0))


def l2_normalize(x: Any, axis: Any, epsilon: float) -> Tensor:
    """``x / sqrt(max(sum(x ** 2 over axis), epsilon))``."""
    t = F.asarray(x)
    return F.divide(t, F.sqrt(F.maximum(F.sum(F.square(t), axis, keepdims=True), epsilon)))


def dropout(x: Any, keep_prob: float, Seed0: int, Seed1: int) -> tuple[Tensor, Tensor]:
    """``(output, mask)``: each element kept with probability ``keep_prob`` and scaled by
    its inverse; the seeds, when not both 0, make the mask reproducible."""
    t = F.asarray(x)
    key = random.fold_in(random.key(Seed0), Seed1) if Seed0 or Seed1 else next_key()
    keep = random.bernoulli(key, keep_prob, t.shape)
    return F.where(keep, F.divide(t, keep_prob), F.zeros_like(t)), keep


def shape(x: Any) -> tuple[int, ...]:
    """The shape as a tuple of ints."""
    return F.asarray(x).shape


def rank(x: Any) -> int:
    """The number of axes."""
    return F.asarray(x).ndim


def size(x: Any) -> int:
    """The number of elements."""
    return F.asarray(x).size


def dtype_of(x: Any) -> Any:
    """The dtype."""
    return F.asarray(x).dtype


def split(x: Any, axis: int, output_num: int) -> tuple[Tensor, ...]:
    """``output_num`` equal pieces along ``axis``."""
    return F.split(x, output_num, axis)


def unstack(x: Any, axis: int, num: Any) -> tuple[Tensor, ...]:
    """The slices along ``axis``, that axis removed."""
    return F.unbind(x, axis)


def sigmoid_cross_entropy(logits: Any, label: Any) -> Tensor:
    """Elementwise binary cross-entropy of ``sigmoid(logits)``."""
    return F.binary_cross_entropy_with_logits(logits, label, reduction="none")


def bce_with_logits(logits: Any, label: Any, weight: Any, pos_weight: Any,
                    reduction: str) -> Tensor:
    """:func:`~mskernel.ops.binary_cross_entropy_with_logits` in MindSpore's input order."""
    return F.binary_cross_entropy_with_logits(logits, label, weight, pos_weight, reduction)


def _unary(*names: str, op: str = "") -> list[Row]:
    return [Row(name, op or name.lower()) for name in names]


def _binary(*pairs: tuple[str, str]) -> list[Row]:
    return [Row(name, op, inputs="x, y") for name, op in pairs]


def _reductions(*pairs: tuple[str, str]) -> list[Row]:
    return [Row(name, op, "keep_dims=False", "x, axis=()", "x, axis|every, keep_dims")
            for name, op in pairs]


#: One row per primitive class (see :class:`Row`).
TABLE: tuple[Row, ...] = (
    *_unary("Abs", "Sqrt", "Rsqrt", "Exp", "Log", "Sigmoid", "Tanh", "Square", "Reciprocal",
            "Floor", "Ceil", "Sin", "Cos", "Tan", "Asin", "Acos", "Atan", "Sinh", "Cosh", "Erf",
            "Erfc", "Sign", "Softplus", "Round", "Expm1", "Log1p", "Mish", "Softsign"),
    *(Row(name, op) for name, op in (
        ("Neg", "negative"), ("ReLU", "relu"), ("ReLU6", "relu6"), ("GeLU", "gelu"),
        ("SiLU", "silu"), ("HSigmoid", "hardsigmoid"), ("HSwish", "hardswish"),
        ("SeLU", "selu"), ("LogicalNot", "logical_not"), ("IsNan", "isnan"),
        ("IsInf", "isinf"), ("IsFinite", "isfinite"), ("ZerosLike", "zeros_like"),
        ("OnesLike", "ones_like"))),
    *_binary(("Add", "add"), ("Sub", "subtract"), ("Mul", "multiply"), ("Div", "divide"),
             ("RealDiv", "divide"), ("Maximum", "maximum"), ("Minimum", "minimum"),
             ("Pow", "pow"), ("Equal", "equal"), ("NotEqual", "not_equal"), ("Less", "less"),
             ("LessEqual", "less_equal"), ("Greater", "greater"),
             ("GreaterEqual", "greater_equal"), ("LogicalAnd", "logical_and"),
             ("LogicalOr", "logical_or"), ("FloorDiv", "floor_divide"),
             ("FloorMod", "remainder"), ("Atan2", "atan2"),
             ("SquaredDifference", "squared_difference")),
    *_reductions(("ReduceMean", "mean"), ("ReduceMax", "amax"), ("ReduceMin", "amin"),
                 ("ReduceProd", "prod"), ("ReduceAll", "all"), ("ReduceAny", "any")),
    Row("ReduceSum", "reduce_sum", "keep_dims=False, skip_mode=False", "x, axis=()"),
    Row("Argmax", "arg_extreme", "axis=-1, output_type=int32", "x",
        "x, axis, output_type|dtype"),
    Row("Argmin", "arg_extreme", "axis=-1, output_type=int32", "x",
        "x, axis, output_type|dtype, largest=False"),
    Row("ArgMaxWithValue", "arg_extreme_with_value", "axis=0, keep_dims=False", "x"),
    Row("ArgMinWithValue", "arg_extreme_with_value", "axis=0, keep_dims=False", "x",
        "x, axis, keep_dims, largest=False"),
    Row("Transpose", "transpose", "", "input_x, input_perm"),
    Row("Reshape", "reshape", "", "input_x, input_shape"),
    Row("ExpandDims", "expand_dims", "", "input_x, axis"),
    Row("Squeeze", "squeeze", "axis=()", "input_x", "input_x, axis|every"),
    Row("Flatten", "flatten", "", "input_x", "input_x, 1"),
    Row("Concat", "concat", "axis=0", "input_x"),
    Row("Stack", "stack", "axis=0", "input_x"),
    Row("Unstack", "unstack", "axis=0, num=None", "input_x"),
    Row("Split", "split", "axis=0, output_num=1", "input_x"),
    Row("Tile", "tile", "", "input_x, multiples"),
    Row("Cast", "astype", "", "input_x, type", "input_x, type|dtype"),
    Row("Shape", "shape", "", "input_x"),
    Row("Rank", "rank", "", "input_x"),
    Row("Size", "size", "", "input_x"),
    Row("DType", "dtype_of", "", "input_x"),
    Row("Fill", "fill", "", "type, shape, value", "type|dtype, shape, value"),
    Row("Zeros", "zeros", "", "size, type='float32'", "size, type|dtype"),
    Row("Ones", "ones", "", "shape, type='float32'", "shape, type|dtype"),
    Row("Eye", "eye", "", "n, m, t", "n, m, t|dtype"),
    Row("Select", "where", "", "condition, x, y"),
    Row("Gather", "gather", "batch_dims=0", "input_params, input_indices, axis",
        "input_params, input_indices, axis"),
    Row("GatherNd", "gather_nd", "", "input_x, indices"),
    Row("OneHot", "one_hot", "axis=-1", "indices, depth, on_value, off_value"),
    Row("Sort", "sort_with_indices", "axis=-1, descending=False", "x"),
    Row("TopK", "topk", "sorted=True", "input_x, k", "input_x, k, sorted=sorted"),
    Row("CumSum", "cumsum", "exclusive=False, reverse=False", "input, axis",
        "input, axis, exclusive=exclusive, reverse=reverse"),
    Row("CumProd", "cumprod", "exclusive=False, reverse=False", "x, axis",
        "x, axis, exclusive=exclusive, reverse=reverse"),
    Row("AddN", "add_n", "", "x"),
    Row("MatMul", "matmul_transposed", "transpose_a=False, transpose_b=False", "x, y"),
    Row("BatchMatMul", "matmul_transposed", "transpose_a=False, transpose_b=False", "x, y"),
    Row("Einsum", "einsum", "equation", "x", "equation, *x"),
    Row("Softmax", "softmax", "axis=-1", "logits"),
    Row("LogSoftmax", "log_softmax", "axis=-1", "logits"),
    Row("Elu", "elu", "alpha=1.0", "input_x"),
    Row("PReLU", "prelu", "", "x, weight"),
    Row("L2Normalize", "l2_normalize", "axis=0, epsilon=0.0001", "x"),
    Row("Dropout", "dropout", "keep_prob=0.5, Seed0=0, Seed1=0", "x"),
    Row("BiasAdd", "bias_add", "data_format='NCHW'", "input_x, bias"),
    Row("Conv2D", "conv2d", "out_channel, kernel_size, mode=1, pad_mode='valid', pad=0, "
        "stride=1, dilation=1, group=1, data_format='NCHW'", "x, weight"),
    Row("MaxPool", "pool2d", "kernel_size=1, strides=1, pad_mode='valid', data_format='NCHW'",
        "x"),
    Row("AvgPool", "pool2d", "kernel_size=1, strides=1, pad_mode='valid', data_format='NCHW'",
        "x", "x, kernel_size, strides, pad_mode, data_format, largest=False"),
    Row("SoftmaxCrossEntropyWithLogits", "softmax_cross_entropy", "", "logits, labels"),
    Row("SparseSoftmaxCrossEntropyWithLogits", "sparse_softmax_cross_entropy", "is_grad=False",
        "logits, labels"),
    Row("SigmoidCrossEntropyWithLogits", "sigmoid_cross_entropy", "", "logits, label"),
    Row("BCEWithLogitsLoss", "bce_with_logits", "reduction='mean'",
        "logits, label, weight, pos_weight"),
)


def _parameters(spec: str) -> list[inspect.Parameter]:
    """``"a, b=1"`` as positional-or-keyword parameters (defaults are Python literals or
    ``int32``)."""
    params = []
    for entry in filter(None, (e.strip() for e in spec.split(","))):
        name, _, default = entry.partition("=")
        value = inspect.Parameter.empty if not default else \
            int32 if default == "int32" else ast.literal_eval(default)
        params.append(inspect.Parameter(name, inspect.Parameter.POSITIONAL_OR_KEYWORD,
                                        default=value))
    return params


def _target(row: Row) -> Callable[..., Any]:
    if row.op in _ADAPTERS:
        return globals()[row.op]  # type: ignore[no-any-return]
    return _OWN_OPS.get(row.op) or getattr(F, row.op)


def _mapping(row: Row) -> str:
    """The row's argument mapping; by default its inputs, then its attributes, in order."""
    return row.call or ", ".join(p.name for p in _parameters(f"{row.inputs}, {row.init}"))


def _arguments(row: Row, values: dict[str, Any]) -> tuple[list[Any], dict[str, Any]]:
    """The op's positional and keyword arguments by the row's mapping."""
    args: list[Any] = []
    kwargs: dict[str, Any] = {}
    for entry in (e.strip() for e in _mapping(row).split(",")):
        keyword, _, source = entry.rpartition("=")
        name, _, converter = source.partition("|")
        star = name.startswith("*")
        name = name.lstrip("*")
        value = values[name] if name in values else ast.literal_eval(name)
        if converter and value is not None:
            value = CONVERTERS[converter](value)
        if star:
            args.extend(value)
        elif keyword:
            kwargs[keyword] = value
        else:
            args.append(value)
    return args, kwargs


class Primitive:
    """Base of MindSpore's primitive classes: made with its attributes
    (``ops.ReduceMean(keep_dims=True)``), called with its inputs (``(x, axis)``)."""

    row: Row
    _init: inspect.Signature
    _inputs: inspect.Signature

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        try:
            bound = self._init.bind(*args, **kwargs)
        except TypeError as e:
            raise TypeError(f"ops.{self.row.name}: {e}; it takes {self._init}") from None
        bound.apply_defaults()
        self.attrs = dict(bound.arguments)
        for name, value in self.attrs.items():
            setattr(self, name, value)

    @property
    def name(self) -> str:
        return self.row.name

    def add_prim_attr(self, name: str, value: Any) -> "Primitive":
        """Set an attribute (MindSpore's spelling); returns the primitive."""
        self.attrs[name] = value
        setattr(self, name, value)
        return self

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        try:
            bound = self._inputs.bind(*args, **kwargs)
        except TypeError as e:
            raise TypeError(f"ops.{self.row.name}(): {e}; its inputs are {self._inputs}") \
                from None
        bound.apply_defaults()
        positional, keywords = _arguments(self.row, {**self.attrs, **bound.arguments})
        return _target(self.row)(*positional, **keywords)

    def __repr__(self) -> str:
        attrs = ", ".join(f"{k}={v!r}" for k, v in self.attrs.items())
        return f"Prim[{self.row.name}]<{attrs}>"


def _docstring(row: Row) -> str:
    target = _target(row)
    where = f"mskernel.ops.{row.op}" if row.op not in _ADAPTERS else \
        f"{__name__}.{row.op}"
    summary = (inspect.getdoc(target) or "").split("\n\n")[0]
    mapping = _mapping(row).replace("|every", " (() for all)").replace("|dtype", "")
    return (f"MindSpore's ``ops.{row.name}``: ``ops.{row.name}({row.init})({row.inputs})``.\n\n"
            f"Calls ``{where}({mapping})``: {summary}")


def primitive_class(row: Row) -> type[Primitive]:
    """The class of ``row``, with its docstring and signatures made from it."""
    cls = type(row.name, (Primitive,), {
        "row": row, "_init": inspect.Signature(_parameters(row.init)),
        "_inputs": inspect.Signature(_parameters(row.inputs)), "__module__": __name__,
        "__qualname__": row.name,
    })
    cls.__doc__ = _docstring(row)
    cls.__signature__ = cls._init  # type: ignore[attr-defined]
    return cls


_ADAPTERS = frozenset(name for name, value in list(globals().items())
                      if inspect.isfunction(value) and value.__module__ == __name__
                      and not name.startswith("_") and name != "primitive_class")

#: The ``mskernel.ops`` members this plugin defines, taken from their modules (the namespace
#: registry is not complete while the plugin registers them).
_OWN_OPS = {name: getattr(m, name) for m in (activations, losses, spatial) for name in m.__all__}

#: MindSpore name → primitive class.
PRIMITIVES: dict[str, type[Primitive]] = {row.name: primitive_class(row) for row in TABLE}
globals().update(PRIMITIVES)
#: What ``mskernel.ops`` takes from this module: the primitive classes.
__all__ = list(PRIMITIVES)
