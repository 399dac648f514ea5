"""How the value of one variable maps onto the inputs and outputs of a region
(:class:`Layout`), and how the values two branches or two loop iterations give a variable are
unified — the way eager code would see them:

- identical Python values on both sides stay Python values (no tensor at all);
- tensors must agree on dtype and shape;
- a Python number is *weak* (as in :mod:`..promote`): it takes the dtype of the tensor it meets
  and is broadcast to its shape, so ``acc = 0.0`` before ``for row in x: acc = acc + row``
  carries a float tensor of ``row``'s shape;
- the hidden return value may be unset on one side (the early-return flag makes it
  unobservable there): that side gets zeros of the other side's types.

Disagreements raise :class:`~mskernel.frontend.conditions.ControlFlowError` naming the variable,
the two values and the statement's line.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterator, Optional, Union

import numpy as np

from ...ir.types import TensorType
from .. import functional as F
from ..conditions import ControlFlowError
from ..promote import is_weak, result_dtype
from ..pytree import LEAF, TreeDef, flatten, unflatten
from ..tensor import Tensor
from .errors import Loc, at, variable
from .lowering import BREAK_PREFIX, CONTINUE_PREFIX, DO_RETURN
from .values import UNDEFINED_RETURN, Undefined, describe

_FLAG_PREFIXES = (BREAK_PREFIX, CONTINUE_PREFIX, DO_RETURN)


@dataclass(frozen=True)
class Dynamic:
    """A leaf carried as a tensor of ``type``; ``weak`` when it came from a Python number and
    may still take the type the loop body gives it."""

    type: TensorType
    weak: bool = False


@dataclass(frozen=True, eq=False)
class Static:
    """A leaf that stays a Python value."""

    value: Any


LeafSpec = Union[Dynamic, Static]


@dataclass(frozen=True)
class Layout:
    """One variable: its container structure and, per leaf, tensor or Python value."""

    tree: TreeDef
    leaves: tuple[LeafSpec, ...]

    @property
    def types(self) -> list[TensorType]:
        return [leaf.type for leaf in self.leaves if isinstance(leaf, Dynamic)]

    def build(self, tensors: Iterator[Tensor]) -> Any:
        """The variable's value, taking its tensors from ``tensors``."""
        return unflatten(self.tree, [next(tensors) if isinstance(leaf, Dynamic) else leaf.value
                                     for leaf in self.leaves])

    def tensors(self, value: Any) -> list[Tensor]:
        """The tensors standing for ``value`` (recorded in the active trace); zeros for a
        value never read (see :func:`join_branches`)."""
        if value is UNDEFINED_RETURN or isinstance(value, Undefined):
            return [F.zeros(t.shape, t.dtype) for t in self.types]
        leaves, _ = _flat(value)
        return [as_type(v, spec.type) for v, spec in zip(leaves, self.leaves)
                if isinstance(spec, Dynamic)]

    def same_as(self, other: "Layout") -> bool:
        return self.tree == other.tree and all(
            _same_spec(a, b) for a, b in zip(self.leaves, other.leaves))


def _same_spec(a: LeafSpec, b: LeafSpec) -> bool:
    if isinstance(a, Dynamic) and isinstance(b, Dynamic):
        return a.type == b.type
    return isinstance(a, Static) and isinstance(b, Static) and same_value(a.value, b.value)


def _flat(value: Any) -> tuple[list[Any], TreeDef]:
    return flatten(value, lambda x: isinstance(x, Tensor))


def as_type(value: Any, t: TensorType) -> Tensor:
    """``value`` (a tensor or a number) as a tensor of type ``t``, in the active trace."""
    x = value if isinstance(value, Tensor) else F.asarray(value, t.dtype)
    if x.dtype is not t.dtype:
        x = F.astype(x, t.dtype)
    if x.shape != t.shape:
        x = F.broadcast_to(x, t.shape)
    return x


def same_value(a: Any, b: Any) -> bool:
    """Whether two Python values are interchangeable as constants of a graph."""
    if a is b:
        return True
    if type(a) is not type(b) or isinstance(a, (Tensor, np.ndarray)):
        return False
    if isinstance(a, float):
        return a.hex() == b.hex()
    if isinstance(a, complex):
        return a.real.hex() == b.real.hex() and a.imag.hex() == b.imag.hex()
    try:
        return bool(a == b)
    except Exception:  # objects whose == is not a truth value
        return False


def _is_number(x: Any) -> bool:
    return isinstance(x, (Tensor, np.ndarray, np.generic)) or is_weak(x)


def _type_of(x: Any) -> TensorType:
    """The tensor type of a tensor or NumPy value (Python numbers: their default dtype)."""
    if isinstance(x, Tensor):
        return x.type
    return TensorType(result_dtype([x]), np.shape(x))


Number = Any  # a TensorType (strong) or a Python number (weak)


def _number(x: Any) -> Number:
    return x if is_weak(x) else _type_of(x)


def _join_types(a: Number, b: Number) -> Optional[TensorType]:
    """The tensor type two numbers unify to (a weak one takes the other's dtype when its kind
    fits, and is broadcast to its shape), or ``None`` for two different tensor types."""
    strong = [x for x in (a, b) if isinstance(x, TensorType)]
    weak = [x for x in (a, b) if not isinstance(x, TensorType)]
    if len(strong) == 2:
        return strong[0] if strong[0] == strong[1] else None
    if not strong:
        return TensorType(result_dtype(weak), ())
    t = strong[0]
    dt = result_dtype([np.empty((), t.dtype.storage), *weak])
    return t if dt.kind == t.dtype.kind else t.with_dtype(dt)  # keeps bfloat16 (f32 storage)


def _layout_of(value: Any) -> Layout:
    """Tensors (and NumPy values) dynamic, everything else static."""
    leaves, tree = _flat(value)
    arrays = (Tensor, np.ndarray, np.generic)
    return Layout(tree, tuple(Dynamic(_type_of(v)) if isinstance(v, arrays) else Static(v)
                              for v in leaves))


# -- branches -----------------------------------------------------------------------------------


def join_branches(name: str, a: Any, b: Any, loc: Loc, what: str,
                  returned: tuple[bool, bool]) -> Layout:
    """The layout of variable ``name`` after a staged ``if`` whose branches give it ``a`` and
    ``b``.  In a branch that ``returned`` from the function, an unset variable is never read
    again, and gets zeros of the other branch's types."""
    unread_a = a is UNDEFINED_RETURN or (returned[0] and isinstance(a, Undefined))
    unread_b = b is UNDEFINED_RETURN or (returned[1] and isinstance(b, Undefined))
    if unread_a or unread_b:
        return _layout_of(b if unread_a else a)
    for value, side in ((a, "else"), (b, "if")):
        if isinstance(value, Undefined):
            raise ControlFlowError(
                f"{at(loc)}: {variable(name)} is assigned only in the {side} branch of the "
                f"tensor-dependent {what} and is used after it; assign it before the {what} "
                "or in both branches")
    a_leaves, a_tree = _flat(a)
    b_leaves, b_tree = _flat(b)
    specs = [_join_leaf(x, y) for x, y in zip(a_leaves, b_leaves)] if a_tree == b_tree else [None]
    if any(spec is None for spec in specs):
        objects = not (_is_number(a) and _is_number(b)) and a_tree == b_tree == LEAF
        raise ControlFlowError(
            f"{at(loc)}: the tensor-dependent {what} gives {variable(name)} {describe(a)} in "
            f"the if branch but {describe(b)} in the else branch; "
            + ("it can only choose between tensors and numbers" if objects else
               "both branches must give it the same structure, dtype and shape"))
    return Layout(a_tree, tuple(specs))  # type: ignore[arg-type]


def _join_leaf(a: Any, b: Any) -> Optional[LeafSpec]:
    if same_value(a, b):
        return Static(a)
    if _is_number(a) and _is_number(b):
        t = _join_types(_number(a), _number(b))
        return None if t is None else Dynamic(t)
    return None


# -- loops --------------------------------------------------------------------------------------


def initial_layout(name: str, value: Any) -> Layout:
    """The layout of a loop variable entering the loop with ``value``; the runtime's flags are
    bool tensors from the start (they change inside the loop by construction)."""
    if name.startswith(_FLAG_PREFIXES) and isinstance(value, bool):
        return Layout(LEAF, (Dynamic(TensorType(result_dtype([value]), ())),))
    return _layout_of(value)


def widen(name: str, layout: Layout, before: Any, after: Any, loc: Loc, what: str) -> Layout:
    """``layout`` of loop variable ``name`` updated with the value one iteration of the body
    gives it (``before``: its value entering the loop)."""
    if layout.tree == LEAF and isinstance(layout.leaves[0], Static):
        start = layout.leaves[0].value
        if start is UNDEFINED_RETURN:
            return layout if after is UNDEFINED_RETURN else _layout_of(after)
        if isinstance(start, Undefined) and after is not start:
            raise ControlFlowError(
                f"{at(loc)}: {variable(name)} is first assigned inside the tensor-dependent "
                f"{what} loop but is also read before that assignment in an iteration or "
                "after the loop; give it a value before the loop")
    after_leaves, after_tree = _flat(after)
    specs = ([_widen_leaf(spec, v) for spec, v in zip(layout.leaves, after_leaves)]
             if after_tree == layout.tree else [None])
    if any(spec is None for spec in specs):
        raise ControlFlowError(
            f"{at(loc)}: {variable(name)} is {describe(before)} before the tensor-dependent "
            f"{what} loop but {describe(after)} after its body; a loop must keep each "
            "variable's structure, dtype and shape")
    return Layout(layout.tree, tuple(specs))  # type: ignore[arg-type]


def _widen_leaf(spec: LeafSpec, after: Any) -> Optional[LeafSpec]:
    if not _is_number(after):
        return spec if isinstance(spec, Static) and same_value(spec.value, after) else None
    if isinstance(spec, Static):
        if same_value(spec.value, after):
            return spec
        if not is_weak(spec.value):
            return None
        t = _join_types(spec.value, _number(after))
        return None if t is None else Dynamic(t, weak=True)
    t = _join_types(spec.type, _number(after))
    if t == spec.type:
        return spec
    if not spec.weak:  # a tensor type is fixed once it did not come from a Python number
        return None
    return Dynamic(t if t is not None else _type_of(after))
