"""Train one configuration over several seeds, save each policy, reload it from its
checkpoint and evaluate it on fresh episodes — what the examples in this folder run.

    python examples/rl/seeds.py examples/rl/ppo_cartpole.toml --seeds 0 1 2
"""

from __future__ import annotations

import argparse
import logging
import tempfile
import time
from pathlib import Path
from typing import Optional, Sequence

import numpy as np

import mskernel

#: the seed of the evaluation of a reloaded policy (episodes no training run saw)
EVALUATION_SEED = 2**31 - 1


def parse_args(argv: Optional[Sequence[str]], config: Optional[Path] = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    if config is None:
        parser.add_argument("config", type=Path, help="a TrainerConfig file (.toml, .json)")
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--checkpoints", type=Path, default=None, metavar="DIR",
                        help="where the trained policies are saved (default: a temporary "
                             "folder)")
    parser.add_argument("--quiet", action="store_true", help="no progress lines")
    args = parser.parse_args(argv)
    if config is not None:
        args.config = config
    return args


def main(argv: Optional[Sequence[str]] = None, config: Optional[Path] = None) -> list[dict]:
    """Train, save, reload and evaluate for each seed; print a line per seed and a summary.
    Returns one dict per seed."""
    args = parse_args(argv, config)
    rl = mskernel.rl
    logging.basicConfig(level=logging.WARNING if args.quiet else logging.INFO,
                        format="%(message)s")
    base = rl.load_config(args.config)
    folder = args.checkpoints or Path(tempfile.mkdtemp(prefix="mskernel-rl-"))
    folder.mkdir(parents=True, exist_ok=True)
    rows = []
    for seed in args.seeds:
        config = base.model_copy(update={"seed": seed})
        trainer = rl.Trainer(config)
        start = time.perf_counter()
        result = trainer.train()
        wall = time.perf_counter() - start
        path = folder / f"{args.config.stem}_seed{seed}.ckpt"
        trainer.save(path)
        policy, saved, _ = rl.load_policy(path)
        check = rl.evaluate(policy, saved.env, saved.evaluation.episodes,
                            saved.evaluation.num_envs, seed=EVALUATION_SEED)
        row = {"seed": seed, "solved_at": result.solved_at, "env_steps": result.env_steps,
               "wall_time": wall, "steps_per_second": result.env_steps / wall,
               "reloaded_mean": check.mean, "reloaded_std": check.std}
        rows.append(row)
        solved = (f"solved at {result.solved_at} steps" if result.solved_at is not None
                  else f"NOT solved in {result.env_steps} steps")
        print(f"seed {seed}: {solved}, {wall:.0f} s ({row['steps_per_second']:.0f} steps/s); "
              f"reloaded from {path.name}: mean return {check.mean:.1f} ± {check.std:.1f} "
              f"over {check.episodes} new episodes", flush=True)
    target = base.evaluation.target
    solved = [r["solved_at"] for r in rows if r["solved_at"] is not None]
    print(f"{base.algorithm.name} on {base.env.id}: {len(solved)}/{len(rows)} seeds reached "
          f"a mean greedy return >= {target} within {base.total_steps} steps"
          + (f"; steps to solve: median {int(np.median(solved))}, max {max(solved)}"
             if solved else ""))
    return rows


def run(config: Optional[Path] = None) -> None:
    """:func:`main`, exiting with status 1 unless every seed reached the target."""
    rows = main(config=config)
    raise SystemExit(0 if all(r["solved_at"] is not None for r in rows) else 1)


if __name__ == "__main__":
    run()
