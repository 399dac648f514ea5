"""The private ops of GEMM epilogue fusion, made by the ``cpu.fuse_gemm_epilogue`` pass
(:mod:`.gemm_fusion`) and run by ``csrc/kernels/fused_gemm.cpp``:

- ``cpu.conv_bias_act(x, w[, bias])``: ``act(conv(x, w) + bias[None, :, None, ...])``, with
  the core ``conv``'s attributes;
- ``cpu.matmul_bias_act(a, b[, bias])``: ``act(matmul(A, B) + bias)``, ``a`` and ``b`` of
  rank 2 or more, ``bias [N]`` along the product's last dim; ``A`` is ``a`` with its last two
  dims swapped when ``transpose_a`` is set (else ``a``), ``B`` likewise by ``transpose_b``
  (made by ``cpu.fold_matmul_transpose``, :mod:`.transpose_folding`; BLAS reads the operand
  transposed).

``bias`` is optional (a variadic tail of at most one operand), ``activation`` one of
:data:`ACTIVATIONS`.  The references are the core ops' references computed in the precision
the core references compute in (float32 for the half types) and rounded once, as the
kernels do.
"""

from __future__ import annotations

from typing import Any, Callable, Mapping, Optional, Sequence

import numpy as np

from mskernel_sdk import (
    Attr, InferError, OpDef, TensorType, Type, core_ops, require_kind, require_tensor,
    same_dtype, widened,
)

CONV_OP = "cpu.conv_bias_act"
MATMUL_OP = "cpu.matmul_bias_act"

#: The core's definitions of conv, matmul and the activations, whose references these ops'
#: references compose.
_CORE: Mapping[str, OpDef] = core_ops()

#: activation name → (core op, its attributes)
ACTIVATIONS: Mapping[str, tuple[str, Mapping[str, Any]]] = {
    "none": ("", {}),
    "relu": ("relu", {}),
    "sigmoid": ("sigmoid", {}),
    "tanh": ("tanh", {}),
    "gelu": ("gelu", {"approximate": "none"}),
    "gelu_tanh": ("gelu", {"approximate": "tanh"}),
    "silu": ("silu", {}),
}

_ACTIVATION = Attr("activation", "str", "none")
_TRANSPOSES = (Attr("transpose_a", "bool", False), Attr("transpose_b", "bool", False))


def swap_last_dims(t: TensorType) -> TensorType:
    """``t`` with its last two dims swapped (rank 2 or more)."""
    return t.with_shape((*t.shape[:-2], t.shape[-1], t.shape[-2]))


def activation_of(op: str, attrs: Mapping[str, Any]) -> Optional[str]:
    """The activation name of a core op node (``gelu`` by its ``approximate``), or None."""
    for name, (core, core_attrs) in ACTIVATIONS.items():
        if core and core == op and all(attrs.get(k) == v for k, v in core_attrs.items()):
            return name
    return None


def _checked_operands(op: str, operands: Sequence[Type], bias: Sequence[Type],
                      activation: str) -> tuple[TensorType, ...]:
    if activation not in ACTIVATIONS:
        raise InferError(f"{op}: activation must be one of {list(ACTIVATIONS)}, got "
                         f"{activation!r}")
    if len(bias) > 1:
        raise InferError(f"{op} takes at most one bias, got {len(bias)}")
    types = tuple(require_tensor(t, what)
                  for t, what in zip((*operands, *bias), ("x", "w", "bias")))
    same_dtype(types)
    require_kind(types[0], "f", "a floating-point x")
    return types


def _check_bias(op: str, bias: Sequence[TensorType], channels: int, where: str) -> None:
    if bias and bias[0].shape != (channels,):
        raise InferError(f"{op}: bias must have shape [{channels}] ({where}), got "
                         f"{list(bias[0].shape)}")


def _conv_infer(x: Type, w: Type, *bias: Type, stride: Any, padding: Any, dilation: Any,
                groups: int, activation: str) -> TensorType:
    x, w, *given = _checked_operands(CONV_OP, (x, w), bias, activation)
    y = _CORE["conv"].infer(x, w, stride=stride, padding=padding, dilation=dilation,
                            groups=groups)
    _check_bias(CONV_OP, given, y.shape[1], "one per output channel")
    return y


def _matmul_infer(a: Type, b: Type, *bias: Type, activation: str, transpose_a: bool = False,
                  transpose_b: bool = False) -> TensorType:
    a, b, *given = _checked_operands(MATMUL_OP, (a, b), bias, activation)
    if a.rank < 2 or b.rank < 2:
        raise InferError(f"{MATMUL_OP}: operands must have rank >= 2, got shapes "
                         f"{list(a.shape)} and {list(b.shape)}")
    y = _CORE["matmul"].infer(swap_last_dims(a) if transpose_a else a,
                              swap_last_dims(b) if transpose_b else b)
    _check_bias(MATMUL_OP, given, y.shape[-1], "the product's last dim")
    return y


def _finish(y: np.ndarray, bias: Sequence[np.ndarray], bias_shape: tuple[int, ...],
            activation: str, dtype: np.dtype) -> np.ndarray:
    """``activation(y + bias)`` in ``y``'s (compute) precision, rounded once to ``dtype``."""
    if bias:
        y = y + widened(bias[0]).reshape(bias_shape)
    core, attrs = ACTIVATIONS[activation]
    if core:
        y = _CORE[core].reference(y, **attrs)
    return np.asarray(y).astype(dtype, copy=False)


def _with_compute_precision(reference: Callable, *arrays: np.ndarray, **attrs: Any) -> Any:
    return reference(*(widened(a) for a in arrays), **attrs)


def _conv_reference(x: np.ndarray, w: np.ndarray, *bias: np.ndarray, stride: Any, padding: Any,
                    dilation: Any, groups: int, activation: str) -> np.ndarray:
    y = _with_compute_precision(_CORE["conv"].reference, x, w, stride=stride, padding=padding,
                                dilation=dilation, groups=groups)
    return _finish(y, bias, (-1,) + (1,) * (x.ndim - 2), activation, x.dtype)


def _matmul_reference(a: np.ndarray, b: np.ndarray, *bias: np.ndarray, activation: str,
                      transpose_a: bool = False, transpose_b: bool = False) -> np.ndarray:
    y = _with_compute_precision(_CORE["matmul"].reference,
                                np.swapaxes(a, -1, -2) if transpose_a else a,
                                np.swapaxes(b, -1, -2) if transpose_b else b)
    return _finish(y, bias, (-1,), activation, a.dtype)


CONV_OPDEF = OpDef(
    CONV_OP, ("x", "w", "*bias"), _conv_infer, _conv_reference,
    attrs=(*_CORE["conv"].attrs, _ACTIVATION),
    doc="activation(conv(x, w) + bias per output channel), bias optional (made by the cpu "
        "pass cpu.fuse_gemm_epilogue)")

MATMUL_OPDEF = OpDef(
    MATMUL_OP, ("a", "b", "*bias"), _matmul_infer, _matmul_reference,
    attrs=(_ACTIVATION, *_TRANSPOSES),
    doc="activation(matmul(a, b) + bias [N]), a and b of rank >= 2 (either read with its last "
        "two dims swapped by transpose_a/transpose_b), bias optional (made by the cpu passes "
        "cpu.fuse_gemm_epilogue and cpu.fold_matmul_transpose)")

OPDEFS = (CONV_OPDEF, MATMUL_OPDEF)
