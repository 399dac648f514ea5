"""``@mskernel.jit``: graph mode.  A jitted function is converted (Python control flow on tensors
becomes ``If``/``While``, see :mod:`.autograph`), traced into an IR graph, optimised and
compiled once per *signature*, and the compiled graph is cached.

    @mskernel.jit
    def step(x, w):
        y = x @ w
        if y.sum() > 0:
            y = y * 2
        return y

    step(x, w)                     # traces and compiles, then runs
    step(x, w)                     # runs the cached executable
    print(step.lower(x, w).as_text())
    step.cache_info()              # CacheInfo(hits=1, misses=1, size=1)

Arguments and the signature:

- Tensors, NumPy arrays and NumPy scalars — alone or in tuples, lists and dicts — are the
  graph's inputs; their dtypes and shapes (and the container structure) are the signature.
- Python numbers, strings, ``None`` and other hashable values are *static*: the function is
  traced with their values and they are part of the cache key, as MindSpore treats them
  (JAX instead traces Python numbers as weakly typed inputs).  A number that changes from call
  to call recompiles: pass it as a tensor (``mskernel.Tensor(2.0)``) to make it an input.
- ``static_argnums`` / ``static_argnames`` make whole arguments static (they must be hashable;
  a tensor passed there is keyed by identity).
- Tensors the function reads from closures, globals or ``self`` are constants of the graph;
  :class:`~.parameter.Parameter` s are read and written through the state token instead, so
  updating them needs no recompilation.

The graph is compiled for ``backend`` (a backend name) or else the current device
(:func:`~.device.current_device`) at call time.  Called while a trace is active — from another
jitted function or a control-flow body — a jitted function is inlined into that trace.

Methods: ``@jit`` on a method binds ``self`` statically (one cache per instance); ``jit(obj)``
on a callable object jits ``obj.construct`` (a layer in MindSpore's convention) or else
``obj.__call__``.  When that object defines ``__jit_state__()``, its (hashable) result joins
the cache key at every call: the state tracing reads besides the arguments, such as a layer's
training flags, so switching a network to inference mode compiles (once) the inference graph
instead of reusing the training one.  It runs on every call, so it must be cheap.

What graph mode cannot do as eager code does:

- Python code runs while tracing, once per compilation: ``print``, appending to lists and
  other side effects happen then (twice for the body of a tensor-dependent loop whose
  variables start as Python numbers, which is traced once more as tensors), and both branches
  of a tensor-dependent ``if`` run.
- A Python number that a tensor-dependent branch or loop changes becomes a tensor; it takes
  the dtype of the tensors it meets, else its default dtype (float32, int64, bool).  The index
  of ``for i in range(n)`` with a traced ``n`` is a *weakly typed* int64 tensor: it promotes
  like the Python int eager code sees (``float32_tensor * i`` stays float32 in both modes).

What it does as MindSpore's graph mode does:

- a ``raise`` in a tensor-dependent branch or loop body raises only when that code runs, and
  an ``assert`` on a traced value is checked at every run (the error notes the statement's
  line; the run's parameter updates are dropped) — see :mod:`.trace`, *runtime checks*;
- Python values the function returns (numbers, strings, lists of them) come back as they
  are; only tensors are graph outputs;
- :func:`mutable` makes a Python number an input instead of a constant, and
  :func:`jit_class` marks a class whose objects graph-mode code uses (any object works here,
  since Python runs while tracing).
"""

from __future__ import annotations

import functools
import inspect
import types
import weakref
from typing import Any, Callable, Hashable, NamedTuple, Optional, Sequence

import numpy as np

from ..errors import MskernelError
from ..ir.dtypes import dtype as to_dtype
from ..ir.graph import Graph
from ..ir.printer import print_graph
from ..ir.types import TensorType
from ..runtime.backend import CompileOptions, DeviceArray
from ..runtime.executor import CompiledGraph, compile_graph, optimize
from .autograph import convert
from .device import current_device
from .dispatch import interposing
from .pytree import LEAF, TreeDef, flatten, unflatten
from .tensor import Tensor
from .trace import Program, active_trace, trace_program

__all__ = ["CacheInfo", "Compiled", "JitFunction", "Lowered", "jit", "jit_class", "mutable"]

_INPUT_TYPES = (Tensor, np.ndarray, np.generic)
#: Positional and keyword arguments of one call.
Arguments = tuple[tuple[Any, ...], dict[str, Any]]


class CacheInfo(NamedTuple):
    """``hits``: calls served from the cache; ``misses``: compilations; ``size``: entries."""

    hits: int
    misses: int
    size: int


def jit(fn: Optional[Callable[..., Any]] = None, *, static_argnums: int | Sequence[int] = (),
        static_argnames: str | Sequence[str] = (), backend: Optional[str] = None,
        opt_level: int = 2) -> Any:
    """Compile ``fn`` into a graph once per signature (usable as ``@jit`` and ``@jit(...)``).
    ``opt_level`` selects the pass pipeline (``O0`` … ``O3``)."""
    if fn is None:
        return functools.partial(jit, static_argnums=static_argnums,
                                 static_argnames=static_argnames, backend=backend,
                                 opt_level=opt_level)
    return JitFunction(fn, static_argnums=static_argnums, static_argnames=static_argnames,
                       backend=backend, opt_level=opt_level)


def jit_class(cls: type) -> type:
    """MindSpore's mark for a class whose objects graph-mode code uses: the class itself,
    since every object works while a function is traced (its Python code runs then)."""
    if not isinstance(cls, type):
        raise TypeError(f"jit_class decorates a class, got {cls!r}")
    return cls


def mutable(input_data: Any, dynamic_len: bool = False) -> Any:
    """``input_data`` as a graph input rather than a constant: a Python number becomes a 0-d
    tensor (so a new value does not compile again); tensors, and tuples, lists and dicts of
    them, are inputs already.  ``dynamic_len`` (a sequence of varying length) is not
    supported: a graph's inputs have fixed shapes and counts."""
    if dynamic_len:
        raise ValueError("mutable(..., dynamic_len=True): a jitted function is compiled for a "
                         "fixed number of inputs; pass a tensor instead of a varying sequence")
    if isinstance(input_data, (bool, int, float, complex)):
        return Tensor(input_data)
    leaves, _ = flatten(input_data, lambda x: isinstance(x, _INPUT_TYPES))
    for leaf in leaves:
        if not isinstance(leaf, _INPUT_TYPES):
            raise TypeError(f"mutable: {type(leaf).__name__} values cannot be graph inputs; "
                            "pass numbers, tensors or containers of them")
    return input_data


def _target(fn: Any) -> Callable[..., Any]:
    """The function to trace: ``fn`` itself, or a callable object's ``construct``/``__call__``."""
    if isinstance(fn, (types.FunctionType, types.MethodType, types.BuiltinFunctionType)):
        return fn
    construct = getattr(fn, "construct", None)
    if callable(construct) and not isinstance(fn, type):
        return construct  # type: ignore[no-any-return]
    if isinstance(fn, type) or not callable(fn):
        raise TypeError(f"jit expects a function, a method or a callable object, got {fn!r}")
    return fn.__call__  # type: ignore[no-any-return]


def _as_tuple(value: Any) -> tuple[Any, ...]:
    return (value,) if isinstance(value, (int, str)) else tuple(value)


class _Signature:
    """How one call's arguments split into graph inputs and static values.

    ``key`` is the cache key: for the common call — positional tensors only — their dtypes
    and shapes, flat (what :meth:`JitFunction.__call__` rebuilds without building a
    signature); otherwise a marker, the static values, the container structures and the leaf
    types.  ``inputs`` are the dynamic leaves in input order.
    """

    __slots__ = ("key", "inputs", "types", "_rebuild")

    def __init__(self, key: tuple[Any, ...], inputs: list[Any], types: list[TensorType],
                 rebuild: Callable[[Sequence[Any]], Arguments]) -> None:
        self.key = key
        self.inputs = inputs
        self.types = types
        self._rebuild = rebuild

    def arguments(self, tensors: Sequence[Any]) -> Arguments:
        """The call's arguments with ``tensors`` in place of the inputs."""
        return self._rebuild(tensors)

    def arrays(self) -> list[Any]:
        """The inputs as the executor takes them (device arrays or host arrays)."""
        return [a._data if isinstance(a, Tensor) else np.asarray(a) for a in self.inputs]


_host_dtype = functools.lru_cache(maxsize=None)(to_dtype)
_STRUCTURED = object()  # first element of every key but the plain dtypes-and-shapes one


def _type_of(x: Any) -> TensorType:
    if isinstance(x, Tensor):
        return x.type
    arr = np.asarray(x)
    return TensorType(to_dtype(arr.dtype), arr.shape)


def _static_key(value: Any, where: str) -> Hashable:
    if isinstance(value, float):  # exact: 0.0 and -0.0 differ, NaN matches itself
        return (float, value.hex())
    if isinstance(value, complex):
        return (complex, value.real.hex(), value.imag.hex())
    try:
        hash(value)
    except TypeError:
        raise TypeError(
            f"{where}: a {type(value).__name__} is neither a tensor nor hashable, so it cannot "
            "be a static argument; pass tensors/arrays or a hashable value") from None
    return (type(value), value)


class JitFunction:
    """A function compiled per signature; see :mod:`mskernel.frontend.jit`."""

    def __init__(self, fn: Callable[..., Any], *, static_argnums: int | Sequence[int] = (),
                 static_argnames: str | Sequence[str] = (), backend: Optional[str] = None,
                 opt_level: int = 2) -> None:
        self._fn = _target(fn)
        functools.update_wrapper(self, self._fn)  # type: ignore[arg-type]
        self._static_argnums = frozenset(_as_tuple(static_argnums))
        self._static_argnames = frozenset(_as_tuple(static_argnames))
        self._params = self._parameter_names()
        params = self._params
        self._static_argnums |= {i for i, p in enumerate(params) if p in self._static_argnames}
        self._static_argnames |= {params[i] for i in self._static_argnums if i < len(params)}
        self._simple = not self._static_argnums and not self._static_argnames
        self._backend = backend
        self._state = getattr(getattr(self._fn, "__self__", None), "__jit_state__", None)
        self._options = CompileOptions(opt_level=opt_level)
        #: (backend, *signature key) → executable
        self._cache: dict[tuple[Any, ...], Compiled] = {}
        self._converted: Optional[Callable[..., Any]] = None
        self._bound: dict[int, tuple[Callable[[], Any], JitFunction]] = {}
        self._hits = 0
        self._misses = 0

    def _parameter_names(self) -> list[str]:
        try:
            params = inspect.signature(self._fn).parameters.values()
        except (TypeError, ValueError):
            return []
        kinds = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
        return [p.name for p in params if p.kind in kinds]

    @property
    def python_function(self) -> Callable[..., Any]:
        """The original, unconverted function (run it for eager results)."""
        return self._fn

    # -- calling ----------------------------------------------------------------------------

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if self._simple and not kwargs and not interposing():  # fast path: concrete tensors
            key: list[Any] = [self._backend or current_device(),
                              self._state() if self._state is not None else None]
            arrays: list[Any] = []  # device arrays, or host arrays the executor copies in
            push, keep = key.append, arrays.append
            for a in args:
                if a.__class__ is np.ndarray:  # host arrays: the executor copies them in
                    push(_host_dtype(a.dtype))
                    push(a.shape)
                    keep(a)
                    continue
                data = a._data if a.__class__ is Tensor else None
                if data is None:
                    break
                t = data.type
                push(t.dtype)
                push(t.shape)
                keep(data)
            else:
                entry = self._cache.get(tuple(key))
                if entry is not None:
                    self._hits += 1
                    return entry.run(arrays)
        return self._call(args, kwargs)

    def _call(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        if interposing() or active_trace() is not None or any(
                isinstance(a, Tensor) and a.is_traced for a in flatten((args, kwargs))[0]):
            # inlined into the enclosing trace, or applied op by op so that active
            # transforms (autodiff tapes) see every op
            return self._function()(*args, **kwargs)
        signature = self._signature(args, kwargs)
        key = (self._backend or current_device(),
               self._state() if self._state is not None else None, *signature.key)
        entry = self._cache.get(key)
        if entry is None:
            self._misses += 1
            entry = self._lower(signature).compile()
            self._cache[key] = entry
        else:
            self._hits += 1
        return entry.run(signature.arrays())

    def lower(self, *args: Any, **kwargs: Any) -> "Lowered":
        """Trace for the signature of these arguments (without compiling or caching)."""
        return self._lower(self._signature(args, kwargs))

    def cache_info(self) -> CacheInfo:
        return CacheInfo(self._hits, self._misses, len(self._cache))

    def cache_clear(self) -> None:
        self._cache.clear()
        self._hits = self._misses = 0

    def _function(self) -> Callable[..., Any]:
        if self._converted is None:
            self._converted = convert(self._fn)
        return self._converted

    def _lower(self, signature: _Signature) -> "Lowered":
        fn = self._function()

        @functools.wraps(self._fn)  # errors about what it returns point at the user's function
        def flat(*tensors: Tensor) -> Any:
            call_args, call_kwargs = signature.arguments(tensors)
            return fn(*call_args, **call_kwargs)

        program = trace_program(flat, signature.types, getattr(self._fn, "__name__", "jit"))
        backend = self._backend or current_device().name
        return Lowered(program, self._options, backend, self, signature.key)

    # -- signatures -------------------------------------------------------------------------

    def _signature(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> _Signature:
        if self._simple and not kwargs and all(isinstance(a, _INPUT_TYPES) for a in args):
            types = [_type_of(a) for a in args]
            flat: tuple[Any, ...] = tuple(part for t in types for part in (t.dtype, t.shape))
            return _Signature(flat, list(args), types, lambda ts: (tuple(ts), {}))
        statics: list[tuple[Any, Hashable]] = []
        dynamic: list[tuple[Any, Any]] = []  # (position or name, value)
        for i, value in enumerate(args):
            if i in self._static_argnums:
                statics.append((i, _static_key(value, self._where(i))))
            else:
                dynamic.append((i, value))
        for name in sorted(kwargs):
            if name in self._static_argnames:
                statics.append((name, _static_key(kwargs[name], f"argument '{name}'")))
            else:
                dynamic.append((name, kwargs[name]))
        inputs: list[Any] = []
        trees: list[tuple[Any, TreeDef]] = []
        leaf_keys: list[Hashable] = []
        layouts: list[tuple[Any, TreeDef, list[Any]]] = []
        for where, value in dynamic:
            leaves, tree = flatten(value, lambda x: isinstance(x, _INPUT_TYPES))
            trees.append((where, tree))
            for leaf in leaves:
                if isinstance(leaf, _INPUT_TYPES):
                    inputs.append(leaf)
                    leaf_keys.append(_type_of(leaf))
                else:
                    leaf_keys.append(_static_key(leaf, self._where(where)))
            layouts.append((where, tree, leaves))
        key = (_STRUCTURED, tuple(statics), tuple(trees), tuple(leaf_keys))
        static_args = {where: value for where, value in [*enumerate(args), *kwargs.items()]
                       if where in self._static_argnums or where in self._static_argnames}

        def rebuild(tensors: Sequence[Any]) -> Arguments:
            it = iter(tensors)
            values: dict[Any, Any] = dict(static_args)
            for where, tree, leaves in layouts:
                values[where] = unflatten(tree, [next(it) if isinstance(leaf, _INPUT_TYPES)
                                                 else leaf for leaf in leaves])
            positional = tuple(values.pop(i) for i in range(len(args)))
            return positional, values

        return _Signature(key, inputs, [_type_of(x) for x in inputs], rebuild)

    def _where(self, position: Any) -> str:
        if isinstance(position, int) and position < len(self._params):
            return f"argument '{self._params[position]}'"
        return f"argument {position!r}"

    # -- methods ----------------------------------------------------------------------------

    def __get__(self, obj: Any, objtype: Any = None) -> Any:
        if obj is None:
            return self
        slot = self._bound.get(id(obj))
        if slot is not None and slot[0]() is obj:
            return slot[1]
        bound = JitFunction(types.MethodType(self._fn, obj),
                            static_argnums=tuple(i - 1 for i in self._static_argnums if i > 0),
                            static_argnames=tuple(self._static_argnames),
                            backend=self._backend, opt_level=self._options.opt_level)
        key = id(obj)
        try:
            ref: Callable[[], Any] = weakref.ref(obj, lambda _: self._bound.pop(key, None))
        except TypeError:  # not weakly referenceable: the instance stays alive with its cache
            ref = lambda: obj  # noqa: E731
        self._bound[key] = (ref, bound)
        return bound

    def __repr__(self) -> str:
        return f"<jit {getattr(self._fn, '__qualname__', self._fn)!r}>"


class Lowered:
    """A traced function for one signature: the IR before compilation."""

    def __init__(self, program: Program, options: CompileOptions, backend: str,
                 owner: JitFunction, key: Hashable) -> None:
        self.program = program
        self.options = options
        self.backend = backend
        self._owner = owner
        self._key = key
        self._optimized: Optional[Graph] = None

    @property
    def graph(self) -> Graph:
        """The traced graph (before the pass pipeline)."""
        return self.program.graph

    @property
    def optimized_graph(self) -> Graph:
        """The graph after the generic pass pipeline of the jit's ``opt_level``."""
        if self._optimized is None:
            self._optimized = optimize(self.graph, self.options)
        return self._optimized

    def as_text(self, optimized: bool = False) -> str:
        """The IR text form, as traced or (``optimized=True``) after the pass pipeline."""
        return print_graph(self.optimized_graph if optimized else self.graph)

    def compile(self) -> "Compiled":
        compiled = compile_graph(self.graph, backends=[self.backend], options=self.options)
        return Compiled(compiled, self.program, self._owner, self._key)


class Compiled:
    """A compiled signature of a jitted function; call it like the function."""

    def __init__(self, compiled: CompiledGraph, program: Program, owner: JitFunction,
                 key: Hashable) -> None:
        self.executable = compiled
        self.program = program
        self._owner = owner
        self._key = key
        #: run on the inputs' device (or host) arrays; returns the function's result
        self.run: Callable[[list[Any]], Any] = self._run_tree
        if (program.out_tree == LEAF and program.constants == (None,) and not program.has_state
                and not program.checks):
            run, concrete = compiled.run, Tensor._concrete
            self.run = lambda arrays: concrete(run(arrays)[0])

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        signature = self._owner._signature(args, kwargs)
        if signature.key != self._key:
            inputs = self.program.graph.input_types[:self.program.num_inputs]
            raise MskernelError(
                f"this executable of {self._owner!r} was compiled for inputs "
                f"{', '.join(map(str, inputs))}; the arguments given have a different "
                f"signature ({', '.join(map(str, signature.types))})")
        return self.run(signature.arrays())

    def explain(self) -> str:
        """Where every node runs (see :meth:`~mskernel.runtime.CompiledGraph.explain`)."""
        return self.executable.explain()

    def _run_tree(self, arrays: list[Any]) -> Any:
        program = self.program
        if not program.has_state:
            return program.result(self.executable.run(arrays))
        state, cells = program.state_arguments()
        result = program.result(self.executable.run([*arrays, *state]))
        program.write_back(cells)  # not when a runtime check raised: the run did not happen
        return result
