"""Random ops: counter-based, splittable random numbers with explicit keys (JAX's design).

Keys
----
A key is a ``u32[2]`` tensor and an ordinary input of every random op: there is no hidden
generator state, so one key always gives the same numbers and a graph's randomness is data
every pass can see.  Make keys with ``random_key(seed)``, derive fresh ones with
``random_split`` or ``random_fold_in``, and draw from each key once: two draws from one key
are related (see the counter layout below).  ``random_key(seed)`` is
``(s >> 32, s & 0xFFFFFFFF)`` with ``s = seed mod 2**64`` (as ``jax.random.PRNGKey``).

The bit generator: Threefry-2x32-20
-----------------------------------
This module is the specification a backend reproduces bit for bit.  ``T(k, c)`` maps a key
``k = (k0, k1)`` and a counter ``c = (c0, c1)`` to two words ``(y0, y1)``; it is Threefry-2x32
with 20 rounds (Salmon et al., "Parallel random numbers: as easy as 1, 2, 3", SC'11),
checked against Random123's known-answer vectors.  Every word is 32 bits and arithmetic wraps
modulo 2**32::

    ks = (k0, k1, k0 ^ k1 ^ 0x1BD11BDA)                 key schedule
    x0, x1 = c0 + ks[0], c1 + ks[1]
    for r in 0 .. 19:
        x0 = x0 + x1
        x1 = rotl(x1, R[r % 8]) ^ x0                   R = (13, 15, 26, 6, 17, 29, 16, 24)
        if r % 4 == 3:                                 key injection s = (r + 1) / 4 = 1 .. 5
            x0 = x0 + ks[s % 3]
            x1 = x1 + ks[(s + 1) % 3] + s
    (y0, y1) = (x0, x1)

with ``rotl(x, n) = (x << n) | (x >> (32 - n))``.

Counter layout
--------------
The high counter word says what a block is for, so no two uses of one key share a counter
(and, ``T`` being a bijection for a fixed key, no two share a block)::

    random_split(key, num), row j      (y0, y1) of T(key, (0, j))
    random_fold_in(key, data)          (y0, y1) of T(key, (0xFFFFFFFF, data mod 2**32))
    a draw of n words, word i          T(key, (n, i))          1 <= n <= 2**32 - 2

Word ``i`` of a draw (row-major over the draw's shape) is ``y0`` when words are 32 bits and
``y0 * 2**32 + y1`` when they are 64 bits (float64 results, ``random_randint`` and
``random_permutation``).  A draw therefore depends on how many words it has, not on its
shape: ``bits(k, (2, 3))`` is ``bits(k, (6,))`` reshaped, so reshaping a draw never changes it
(as with JAX's partitionable Threefry); draws of different sizes share no block, so none is a
prefix or shifted copy of another.  A 32-bit draw is the high half of the 64-bit draw of the
same size: ``uniform(k, f32)`` is ``uniform(k, f64)`` truncated to float32's precision.

From words to numbers (``W`` is the word width: 64 for float64, else 32)
-------------------------------------------------------------------------
``unit(w)`` — [0, 1) with the ``m`` mantissa bits of the dtype (float16 10, bfloat16 7,
float32 23, float64 52): ``(w >> (W - m)) * 2**-m``.  For float32 this is the bit trick
``bitcast<f32>((w >> 9) | 0x3F800000) - 1.0``; for float64
``bitcast<f64>((w >> 12) | 0x3FF0000000000000) - 1.0``.

``open(w)`` — (0, 1), for logarithms: ``((w >> (W - p)) + 0.5) * 2**-p`` with ``p = 32`` for
32-bit words and ``p = 52`` for 64-bit words (exact in float64).

Float results are computed in float64 from these exact values and rounded once to the dtype
(bfloat16 via float32); a backend agrees up to the rounding of its ``log``, ``cos`` and
``sqrt``.  Keys, bits, booleans, integers and permutations are exact.

- ``random_uniform``: ``lo + unit(w) * (hi - lo)`` where ``lo``, ``hi`` are ``minval``,
  ``maxval`` rounded to the dtype; the rounded result is clamped to the largest dtype value
  below ``hi``, so every value lies in ``[lo, hi)``.
- ``random_normal``: Box-Muller (cosine branch) on a draw of shape ``(*shape, 2)``:
  ``z = sqrt(-2 ln open(w[..., 0])) * cos(2 pi open(w[..., 1]))``, result ``mean + std * z``.
  ``|z|`` is at most 6.77 for 32-bit words and 8.58 for float64.
- ``random_truncated_normal``: inverse CDF on ``[a, b] = [lower, upper]``,
  ``z = ndtri(F(a) + open(w) * (F(b) - F(a)))`` clamped to ``[a, b]``, ``F`` the standard
  normal CDF and ``ndtri`` its inverse (Wichura's AS 241, relative error ~1e-16); when
  ``a + b > 0`` the draw is made on ``[-b, -a]`` and negated, so tails are computed where
  ``F`` is small and precise.  Result ``mean + std * z``.
- ``random_bernoulli``: ``w < floor(p * 2**32)`` on 32-bit words (exact; P(True) is within
  2**-32 of ``p``).
- ``random_randint``: ``minval + (w mod r)``, ``r = maxval - minval``, on 64-bit words.  Each
  value has probability ``floor(2**64 / r)`` or ``ceil(2**64 / r)`` over ``2**64``: relative
  bias below ``r / 2**64`` (under 2**-32 for any range of up to 2**32 values).
- ``random_permutation``: the stable argsort of ``n`` 64-bit words.
- ``random_categorical``: Gumbel-max, ``argmax(logits + -ln(-ln open(w)))`` over the last axis
  in float64 (first index on ties), ``w`` a draw shaped like ``logits`` at its dtype's width.
"""

from __future__ import annotations

import math
from typing import Iterator, Sequence

import numpy as np

from ..errors import InferError
from ..ir.dtypes import DType, as_storage, bfloat16, bfloat16_to_bits, bool_, float32, float64
from ..ir.dtypes import int64, uint32
from ..ir.types import Shape, TensorType, Type
from .registry import Attr, OpDef
from .rules import tensor
from .samples import FLOATS, OpSample, SampleFn, random_array

# -- Threefry-2x32 ------------------------------------------------------------------------------

_MASK32 = 0xFFFFFFFF
_ROTATIONS = (13, 15, 26, 6, 17, 29, 16, 24)
_PARITY = 0x1BD11BDA
_SPLIT_TAG = 0
_FOLD_IN_TAG = 0xFFFFFFFF
#: The most words one draw may have (the high counter word holds the count).
MAX_DRAW = 0xFFFFFFFE


def threefry2x32(key: np.ndarray, c0: np.ndarray, c1: np.ndarray,
                 rounds: int = 20) -> tuple[np.ndarray, np.ndarray]:
    """Threefry-2x32 of counters ``(c0, c1)`` (uint32 arrays of one shape) under ``key``
    (two uint32 words).  ``rounds`` is Random123's round count; the ops use 20."""
    k0, k1 = (int(k) for k in np.asarray(key, np.uint32).reshape(2))
    ks = (k0, k1, k0 ^ k1 ^ _PARITY)
    shape = np.shape(c0)
    # 1-d arrays throughout: NumPy wraps array arithmetic silently (scalars would warn)
    x0 = np.ravel(np.asarray(c0, np.uint32)) + np.uint32(ks[0])
    x1 = np.ravel(np.asarray(c1, np.uint32)) + np.uint32(ks[1])
    for r in range(rounds):
        x0 += x1
        n = _ROTATIONS[r % 8]
        x1 = ((x1 << np.uint32(n)) | (x1 >> np.uint32(32 - n))) ^ x0
        if r % 4 == 3:
            s = (r + 1) // 4
            x0 += np.uint32(ks[s % 3])
            x1 += np.uint32((ks[(s + 1) % 3] + s) & _MASK32)
    return x0.reshape(shape), x1.reshape(shape)


def draw_words(key: np.ndarray, n: int, width: int) -> np.ndarray:
    """The ``n`` words of a draw (see the counter layout): uint32, or uint64 when ``width``
    is 64."""
    y0, y1 = threefry2x32(key, np.full(n, n, np.uint32), np.arange(n, dtype=np.uint32))
    if width == 32:
        return y0
    return (y0.astype(np.uint64) << np.uint64(32)) | y1.astype(np.uint64)


def _word_width(dt: DType) -> int:
    return 64 if dt is float64 else 32


_MANTISSA_BITS = {"float16": 10, "bfloat16": 7, "float32": 23, "float64": 52}


def _unit(words: np.ndarray, dt: DType) -> np.ndarray:
    """[0, 1) with the dtype's mantissa bits, as exact float64."""
    width, m = _word_width(dt), _MANTISSA_BITS[dt.name]
    return (words >> words.dtype.type(width - m)).astype(np.float64) * 2.0**-m


def _open_unit(words: np.ndarray) -> np.ndarray:
    """(0, 1), as exact float64."""
    p = 32 if words.dtype == np.uint32 else 52
    top = words >> words.dtype.type(words.dtype.itemsize * 8 - p)
    return (top.astype(np.float64) + 0.5) * 2.0**-p


def _to_dtype(values: np.ndarray, dt: DType) -> np.ndarray:
    """``values`` rounded to ``dt``'s storage; too large ones become infinite silently."""
    with np.errstate(over="ignore"):
        return as_storage(values, dt)


# -- the inverse normal CDF (Wichura, AS 241 "PPND16") -----------------------------------------

_NDTRI_CENTRAL = (
    (3.3871328727963666080e0, 1.3314166789178437745e2, 1.9715909503065514427e3,
     1.3731693765509461125e4, 4.5921953931549871457e4, 6.7265770927008700853e4,
     3.3430575583588128105e4, 2.5090809287301226727e3),
    (1.0, 4.2313330701600911252e1, 6.8718700749205790830e2, 5.3941960214247511077e3,
     2.1213794301586595867e4, 3.9307895800092710610e4, 2.8729085735721942674e4,
     5.2264952788528545610e3),
)
_NDTRI_NEAR = (
    (1.42343711074968357734e0, 4.63033784615654529590e0, 5.76949722146069140550e0,
     3.64784832476320460504e0, 1.27045825245236838258e0, 2.41780725177450611770e-1,
     2.27238449892691845833e-2, 7.74545014278341407640e-4),
    (1.0, 2.05319162663775882187e0, 1.67638483018380384940e0, 6.89767334985100004550e-1,
     1.48103976427480074590e-1, 1.51986665636164571966e-2, 5.47593808499534494600e-4,
     1.05075007164441684324e-9),
)
_NDTRI_FAR = (
    (6.65790464350110377720e0, 5.46378491116411436990e0, 1.78482653991729133580e0,
     2.96560571828504891230e-1, 2.65321895265761230930e-2, 1.24266094738807843860e-3,
     2.71155556874348757815e-5, 2.01033439929228813265e-7),
    (1.0, 5.99832206555887937690e-1, 1.36929880922735805310e-1, 1.48753612908506148525e-2,
     7.86869131145613259100e-4, 1.84631831751005468180e-5, 1.42151175831644588870e-7,
     2.04426310338993978564e-15),
)


def _rational(coeffs: tuple[Sequence[float], Sequence[float]], x: np.ndarray) -> np.ndarray:
    num, den = (np.polynomial.polynomial.polyval(x, c) for c in coeffs)
    return num / den


def ndtri(p: np.ndarray) -> np.ndarray:
    """The inverse of the standard normal CDF on [0, 1] (``-inf`` at 0, ``inf`` at 1)."""
    p = np.asarray(p, np.float64)
    q = p - 0.5
    with np.errstate(divide="ignore", invalid="ignore"):
        r = np.sqrt(-np.log(np.minimum(p, 1.0 - p)))
        far = np.where(np.isinf(r), np.inf, _rational(_NDTRI_FAR, r - 5.0))
        tail = np.where(r <= 5.0, _rational(_NDTRI_NEAR, r - 1.6), far)
    central = q * _rational(_NDTRI_CENTRAL, 0.180625 - q * q)
    return np.where(np.abs(q) <= 0.425, central, np.copysign(tail, q))


def _normal_cdf(x: float) -> float:
    return 0.5 * math.erfc(-x / math.sqrt(2.0))


# -- shared rule pieces -------------------------------------------------------------------------

_KEY = TensorType(uint32, (2,))


def _key(t: Type) -> None:
    if t != _KEY:
        raise InferError(f"key must be {_KEY} (make one with random_key), got {t}")


def _draw_shape(shape: Shape, words_per_element: int = 1) -> Shape:
    if any(d < 0 for d in shape):
        raise InferError(f"shape {list(shape)} has a negative dimension")
    if math.prod(shape) * words_per_element > MAX_DRAW:
        raise InferError(f"shape {list(shape)} needs more than {MAX_DRAW} random words; "
                         "split the key and draw in parts")
    return tuple(shape)


def _float_dtype(dt: DType) -> DType:
    if not dt.is_floating:
        raise InferError(f"dtype must be a floating-point type, got {dt}")
    return dt


def _finite(**values: float) -> None:
    for name, v in values.items():
        if not math.isfinite(v):
            raise InferError(f"{name} must be finite, got {v}")


def _float_result(key: Type, shape: Shape, dtype: DType, words_per_element: int = 1) -> TensorType:
    _key(key)
    return TensorType(_float_dtype(dtype), _draw_shape(shape, words_per_element))


# -- keys ----------------------------------------------------------------------------------------

def _key_infer(*, seed: int) -> TensorType:
    if not -(2**63) <= seed < 2**64:
        raise InferError(f"seed must fit in 64 bits (-2**63 <= seed < 2**64), got {seed}")
    return _KEY


def _random_key(*, seed: int) -> np.ndarray:
    s = seed % 2**64
    return np.array([s >> 32, s & _MASK32], np.uint32)


def _split_infer(key: Type, *, num: int) -> TensorType:
    _key(key)
    if not 0 <= num <= 2**32:
        raise InferError(f"num must be in [0, 2**32], got {num}")
    return TensorType(uint32, (num, 2))


def _random_split(key: np.ndarray, *, num: int) -> np.ndarray:
    y0, y1 = threefry2x32(key, np.full(num, _SPLIT_TAG, np.uint32),
                          np.arange(num, dtype=np.uint32))
    return np.stack([y0, y1], axis=-1)


def _fold_in_infer(key: Type, *, data: int) -> TensorType:
    _key(key)
    if not -(2**31) <= data < 2**32:
        raise InferError(f"data must fit in 32 bits (-2**31 <= data < 2**32), got {data}")
    return _KEY


def _random_fold_in(key: np.ndarray, *, data: int) -> np.ndarray:
    tag, word = (np.array(w, np.uint32) for w in (_FOLD_IN_TAG, data & _MASK32))
    y0, y1 = threefry2x32(key, tag, word)
    return np.array([y0, y1], np.uint32)


# -- draws ---------------------------------------------------------------------------------------

def _bits_infer(key: Type, *, shape: Shape) -> TensorType:
    _key(key)
    return TensorType(uint32, _draw_shape(shape))


def _random_bits(key: np.ndarray, *, shape: Shape) -> np.ndarray:
    return draw_words(key, math.prod(shape), 32).reshape(shape)


def _bounds(minval: float, maxval: float, dt: DType) -> tuple[float, float]:
    """``minval`` and ``maxval`` rounded to ``dt``."""
    lo, hi = (float(_to_dtype(np.array(v, np.float64), dt)) for v in (minval, maxval))
    return lo, hi


def _uniform_infer(key: Type, *, shape: Shape, dtype: DType, minval: float,
                   maxval: float) -> TensorType:
    out = _float_result(key, shape, dtype)
    _finite(minval=minval, maxval=maxval)
    lo, hi = _bounds(minval, maxval, dtype)
    if not (math.isfinite(lo) and math.isfinite(hi)):
        raise InferError(f"minval {minval} and maxval {maxval} must be finite in {dtype}")
    if not lo < hi:
        raise InferError(f"minval must be less than maxval, got [{minval}, {maxval}) "
                         f"(in {dtype}: [{lo}, {hi}))")
    if not math.isfinite(hi - lo):
        raise InferError(f"the range [{minval}, {maxval}) is too wide to scale")
    return out


def _largest_below(x: float, dt: DType) -> np.ndarray:
    """The largest value of ``dt`` (in its storage) that is less than ``x`` (a value of
    ``dt``)."""
    if dt is bfloat16:
        bits = int(bfloat16_to_bits(np.array([x], np.float32))[0])
        if x > 0:
            bits -= 1
        elif x == 0:
            bits = 0x8001  # the negative bfloat16 closest to zero
        else:
            bits += 1
        return (np.array(bits, np.uint32) << np.uint32(16)).view(np.float32)
    t = dt.storage.type
    return np.nextafter(t(x), t(-np.inf))


def _random_uniform(key: np.ndarray, *, shape: Shape, dtype: DType, minval: float,
                    maxval: float) -> np.ndarray:
    lo, hi = _bounds(minval, maxval, dtype)
    u = _unit(draw_words(key, math.prod(shape), _word_width(dtype)), dtype)
    values = _to_dtype(lo + u * (hi - lo), dtype)
    return np.minimum(values, _largest_below(hi, dtype)).reshape(shape)


def _normal_infer(key: Type, *, shape: Shape, dtype: DType, mean: float,
                  std: float) -> TensorType:
    out = _float_result(key, shape, dtype, words_per_element=2)
    _finite(mean=mean, std=std)
    if std < 0:
        raise InferError(f"std must be non-negative, got {std}")
    return out


def _random_normal(key: np.ndarray, *, shape: Shape, dtype: DType, mean: float,
                   std: float) -> np.ndarray:
    n = math.prod(shape)
    u = _open_unit(draw_words(key, 2 * n, _word_width(dtype))).reshape(n, 2)
    z = np.sqrt(-2.0 * np.log(u[:, 0])) * np.cos(2.0 * np.pi * u[:, 1])
    return _to_dtype(mean + std * z, dtype).reshape(shape)


def _truncated_normal_infer(key: Type, *, shape: Shape, dtype: DType, lower: float,
                            upper: float, mean: float, std: float) -> TensorType:
    out = _float_result(key, shape, dtype)
    _finite(mean=mean, std=std)
    if std < 0:
        raise InferError(f"std must be non-negative, got {std}")
    if not lower < upper:  # also rejects NaN
        raise InferError(f"lower must be less than upper, got [{lower}, {upper}]")
    return out


def _random_truncated_normal(key: np.ndarray, *, shape: Shape, dtype: DType, lower: float,
                             upper: float, mean: float, std: float) -> np.ndarray:
    flip = lower + upper > 0
    a, b = (-upper, -lower) if flip else (lower, upper)
    fa, fb = _normal_cdf(a), _normal_cdf(b)
    u = _open_unit(draw_words(key, math.prod(shape), _word_width(dtype)))
    z = np.clip(ndtri(fa + u * (fb - fa)), a, b)
    return _to_dtype(mean + std * (-z if flip else z), dtype).reshape(shape)


def _bernoulli_infer(key: Type, *, p: float, shape: Shape) -> TensorType:
    _key(key)
    if not 0.0 <= p <= 1.0:
        raise InferError(f"p must be a probability in [0, 1], got {p}")
    return TensorType(bool_, _draw_shape(shape))


def _random_bernoulli(key: np.ndarray, *, p: float, shape: Shape) -> np.ndarray:
    threshold = math.floor(p * 2**32)  # exact: p is a double, 2**32 a power of two
    words = draw_words(key, math.prod(shape), 32).astype(np.uint64)
    return (words < np.uint64(threshold)).reshape(shape)


def _randint_infer(key: Type, *, shape: Shape, minval: int, maxval: int,
                   dtype: DType) -> TensorType:
    _key(key)
    if not dtype.is_integer:
        raise InferError(f"dtype must be an integer type, got {dtype}")
    info = np.iinfo(dtype.storage)
    if not minval < maxval:
        raise InferError(f"minval must be less than maxval, got [{minval}, {maxval})")
    if minval < info.min or maxval - 1 > info.max:
        raise InferError(f"[{minval}, {maxval}) does not fit in {dtype} "
                         f"([{info.min}, {info.max}])")
    return TensorType(dtype, _draw_shape(shape))


def _random_randint(key: np.ndarray, *, shape: Shape, minval: int, maxval: int,
                    dtype: DType) -> np.ndarray:
    span = maxval - minval
    words = draw_words(key, math.prod(shape), 64)
    offsets = words if span == 2**64 else words % np.uint64(span)
    values = offsets + np.uint64(minval % 2**64)  # wraps modulo 2**64 to the signed result
    return values.astype(dtype.storage).reshape(shape)


def _permutation_infer(key: Type, *, n: int) -> TensorType:
    _key(key)
    return TensorType(int64, _draw_shape((n,)))


def _random_permutation(key: np.ndarray, *, n: int) -> np.ndarray:
    return np.argsort(draw_words(key, n, 64), kind="stable").astype(np.int64)


def _categorical_infer(key: Type, logits: Type) -> TensorType:
    _key(key)
    logits = tensor(logits, "logits")
    if not logits.dtype.is_floating:
        raise InferError(f"logits must be floating-point, got {logits}")
    if logits.rank == 0 or logits.shape[-1] == 0:
        raise InferError(f"logits must have a non-empty last axis of categories, got {logits}")
    _draw_shape(logits.shape)
    return TensorType(int64, logits.shape[:-1])


def _random_categorical(key: np.ndarray, logits: np.ndarray) -> np.ndarray:
    width = 64 if logits.dtype == np.float64 else 32
    u = _open_unit(draw_words(key, logits.size, width)).reshape(logits.shape)
    gumbel = -np.log(-np.log(u))
    return np.asarray(np.argmax(logits.astype(np.float64) + gumbel, axis=-1), np.int64)


# -- the ops -------------------------------------------------------------------------------------

_SHAPE = Attr("shape", "ints")
_FLOAT_DTYPE = Attr("dtype", "dtype", float32)
_RANDOM = frozenset({"random"})


def _op(name: str, inputs: tuple[str, ...], infer, reference, attrs: tuple[Attr, ...],
        doc: str) -> OpDef:
    return OpDef(name, inputs, infer, reference, attrs=attrs, traits=_RANDOM, doc=doc)


OPS: list[OpDef] = [
    _op("random_key", (), _key_infer, _random_key, (Attr("seed", "int"),),
        "a key u32[2] from an integer seed of up to 64 bits"),
    _op("random_split", ("key",), _split_infer, _random_split, (Attr("num", "int", 2),),
        "num new keys u32[num, 2], independent of each other and of the key"),
    _op("random_fold_in", ("key",), _fold_in_infer, _random_fold_in, (Attr("data", "int"),),
        "a new key that mixes a 32-bit integer into the key"),
    _op("random_bits", ("key",), _bits_infer, _random_bits,
        (_SHAPE,), "uniformly random u32 words"),
    _op("random_uniform", ("key",), _uniform_infer, _random_uniform,
        (_SHAPE, _FLOAT_DTYPE, Attr("minval", "float", 0.0), Attr("maxval", "float", 1.0)),
        "uniform floats in [minval, maxval)"),
    _op("random_normal", ("key",), _normal_infer, _random_normal,
        (_SHAPE, _FLOAT_DTYPE, Attr("mean", "float", 0.0), Attr("std", "float", 1.0)),
        "normal floats (Box-Muller)"),
    _op("random_truncated_normal", ("key",), _truncated_normal_infer, _random_truncated_normal,
        (_SHAPE, _FLOAT_DTYPE, Attr("lower", "float", -2.0), Attr("upper", "float", 2.0),
         Attr("mean", "float", 0.0), Attr("std", "float", 1.0)),
        "normal floats truncated to [mean + lower * std, mean + upper * std]"),
    _op("random_bernoulli", ("key",), _bernoulli_infer, _random_bernoulli,
        (Attr("p", "float", 0.5), _SHAPE), "booleans that are true with probability p"),
    _op("random_randint", ("key",), _randint_infer, _random_randint,
        (_SHAPE, Attr("minval", "int"), Attr("maxval", "int"), Attr("dtype", "dtype", int64)),
        "uniform integers in [minval, maxval)"),
    _op("random_permutation", ("key",), _permutation_infer, _random_permutation,
        (Attr("n", "int"),), "a uniformly random permutation of 0 .. n-1 as i64[n]"),
    _op("random_categorical", ("key", "logits"), _categorical_infer, _random_categorical, (),
        "one category index per row of logits [..., K] (Gumbel-max), as int64"),
]


# --- samples (attached to the ops under the "samples" rule kind by mskernel.ops.core) --------
# Samples for the random ops: every op on each dtype it accepts, on scalar, size-0, size-1 and
# multi-dimensional shapes, with random keys.


_SHAPES = ((3, 4), (), (0, 5), (1,))


def _sample_key(rng: np.random.Generator) -> np.ndarray:
    return rng.integers(0, 2**32, size=2, dtype=np.uint32)


def _random_key_samples(rng: np.random.Generator) -> Iterator[OpSample]:
    for seed in (0, 42, 2**63 + 5, -1, 2**64 - 1):
        yield OpSample("random_key", (), {"seed": seed})


def _random_split_samples(rng: np.random.Generator) -> Iterator[OpSample]:
    yield OpSample("random_split", (_sample_key(rng),))
    for num in (3, 1, 0):
        yield OpSample("random_split", (_sample_key(rng),), {"num": num})


def _random_fold_in_samples(rng: np.random.Generator) -> Iterator[OpSample]:
    for data in (0, 7, 2**32 - 1, -5):
        yield OpSample("random_fold_in", (_sample_key(rng),), {"data": data})


def _random_bits_samples(rng: np.random.Generator) -> Iterator[OpSample]:
    for shape in _SHAPES:
        yield OpSample("random_bits", (_sample_key(rng),), {"shape": shape})


def _random_uniform_samples(rng: np.random.Generator) -> Iterator[OpSample]:
    for dt in FLOATS:
        for shape in _SHAPES:
            yield OpSample("random_uniform", (_sample_key(rng),), {"shape": shape, "dtype": dt})
        yield OpSample("random_uniform", (_sample_key(rng),),
                       {"shape": (2, 3), "dtype": dt, "minval": -3.0, "maxval": 0.5})


def _random_normal_samples(rng: np.random.Generator) -> Iterator[OpSample]:
    for dt in FLOATS:
        for shape in _SHAPES:
            yield OpSample("random_normal", (_sample_key(rng),), {"shape": shape, "dtype": dt})
        yield OpSample("random_normal", (_sample_key(rng),),
                       {"shape": (4,), "dtype": dt, "mean": 2.0, "std": 0.5})


def _random_truncated_normal_samples(rng: np.random.Generator) -> Iterator[OpSample]:
    bounds = ((-2.0, 2.0), (1.0, float("inf")), (float("-inf"), -3.0), (-0.5, 4.0))
    for dt in FLOATS:
        for shape in _SHAPES:
            yield OpSample("random_truncated_normal", (_sample_key(rng),),
                           {"shape": shape, "dtype": dt})
        for lower, upper in bounds:
            yield OpSample("random_truncated_normal", (_sample_key(rng),),
                           {"shape": (5,), "dtype": dt, "lower": lower, "upper": upper,
                            "mean": 1.0, "std": 2.0})


def _random_bernoulli_samples(rng: np.random.Generator) -> Iterator[OpSample]:
    for shape in _SHAPES:
        yield OpSample("random_bernoulli", (_sample_key(rng),), {"shape": shape, "p": 0.3})
    for p in (0.0, 1.0):
        yield OpSample("random_bernoulli", (_sample_key(rng),), {"shape": (6,), "p": p})


def _random_randint_samples(rng: np.random.Generator) -> Iterator[OpSample]:
    ranges = {"int8": (-128, 128), "int32": (-5, 5), "int64": (-(2**63), 2**63),
              "uint8": (3, 200), "uint64": (0, 2**64), "int16": (0, 1)}
    for dt, (lo, hi) in ranges.items():
        yield OpSample("random_randint", (_sample_key(rng),),
                       {"shape": (3, 4), "minval": lo, "maxval": hi, "dtype": dt})
    for shape in _SHAPES:
        yield OpSample("random_randint", (_sample_key(rng),), {"shape": shape, "minval": 0, "maxval": 10})


def _random_permutation_samples(rng: np.random.Generator) -> Iterator[OpSample]:
    for n in (6, 1, 0):
        yield OpSample("random_permutation", (_sample_key(rng),), {"n": n})


def _random_categorical_samples(rng: np.random.Generator) -> Iterator[OpSample]:
    for dt, shape in zip(FLOATS, ((4, 3), (2, 2, 5), (3,), (0, 3))):
        yield OpSample("random_categorical", (_sample_key(rng), random_array(rng, shape, dt)),
                       dtypes=(None, dt))
    masked = np.array([[0.0, -np.inf, 1.0], [-np.inf, -np.inf, 2.0]], np.float32)
    yield OpSample("random_categorical", (_sample_key(rng), masked), label="masked")


SAMPLES: dict[str, SampleFn] = {
    "random_key": _random_key_samples,
    "random_split": _random_split_samples,
    "random_fold_in": _random_fold_in_samples,
    "random_bits": _random_bits_samples,
    "random_uniform": _random_uniform_samples,
    "random_normal": _random_normal_samples,
    "random_truncated_normal": _random_truncated_normal_samples,
    "random_bernoulli": _random_bernoulli_samples,
    "random_randint": _random_randint_samples,
    "random_permutation": _random_permutation_samples,
    "random_categorical": _random_categorical_samples,
}
