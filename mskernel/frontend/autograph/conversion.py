"""Converting a Python function: its source is parsed, lowered and transformed
(:mod:`.transformer`), compiled with the user's file name and line numbers, and bound to the
function's own globals and closure cells — so globals, closures over Python constants and
``nonlocal`` writes behave as in the original, and tracebacks and op locations point at the
user's lines.

The converted code object is cached per original code object; the function object per
original function.  Functions called from converted code are converted in turn when they are
user code (:func:`converted_callee`): not mskernel or a plugin, not the standard library or an
installed package, not a generator, and not marked with :func:`do_not_convert`.  A lambda is
converted as the function ``def <lambda>(args): return body``; its definition is found in its
file by the source positions of its code, which tell apart several lambdas on one line.

The one import cycle of the autograph package is inherent and lives here: converted code
calls the helpers of :mod:`.runtime`, whose ``call`` converts the functions that code calls
(:func:`converted_callee`, this module).  :mod:`.runtime` imports this module; this module
reaches :mod:`.runtime` only when it binds the first converted function to it
(:func:`_runtime`).
"""

from __future__ import annotations

import ast
import copy
import functools
import inspect
import linecache
import sysconfig
import types
import warnings
import weakref
from typing import Any, Callable, TypeVar

from ...ir.source import is_framework
from .converted import is_converted, register
from .errors import ConversionError, unsupported
from .syntax import RUNTIME, function, load
from .transformer import FunctionConverter

Fn = TypeVar("Fn", bound=Callable[..., Any])

_NOT_CONVERTED = "__mskernel_do_not_convert__"
_LAMBDA = "<lambda>"
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
    when the source cannot be read, warns and returns ``fn`` unconverted (a lambda, which
    has no statements to convert, without a warning)."""
    if isinstance(fn, types.MethodType):
        inner = convert(fn.__func__)
        return fn if inner is fn.__func__ else types.MethodType(inner, fn.__self__)
    if (not isinstance(fn, types.FunctionType) or is_converted(fn)
            or getattr(fn, _NOT_CONVERTED, False)):
        return fn
    try:
        return _converted_function(fn)
    except SourceUnavailable as exc:
        if fn.__code__.co_name != _LAMBDA:
            warnings.warn(f"{fn.__qualname__} is traced without converting its Python "
                          f"control flow: {exc}", ConversionWarning, stacklevel=3)
        return fn


def converted_callee(fn: Any) -> Any:
    """What converted code calls for ``fn``: the converted version of user code, else ``fn``.
    A user function that cannot be converted is called as it is (with a warning when it uses
    an unsupported construct); ``functools.partial`` of user code is converted inside."""
    if isinstance(fn, types.FunctionType):
        return _callee_function(fn)
    if isinstance(fn, functools.partial):
        inner = converted_callee(fn.func)
        return fn if inner is fn.func else functools.partial(inner, *fn.args, **fn.keywords)
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


def to_source(fn: Callable[..., Any]) -> str:
    """The Python source of the converted ``fn`` (for debugging conversions)."""
    function = fn.__func__ if isinstance(fn, types.MethodType) else fn
    if not isinstance(function, types.FunctionType):
        raise TypeError(f"to_source needs a Python function or method, got {fn!r}")
    return ast.unparse(_converted_tree(function))


# -- caches -----------------------------------------------------------------------------------

_codes: dict[types.CodeType, types.CodeType | Exception] = {}
_functions: "weakref.WeakKeyDictionary[types.FunctionType, types.FunctionType]" = (
    weakref.WeakKeyDictionary())
_user_code: dict[types.CodeType, bool] = {}
_unconvertible: set[types.CodeType] = set()
_runtime_cell: list[types.CellType] = []


def _is_user_code(fn: types.FunctionType) -> bool:
    code = fn.__code__
    if is_converted(fn) or getattr(fn, _NOT_CONVERTED, False):
        return False
    decision = _user_code.get(code)
    if decision is None:
        filename = code.co_filename
        decision = not (
            code.co_flags & _CODE_FLAGS_NOT_CONVERTED
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
    """The cell through which converted code sees :mod:`.runtime` (as ``ag__``); the runtime
    converts callees with this module, hence the import on first use."""
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
    if code.co_name == _LAMBDA:
        inner = inner.replace(co_name=_LAMBDA, co_qualname=code.co_qualname)
    register(inner)
    return inner


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
    if code.co_name == _LAMBDA:
        return _lambda_definition(code)
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


def _lambda_definition(code: types.CodeType) -> ast.FunctionDef:
    """A lambda as ``def ag__lambda(args): return body``: the innermost lambda of its file
    that starts on its first line, takes its parameters and spans every source position of
    its code."""
    lines = linecache.getlines(code.co_filename)
    if not lines:
        raise SourceUnavailable("its source is not available")
    try:
        tree = _file_tree(code.co_filename, "".join(lines))
    except SyntaxError as exc:
        raise SourceUnavailable(f"its source does not parse ({exc})") from None
    params = code.co_varnames[:code.co_argcount + code.co_kwonlyargcount
                              + bool(code.co_flags & inspect.CO_VARARGS)
                              + bool(code.co_flags & inspect.CO_VARKEYWORDS)]
    positions = [(line, col, end_line, end_col) for line, end_line, col, end_col
                 in code.co_positions()
                 if line is not None and end_line is not None and col is not None
                 and end_col is not None and (col, end_col) != (0, 0)]
    found = [node for node in ast.walk(tree)
             if isinstance(node, ast.Lambda) and node.lineno == code.co_firstlineno
             and _parameters(node.args) == params
             and all(_spans(node, position) for position in positions)]
    if not found:
        raise SourceUnavailable("its definition could not be found in its file")
    node = copy.deepcopy(min(found, key=lambda n: (n.end_lineno - n.lineno,  # type: ignore[operator]
                                                   n.end_col_offset - n.col_offset)))  # type: ignore[operator]
    fndef = ast.FunctionDef(name="ag__lambda", args=node.args, body=[ast.Return(value=node.body)],
                            decorator_list=[], returns=None, type_comment=None)
    return ast.fix_missing_locations(ast.copy_location(fndef, node))


_trees: dict[str, tuple[str, ast.Module]] = {}


def _file_tree(filename: str, source: str) -> ast.Module:
    """The parsed file (cached while its text is unchanged)."""
    cached = _trees.get(filename)
    if cached is None or cached[0] != source:
        cached = (source, ast.parse(source, filename))
        _trees[filename] = cached
    return cached[1]


def _parameters(args: ast.arguments) -> tuple[str, ...]:
    """Parameter names in the order of a code object's ``co_varnames``."""
    names = [a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs)]
    names += [a.arg for a in (args.vararg, args.kwarg) if a is not None]
    return tuple(names)


def _spans(node: ast.AST, position: tuple[int, int, int, int]) -> bool:
    line, col, end_line, end_col = position
    start = (node.lineno, node.col_offset)  # type: ignore[attr-defined]
    end = (node.end_lineno, node.end_col_offset)  # type: ignore[attr-defined]
    return start <= (line, col) and (end_line, end_col) <= end


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
