"""The primitive budget and the page listing the primitive set."""

import importlib.util
import sys
from pathlib import Path

from mskernel.ops import op_registry
from mskernel.ops.primitives import PRIMITIVE_BUDGET, composites, primitives

REPO = Path(__file__).resolve().parents[2]
SPEC = importlib.util.spec_from_file_location("ops_page", REPO / "tools" / "ops_page.py")
ops_page = sys.modules.setdefault("ops_page", importlib.util.module_from_spec(SPEC))
SPEC.loader.exec_module(ops_page)


def test_the_primitive_set_stays_within_its_budget():
    prims = primitives(op_registry())
    assert len(prims) <= PRIMITIVE_BUDGET, (
        f"{len(prims)} primitive core ops, over the budget of {PRIMITIVE_BUDGET}: give the new "
        "op a decomposition, or raise the budget in mskernel/ops/primitives.py and say why")


def test_every_core_op_is_a_primitive_or_a_composite():
    core = sorted(op.name for op in op_registry() if op.owner == "mskernel")
    assert sorted(primitives(op_registry()) + composites(op_registry())) == core


def test_the_page_lists_the_current_primitive_set():
    page = REPO / "docs" / "ops.md"
    assert page.read_text(encoding="utf-8") == ops_page.render(op_registry()), (
        "the op definitions changed: run `python tools/ops_page.py docs/ops.md`")
