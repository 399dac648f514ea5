"""The ``mskernel`` command.

``mskernel plugins list [--json]``, ``mskernel plugins info NAME [--json]`` and
``mskernel plugins check`` show what is installed and whether it is healthy (``list`` fits the
terminal: it summarises what each plugin provides, ``info`` and ``--json`` give it in full);
``mskernel explain MODEL`` shows where each node of a saved model (of any format a plugin
reads) would run; plugins add
their own sub-commands through the ``mskernel_add_cli`` hook.  Nothing here crashes on a
broken plugin: a plugin's failure is reported with its name.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import textwrap
import traceback
from collections import Counter
from typing import Optional, Sequence

from ._version import PLUGIN_API_VERSION, __version__
from .hooks.host import CORE, PluginHost, host
from .hooks.info import PluginRecord
from .hooks.registries import Command
from .hooks.report import BackendReport, PluginReport, plugin_report

#: The keys of each object in ``mskernel plugins list --json``, in order.
LIST_KEYS = ("name", "distribution", "version", "kind", "provides", "status", "reason")
#: Statuses ``mskernel plugins check`` reports as problems.
PROBLEMS = ("broken", "incompatible")
#: The width ``plugins info`` wraps its fields to.
WIDTH = 100
#: Columns of the ``plugins list`` table cut short (with an ellipsis) when it is too wide.
ELASTIC = ("provides", "reason")
#: The fewest characters an elastic column is cut to.
MIN_ELASTIC = 12


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Run the command line; return the process exit code."""
    plugin_host = host()
    parser = build_parser(plugin_host)
    args = parser.parse_args(argv)
    if not hasattr(args, "handler"):
        parser.print_help()
        return 2
    return args.handler(plugin_host, args)


def build_parser(plugin_host: PluginHost) -> argparse.ArgumentParser:
    """The parser with the core's sub-commands and those of the loaded plugins."""
    parser = argparse.ArgumentParser(
        prog="mskernel", description="mskernel: a plugin-based AI computing framework.")
    parser.add_argument("--version", action="version",
                        version=f"mskernel {__version__} (plugin API {PLUGIN_API_VERSION})")
    commands = parser.add_subparsers(title="commands", metavar="COMMAND")
    _add_plugins_command(commands)
    _add_explain_command(commands)
    for command in plugin_host.commands().commands.values():
        _add_plugin_command(commands, command, plugin_host)
    return parser


# -- mskernel plugins ... --------------------------------------------------------------------


def _add_plugins_command(commands: argparse._SubParsersAction) -> None:
    plugins = commands.add_parser("plugins", help="list, inspect and check installed plugins")
    actions = plugins.add_subparsers(title="actions", metavar="ACTION", required=True)
    listing = actions.add_parser("list", help="every discovered plugin and its status")
    listing.add_argument("--json", action="store_true", help="print a JSON array")
    listing.set_defaults(handler=_list)
    info = actions.add_parser("info", help="everything known about one plugin")
    info.add_argument("name", help="the plugin's name (its entry-point name)")
    info.add_argument("--json", action="store_true", help="print a JSON object")
    info.set_defaults(handler=_info)
    check = actions.add_parser(
        "check", help="exit 1 if any installed plugin is broken or incompatible")
    check.set_defaults(handler=_check)


def _list(plugin_host: PluginHost, args: argparse.Namespace) -> int:
    records = plugin_host.plugin_records()
    if args.json:
        print(json.dumps([_row(r) for r in records], indent=2))
        return 0
    if records:
        headers = [k for k in LIST_KEYS if k != "reason" or any(r.status != "ok" for r in records)]
        rows = [[provides_summary(r.provides) if k == "provides" else _cell(_row(r)[k])
                 for k in headers] for r in records]
        print(table(headers, rows, terminal_width()))
    else:
        print("no plugins installed (none in the entry-point group 'mskernel.plugins')")
    for name, entry in sorted(plugin_host.backends.entries.items()):
        availability = entry.availability()
        if not availability.available:
            print(f"backend '{name}' ({entry.owner}) unavailable: {availability.reason}")
    core_ops = sum(op.owner == CORE for op in plugin_host.ops)
    print(f"\ncore: mskernel {__version__}, plugin API {PLUGIN_API_VERSION} "
          f"(reference backend, {core_ops} ops)")
    return 0


def _info(plugin_host: PluginHost, args: argparse.Namespace) -> int:
    report = plugin_report(plugin_host, args.name)
    if report is None:
        known = sorted(plugin_host.records)
        print(f"mskernel: no plugin named '{args.name}'; "
              + (f"installed plugins: {', '.join(known)}" if known else "no plugins are installed"),
              file=sys.stderr)
        return 1
    if args.json:
        print(report.model_dump_json(indent=2))
    else:
        print(render_report(report))
    return 0


def _check(plugin_host: PluginHost, args: argparse.Namespace) -> int:
    records = plugin_host.plugin_records()
    problems = [r for r in records if r.status in PROBLEMS]
    for rec in problems:
        print(f"{rec.name} ({rec.distribution} {rec.version}): {rec.status}: {rec.reason}")
    if records:
        counts = Counter(r.status for r in records)
        print(f"{len(records)} plugin(s) checked: "
              + ", ".join(f"{n} {status}" for status, n in sorted(counts.items())))
    else:
        print("no plugins installed")
    return 1 if problems else 0


# -- mskernel explain ------------------------------------------------------------------------


def _add_explain_command(commands: argparse._SubParsersAction) -> None:
    explain = commands.add_parser(
        "explain", help="show which backend runs each node of a saved model, and the transfers")
    explain.add_argument("model", help="a model file: mskernel's (mskernel.export, "
                         "mskernel.ir.save_model) or any format an installed plugin reads")
    explain.add_argument("--backends", default="",
                         help="comma-separated preferred backends, e.g. cpu,reference")
    explain.add_argument("--opt-level", type=int, default=2, choices=range(4),
                         help="the generic pipeline to run first (default 2)")
    explain.set_defaults(handler=_explain)


def _explain(plugin_host: PluginHost, args: argparse.Namespace) -> int:
    from .errors import MskernelError
    from .runtime import CompileOptions, explain

    backends = [b.strip() for b in args.backends.split(",") if b.strip()]
    try:
        model = plugin_host.model_readers.read(args.model)
        print(explain(model.graph, backends=backends,
                      options=CompileOptions(opt_level=args.opt_level)), end="")
    except (MskernelError, OSError) as exc:
        print(f"mskernel explain: {exc}", file=sys.stderr)
        return 1
    return 0


def _row(record: PluginRecord) -> dict[str, object]:
    data = record.model_dump()
    return {key: data[key] for key in LIST_KEYS}


def _cell(value: object) -> str:
    text = ", ".join(value) if isinstance(value, list) else str(value)
    return " ".join(text.split()) or "-"


def terminal_width() -> int:
    """The terminal's width (``$COLUMNS`` first); 80 when the output is not a terminal."""
    return shutil.get_terminal_size().columns


def provides_summary(provides: list[str]) -> str:
    """A plugin's ``provides`` tags, one entry per kind: the value when the kind has one tag,
    else how many (``namespaces: 12, backend: cpu``).  Tags without a kind stay as they are."""
    by_kind: dict[str, list[str]] = {}
    for tag in provides:
        kind, colon, value = tag.partition(":")
        by_kind.setdefault(kind if colon else "", []).append(value if colon else tag)
    parts = []
    for kind, values in by_kind.items():
        if not kind:
            parts += values
        elif len(values) == 1:
            parts.append(f"{kind}: {values[0]}")
        else:
            parts.append(f"{kind if kind.endswith('s') else kind + 's'}: {len(values)}")
    return _cell(parts)


def table(headers: list[str], rows: list[list[str]], width: int) -> str:
    """An aligned table at most ``width`` characters wide where it can be: the widest
    :data:`ELASTIC` column is narrowed first (to no less than :data:`MIN_ELASTIC`), and a cell
    longer than its column ends with an ellipsis."""
    widths = [max(len(h), *(len(row[i]) for row in rows)) for i, h in enumerate(headers)]
    elastic = [i for i, h in enumerate(headers) if h in ELASTIC]
    excess = sum(widths) + 2 * (len(widths) - 1) - width
    while excess > 0:
        widest = max(elastic, key=lambda i: widths[i], default=None)
        if widest is None or widths[widest] <= max(MIN_ELASTIC, len(headers[widest])):
            break
        widths[widest] -= 1
        excess -= 1
    lines = [headers, ["-" * w for w in widths], *rows]
    return "\n".join("  ".join(_fitted(c, w).ljust(w) for c, w in zip(line, widths)).rstrip()
                     for line in lines)


def _fitted(text: str, width: int) -> str:
    return text if len(text) <= width else text[:width - 1] + "…"


def render_report(report: PluginReport) -> str:
    """The text of ``mskernel plugins info``: the record, then each non-empty section."""
    rec = report.record
    fields = [("name", rec.name), ("distribution", rec.distribution), ("version", rec.version),
              ("entry point", rec.entry_point), ("kind", rec.kind),
              ("provides", ", ".join(rec.provides)), ("description", rec.description),
              ("status", rec.status), ("reason", rec.reason)]
    lines = [_field(label, value) for label, value in fields if value]
    if report.ops:
        lines.append(_field(f"ops ({len(report.ops)})", ", ".join(report.ops)))
    if report.overrides:
        lines.append(_field("overrides", ", ".join(
            f"{op} (replaces {old})" for op, old in report.overrides.items())))
    for kind, ops in report.rules.items():
        lines.append(_field(f"rules '{kind}' ({len(ops)})", ", ".join(ops)))
    for backend in report.backends:
        lines.extend(_backend_lines(backend))
    if report.passes:
        lines.append(_field("passes", ", ".join(report.passes)))
    for name, passes in report.pipelines.items():
        lines.append(_field(f"pipeline {name}", ", ".join(passes) or "(no passes)"))
    for name, module in report.namespaces.items():
        lines.append(_field("namespace", f"mskernel.{name} -> {module}"))
    for name, suffixes in report.model_formats.items():
        lines.append(_field("reads", f"{name} model files ({', '.join(suffixes) or 'by content'})"))
    if report.commands:
        lines.append(_field("commands", ", ".join(f"mskernel {c}" for c in report.commands)))
    if report.traceback:
        lines.append("traceback:")
        lines.append(textwrap.indent(report.traceback.rstrip(), "  "))
    return "\n".join(lines)


def _backend_lines(backend: BackendReport) -> list[str]:
    state = "available" if backend.available else "NOT available"
    head = f"'{backend.name}', priority {backend.priority}, {state}"
    lines = [_field("backend", f"{head}: {backend.reason}" if backend.reason else head)]
    if backend.error:
        lines.append(_field("  capabilities", f"unknown: {backend.error}"))
        return lines
    lines.append(_field("  claims", f"{backend.ops_claimed} ops"))
    if backend.falls_back:
        lines.append(_field(f"  falls back ({len(backend.falls_back)} core ops)",
                            ", ".join(backend.falls_back)))
    else:
        lines.append(_field("  falls back", "none: every core op runs here"))
    lines.append(_field("  conformance", _conformance_line(backend)))
    return lines


def _conformance_line(backend: BackendReport) -> str:
    """The kit's verdict on a backend, from the report file it wrote."""
    found = backend.conformance
    if found is None:
        return (f"no report; certify it with `pytest --mskernel-backend {backend.name}` "
                f"(mskernel-sdk)")
    if found.report is None:
        return f"unreadable report {found.path}: {found.error}"
    report = found.report
    context = [" ".join(str(report[key]) for key in ("distribution", "version") if key in report),
               f"seed {report['seed']}" if "seed" in report else "", str(report.get("created", ""))]
    return (f"{report.get('status', '?')}: {report.get('summary', '')} "
            f"({', '.join(filter(None, context))}; {found.path})")


def _field(label: str, value: str) -> str:
    prefix = f"{label}: ".ljust(16)
    return textwrap.fill(" ".join(value.split()), WIDTH, initial_indent=prefix,
                         subsequent_indent=" " * 16, break_on_hyphens=False)


# -- plugin sub-commands ---------------------------------------------------------------------


def _add_plugin_command(commands: argparse._SubParsersAction, command: Command,
                        plugin_host: PluginHost) -> None:
    """Add a plugin's sub-command; if its ``configure`` raises, leave it out with a note."""
    origin = _origin(plugin_host, command)
    arguments = argparse.ArgumentParser(add_help=False)
    try:
        command.configure(arguments)
    except Exception as exc:
        print(f"mskernel: command '{command.name}' of {origin} could not be set up: "
              f"{type(exc).__name__}: {exc}", file=sys.stderr)
        return
    sub = commands.add_parser(command.name, help=f"{command.help} [{origin}]",
                              parents=[arguments])
    sub.set_defaults(handler=lambda _host, args: _run_plugin_command(command, origin, args))


def _run_plugin_command(command: Command, origin: str, args: argparse.Namespace) -> int:
    try:
        code = command.run(args)
    except Exception as exc:
        traceback.print_exc()
        print(f"mskernel: command '{command.name}' of {origin} failed: "
              f"{type(exc).__name__}: {exc}", file=sys.stderr)
        return 1
    return int(code or 0)


def _origin(plugin_host: PluginHost, command: Command) -> str:
    """``plugin 'demo' (mskernel-demo 0.1.0)`` for the plugin that added ``command``."""
    records = [r for r in plugin_host.records.values() if r.distribution == command.owner]
    if not records:
        return command.owner
    rec = records[0]
    return f"plugin '{rec.name}' ({rec.distribution} {rec.version})"


if __name__ == "__main__":
    sys.exit(main())
