"""The ``graph`` stage: end-to-end graphs run with the backend under test preferred.

Each graph is compiled as users compile theirs — the generic O2 pipeline, then partitioning
with fallback allowed — so the backend runs what it claims, the reference backend the rest,
and every value crossing between them is transferred.  Results (outputs and cells) must match
the reference interpreter on the original graph within float32 tolerances widened for the
few dozen operations each result accumulates.
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np
from mskernel.ir import Graph, GraphBuilder, Type, Value, tensor_type
from mskernel.ir.types import TOKEN, RefType
from mskernel.runtime import TOKEN_VALUE, CompileOptions, RefCell, partition
from mskernel.runtime.executor import optimize, resolve_backends

from ..samples import sample_rng
from .compare import CheckFailure, RunPolicy, run_and_compare
from .subject import Subject

Case = tuple[Graph, list[Any]]
POLICY = RunPolicy(opt_level=2, fallback="allow", placed_on_subject=False, rtol=1e-4, atol=1e-5)


def _weights(rng: np.random.Generator, *shape: int) -> np.ndarray:
    fan_in = int(np.prod(shape[:-1])) if len(shape) > 1 else 1
    return (rng.standard_normal(shape) / np.sqrt(fan_in)).astype(np.float32)


def _dense(b: GraphBuilder, x: Value, w: Value, bias: Value) -> Value:
    return b.op("add", b.op("matmul", x, w), bias)


def mlp(rng: np.random.Generator) -> Case:
    """A two-layer perceptron with log-softmax outputs: 8 x 16 → 32 (ReLU) → 10."""
    b = GraphBuilder("mlp")
    x = b.input(tensor_type("f32", (8, 16)), "x")
    params = [b.input(tensor_type("f32", s), n) for n, s in
              (("w1", (16, 32)), ("b1", (32,)), ("w2", (32, 10)), ("b2", (10,)))]
    hidden = b.op("relu", _dense(b, x, params[0], params[1]))
    out = b.op("log_softmax", _dense(b, hidden, params[2], params[3]), axis=-1)
    args = [_weights(rng, 8, 16), _weights(rng, 16, 32), _weights(rng, 32),
            _weights(rng, 32, 10), _weights(rng, 10)]
    return b.build([out]), args


def cnn(rng: np.random.Generator) -> Case:
    """conv 3→4 channels (3x3, padding 1) + bias → ReLU → 2x2 max-pool → flatten → dense →
    softmax."""
    b = GraphBuilder("cnn")
    x = b.input(tensor_type("f32", (2, 3, 8, 8)), "x")
    w = b.input(tensor_type("f32", (4, 3, 3, 3)), "conv.weight")
    bias = b.input(tensor_type("f32", (1, 4, 1, 1)), "conv.bias")
    wf = b.input(tensor_type("f32", (64, 10)), "fc.weight")
    conv = b.op("conv", x, w, padding=(1, 1, 1, 1))
    pooled = b.op("max_pool", b.op("relu", b.op("add", conv, bias)), kernel=(2, 2))
    logits = b.op("matmul", b.op("reshape", pooled, shape=(2, 64)), wf)
    args = [_weights(rng, 2, 3, 8, 8), _weights(rng, 4, 3, 3, 3), _weights(rng, 1, 4, 1, 1),
            _weights(rng, 64, 10)]
    return b.build([b.op("softmax", logits, axis=1)]), args


def _region(name: str, types: Sequence[Type],
            body: Callable[[GraphBuilder, list[Value]], Sequence[Value]]) -> Graph:
    b = GraphBuilder(name)
    inputs = [b.input(t) for t in types]
    return b.build(list(body(b, inputs)))


def control_flow(rng: np.random.Generator) -> Case:
    """A recurrence ``h = tanh(W h)`` in a ``While`` loop, an ``If`` on the sign of the
    result's sum, and a ``ref_store`` of the outcome ordered by the state token."""
    i32, h_t, w_t = tensor_type("i32", ()), tensor_type("f32", (4,)), tensor_type("f32", (4, 4))
    carried = (i32, i32, h_t, w_t)
    cond = _region("cond", carried, lambda b, v: (b.op("less", v[0], v[1]),))
    body = _region("body", carried, lambda b, v: (
        b.op("add", v[0], b.op("full", shape=(), value=1, dtype="i32")), v[1],
        b.op("tanh", b.op("matmul", v[3], v[2])), v[3]))
    then = _region("then", (h_t,), lambda b, v: (b.op("mul", v[0], v[0]),))
    other = _region("else", (h_t,), lambda b, v: (b.op("neg", v[0]),))
    b = GraphBuilder("control_flow")
    h0, w, steps = b.input(h_t, "h0"), b.input(w_t, "w"), b.input(i32, "steps")
    cell, token = b.input(RefType(h_t), "state"), b.input(TOKEN, "token")
    zero = b.op("full", shape=(), value=0, dtype="i32")
    _, _, h, _ = b.op("While", zero, steps, h0, w, regions=(cond, body), max_iterations=100)
    positive = b.op("greater", b.op("sum", h), b.op("full", shape=(), value=0.0, dtype="f32"))
    (result,) = b.op("If", positive, h, regions=(then, other))
    done = b.op("ref_store", cell, result, token)
    args = [_weights(rng, 4), 2 * _weights(rng, 4, 4), np.array(5, np.int32),
            RefCell(h_t, np.zeros(4, np.float32)), TOKEN_VALUE]
    return b.build([result, done]), args


MODEL_GRAPHS: dict[str, Callable[[np.random.Generator], Case]] = {
    "mlp": mlp, "cnn": cnn, "control_flow": control_flow,
}


def check_model_graph(subject: Subject, name: str, seed: int) -> str:
    """Run model graph ``name`` with the subject preferred; return where its nodes ran."""
    graph, args = MODEL_GRAPHS[name](sample_rng(seed, name))
    problems = run_and_compare(subject, graph, args, POLICY)
    placement = _placement(subject, graph)
    if problems:
        raise CheckFailure(f"graph '{name}' ({placement}) disagrees with the reference "
                           f"interpreter (seed {seed}): " + "; ".join(problems))
    return placement


def _placement(subject: Subject, graph: Graph) -> str:
    options = CompileOptions(opt_level=POLICY.opt_level)
    plan = partition(optimize(graph, options), resolve_backends([subject.name]), "allow")
    mine = sum(p.backend == subject.name for p in plan.placements)
    return (f"{mine} of {len(plan.placements)} nodes on '{subject.name}', "
            f"{len(plan.transfers)} transfers")
