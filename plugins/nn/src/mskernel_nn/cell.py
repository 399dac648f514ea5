"""``mskernel.nn.Cell``: the base class of layers and networks (MindSpore's ``nn.Cell``).

A subclass builds its parts in ``__init__`` and computes in ``construct``; calling the cell
runs ``construct``::

    class Net(nn.Cell):
        def __init__(self):
            super().__init__()
            self.fc = nn.Dense(4, 2)
            self.scale = mskernel.Parameter(np.ones(2, np.float32))

        def construct(self, x):
            return self.fc(x) * self.scale

Attributes holding a :class:`~mskernel.Parameter` or a ``Cell`` are *registered*, in the order
they are set.  Registration names every parameter after its dotted attribute path from the
cell it ends up under (``"features.0.weight"``): the name is given when the parameter or the
cell holding it is attached, and stays the same from run to run, so checkpoints can key on it.
A parameter shared by several cells (tied weights) is listed once, under its first path, and
carries the name of the place it was attached last.

Buffers — batch-norm moving statistics, a dropout layer's random key — are parameters with
``requires_grad=False``: :meth:`Cell.trainable_params` leaves them out, checkpoints keep them.
Freeze a parameter with ``param.requires_grad = False``.

``Cell.training`` is ``False`` until :meth:`Cell.set_train` (MindSpore's default): layers
that behave differently when training (dropout, batch norm) read it when ``construct`` runs,
so under ``@jit`` it is part of what is traced: the compiled cell keys its cache on the
training flags of every cell under it (:meth:`Cell.__jit_state__`), so ``set_train(False)``
after training compiles the inference graph once instead of reusing the training one.

``Cell(auto_prefix=False)`` (MindSpore's) makes a cell transparent for names: the parameters
of its children are named as if the children stood in its place, as the training wrappers
(``WithLossCell``, ``TrainOneStepCell``) do, so a checkpoint of the wrapped network loads
into the bare one.

Graph mode: ``mskernel.jit(cell)`` compiles ``cell.construct``; after
``mskernel.set_context(mode=mskernel.GRAPH_MODE)`` calling a cell does that itself (one
compiled cell per instance, as MindSpore's graph mode compiles the network it is called on).
A cell called while a trace is active runs ``construct`` converted by AutoGraph when it is
user code, so Python ``if`` and ``for`` on tensors inside a user's ``construct`` become graph
control flow.  Parameters are read and assigned through the trace's state, so a compiled step
updates them in place.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any, Callable, Iterator, Optional, TypeVar

from mskernel import GRAPH_MODE, get_context, jit
from mskernel_sdk import Parameter, active_trace, converted_callee

__all__ = ["Cell"]

C = TypeVar("C", bound="Cell")


#: Bumped whenever some cell's training flag or children change; cells recompute their
#: ``__jit_state__`` only after it moved.
_structure_epoch = [0]


def _changed() -> None:
    _structure_epoch[0] += 1


def _join(prefix: str, name: str) -> str:
    return f"{prefix}.{name}" if prefix else name


class Cell:
    """The base class of layers and networks; see :mod:`mskernel_nn.cell`."""

    def __init__(self, auto_prefix: bool = True) -> None:
        object.__setattr__(self, "_params", OrderedDict())
        object.__setattr__(self, "_cells", OrderedDict())
        object.__setattr__(self, "_path", "")
        object.__setattr__(self, "_auto_prefix", bool(auto_prefix))
        object.__setattr__(self, "training", False)
        object.__setattr__(self, "requires_grad", False)

    # -- computing --------------------------------------------------------------------------

    def construct(self, *inputs: Any, **kwargs: Any) -> Any:
        """The cell's computation; every subclass defines it."""
        raise NotImplementedError(f"{type(self).__name__} must define construct(self, ...)")

    def __call__(self, *inputs: Any, **kwargs: Any) -> Any:
        construct = self.construct
        if active_trace() is not None:
            construct = converted_callee(construct)
        elif get_context("mode") == GRAPH_MODE:
            construct = self._compiled()
        return construct(*inputs, **kwargs)

    def shard(self: C, in_strategy: Any, out_strategy: Any = None,
              parameter_plan: Optional[dict[str, Any]] = None) -> C:
        """MindSpore's ``Cell.shard``: record sharding strategies of this cell's inputs,
        outputs and named parameters (``mskernel.shard``, from mskernel-parallel)."""
        import mskernel

        return mskernel.shard(self, in_strategy, out_strategy, parameter_plan)

    def _compiled(self) -> Any:
        """This cell under ``mskernel.jit``, made once."""
        compiled = self.__dict__.get("_compiled_cell")
        if compiled is None:
            compiled = jit(self)
            object.__setattr__(self, "_compiled_cell", compiled)
        return compiled

    # -- registration -----------------------------------------------------------------------

    def __setattr__(self, name: str, value: Any) -> None:
        registry = self.__dict__.get("_params")
        if registry is None:
            if isinstance(value, (Parameter, Cell)):
                raise AttributeError(
                    f"cannot assign {type(value).__name__} '{name}' before "
                    f"{type(self).__name__}.__init__ calls super().__init__()")
            object.__setattr__(self, name, value)
            return
        if isinstance(value, Parameter):
            self.insert_param_to_cell(name, value)
        elif isinstance(value, Cell):
            self.insert_child_to_cell(name, value)
        elif name in self._params or name in self._cells:
            if value is not None:
                kind = "parameter" if name in self._params else "cell"
                raise TypeError(
                    f"'{name}' is a {kind} of {type(self).__name__}; assign a "
                    f"{'Parameter' if kind == 'parameter' else 'Cell'} or None to it"
                    + (", or change its value with assign_value" if kind == "parameter" else ""))
            _changed()
            self._params.pop(name, None)
            self._cells.pop(name, None)
            object.__setattr__(self, name, None)
        else:
            if name == "training":
                _changed()
            object.__setattr__(self, name, value)

    def __getattr__(self, name: str) -> Any:
        for registry in ("_params", "_cells"):
            entries = self.__dict__.get(registry)
            if entries is not None and name in entries:
                return entries[name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __delattr__(self, name: str) -> None:
        if name in self._params:
            del self._params[name]
        elif name in self._cells:
            del self._cells[name]
            _changed()
        else:
            object.__delattr__(self, name)

    def insert_param_to_cell(self, param_name: str, param: Parameter,
                             check_name_contain_dot: bool = True) -> None:
        """Register ``param`` as the attribute ``param_name`` and name it after its path."""
        self._check_name(param_name, check_name_contain_dot, "parameter")
        if not isinstance(param, Parameter):
            raise TypeError(f"insert_param_to_cell: '{param_name}' must be a Parameter, got "
                            f"{type(param).__name__}")
        self.__dict__.pop(param_name, None)
        self._cells.pop(param_name, None)
        self._params[param_name] = param
        param.name = _join(self._path, param_name)

    def insert_child_to_cell(self, child_name: str, child_cell: "Cell") -> None:
        """Register ``child_cell`` as the attribute ``child_name`` and name its parameters
        after their paths under this cell."""
        self._check_name(child_name, True, "cell")
        if not isinstance(child_cell, Cell):
            raise TypeError(f"insert_child_to_cell: '{child_name}' must be a Cell, got "
                            f"{type(child_cell).__name__}")
        if child_cell is self or any(c is self for _, c in child_cell.cells_and_names()):
            raise ValueError(f"cannot insert {type(child_cell).__name__} '{child_name}' into a "
                             "cell it contains")
        self.__dict__.pop(child_name, None)
        self._params.pop(child_name, None)
        self._cells[child_name] = child_cell
        child_cell._rename(self._child_path(child_name), set())
        _changed()

    def _child_path(self, child_name: str) -> str:
        return _join(self._path, child_name) if self._auto_prefix else self._path

    def _check_name(self, name: str, no_dot: bool, kind: str) -> None:
        if "_params" not in self.__dict__:
            raise AttributeError(f"cannot add a {kind} to {type(self).__name__} before its "
                                 "__init__ calls super().__init__()")
        if not isinstance(name, str) or not name or (no_dot and "." in name):
            raise KeyError(f"a {kind} name must be a non-empty string without '.', got {name!r}")

    def _rename(self, path: str, seen: set[int]) -> None:
        """Name this cell's parameters, and its children's, under ``path``."""
        object.__setattr__(self, "_path", path)
        for key, param in self._params.items():
            if id(param) not in seen:
                seen.add(id(param))
                param.name = _join(path, key)
        for key, child in self._cells.items():
            child._rename(self._child_path(key), seen)

    # -- traversal --------------------------------------------------------------------------

    def cells_and_names(self, cells: Optional[set[int]] = None,
                        name_prefix: str = "") -> Iterator[tuple[str, "Cell"]]:
        """This cell and every cell under it, each once, as ``(path, cell)`` (depth first, in
        registration order; this cell's path is ``name_prefix``)."""
        seen = set() if cells is None else cells
        if id(self) in seen:
            return
        seen.add(id(self))
        yield name_prefix, self
        for key, child in self._cells.items():
            yield from child.cells_and_names(seen, _join(name_prefix, key))

    def name_cells(self) -> "OrderedDict[str, Cell]":
        """The direct children by attribute name."""
        return OrderedDict(self._cells)

    def cells(self) -> Iterator["Cell"]:
        """The direct children."""
        return iter(list(self._cells.values()))

    def parameters_and_names(self, name_prefix: str = "",
                             expand: bool = True) -> Iterator[tuple[str, Parameter]]:
        """Every parameter once, as ``(path, parameter)``, in registration order (with
        ``expand=False`` only this cell's own)."""
        cells = self.cells_and_names(name_prefix=name_prefix) if expand else [(name_prefix, self)]
        seen: set[int] = set()
        for cell_path, cell in cells:
            for key, param in cell._params.items():
                if id(param) not in seen:
                    seen.add(id(param))
                    yield _join(cell_path, key), param

    def get_parameters(self, expand: bool = True) -> Iterator[Parameter]:
        """Every parameter once, in registration order."""
        return (param for _, param in self.parameters_and_names(expand=expand))

    def trainable_params(self, recurse: bool = True) -> list[Parameter]:
        """The parameters with ``requires_grad`` — what an optimizer updates."""
        return [p for p in self.get_parameters(expand=recurse) if p.requires_grad]

    def untrainable_params(self, recurse: bool = True) -> list[Parameter]:
        """The parameters without ``requires_grad`` (frozen weights, moving statistics)."""
        return [p for p in self.get_parameters(expand=recurse) if not p.requires_grad]

    def parameters_dict(self, recurse: bool = True) -> "OrderedDict[str, Parameter]":
        """``{path: parameter}`` in registration order."""
        return OrderedDict(self.parameters_and_names(expand=recurse))

    # -- modes and bulk operations ----------------------------------------------------------

    def set_grad(self: C, requires_grad: bool = True) -> C:
        """Record whether gradients of this cell will be taken (MindSpore's flag, which
        PyNative mode uses to keep the forward pass for a backward one).  Gradients here
        come from ``mskernel.grad`` / ``value_and_grad`` whether it is set or not, so the
        flag changes nothing but :attr:`requires_grad`."""
        object.__setattr__(self, "requires_grad", bool(requires_grad))
        return self

    def set_train(self: C, mode: bool = True) -> C:
        """Put this cell and every cell under it in training (``True``) or inference mode."""
        for _, cell in self.cells_and_names():
            object.__setattr__(cell, "training", bool(mode))
        _changed()
        return self

    def __jit_state__(self) -> tuple[bool, ...]:
        """What tracing ``construct`` reads besides its arguments: the training flag of each
        cell under this one, in :meth:`cells_and_names` order.  ``mskernel.jit`` adds it to
        its cache key at every call (cheap: recomputed only after some cell changed)."""
        cached = self.__dict__.get("_jit_state")
        if cached is not None and cached[0] == _structure_epoch[0]:
            return cached[1]
        flags = tuple(cell.training for _, cell in self.cells_and_names())
        object.__setattr__(self, "_jit_state", (_structure_epoch[0], flags))
        return flags

    def apply(self: C, fn: Callable[["Cell"], Any]) -> C:
        """Call ``fn`` on every cell under this one, children first, then on this cell."""
        for child in self.cells():
            child.apply(fn)
        fn(self)
        return self

    # -- printing ---------------------------------------------------------------------------

    def extend_repr(self) -> str:
        """The settings shown between ``<`` and ``>`` in the cell's repr."""
        return ""

    def __repr__(self) -> str:
        head = f"{type(self).__name__}<{self.extend_repr()}"
        if not self._cells:
            return head + ">"
        lines = [head]
        for key, child in self._cells.items():
            body = repr(child).replace("\n", "\n  ")
            lines.append(f"  ({key}): {body}")
        return "\n".join(lines) + "\n  >"

