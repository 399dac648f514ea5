"""The hook reference of ``docs/plugins.md``, rendered from the hookspec docstrings (the
plugin author's contract, :mod:`mskernel.hooks.hookspecs`) so the two cannot drift apart.

``python -m mskernel_sdk.docs docs/plugins.md`` rewrites the part of the page between
:data:`BEGIN` and :data:`END`; the SDK's tests fail while the page and the hookspecs differ.
"""

from __future__ import annotations

import inspect
import re
import sys
from pathlib import Path
from typing import Any, Callable

from mskernel.hooks import hookspecs

BEGIN = "<!-- hooks: rendered from mskernel/hooks/hookspecs.py by `python -m mskernel_sdk.docs` -->"
END = "<!-- /hooks -->"

_ROLE = re.compile(r":(?:class|func|meth|mod|data|attr|exc):`~?([^`]+)`")
_LITERAL = re.compile(r"``([^`]+)``")


def markdown(text: str) -> str:
    """reStructuredText inline markup of the docstrings as Markdown."""
    return _LITERAL.sub(r"`\1`", _ROLE.sub(r"`\1`", text)).replace("::\n", ":\n")


def _signature(hook: Callable[..., Any]) -> str:
    sig = inspect.signature(hook)
    params = ", ".join(f"{p.name}: {p.annotation}" for p in sig.parameters.values())
    return f"{hook.__name__}({params}) -> {sig.return_annotation}".replace("'", "").replace('"', "")


def render_hooks() -> str:
    """The hook reference: every hookspec in lifecycle order, with its docstring."""
    hooks = sorted((f for name, f in vars(hookspecs).items() if name.startswith("mskernel_")),
                   key=lambda f: f.__code__.co_firstlineno)
    sections = [f"### `{_signature(h)}`\n\n{markdown(inspect.getdoc(h) or '')}" for h in hooks]
    return "\n\n".join([BEGIN, *sections, END])


def with_hooks(page: str) -> str:
    """``page`` with its hook reference replaced by the current rendering."""
    start, end = page.index(BEGIN), page.index(END) + len(END)
    return page[:start] + render_hooks() + page[end:]


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: python -m mskernel_sdk.docs PAGE.md", file=sys.stderr)
        return 2
    path = Path(argv[0])
    page = path.read_text(encoding="utf-8")
    updated = with_hooks(page)
    if updated != page:
        path.write_text(updated, encoding="utf-8")
        print(f"updated the hook reference in {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
