"""``mskernel sdk ...``: the plugin author's commands."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .template import KINDS, TemplateError, new_plugin


def configure(parser: argparse.ArgumentParser) -> None:
    actions = parser.add_subparsers(title="actions", metavar="ACTION", dest="sdk_action",
                                    required=True)
    new = actions.add_parser(
        "new-plugin", prog="mskernel sdk new-plugin",
        help="generate a plugin distribution that installs and runs as it is",
        description="Write mskernel-NAME/: pyproject.toml with the entry point, the package, "
                    "tests and a README.  `pip install ./mskernel-NAME` makes it a plugin.")
    new.add_argument("name", help="the plugin's name: backend or namespace name, entry point "
                                  "(lower case, words joined by '_')")
    new.add_argument("--kind", choices=KINDS, default="backend",
                     help="backend: a backend claiming a few ops, the rest falling back; "
                          "library: an op with its samples and a namespace (default: backend)")
    new.add_argument("--directory", type=Path, default=Path("."),
                     help="where to create mskernel-NAME/ (default: the current directory)")


def run(args: argparse.Namespace) -> int:
    try:
        root, written = new_plugin(args.name, args.kind, args.directory)
    except TemplateError as exc:
        print(f"mskernel sdk new-plugin: {exc}", file=sys.stderr)
        return 1
    shown = root if root.is_absolute() else f"./{root}"  # `pip install NAME` would ask PyPI
    print(f"created {shown}/ ({args.kind} plugin '{args.name}'):")
    for path in written:
        print(f"  {path}")
    check = f"pytest --mskernel-backend {args.name}" if args.kind == "backend" else "pytest"
    print(f"next:\n  pip install {shown}\n  mskernel plugins list\n  cd {shown} && {check}")
    return 0
