"""tools/line_report.py counts each package's lines and fails when the core is over budget."""

import importlib.util
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
spec = importlib.util.spec_from_file_location("line_report", REPO / "tools" / "line_report.py")
line_report = sys.modules["line_report"] = importlib.util.module_from_spec(spec)
spec.loader.exec_module(line_report)


def write(path: Path, lines: int) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("x = 1\n" * lines)


def test_each_package_is_counted_apart_from_caches_and_builds(tmp_path):
    write(tmp_path / "mskernel" / "__init__.py", 3)
    write(tmp_path / "mskernel" / "ir" / "graph.py", 4)
    write(tmp_path / "mskernel" / "__pycache__" / "graph.py", 100)
    write(tmp_path / "tests" / "test_ir.py", 2)
    write(tmp_path / "sdk" / "src" / "mskernel_sdk" / "__init__.py", 5)
    write(tmp_path / "plugins" / "cpu" / "src" / "mskernel_cpu" / "backend.py", 6)
    write(tmp_path / "plugins" / "cpu" / "csrc" / "kernels.cpp", 7)
    write(tmp_path / "plugins" / "cpu" / "src" / "build" / "generated.py", 100)
    write(tmp_path / "plugins" / "cpu" / "tests" / "test_cpu.py", 8)
    (tmp_path / "plugins" / "notes").mkdir()  # not a distribution: no src/
    found = line_report.packages(tmp_path)
    assert [(p.name, p.python, p.native, p.tests) for p in found] == [
        ("mskernel (core)", 7, 0, 2), ("mskernel-sdk", 5, 0, 0), ("mskernel-cpu", 6, 7, 8)]
    table = line_report.render(found, budget=10)
    assert "core budget: 7 of 10 lines (3 left)" in table


def test_a_core_over_budget_fails_with_the_remedy():
    core = line_report.Package("mskernel (core)", 101, 0, 0)
    assert line_report.over_budget(core, budget=101) is None
    problem = line_report.over_budget(core, budget=100)
    assert "101 lines of Python, over its budget of 100" in problem
    assert "raise CORE_BUDGET" in problem
