"""Every rank moves a tensor between pairs of layouts over MPI and checks its block.

    mskernel run -n 4 redistribute_check.py --mesh 2x2 --pairs 40

The pairs (partial sources included) are drawn from a fixed seed, so every rank builds the
same graphs; each rank's result must equal its block of the whole tensor in the target
layout.  Every other graph runs compiled by the cpu backend (its collectives as host kernels
beside the backend's kernels), the others on the reference semantics.  Prints ``checked N
pairs`` on success.
"""

from __future__ import annotations

import argparse
import itertools

import numpy as np
from mskernel_sdk import TOKEN_VALUE, GraphBuilder, compile_graph, run_reference, tensor_type

from mskernel import communication
from mskernel.parallel import Mesh, TensorLayout
from mskernel_parallel.ops import TOKEN
from mskernel_parallel.sharding.program import ensure_groups
from mskernel_parallel.sharding.redistribute import Emitter


def layouts(mesh: Mesh, rank: int) -> list[TensorLayout]:
    out = []
    for places in itertools.product(range(-2, rank), repeat=len(mesh.names)):
        dims: list[list[str]] = [[] for _ in range(rank)]
        partial = []
        for axis, where in zip(mesh.names, places):
            if where >= 0:
                dims[where].append(axis)
            elif where == -2:
                partial.append((axis, "sum"))
        out.append(TensorLayout(mesh, tuple(map(tuple, dims)), tuple(partial)))
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--mesh", default="2")
    parser.add_argument("--pairs", type=int, default=40)
    args = parser.parse_args()
    communication.init()
    sizes = tuple(int(n) for n in args.mesh.split("x"))
    mesh = Mesh(sizes, tuple(f"a{i}" for i in range(len(sizes))))
    ensure_groups(mesh)
    me = communication.get_rank()
    rng = np.random.default_rng(0)
    candidates = layouts(mesh, 2)
    targets = [t for t in candidates if not t.partial]
    shape = (4 * mesh.size, 2 * mesh.size)
    for index in range(args.pairs):
        src = candidates[rng.integers(len(candidates))]
        dst = targets[rng.integers(len(targets))]
        x = rng.standard_normal(shape).astype(np.float32)
        b = GraphBuilder("move")
        local = b.input(tensor_type("f32", src.local_shape(shape)))
        emit = Emitter(b, b.input(TOKEN), mesh, me)
        graph = b.build([emit(local, src, dst), emit.token])
        inputs = [src.shard(x, me), TOKEN_VALUE]
        if index % 2:
            got = compile_graph(graph, backends=["cpu"]).run(inputs)[0].to_host()
        else:
            got = run_reference(graph, inputs)[0]
        np.testing.assert_allclose(got, dst.shard(x, me), rtol=1e-6, atol=1e-6,
                                   err_msg=f"{src} -> {dst}")
    print(f"checked {args.pairs} pairs", flush=True)


if __name__ == "__main__":
    main()
