"""What the converter needs to know about a function body, read from its AST: the names a
statement assigns, the names it reads, whether a block always leaves (``return``/``raise``),
and which names are *live* (may still be read) after each ``if``/``while``/``for``.

Liveness is computed on the structured, lowered body (no ``break``/``continue``/early
``return`` left), so one backward walk with a fixpoint per loop is exact up to Python's dynamic
features.  Names read by nested functions and lambdas may be read whenever those are called,
so they count as live everywhere in the enclosing function (a safe over-approximation).
"""

from __future__ import annotations

import ast
from typing import Iterable, Optional, Sequence

#: Nodes opening a new scope: their bodies' bindings are not the enclosing function's.
SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)
COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)
LOOPS = (ast.While, ast.For)


def assigned(nodes: Iterable[ast.AST]) -> set[str]:
    """Names the nodes bind in the enclosing scope (``except ... as e`` names excluded: Python
    deletes them when the handler ends)."""
    names: set[str] = set()
    for node in nodes:
        _assigned(node, names)
    return names


def _assigned(node: ast.AST, names: set[str]) -> None:
    if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
        names.add(node.id)
    elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        names.add(node.name)
        for child in (*node.decorator_list, *_defaults(node)):
            _assigned(child, names)
        return
    elif isinstance(node, ast.Lambda):
        for child in _defaults(node):
            _assigned(child, names)
        return
    elif isinstance(node, COMPREHENSIONS):  # only walrus targets escape a comprehension
        names.update(n.target.id for n in ast.walk(node)
                     if isinstance(n, ast.NamedExpr) and isinstance(n.target, ast.Name))
        return
    elif isinstance(node, (ast.Import, ast.ImportFrom)):
        names.update((a.asname or a.name).split(".")[0] for a in node.names)
    elif isinstance(node, ast.ExceptHandler):
        for child in node.body:
            _assigned(child, names)
        return
    for child in ast.iter_child_nodes(node):
        _assigned(child, names)


def _defaults(node: ast.AST) -> list[ast.AST]:
    args = node.args  # type: ignore[attr-defined]
    return [*args.defaults, *(d for d in args.kw_defaults if d is not None)]


def reads(nodes: Iterable[Optional[ast.AST]]) -> set[str]:
    """Names the nodes may read, including inside nested functions, lambdas and
    comprehensions (a superset is safe: it only makes more names live)."""
    names: set[str] = set()
    for node in nodes:
        if node is None:
            continue
        for n in ast.walk(node):
            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load):
                names.add(n.id)
            elif isinstance(n, ast.AugAssign) and isinstance(n.target, ast.Name):
                names.add(n.target.id)
    return names


def closure_reads(body: Sequence[ast.stmt]) -> set[str]:
    """Names read inside the functions and lambdas nested in ``body`` (they may be called, and
    read them, at any later point)."""
    names: set[str] = set()
    for stmt in body:
        for n in ast.walk(stmt):
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                names |= reads([n])
    return names


def local_nodes(stmts: Sequence[ast.stmt]) -> Iterable[ast.AST]:
    """Every node of ``stmts`` in the current scope (the bodies of nested functions, lambdas
    and classes skipped)."""
    stack: list[ast.AST] = list(stmts)
    while stack:
        node = stack.pop()
        yield node
        if isinstance(node, SCOPES):
            continue
        stack.extend(ast.iter_child_nodes(node))


def contains(stmts: Sequence[ast.stmt], kinds: tuple[type, ...], *,
             through_loops: bool = True) -> bool:
    """Whether a node of one of ``kinds`` occurs in ``stmts`` in the current scope (and, when
    ``through_loops`` is false, not inside a nested loop)."""
    stack: list[ast.AST] = list(stmts)
    while stack:
        node = stack.pop()
        if isinstance(node, kinds):
            return True
        if isinstance(node, SCOPES) or (not through_loops and isinstance(node, LOOPS)):
            continue
        stack.extend(ast.iter_child_nodes(node))
    return False


def always_exits(stmts: Sequence[ast.stmt]) -> bool:
    """Whether every path through ``stmts`` ends in ``return`` or ``raise``."""
    for stmt in stmts:
        if isinstance(stmt, (ast.Return, ast.Raise)):
            return True
        if isinstance(stmt, ast.If) and always_exits(stmt.body) and always_exits(stmt.orelse):
            return True
        if isinstance(stmt, ast.With) and always_exits(stmt.body):
            return True
    return False


def always_jumps(stmts: Sequence[ast.stmt]) -> bool:
    """Whether every path through ``stmts`` ends in ``break``, ``continue`` or ``raise``."""
    for stmt in stmts:
        if isinstance(stmt, (ast.Break, ast.Continue, ast.Raise)):
            return True
        if isinstance(stmt, ast.If) and always_jumps(stmt.body) and always_jumps(stmt.orelse):
            return True
    return False


class Liveness:
    """Live names after each ``if``/``while``/``for`` of one function body, and at each
    loop's head (what an iteration may read before writing it, or the loop's successor
    reads)."""

    def __init__(self, body: Sequence[ast.stmt], extra_tests: dict[ast.For, ast.expr]) -> None:
        self._extra_tests = extra_tests
        self._always = closure_reads(body)
        self.after: dict[ast.stmt, frozenset[str]] = {}
        self.head: dict[ast.stmt, frozenset[str]] = {}
        self._block(body, set())

    def live_after(self, stmt: ast.stmt) -> frozenset[str]:
        return self.after[stmt] | self._always

    def live_at_head(self, loop: ast.stmt) -> frozenset[str]:
        return self.head[loop] | self._always

    def _block(self, stmts: Sequence[ast.stmt], live: set[str]) -> set[str]:
        for stmt in reversed(stmts):
            live = self._stmt(stmt, live)
        return live

    def _stmt(self, s: ast.stmt, out: set[str]) -> set[str]:
        if isinstance(s, ast.If):
            self.after[s] = frozenset(out)
            return reads([s.test]) | self._block(s.body, set(out)) | self._block(s.orelse, set(out))
        if isinstance(s, ast.While):
            self.after[s] = frozenset(out)
            return self._loop(s, out, reads([s.test]), set())
        if isinstance(s, ast.For):
            self.after[s] = frozenset(out)
            head = self._loop(s, out, reads([self._extra_tests.get(s)]), assigned([s.target]))
            return head | reads([s.iter])
        if isinstance(s, (ast.Assign, ast.AnnAssign)):
            targets = s.targets if isinstance(s, ast.Assign) else [s.target]
            if s.value is None:
                return out
            killed = {t.id for t in _plain_targets(targets)}
            return (out - killed) | reads([s.value]) | _target_reads(targets)
        if isinstance(s, (ast.With, ast.AsyncWith)):
            killed = assigned([i.optional_vars for i in s.items if i.optional_vars is not None])
            body = self._block(s.body, set(out)) - killed
            return body | reads([i.context_expr for i in s.items])
        if isinstance(s, ast.Try):
            final = self._block(s.finalbody, set(out))
            orelse = self._block(s.orelse, set(final))
            handlers: set[str] = set()
            for h in s.handlers:
                handlers |= self._block(h.body, set(final)) | reads([h.type])
            return self._block(s.body, set(orelse)) | handlers | orelse | final
        if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            return (out - {s.name}) | reads([*s.decorator_list, *_class_or_fn_header(s)])
        if isinstance(s, (ast.Import, ast.ImportFrom)):
            return out - assigned([s])
        if isinstance(s, ast.Return):
            return reads([s.value])
        if isinstance(s, (ast.Global, ast.Nonlocal, ast.Pass)):
            return out
        return out | reads([s])

    def _loop(self, s: ast.stmt, out: set[str], test_reads: set[str], killed: set[str]) -> set[str]:
        head = out | test_reads
        while True:
            body_in = self._block(s.body, set(head)) - killed  # type: ignore[attr-defined]
            new = out | test_reads | body_in
            if new == head:
                break
            head = new
        self.head[s] = frozenset(head)
        return head


def _plain_targets(targets: Sequence[ast.expr]) -> Iterable[ast.Name]:
    for t in targets:
        if isinstance(t, ast.Name):
            yield t
        elif isinstance(t, (ast.Tuple, ast.List)):
            yield from _plain_targets(t.elts)
        elif isinstance(t, ast.Starred):
            yield from _plain_targets([t.value])


def _target_reads(targets: Sequence[ast.expr]) -> set[str]:
    """Names read by assigning to ``targets`` (``a[i] = …`` reads ``a`` and ``i``)."""
    names: set[str] = set()
    for t in targets:
        if isinstance(t, (ast.Tuple, ast.List)):
            names |= _target_reads(t.elts)
        elif isinstance(t, ast.Starred):
            names |= _target_reads([t.value])
        elif not isinstance(t, ast.Name):
            names |= reads([t])
    return names


def _class_or_fn_header(s: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) -> list[ast.AST]:
    """The parts of a ``def``/``class`` statement evaluated where it stands, plus (for a
    function) its body, whose reads happen whenever it is called."""
    if isinstance(s, ast.ClassDef):
        return [*s.bases, *(k.value for k in s.keywords), *s.body]
    return [*_defaults(s), *s.body]
