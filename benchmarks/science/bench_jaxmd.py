"""jax-md's side: ``python bench_jaxmd.py lj N STEPS`` (run with the interpreter of a venv that
has jax-md) times the same LJ fluid: ``energy.lennard_jones_neighbor_list`` (dense neighbour
list, rebuilt by ``update`` whenever a particle moved half the skin), ``simulate.nve``, float64,
``chunk`` steps per ``jax.jit``-compiled ``lax.fori_loop``."""

from __future__ import annotations

import sys
import time

import workload as W  # sets the thread environment first

import jax  # noqa: E402

jax.config.update("jax_enable_x64", True)
jax.config.update("jax_platforms", "cpu")
import jax.numpy as jnp  # noqa: E402
from jax import lax  # noqa: E402
from jax_md import energy, simulate, space  # noqa: E402

CHUNK = 5


def main(n: int, steps: int) -> None:
    x, v, box = W.lj_start(n)
    displacement, shift = space.periodic(box)
    neighbor_fn, energy_fn = energy.lennard_jones_neighbor_list(
        displacement, box, r_cutoff=W.LJ["cutoff"], dr_threshold=W.LJ["skin"])
    init, apply = simulate.nve(energy_fn, shift, W.LJ["dt"])
    positions = jnp.asarray(x)
    neighbors = neighbor_fn.allocate(positions)
    state = init(jax.random.PRNGKey(0), positions, kT=W.LJ["temperature"], neighbor=neighbors)
    state = state.set(momentum=jnp.asarray(v))

    @jax.jit
    def chunk(state, neighbors):
        def step(_, carry):
            s, nbrs = carry
            s = apply(s, neighbor=nbrs)
            return s, nbrs.update(s.position)
        return lax.fori_loop(0, CHUNK, step, (state, neighbors))

    def run(state, neighbors, count):
        for _ in range(count // CHUNK):
            new_state, new_neighbors = chunk(state, neighbors)
            if new_neighbors.did_buffer_overflow:  # outgrew its capacity: allocate and redo
                neighbors = neighbor_fn.allocate(state.position)
                new_state, new_neighbors = chunk(state, neighbors)
            state, neighbors = new_state, new_neighbors
        state.position.block_until_ready()
        return state, neighbors

    state, neighbors = run(state, neighbors, W.LJ_WARMUP)  # compile, first rebuilds
    start = time.perf_counter()
    state, neighbors = run(state, neighbors, steps)
    seconds = time.perf_counter() - start
    W.report(framework="jax-md", case=f"lj{n}", steps_per_second=steps / seconds)


if __name__ == "__main__":
    main(int(sys.argv[2]), int(sys.argv[3]))
