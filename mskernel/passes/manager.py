"""The pass manager: runs a list of passes, or a named pipeline, over a graph.

    pm = PassManager.from_pipeline("O2", debug=True)
    result = pm.run(graph, PassContext(registry=ops, opt_level=2))
    print(result.report)          # per-pass wall time, node counts and changes

A backend's ``compile`` runs its pipeline in one call, :func:`run_pipeline`::

    result = run_pipeline(f"cpu.O{options.opt_level}", graph, options, backend="cpu")

Sweeps.  The manager runs its passes in order (one *sweep*) and runs another sweep while
the last one changed the graph, up to ``max_iterations`` sweeps.  By default the cap follows
the context's opt level (:data:`SWEEPS_BY_OPT_LEVEL`): one sweep at O0 and O1, sweeps until a
fixpoint at O2 (at most 4) and O3 (at most 16).

Debug mode runs :func:`mskernel.ir.verify.verify` on the input and after every pass; a pass
that leaves an invalid graph raises :class:`~mskernel.errors.VerifyError` naming it and the
passes run before it.  An exception raised inside a pass gets the same information as a note.

IR dumps.  With ``MSKERNEL_DUMP_IR=<dir>`` set (or ``dump_dir=`` given), each run writes the
text form of the graph before the first pass and after every pass, numbered in order::

    <dir>/<graph name>/000_input.mlir
    <dir>/<graph name>/001_after_simplify.mlir
    <dir>/<graph name>/002_after_fold.mlir ...

A later run on a graph of the same name writes to ``<graph name>.1``, ``.2``, … so no dump is
overwritten.  A directory that cannot be written gives a warning, never a failed compile.
"""

from __future__ import annotations

import os
import re
import time
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Optional, Sequence

from ..defaults import op_registry, pass_registry
from ..errors import PluginError, VerifyError
from ..ir.graph import Graph
from ..ir.verify import verify
from .base import OpDefinitions, Pass, PassContext, PassResult
from .registry import PassRegistry
from .rewrite import count_nodes

if TYPE_CHECKING:
    from ..runtime.backend import CompileOptions

#: The most sweeps a pipeline runs at each opt level when ``max_iterations`` is not given.
SWEEPS_BY_OPT_LEVEL = {0: 1, 1: 1, 2: 4, 3: 16}

DUMP_ENV = "MSKERNEL_DUMP_IR"


@dataclass(frozen=True)
class PassRecord:
    """One run of one pass."""

    name: str
    sweep: int
    seconds: float
    nodes_before: int
    nodes_after: int
    changed: bool


@dataclass
class PassReport:
    """What a :class:`PassManager` run did; ``str(report)`` is a table."""

    graph_name: str
    records: list[PassRecord] = field(default_factory=list)
    sweeps: int = 0
    converged: bool = False  # the last sweep changed nothing
    dump_dir: Optional[Path] = None

    @property
    def seconds(self) -> float:
        return sum(r.seconds for r in self.records)

    @property
    def changed(self) -> bool:
        return any(r.changed for r in self.records)

    def __str__(self) -> str:
        state = "fixpoint reached" if self.converged else "stopped at the sweep cap"
        lines = [f"passes on @{self.graph_name}: {self.sweeps} sweep(s), {state}, "
                 f"{self.seconds * 1e3:.3f} ms"]
        width = max([len("pass")] + [len(r.name) for r in self.records])
        lines.append(f"{'sweep':>5}  {'pass':<{width}}  {'time (ms)':>9}  "
                     f"{'nodes before':>12}  {'nodes after':>11}  changed")
        for r in self.records:
            lines.append(f"{r.sweep:>5}  {r.name:<{width}}  {r.seconds * 1e3:>9.3f}  "
                         f"{r.nodes_before:>12}  {r.nodes_after:>11}  "
                         f"{'yes' if r.changed else 'no'}")
        if self.dump_dir is not None:
            lines.append(f"IR dumps: {self.dump_dir}")
        return "\n".join(lines)


@dataclass(frozen=True)
class PipelineResult(PassResult):
    report: PassReport


class PassManager:
    """Runs ``passes`` over a graph; itself a pass (``name``, ``run``), so managers nest.

    ``max_iterations`` caps the sweeps (``None``: by the context's opt level); ``debug``
    verifies after every pass; ``dump_dir`` overrides ``MSKERNEL_DUMP_IR``.
    """

    def __init__(self, passes: Sequence[Pass], *, name: str = "passes",
                 max_iterations: Optional[int] = None, debug: bool = False,
                 dump_dir: Optional[str | os.PathLike[str]] = None) -> None:
        for p in passes:
            if not isinstance(p, Pass):
                raise PluginError(f"{p!r} does not implement the Pass contract (name, run)")
        if max_iterations is not None and max_iterations < 1:
            raise ValueError(f"max_iterations must be at least 1, got {max_iterations}")
        self.passes = tuple(passes)
        self.name = name
        self.max_iterations = max_iterations
        self.debug = debug
        self.dump_dir = dump_dir

    @classmethod
    def from_pipeline(cls, pipeline: str, *, registry: Optional[PassRegistry] = None,
                      **options: Any) -> "PassManager":
        """The manager of a named pipeline of a :class:`~mskernel.passes.PassRegistry`
        (default: the process's, with every installed plugin's pipelines)."""
        passes = pass_registry() if registry is None else registry
        return cls(passes.pipeline(pipeline), name=pipeline, **options)

    def run(self, graph: Graph, context: Optional[PassContext] = None) -> PipelineResult:
        """Run the passes over ``graph`` (``context`` default: the process's op registry,
        opt level 2)."""
        if context is None:
            context = PassContext(registry=op_registry())
        cap = self.max_iterations or SWEEPS_BY_OPT_LEVEL.get(context.opt_level, 1)
        report = PassReport(graph.name)
        dump = _Dump.start(self.dump_dir or os.environ.get(DUMP_ENV), graph)
        report.dump_dir = dump.directory if dump else None
        if self.debug:
            self._verify(graph, context, culprit=None, report=report)
        current = graph
        while report.sweeps < cap and not report.converged:
            report.sweeps += 1
            sweep_changed = False
            for p in self.passes:
                current, changed = self._run_pass(p, current, context, report)
                sweep_changed = sweep_changed or changed
                if dump:
                    dump.write(f"after_{p.name}", current)
                if self.debug:
                    self._verify(current, context, culprit=p.name, report=report)
            report.converged = not sweep_changed
        return PipelineResult(current, current is not graph, report)

    def _run_pass(self, p: Pass, graph: Graph, context: PassContext,
                  report: PassReport) -> tuple[Graph, bool]:
        before = count_nodes(graph)
        start = time.perf_counter()
        try:
            result = p.run(graph, context)
        except Exception as exc:
            exc.add_note(f"while running pass '{p.name}' on graph @{graph.name} "
                         f"({_history(report.sweeps, report.records)})")
            raise
        seconds = time.perf_counter() - start
        if not isinstance(result, PassResult):
            raise PluginError(
                f"pass '{p.name}' returned {type(result).__name__}, not a PassResult")
        report.records.append(PassRecord(p.name, report.sweeps, seconds, before,
                                         count_nodes(result.graph), result.changed))
        return result.graph, result.changed

    def _verify(self, graph: Graph, context: PassContext, *, culprit: Optional[str],
                report: PassReport) -> None:
        try:
            verify(graph, context.registry)
        except VerifyError as exc:
            if culprit is None:
                raise VerifyError(f"the input graph @{graph.name} is invalid before any "
                                  f"pass ran: {exc}") from exc
            history = _history(report.sweeps, report.records[:-1])
            raise VerifyError(f"pass '{culprit}' left graph @{graph.name} invalid: {exc} "
                              f"({history})") from exc

    def __repr__(self) -> str:
        names = ", ".join(p.name for p in self.passes) or "no passes"
        return f"<PassManager {self.name!r}: {names}>"


def run_pipeline(name: str, graph: Graph, options: "CompileOptions", *,
                 backend: Optional[str] = None,
                 registry: Optional[OpDefinitions] = None) -> PipelineResult:
    """Run the pipeline ``name`` on ``graph`` as ``options`` ask: at its opt level (which sets
    the sweeps), verifying after every pass when ``options.debug`` is set.  ``backend`` names
    the backend compiling (``None`` for the generic pipelines); ``registry`` gives the op
    definitions (default: the process's op registry)."""
    manager = PassManager.from_pipeline(name, debug=options.debug)
    context = PassContext(registry=op_registry() if registry is None else registry,
                          opt_level=options.opt_level, backend=backend)
    return manager.run(graph, context)


def _history(sweep: int, before: Sequence[PassRecord]) -> str:
    done = ", ".join(r.name for r in before) or "none"
    return f"sweep {sweep}; passes run before it: {done}"


class _Dump:
    """Numbered text dumps of one run, in a fresh directory per run."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.directory: Optional[Path] = None
        self.count = 0

    @classmethod
    def start(cls, root: Optional[str | os.PathLike[str]], graph: Graph) -> Optional["_Dump"]:
        if not root:
            return None
        dump = cls(Path(root))
        try:
            dump.directory = _fresh_directory(dump.root, _file_name(graph.name))
        except OSError as exc:
            dump.fail(exc)
            return None
        dump.write("input", graph)
        return dump if dump.directory is not None else None

    def write(self, label: str, graph: Graph) -> None:
        if self.directory is None:
            return
        path = self.directory / f"{self.count:03d}_{_file_name(label)}.mlir"
        self.count += 1
        try:
            path.write_text(f"{graph}\n", encoding="utf-8")
        except OSError as exc:
            self.fail(exc)

    def fail(self, exc: OSError) -> None:
        self.directory = None
        warnings.warn(f"{DUMP_ENV}: cannot write IR dumps under {self.root} ({exc}); "
                      f"compiling without them", RuntimeWarning, stacklevel=4)


def _fresh_directory(root: Path, name: str) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    for n in range(10_000):
        candidate = root / (name if n == 0 else f"{name}.{n}")
        try:
            candidate.mkdir()
            return candidate
        except FileExistsError:
            continue
    raise OSError(f"too many dump directories named {name!r} in {root}")


def _file_name(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", text) or "graph"
