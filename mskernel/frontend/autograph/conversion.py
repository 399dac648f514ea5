"""Converting a Python function: its source is parsed, lowered and transformed
(:mod:`.transformer`), compiled with the user's file name and line numbers, and bound to the
function's own globals and closure cells — so globals, closures over Python constants and
``nonlocal`` writes behave as in the original, and tracebacks and op locations point at the
user's lines.

The converted code object is cached per original code object; the function object per
original function.  Functions called from converted code are converted in turn when they are
user code (:func:`converted_callee`): not mskernel or a plugin, not the standard library or an
installed package, not a lambda or generator, and not marked with :func:`do_not_convert`.
"""

from __future__ import annotations

import ast
import inspect
import sys
import sysconfig
import types
import warnings
import weakref
from typing import Any, Callable, TypeVar

from ...ir.source import is_framework
from .errors import ConversionError, unsupported
from .syntax import RUNTIME, function, load
from .transformer import FunctionConverter

Fn = TypeVar("Fn", bound=Callable[..., Any])

_NOT_CONVERTED = "__mskernel_do_not_convert__"
_CODE_FLAGS_NOT_CONVERTED = (inspect.CO_GENERATOR | inspect.CO_COROUTINE
                             | inspect.CO_ASYNC_GENERATOR | inspect.CO_ITERABLE_COROUTINE)
_LIBRARY_DIRS = tuple({sysconfig.get_paths()[k]
                       for k in ("stdlib", "platstdlib", "purelib", "platlib")})


class SourceUnavailable(Exception):
    """The function's source cannot be read (defined interactively, by ``exec``, in C …)."""


class ConversionWarning(UserWarning):
    """A function is traced or called without conversion."""


def do_not_convert(fn: Fn) -> Fn:
    """Mark ``fn`` to be called as it is from converted code (its Python control flow then
    needs Python values, or :mod:`mskernel.ops` ``cond``/``while_loop``)."""
    setattr(fn, _NOT_CONVERTED, True)
    return fn


def convert(fn: Callable[..., Any]) -> Callable[..., Any]:
    """The converted version of a function or bound method (other callables are returned as
    they are).  Raises :class:`ConversionError` naming an unsupported construct and its line;
    when the source cannot be read, warns and returns ``fn`` unconverted."""
    if isinstance(fn, types.MethodType):
        inner = convert(fn.__func__)
        return fn if inner is fn.__func__ else types.MethodType(inner, fn.__self__)
    if (not isinstance(fn, types.FunctionType) or fn.__name__ == "<lambda>" or is_converted(fn)
            or getattr(fn, _NOT_CONVERTED, False)):
        return fn
    try:
        return _converted_function(fn)
    except SourceUnavailable as exc:
        warnings.warn(f"{fn.__qualname__} is traced without converting its Python control "
                      f"flow: {exc}", ConversionWarning, stacklevel=3)
        return fn


def converted_callee(fn: Any) -> Any:
    """What converted code calls for ``fn``: the converted version of user code, else ``fn``.
    A user function that cannot be converted is called as it is (with a warning when it uses
    an unsupported construct)."""
    if isinstance(fn, types.FunctionType):
        return _callee_function(fn)
    if isinstance(fn, types.MethodType) and isinstance(fn.__func__, types.FunctionType):
        inner = _callee_function(fn.__func__)
        return fn if inner is fn.__func__ else types.MethodType(inner, fn.__self__)
    if not isinstance(fn, type):
        call = getattr(type(fn), "__call__", None)
        if isinstance(call, types.FunctionType):
            inner = _callee_function(call)
            return fn if inner is call else types.MethodType(inner, fn)
    return fn


def _callee_function(fn: types.FunctionType) -> types.FunctionType:
    if not _is_user_code(fn) or fn.__code__ in _unconvertible:
        return fn
    try:
        return _converted_function(fn)
    except (SourceUnavailable, ConversionError) as exc:
        _unconvertible.add(fn.__code__)
        if isinstance(exc, ConversionError):
            warnings.warn(f"{fn.__qualname__} is called without conversion: {exc}",
                          ConversionWarning, stacklevel=4)
        return fn


def is_converted(fn: types.FunctionType) -> bool:
    return fn.__code__ in _converted_codes


def use_site() -> str:
    """`` at file:line`` of the innermost user frame when it runs converted code, else ``""``
    (a value used by the framework on the user's behalf has no meaningful line)."""
    frame = sys._getframe(1)
    while frame is not None and is_framework(frame.f_globals.get("__name__", "")):
        frame = frame.f_back  # type: ignore[assignment]
    if frame is None or frame.f_code not in _converted_codes:
        return ""
    return f" at {frame.f_code.co_filename}:{frame.f_lineno}"


def to_source(fn: Callable[..., Any]) -> str:
    """The Python source of the converted ``fn`` (for debugging conversions)."""
    function = fn.__func__ if isinstance(fn, types.MethodType) else fn
    if not isinstance(function, types.FunctionType):
        raise TypeError(f"to_source needs a Python function or method, got {fn!r}")
    return ast.unparse(_converted_tree(function))


# -- caches -----------------------------------------------------------------------------------

_codes: dict[types.CodeType, types.CodeType | Exception] = {}
_converted_codes: set[types.CodeType] = set()
_functions: "weakref.WeakKeyDictionary[types.FunctionType, types.FunctionType]" = (
    weakref.WeakKeyDictionary())
_user_code: dict[types.CodeType, bool] = {}
_unconvertible: set[types.CodeType] = set()
_runtime_cell: list[types.CellType] = []


def _is_user_code(fn: types.FunctionType) -> bool:
    code = fn.__code__
    if code in _converted_codes or getattr(fn, _NOT_CONVERTED, False):
        return False
    decision = _user_code.get(code)
    if decision is None:
        filename = code.co_filename
        decision = not (
            code.co_flags & _CODE_FLAGS_NOT_CONVERTED
            or code.co_name == "<lambda>"
            or filename.startswith("<")
            or filename.startswith(_LIBRARY_DIRS)
            or is_framework(fn.__globals__.get("__name__", ""))
        )
        _user_code[code] = decision
    return decision


def _converted_function(fn: types.FunctionType) -> types.FunctionType:
    done = _functions.get(fn)
    if done is not None:
        return done
    code = _converted_code(fn)
    cells = dict(zip(fn.__code__.co_freevars, fn.__closure__ or ()))
    cells[RUNTIME] = _runtime()
    converted = types.FunctionType(code, fn.__globals__, fn.__name__, fn.__defaults__,
                                   tuple(cells[name] for name in code.co_freevars))
    converted.__kwdefaults__ = fn.__kwdefaults__
    converted.__qualname__ = fn.__qualname__
    converted.__module__ = fn.__module__
    converted.__doc__ = fn.__doc__
    _functions[fn] = converted
    return converted


def _runtime() -> types.CellType:
    if not _runtime_cell:
        from . import runtime

        _runtime_cell.append(types.CellType(runtime))
    return _runtime_cell[0]


def _converted_code(fn: types.FunctionType) -> types.CodeType:
    """The code object of the converted function (cached; errors are cached too)."""
    code = fn.__code__
    cached = _codes.get(code)
    if cached is None:
        try:
            cached = _compile(fn)
        except (SourceUnavailable, ConversionError) as exc:
            cached = exc
        _codes[code] = cached
    if isinstance(cached, Exception):
        raise cached.with_traceback(None)
    return cached


def _compile(fn: types.FunctionType) -> types.CodeType:
    code = fn.__code__
    if code.co_flags & _CODE_FLAGS_NOT_CONVERTED:
        generator = code.co_flags & (inspect.CO_GENERATOR | inspect.CO_ASYNC_GENERATOR)
        raise unsupported((code.co_filename, code.co_firstlineno),
                          "a generator function" if generator else "an async function",
                          "a graph computes its results at once; return them instead")
    fndef = _converted_tree(fn)
    # The function is defined inside a factory whose parameters are its free variables (and
    # the runtime), so the compiler makes them closure variables; the factory's result gets
    # the original cells.
    factory = function("ag__factory", [RUNTIME, *code.co_freevars],
                       [fndef, ast.Return(value=load(fndef.name))])
    module = ast.Module(body=[factory], type_ignores=[])
    ast.fix_missing_locations(module)
    compiled = compile(module, code.co_filename, "exec", dont_inherit=True)
    namespace: dict[str, Any] = {}
    exec(compiled, {}, namespace)
    inner = namespace["ag__factory"](*([None] * (1 + len(code.co_freevars)))).__code__
    _register(inner)
    return inner


def _register(code: types.CodeType) -> None:
    _converted_codes.add(code)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            _register(const)


def _converted_tree(fn: types.FunctionType) -> ast.FunctionDef:
    fndef = _parse(fn)
    cls = _class_name(fn.__qualname__)
    if cls:
        _Mangler(cls).visit(fndef)
    fndef.decorator_list = []
    _strip_signature_expressions(fndef.args)
    fndef.returns = None
    FunctionConverter(fn.__code__.co_filename).function(fndef)
    return fndef


def _parse(fn: types.FunctionType) -> ast.FunctionDef:
    """The function's definition, with the line and column numbers of its file."""
    code = fn.__code__
    try:
        lines, first = inspect.getsourcelines(code)
    except (OSError, TypeError) as exc:
        raise SourceUnavailable(f"its source is not available ({exc})") from None
    source = "".join(lines)
    indented = lines[0][:1].isspace()
    try:  # an indented definition parses inside `if 1:`, keeping its columns
        tree = ast.parse("if 1:\n" + source if indented else source)
    except SyntaxError as exc:
        raise SourceUnavailable(f"its source does not parse ({exc})") from None
    body = tree.body[0].body if indented else tree.body  # type: ignore[attr-defined]
    fndef = body[0] if body else None
    if not isinstance(fndef, ast.FunctionDef) or fndef.name != code.co_name:
        raise SourceUnavailable("its source could not be told apart from the code around it")
    ast.increment_lineno(fndef, first - (2 if indented else 1))
    return fndef


def _strip_signature_expressions(args: ast.arguments) -> None:
    """Defaults and annotations are taken from the original function, not re-evaluated."""
    for arg in (*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg):
        if arg is not None:
            arg.annotation = None
    args.defaults = []
    args.kw_defaults = [None] * len(args.kwonlyargs)


def _class_name(qualname: str) -> str:
    """The class a method was defined in, from its qualified name (``""`` for a function)."""
    parts = qualname.split(".")
    if len(parts) < 2 or parts[-2] == "<locals>":
        return ""
    return parts[-2].lstrip("_")


class _Mangler(ast.NodeTransformer):
    """Private-name mangling (``__x`` → ``_Cls__x``), which the compiler applies only to code
    written in a class body — the converted method is compiled outside it."""

    def __init__(self, cls: str) -> None:
        self.cls = cls

    def _mangle(self, name: str) -> str:
        if name.startswith("__") and not name.endswith("__") and "." not in name:
            return f"_{self.cls}{name}"
        return name

    def visit_Name(self, node: ast.Name) -> ast.AST:
        node.id = self._mangle(node.id)
        return node

    def visit_Attribute(self, node: ast.Attribute) -> ast.AST:
        self.generic_visit(node)
        node.attr = self._mangle(node.attr)
        return node

    def visit_arg(self, node: ast.arg) -> ast.AST:
        node.arg = self._mangle(node.arg)
        return node

    def visit_keyword(self, node: ast.keyword) -> ast.AST:
        self.generic_visit(node)
        if node.arg is not None:
            node.arg = self._mangle(node.arg)
        return node
