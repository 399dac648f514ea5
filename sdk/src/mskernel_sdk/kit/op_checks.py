"""The ``op`` stage: every op the backend claims, against the op's reference semantics — and
every composite op it does not claim but runs as its decomposition (all the ops the
decomposition emits are claimed), since graphs then run it that way on the backend."""

from __future__ import annotations

from dataclasses import replace

from mskernel.hooks import plugin_host
from mskernel.ir import Graph
from mskernel.runtime.expand import expand_composites
from mskernel.testing import OpSample, sample_graph

from ..samples import SAMPLES_RULE, sample_rng, samples_for
from .compare import SINGLE_OP, CheckFailure, NotRun, run_and_compare
from .shapes import reshaped
from .subject import Subject

#: Random-shape samples added to the table's samples of each elementwise op.
RANDOM_SHAPES_PER_OP = 4
#: Failing samples spelled out in a failure message (the rest are counted).
MAX_LISTED = 4


def op_samples(op: str, seed: int) -> list[OpSample]:
    """The op's samples drawn with ``seed``, plus random broadcast shapes when it is
    elementwise."""
    samples = samples_for(op, seed)
    if samples and plugin_host().ops.get(op).has_trait("elementwise"):
        rng = sample_rng(seed, f"{op}/shapes")
        picks = (samples[int(rng.integers(len(samples)))] for _ in range(RANDOM_SHAPES_PER_OP))
        samples += [s for s in (reshaped(pick, rng) for pick in picks) if s is not None]
    return samples


def decomposed_on(subject: Subject, graph: Graph) -> bool:
    """Whether the backend runs the single node of ``graph`` as its op's decomposition (one
    that emits nodes: a decomposition reduced to its input, a flip of no axes say, runs
    nothing on the backend)."""
    expanded = expand_composites(graph, subject.capabilities, plugin_host().ops)
    return any(e.nodes for e in expanded.expansions)


def composites_run_decomposed(subject: Subject, seed: int) -> list[str]:
    """The composite ops the backend does not claim but runs, for some of their samples, as
    their decompositions."""
    unclaimed = [op.name for op in plugin_host().ops
                 if not op.primitive and op.name not in subject.capabilities]
    return [op for op in unclaimed
            if any(decomposed_on(subject, sample_graph(s)) for s in samples_for(op, seed))]


def check_op(subject: Subject, op: str, seed: int) -> str:
    """Run each sample of ``op`` that the backend runs — within its claim (dtypes, ranks), or
    as the op's decomposition — on the backend alone and compare with the reference
    interpreter; return what was checked."""
    samples = op_samples(op, seed)
    if not samples:
        owner = plugin_host().ops.get(op).owner
        raise NotRun(f"no samples for '{op}': {owner} attaches none under the rule kind "
                     f"'{SAMPLES_RULE}'")
    graphs = [(sample, sample_graph(sample)) for sample in samples]
    within = {id(g) for s, g in graphs if subject.capabilities.supports(g.nodes[0])}
    decomposed = {id(g) for s, g in graphs if id(g) not in within and decomposed_on(subject, g)}
    claimed = [(s, g) for s, g in graphs if id(g) in within | decomposed]
    if not claimed:
        reason = subject.capabilities.reason_unsupported(graphs[0][1].nodes[0])
        raise NotRun(f"none of its {len(samples)} samples is within the claim ({reason})")
    failures = []
    for sample, graph in claimed:
        policy = replace(SINGLE_OP, rtol=sample.rtol, atol=sample.atol)
        problems = run_and_compare(subject, graph, sample.args, policy)
        if problems:
            failures.append(f"{sample}: {'; '.join(problems)}")
    if failures:
        listed = "\n  ".join(failures[:MAX_LISTED])
        hidden = len(failures) - MAX_LISTED
        more = f"\n  ... and {hidden} more" if hidden > 0 else ""
        raise CheckFailure(f"{len(failures)} of {len(claimed)} samples disagree with the "
                           f"reference semantics of '{op}' (seed {seed}):\n  {listed}{more}")
    outside = len(samples) - len(claimed)
    return (f"{len(claimed)} samples"
            + (f" ({len(decomposed)} as its decomposition)" if decomposed else "")
            + (f", {outside} outside the claim" if outside else ""))
