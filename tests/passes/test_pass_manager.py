"""The pass manager: pipelines, sweeps, reports, debug verification and IR dumps."""

import re

import pytest

from mskernel.errors import PluginError, VerifyError
from mskernel.hooks.host import host
from mskernel.ir import Graph, GraphBuilder, tensor_type
from mskernel.passes import (
    DeadCodeElimination, PassContext, PassManager, PassRegistry, PassResult, PipelineResult,
)
from mskernel.passes.manager import SWEEPS_BY_OPT_LEVEL

F32 = tensor_type("f32", (2, 3))


def messy_graph() -> Graph:
    """Needs several passes, and a second sweep: folding exposes a ``x * 1``."""
    b = GraphBuilder("messy")
    x = b.input(F32, "x")
    half = b.op("full", shape=(2, 3), value=0.5, dtype="f32")
    one = b.op("add", half, half)  # folds to a constant of ones
    y = b.op("mul", x, one)  # so this becomes x, on the next sweep
    t = b.op("transpose", b.op("transpose", y), perm=(1, 0))
    b.op("exp", x)  # dead
    return b.build([b.op("add", t, b.op("sin", x)), b.op("add", b.op("sin", x), t)])


class Renamer:
    """A well-behaved pass that changes the graph's name each time (it never converges)."""

    name = "rename"

    def run(self, graph, context):
        new = Graph(graph.inputs, graph.nodes, graph.outputs, graph.name + "'")
        return PassResult(new, True)


class DropFirstNode:
    """A broken pass: removes the first node even when others read it."""

    name = "drop_first"

    def run(self, graph, context):
        return PassResult(Graph(graph.inputs, graph.nodes[1:], graph.outputs, graph.name), True)


class Explodes:
    name = "explodes"

    def run(self, graph, context):
        raise RuntimeError("boom")


def test_the_generic_pipelines_are_registered():
    passes = host().passes
    optimize = ["fold_batch_norm", "simplify", "fold", "cse", "dce"]
    assert set(optimize) <= set(passes.passes)
    assert [p.name for p in passes.pipeline("O0")] == []
    assert [p.name for p in passes.pipeline("O1")] == ["dce"]
    assert [p.name for p in passes.pipeline("O2")] == optimize
    assert [p.name for p in passes.pipeline("O3")] == optimize


def test_o2_runs_to_a_fixpoint(checker):
    g = messy_graph()
    result = PassManager.from_pipeline("O2").run(g, checker.context)
    assert isinstance(result, PipelineResult) and result.changed
    sin, add = result.graph.nodes
    assert (sin.op, add.op) == ("sin", "add")
    assert add.inputs == (g.inputs[0], sin.output)
    assert result.graph.outputs == (add.output, add.output)
    checker.assert_same_results(g, result.graph)
    report = result.report
    assert report.converged and report.sweeps == 3  # fold, then x*1, then nothing
    assert [r.name for r in report.records[:5]] == [
        "fold_batch_norm", "simplify", "fold", "cse", "dce"]
    assert report.records[0].nodes_before == len(g.nodes)
    assert report.records[-1].nodes_after == 2
    assert all(not r.changed for r in report.records[-5:])


def test_the_sweep_cap_follows_the_opt_level(ops):
    manager = PassManager([Renamer()])
    for level, sweeps in SWEEPS_BY_OPT_LEVEL.items():
        report = manager.run(messy_graph(), PassContext(ops, opt_level=level)).report
        assert report.sweeps == sweeps and not report.converged
    assert SWEEPS_BY_OPT_LEVEL[3] > SWEEPS_BY_OPT_LEVEL[2] > 1


def test_max_iterations_overrides_the_opt_level(context):
    result = PassManager([Renamer()], max_iterations=2).run(messy_graph(), context)
    assert result.report.sweeps == 2 and result.graph.name == "messy''"
    with pytest.raises(ValueError, match="at least 1"):
        PassManager([Renamer()], max_iterations=0)


def test_the_report_prints_as_a_table(context):
    report = PassManager.from_pipeline("O2").run(messy_graph(), context).report
    text = str(report)
    lines = text.splitlines()
    assert lines[0].startswith("passes on @messy: 3 sweep(s), fixpoint reached")
    assert lines[1].split() == ["sweep", "pass", "time", "(ms)", "nodes", "before", "nodes",
                                "after", "changed"]
    assert len(lines) == 2 + len(report.records)
    first, second = lines[2].split(), lines[3].split()
    assert first[:2] == ["1", "fold_batch_norm"] and first[-1] == "no"
    assert second[:2] == ["1", "simplify"] and second[3:] == [
        str(report.records[1].nodes_before), str(report.records[1].nodes_after), "yes"]
    assert report.seconds == pytest.approx(sum(r.seconds for r in report.records))
    assert all(r.seconds >= 0 for r in report.records)


def test_an_empty_pipeline_leaves_the_graph(context):
    g = messy_graph()
    result = PassManager.from_pipeline("O0").run(g, context)
    assert result.graph is g and not result.changed and result.report.records == []


def test_pipelines_come_from_the_given_registry():
    registry = PassRegistry()
    registry.register(DeadCodeElimination())
    registry.register_pipeline("mine", ["dce"])
    manager = PassManager.from_pipeline("mine", registry=registry)
    assert manager.name == "mine" and [p.name for p in manager.passes] == ["dce"]
    with pytest.raises(PluginError, match="unknown pipeline 'O7'"):
        PassManager.from_pipeline("O7", registry=registry)


def test_debug_mode_names_the_pass_that_broke_the_graph(context):
    manager = PassManager([DeadCodeElimination(), DropFirstNode()], debug=True)
    with pytest.raises(VerifyError, match=r"pass 'drop_first' left graph @messy invalid: .*"
                                          r"passes run before it: dce"):
        manager.run(messy_graph(), context)
    # without debug the broken graph goes through unnoticed
    PassManager([DropFirstNode()]).run(messy_graph(), context)


def test_debug_mode_checks_the_input_first(context):
    g = messy_graph()
    broken = Graph(g.inputs, g.nodes[1:], g.outputs, g.name)
    with pytest.raises(VerifyError, match="input graph @messy is invalid before any pass"):
        PassManager([DeadCodeElimination()], debug=True).run(broken, context)


def test_an_error_in_a_pass_is_annotated_with_the_pass(context):
    with pytest.raises(RuntimeError, match="boom") as info:
        PassManager([DeadCodeElimination(), Explodes()]).run(messy_graph(), context)
    assert "while running pass 'explodes' on graph @messy" in "".join(info.value.__notes__)


def test_a_pass_must_return_a_pass_result(context):
    class Sloppy:
        name = "sloppy"

        def run(self, graph, context):
            return graph

    with pytest.raises(PluginError, match="pass 'sloppy' returned Graph, not a PassResult"):
        PassManager([Sloppy()]).run(messy_graph(), context)
    with pytest.raises(PluginError, match="does not implement the Pass contract"):
        PassManager([object()])


def test_managers_nest(checker):
    inner = PassManager.from_pipeline("O2")
    outer = PassManager([inner, DeadCodeElimination()], max_iterations=1)
    result = checker.apply(outer, messy_graph())
    assert [r.name for r in result.report.records] == ["O2", "dce"]


def test_dumps_the_ir_before_and_after_every_pass(tmp_path, monkeypatch, context):
    monkeypatch.setenv("MSKERNEL_DUMP_IR", str(tmp_path))
    g = messy_graph()
    result = PassManager.from_pipeline("O2").run(g, context)
    directory = tmp_path / "messy"
    names = sorted(p.name for p in directory.iterdir())
    passes = [r.name for r in result.report.records]
    assert names == ["000_input.mlir"] + [f"{i + 1:03d}_after_{p}.mlir"
                                          for i, p in enumerate(passes)]
    assert (directory / "000_input.mlir").read_text() == f"{g}\n"
    assert (directory / names[-1]).read_text() == f"{result.graph}\n"
    assert result.report.dump_dir == directory
    assert f"IR dumps: {directory}" in str(result.report)
    # a second compilation of a graph of the same name does not overwrite the first
    PassManager.from_pipeline("O1").run(g, PassContext(context.registry, opt_level=1))
    assert sorted(p.name for p in (tmp_path / "messy.1").iterdir()) == [
        "000_input.mlir", "001_after_dce.mlir"]
    assert len(list(directory.iterdir())) == len(names)


def test_graph_names_are_made_safe_for_file_names(tmp_path, context):
    b = GraphBuilder("../odd name/x")
    g = b.build([b.input(F32)])
    PassManager([DeadCodeElimination()], dump_dir=tmp_path).run(g, context)
    (directory,) = tmp_path.iterdir()
    assert re.fullmatch(r"[A-Za-z0-9._-]+", directory.name) and directory.parent == tmp_path


def test_an_unwritable_dump_directory_warns_and_compiles(tmp_path, monkeypatch, context):
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    monkeypatch.setenv("MSKERNEL_DUMP_IR", str(blocker / "dumps"))
    with pytest.warns(RuntimeWarning, match="MSKERNEL_DUMP_IR: cannot write IR dumps"):
        result = PassManager.from_pipeline("O2").run(messy_graph(), context)
    assert result.changed and result.report.dump_dir is None
