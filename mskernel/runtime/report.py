"""The placement report behind ``mskernel explain``."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..ir.graph import Value

if TYPE_CHECKING:
    from .partition import PartitionPlan


def _size(nbytes: int) -> str:
    size = float(nbytes)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if size < 1024 or unit == "GiB":
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    raise AssertionError("unreachable")


def explain_plan(plan: "PartitionPlan") -> str:
    graph = plan.graph
    label: dict[Value, str] = {}
    for i, value in enumerate(graph.inputs):
        label[value] = f"input {i}" + (f" '{value.name}'" if value.name else "")
    for i, node in enumerate(graph.nodes):
        for j, value in enumerate(node.outputs):
            label[value] = f"node {i} '{node.op}'" + (f" out {j}" if len(node.outputs) > 1 else "")
    used = sorted({p.backend for p in plan.placements})
    on_host = sum(p.host_kernel is not None for p in plan.placements)
    lines = [
        f"graph @{graph.name}: {len(graph.nodes)} nodes on {len(used)} backend(s) "
        f"{', '.join(used) or '-'}" + (f" ({on_host} on host kernels)" if on_host else "")
        + f"; preference {' > '.join(plan.backends)}; fallback policy '{plan.policy}'",
        "",
    ]
    origin = {id(n): e.node.op for e in plan.expansions for n in e.nodes}
    rows = [("#", "op", "backend", "types", "note")]
    for i, p in enumerate(plan.placements):
        types = ", ".join(str(v.type) for v in p.node.outputs)
        note = f"fallback: {p.fallback_reason}" if p.fallback_reason else ""
        if id(p.node) in origin:
            note = f"{note} from {origin[id(p.node)]}".strip()
        where = p.backend
        if p.host_kernel is not None:
            where, note = "host", f"host kernel of {p.host_kernel}, beside {p.backend}"
        if p.node.loc:
            note = f"{note} [{p.node.loc}]".strip()
        rows.append((str(i), p.node.op, where, types, note))
    widths = [max(len(r[c]) for r in rows) for c in range(4)]
    for r in rows:
        lines.append("  ".join(cell.ljust(w) for cell, w in zip(r[:4], widths)) + "  " + r[4])
    lines.append("")
    lines.append(f"segments: {len(plan.segments)}")
    for k, seg in enumerate(plan.segments):
        idx = seg.node_indices
        span = f"nodes {min(idx)}..{max(idx)}" if idx else "no nodes"
        where = f"host kernels beside {seg.backend}" if seg.host_kernel else seg.backend
        lines.append(f"  [{k}] {where}: {len(idx)} node(s), {span}")
    if plan.expansions:
        lines.append(f"decomposed: {len(plan.expansions)} composite node(s) for "
                     f"'{plan.backends[0]}'")
    for e in plan.expansions:
        ops = ", ".join(n.op for n in e.nodes) or "no nodes"
        lines.append(f"  '{e.node.op}'{e.node.where()} -> {len(e.nodes)} node(s): {ops}")
    lines.append(f"fallbacks: {len(plan.fallbacks)}")
    lines.append(f"transfers: {len(plan.transfers)} ({_size(plan.transfer_bytes)})")
    for t in plan.transfers:
        lines.append(f"  {label.get(t.value, '?')} {t.value.type}: {t.source} -> {t.target} "
                     f"({_size(t.nbytes)})")
    return "\n".join(lines).rstrip() + "\n"
