"""Op definitions and the registries that hold them and the rules attached to them.

An op is defined once, by one :class:`OpDef`: its inputs, its attributes (with types and
defaults), its shape-and-dtype rule (``infer``) and its reference semantics in NumPy
(``reference``).  Backends implement kernels *for op names*; other plugins attach rules
(VJP/JVP, sharding, cost, …) *to op names* in the :class:`RuleRegistry`.  Neither edits the
op's definition.

The calling conventions a plugin author implements:

``infer(*input_types, **attrs) -> Type | tuple[Type, ...]``
    Receives the input types and the bound attributes (defaults filled in, validated).
    Returns one type for a one-output op, or a tuple (possibly of length one) for an op with
    several outputs.  Raises :class:`~mskernel.errors.InferError` with the reason when the
    inputs are unacceptable; the registry turns it into an :class:`~mskernel.errors.OpError`
    naming the op, the input types and the source line.

``reference(*arrays, **attrs) -> ndarray | tuple[ndarray, ...]``
    NumPy semantics, the specification every backend is tested against.  Arrays arrive in
    their reference storage (see :mod:`mskernel.ir.dtypes`); the result is cast to the
    inferred dtype by the interpreter.  It must return a tuple exactly when ``infer`` does.

Ops that own regions (``num_regions > 0``) also receive ``regions=`` (the sub-graphs) in
``infer``, and ``regions=`` plus ``run_region=`` (a callable running a region on arrays) in
``reference``.

``decomposition(b, *inputs, **attrs) -> Value | tuple[Value, ...]`` (optional)
    The op as a composition of other ops, for backends that do not claim it.  Receives an
    :class:`Emitter` ``b`` (``b.op(name, *values, **attrs)`` appends a node and returns its
    output, or the tuple of them), the node's input values — whose
    ``type`` gives every dtype and shape, all static — and the bound attributes.  Returns
    the values replacing the outputs: a tuple exactly when ``infer`` returns one, each of
    the output's type; an input may stand for an output.  It must compute what
    ``reference`` does, within the dtype's tolerance on every input (NaN, infinities, signed
    zeros and empty tensors included), and must not emit its own op.  An op with a
    decomposition is a *composite*, one without a *primitive*; see
    :mod:`mskernel.ops.primitives` for where the core draws the line.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Iterable, Iterator, Mapping, Optional, Protocol, Sequence

import numpy as np

from ..errors import InferError, OpError, UnknownOpError
from ..ir.dtypes import dtype as to_dtype
from ..ir.graph import Value
from ..ir.types import Type

_REQUIRED = object()

#: Attribute kinds and what they accept.  A trailing ``?`` also accepts ``None``.
ATTR_KINDS = ("int", "float", "bool", "str", "dtype", "ints", "floats", "array", "any")


@dataclass(frozen=True)
class Attr:
    """One attribute of an op: a name, a kind from :data:`ATTR_KINDS` (``"int?"`` allows
    ``None``) and a default (omit it to make the attribute required)."""

    name: str
    kind: str
    default: Any = _REQUIRED

    def __post_init__(self) -> None:
        if self.kind.rstrip("?") not in ATTR_KINDS:
            raise ValueError(f"attribute {self.name!r}: unknown kind {self.kind!r}")

    @property
    def required(self) -> bool:
        return self.default is _REQUIRED

    def coerce(self, value: Any) -> Any:
        """Validate ``value`` and return it in canonical form; raise ``InferError``."""
        kind = self.kind
        if kind.endswith("?"):
            if value is None:
                return None
            kind = kind[:-1]
        bad = InferError(f"attribute '{self.name}' expects {self.kind}, got {value!r}")
        if kind == "int":
            if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
                raise bad
            return int(value)
        if kind == "float":
            if isinstance(value, (bool, np.bool_)) or not isinstance(
                value, (int, float, np.integer, np.floating)
            ):
                raise bad
            return float(value)
        if kind == "bool":
            if not isinstance(value, (bool, np.bool_)):
                raise bad
            return bool(value)
        if kind == "str":
            if not isinstance(value, str):
                raise bad
            return value
        if kind == "dtype":
            try:
                return to_dtype(value)
            except TypeError:
                raise bad from None
        if kind == "ints":
            if not isinstance(value, (list, tuple)) or not all(
                isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_))
                for v in value
            ):
                raise bad
            return tuple(int(v) for v in value)
        if kind == "floats":
            if not isinstance(value, (list, tuple)):
                raise bad
            return tuple(float(v) for v in value)
        if kind == "array":
            if not isinstance(value, np.ndarray):
                raise bad
            return value
        return value  # "any": plain data, frozen by the Node


InferFn = Callable[..., Any]
ReferenceFn = Callable[..., Any]
DecomposeFn = Callable[..., Any]


class Emitter(Protocol):
    """What a decomposition emits nodes through (a :class:`~mskernel.ir.builder.GraphBuilder`):
    ``op`` appends a node of ``op`` and returns its output — the tuple of its outputs for an
    op that returns a tuple."""

    def op(self, op: str, *inputs: Value, **attrs: Any) -> Any: ...


@dataclass(frozen=True)
class OpDef:
    """The single definition of an op.

    ``inputs`` names the operands; a name starting with ``*`` is variadic and must be last
    (``("*xs",)`` for concat).  ``traits`` are free-form tags passes and backends may key on:
    ``"elementwise"`` (output element i depends only on input elements i after
    broadcasting), ``"commutative"``, ``"reduction"``, ``"random"``, ``"shape"``,
    ``"identity"`` (one input, returned unchanged: a marker for transforms, which the
    ``simplify`` pass removes before backends see it), ``"fused"`` (its region is the program
    of one fused kernel, not control flow: pattern passes leave it alone).  An op
    with ``effectful=True`` must take a ``!token`` input and return a ``!token`` output, so
    its ordering is explicit.  ``owner`` is the distribution defining the op (recorded in
    model files so a reader can be told what to install).  ``decomposition`` makes the op a
    composite (see the module doc): a backend that does not claim it runs what it emits.
    """

    name: str
    inputs: tuple[str, ...]
    infer: InferFn
    reference: ReferenceFn
    attrs: tuple[Attr, ...] = ()
    traits: frozenset[str] = frozenset()
    num_regions: int = 0
    effectful: bool = False
    owner: str = "mskernel"
    doc: str = ""
    decomposition: Optional[DecomposeFn] = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "inputs", tuple(self.inputs))
        object.__setattr__(self, "attrs", tuple(self.attrs))
        object.__setattr__(self, "traits", frozenset(self.traits))
        for i, name in enumerate(self.inputs):
            if name.startswith("*") and i != len(self.inputs) - 1:
                raise ValueError(f"op {self.name!r}: variadic input {name!r} must be last")

    @property
    def primitive(self) -> bool:
        """Whether the op has no decomposition: a backend runs it or falls back."""
        return self.decomposition is None

    @property
    def variadic(self) -> bool:
        return bool(self.inputs) and self.inputs[-1].startswith("*")

    def has_trait(self, trait: str) -> bool:
        return trait in self.traits

    def bind_attrs(self, attrs: Mapping[str, Any], *, loc: Any = None) -> dict[str, Any]:
        """Validate ``attrs`` against the schema and fill in defaults."""
        known = {a.name: a for a in self.attrs}
        unknown = sorted(set(attrs) - set(known))
        if unknown:
            raise OpError(
                f"op '{self.name}'{_at(loc)}: unknown attribute(s) {', '.join(unknown)}; "
                f"accepted: {', '.join(known) or 'none'}"
            )
        bound: dict[str, Any] = {}
        for spec in self.attrs:
            if spec.name in attrs:
                try:
                    bound[spec.name] = spec.coerce(attrs[spec.name])
                except InferError as exc:
                    raise OpError(f"op '{self.name}'{_at(loc)}: {exc}") from None
            elif spec.required:
                raise OpError(f"op '{self.name}'{_at(loc)}: missing required attribute '{spec.name}'")
            else:
                bound[spec.name] = spec.default
        return bound

    def check_arity(self, n: int, *, loc: Any = None) -> None:
        fixed = len(self.inputs) - (1 if self.variadic else 0)
        if n < fixed or (not self.variadic and n != fixed):
            want = f"at least {fixed}" if self.variadic else str(fixed)
            raise OpError(
                f"op '{self.name}'{_at(loc)}: expects {want} input(s) "
                f"({', '.join(self.inputs)}), got {n}"
            )

    def infer_types(
        self,
        input_types: Sequence[Type],
        attrs: Mapping[str, Any],
        *,
        regions: Sequence[Any] = (),
        loc: Any = None,
    ) -> tuple[Type, ...]:
        """Run the shape/dtype rule on already-bound attributes; always returns a tuple."""
        return self.infer_outputs(input_types, attrs, regions=regions, loc=loc)[0]

    def infer_outputs(
        self,
        input_types: Sequence[Type],
        attrs: Mapping[str, Any],
        *,
        regions: Sequence[Any] = (),
        loc: Any = None,
    ) -> tuple[tuple[Type, ...], bool]:
        """Run the shape/dtype rule; return the output types and whether the op returns a
        tuple (``False`` for a one-output op)."""
        self.check_arity(len(input_types), loc=loc)
        if len(regions) != self.num_regions:
            raise OpError(
                f"op '{self.name}'{_at(loc)}: expects {self.num_regions} region(s), got {len(regions)}"
            )
        extra = {"regions": tuple(regions)} if self.num_regions else {}
        try:
            result = self.infer(*input_types, **attrs, **extra)
        except InferError as exc:
            types = ", ".join(str(t) for t in input_types) or "no inputs"
            raise OpError(f"op '{self.name}'{_at(loc)}: {exc} (inputs: {types})") from None
        if isinstance(result, tuple):
            return result, True
        return (result,), False


def _at(loc: Any) -> str:
    return f" at {loc}" if loc else ""


class OpRegistry:
    """All ops known to this process, by name.

    Plugins add ops in ``mskernel_register_ops(registry)`` by calling :meth:`define`.
    Redefining an existing name is an error unless ``override=True`` is passed, which
    records who overrode what (shown by ``mskernel plugins info``).
    """

    def __init__(self, loader: Optional[Callable[[], None]] = None) -> None:
        self._ops: dict[str, OpDef] = {}
        self.overrides: dict[str, tuple[str, str]] = {}
        self._loader = loader  # loads external plugins the first time a name is missing

    def define(self, op: OpDef, *, override: bool = False, owner: Optional[str] = None) -> OpDef:
        """Add ``op``.  ``owner`` (filled in by the plugin host) replaces ``op.owner``."""
        if owner is not None and owner != op.owner:
            op = replace(op, owner=owner)
        existing = self._ops.get(op.name)
        if existing is not None and not override:
            raise OpError(
                f"op '{op.name}' is already defined by {existing.owner}; "
                f"{op.owner} must pass override=True to replace it"
            )
        if existing is not None:
            self.overrides[op.name] = (existing.owner, op.owner)
        self._ops[op.name] = op
        return op

    def define_all(self, ops: Iterable[OpDef], *, owner: Optional[str] = None) -> None:
        for op in ops:
            self.define(op, owner=owner)

    def get(self, name: str) -> OpDef:
        op = self.find(name)
        if op is not None:
            return op
        close = difflib.get_close_matches(name, self._ops, n=3)
        hint = f"; did you mean {', '.join(repr(c) for c in close)}?" if close else ""
        raise UnknownOpError(f"unknown op '{name}': no installed plugin defines it{hint}")

    def find(self, name: str) -> Optional[OpDef]:
        """The op, or ``None``; an unknown name first loads the external plugins."""
        op = self._ops.get(name)
        if op is None and self._loader is not None:
            loader, self._loader = self._loader, None
            loader()
            op = self._ops.get(name)
        return op

    def __contains__(self, name: object) -> bool:
        return name in self._ops

    def __iter__(self) -> Iterator[OpDef]:
        return iter(sorted(self._ops.values(), key=lambda op: op.name))

    def __len__(self) -> int:
        return len(self._ops)

    def names(self) -> list[str]:
        return sorted(self._ops)

    def snapshot(self) -> Any:
        """The definitions and overrides as they are now, for :meth:`restore`."""
        return dict(self._ops), dict(self.overrides)

    def restore(self, state: Any) -> None:
        """Go back to a :meth:`snapshot`: ops defined since are gone, overridden ones are
        back (the plugin host undoes what a failing plugin registered)."""
        ops, overrides = state
        self._ops.clear()
        self._ops.update(ops)
        self.overrides.clear()
        self.overrides.update(overrides)


@dataclass
class RuleRegistry:
    """Rules attached to ops by name, grouped by kind (``"vjp"``, ``"jvp"``, ``"sharding"``,
    ``"cost"``, …).  A rule is any object the consuming plugin understands; the registry
    only stores it and records which plugin registered it."""

    _rules: dict[str, dict[str, Any]] = field(default_factory=dict)
    _owners: dict[tuple[str, str], str] = field(default_factory=dict)

    def register(self, kind: str, op: str, rule: Any, *, owner: str = "unknown",
                 override: bool = False) -> None:
        table = self._rules.setdefault(kind, {})
        if op in table and not override:
            raise OpError(
                f"a '{kind}' rule for op '{op}' is already registered by "
                f"{self._owners[(kind, op)]}; {owner} must pass override=True"
            )
        table[op] = rule
        self._owners[(kind, op)] = owner

    def get(self, kind: str, op: str) -> Any:
        return self._rules.get(kind, {}).get(op)

    def owner(self, kind: str, op: str) -> str:
        """The distribution that registered the ``kind`` rule of ``op`` (``""``: none)."""
        return self._owners.get((kind, op), "")

    def has(self, kind: str, op: str) -> bool:
        return op in self._rules.get(kind, {})

    def ops_with(self, kind: str) -> set[str]:
        return set(self._rules.get(kind, {}))

    def kinds(self) -> list[str]:
        return sorted(self._rules)

    def snapshot(self) -> Any:
        """The rules and their owners as they are now, for :meth:`restore`."""
        return {kind: dict(table) for kind, table in self._rules.items()}, dict(self._owners)

    def restore(self, state: Any) -> None:
        """Go back to a :meth:`snapshot`."""
        rules, owners = state
        self._rules.clear()
        self._rules.update((kind, dict(table)) for kind, table in rules.items())
        self._owners.clear()
        self._owners.update(owners)

