"""The functional op API, ``mskernel.ops.<name>``: NumPy/MindSpore-style signatures over the
core ops.  Every function works on concrete and traced tensors alike.

Conventions every function follows:

- A tensor argument may be a :class:`Tensor`, a NumPy array, (nested) lists or a Python or
  NumPy scalar.  Operands that combine elementwise are promoted to one dtype by
  :mod:`~mskernel.frontend.promote` (NumPy's table; Python scalars are *weak*:
  ``int8_tensor + 1`` stays int8).
- Float-only math (``exp``, ``sin``, ``sigmoid``, ``mean``, ``softmax``, ``conv2d`` …) on
  integer or bool inputs computes in float32, as PyTorch does; true division of integers
  gives float32.  Sums and products of bool and narrow integer tensors accumulate in int64
  (uint64 for unsigned ones), as NumPy does.
- ``axis`` is ``None`` (every axis), an int or a tuple of ints; negatives count from the end.
- Index operands accept Python-style negative indices: concrete ones are checked and
  normalised on the host, traced ones with ``where(i < 0, i + n, i)``.
- Ops defined by plugins are applied with :func:`apply`.

The functions live in modules of one theme each: :mod:`._core` (``asarray``, ``astype``,
``apply`` and the plumbing every op uses), :mod:`.creation`, :mod:`.elementwise`,
:mod:`.reduction` (reductions and scans), :mod:`.sorting`, :mod:`.statistics`,
:mod:`.linalg`, :mod:`.nn` (softmax, normalisation, convolution, pooling), :mod:`.losses`,
:mod:`.shape`, :mod:`.indexing` and :mod:`.updates`.  :mod:`.names` adds MindSpore's
spellings: its keywords (``dim``, ``keep_dims``, ``keepdim``, ``input``, …) and aliases
(``cat``, ``reduce_mean``, …).
Functional control flow (``cond``, ``while_loop`` …) is :mod:`mskernel.frontend.control`.

Every public function of this package is imported here and listed in ``__all__``, which is
how ``mskernel.ops.<name>`` finds it.  Importing the package also installs the tensor's
operators and methods (:mod:`.methods`).
"""

from __future__ import annotations

from ._core import apply, asarray, astype, cast
from .creation import (
    arange, eye, fill, full, full_like, linspace, ones, ones_like, zeros, zeros_like,
)
from .elementwise import (
    abs, absolute, acos, acosh, add, arccos, arccosh, arcsin, arcsinh, arctan, arctan2, arctanh,
    asin, asinh, atan, atan2, atanh, bitwise_and, bitwise_not, bitwise_or, bitwise_xor, ceil, clip,
    conj, cos, cosh, div, divide, equal, erf, erfc, exp, expm1, floor, floor_divide, gelu, greater,
    greater_equal, imag, invert, isfinite, isinf, isnan, left_shift, less, less_equal, lgamma, log,
    log10, log1p, log2, logical_and, logical_not, logical_or, logical_xor, maximum, minimum, mod,
    mul, multiply, neg, negative, not_equal, pow, power, real, reciprocal, relu, remainder,
    right_shift, round, rsqrt, sigmoid, sign, silu, sin, sinh, softplus, sqrt, square, sub,
    subtract, swish, tan, tanh, true_divide, trunc, where,
)
from .indexing import (
    embedding, gather, gather_nd, nonzero, one_hot, scatter, scatter_nd, take, take_along_axis,
)
from .linalg import cross, diagonal, dot, einsum, kron, matmul, norm, outer, tensordot, trace
from .losses import binary_cross_entropy_with_logits
from .nn import (
    adaptive_avg_pool1d, adaptive_avg_pool2d, adaptive_avg_pool3d, adaptive_max_pool1d,
    adaptive_max_pool2d, adaptive_max_pool3d, avg_pool1d, avg_pool2d, avg_pool3d, batch_norm,
    conv1d, conv2d, conv3d, conv_transpose1d, conv_transpose2d, conv_transpose3d, group_norm,
    layer_norm, log_softmax, max_pool1d, max_pool2d, max_pool3d, softmax,
)
from .reduction import (
    all, amax, amin, any, argmax, argmin, cummax, cummin, cumprod, cumsum, logsumexp, max, mean,
    min, prod, std, sum, var,
)
from .shape import (
    broadcast_arrays, broadcast_to, chunk, concat, concatenate, expand_dims, flatten, flip, hstack,
    meshgrid, moveaxis, narrow, pad, permute_dims, ravel, repeat, reshape, roll, rot90, split,
    split_at, squeeze, stack, swapaxes, tile, transpose, tril, triu, unbind, unsqueeze, vstack,
)
from .sorting import argsort, sort, topk
from .statistics import (
    allclose, bincount, count_nonzero, diff, isclose, logaddexp, median, nan_to_num, quantile,
    searchsorted, unique,
)
from .updates import index_add, masked_fill
from .names import mindspore_names as _mindspore_names
from .methods import install as _install_methods

__all__ = [
    "abs", "absolute", "acos", "acosh", "adaptive_avg_pool1d", "adaptive_avg_pool2d",
    "adaptive_avg_pool3d", "adaptive_max_pool1d", "adaptive_max_pool2d", "adaptive_max_pool3d",
    "add", "all", "allclose", "amax", "amin", "any", "apply", "arange", "arccos", "arccosh",
    "arcsin", "arcsinh", "arctan", "arctan2", "arctanh", "argmax", "argmin", "argsort",
    "asarray", "asin", "asinh", "astype", "atan", "atan2", "atanh", "avg_pool1d", "avg_pool2d",
    "avg_pool3d", "batch_norm", "binary_cross_entropy_with_logits", "bincount", "bitwise_and",
    "bitwise_not", "bitwise_or", "bitwise_xor", "broadcast_arrays", "broadcast_to", "cast",
    "ceil", "chunk", "clip", "concat", "concatenate", "conj", "conv1d", "conv2d", "conv3d",
    "conv_transpose1d", "conv_transpose2d", "conv_transpose3d", "cos", "cosh", "count_nonzero",
    "cross", "cummax", "cummin", "cumprod", "cumsum", "diagonal", "diff", "div", "divide",
    "dot", "einsum", "embedding", "equal", "erf", "erfc", "exp", "expand_dims", "expm1", "eye",
    "fill", "flatten", "flip", "floor", "floor_divide", "full", "full_like", "gather",
    "gather_nd", "gelu", "greater", "greater_equal", "group_norm", "hstack", "imag",
    "index_add", "invert", "isclose", "isfinite", "isinf", "isnan", "kron", "layer_norm",
    "left_shift", "less", "less_equal", "lgamma", "linspace", "log", "log10", "log1p", "log2",
    "log_softmax", "logaddexp", "logical_and", "logical_not", "logical_or", "logical_xor",
    "logsumexp", "masked_fill", "matmul", "max", "max_pool1d", "max_pool2d", "max_pool3d",
    "maximum", "mean", "median", "meshgrid", "min", "minimum", "mod", "moveaxis", "mul",
    "multiply", "nan_to_num", "narrow", "neg", "negative", "nonzero", "norm", "not_equal",
    "one_hot", "ones", "ones_like", "outer", "pad", "permute_dims", "pow", "power", "prod",
    "quantile", "ravel", "real", "reciprocal", "relu", "remainder", "repeat", "reshape",
    "right_shift", "roll", "rot90", "round", "rsqrt", "scatter", "scatter_nd", "searchsorted",
    "sigmoid", "sign", "silu", "sin", "sinh", "softmax", "softplus", "sort", "split",
    "split_at", "sqrt", "square", "squeeze", "stack", "std", "sub", "subtract", "sum",
    "swapaxes", "swish", "take", "take_along_axis", "tan", "tanh", "tensordot", "tile", "topk",
    "trace", "transpose", "tril", "triu", "true_divide", "trunc", "unbind", "unique",
    "unsqueeze", "var", "vstack", "where", "zeros", "zeros_like",
]

__all__ += _mindspore_names(globals(), __all__)
_install_methods()
