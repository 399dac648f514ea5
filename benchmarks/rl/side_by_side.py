"""mskernel-reinforcement against Stable-Baselines3 (PyTorch), side by side in one run: the same
PPO and DQN configurations on CartPole-v1, the same seeds, and the same evaluation — greedy
returns over 100 episodes every 5000 environment steps, by ``mskernel.rl.evaluate`` for both —
until the mean reaches 475 (*solved*) or the step budget ends.

    python benchmarks/rl/side_by_side.py [--algorithms ppo dqn] [--seeds 0 1 2] [--threads 1]
                                         [--out results.jsonl] [--quick]
    python benchmarks/rl/side_by_side.py --table results.jsonl    # the table of recorded rows

The configurations are ``examples/rl/ppo_cartpole.toml`` and ``dqn_cartpole.toml`` (tuned by
rl-baselines3-zoo for Stable-Baselines3), mapped field by field onto Stable-Baselines3's
arguments.  Per run: environment steps to solve, and training throughput — environment steps
per second of training, with the evaluations' time left out (it is the same code for both).
Both frameworks run on ``--threads`` CPU threads (mskernel's cpu backend and PyTorch).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from pathlib import Path
from typing import Any, Callable, Optional, Sequence

import numpy as np

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "rl"
CONFIGS = {"ppo": EXAMPLES / "ppo_cartpole.toml", "dqn": EXAMPLES / "dqn_cartpole.toml"}
#: the evaluation seed both frameworks' evaluations use (the Trainer's: seed + 1_000_003)
EVALUATION_OFFSET = 1_000_003


def parse_args(argv: Optional[Sequence[str]]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--algorithms", nargs="+", choices=sorted(CONFIGS),
                        default=sorted(CONFIGS, reverse=True))
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--frameworks", nargs="+", choices=["mskernel", "sb3"],
                        default=["mskernel", "sb3"])
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--out", type=Path, default=None, help="append JSON lines here")
    parser.add_argument("--quick", action="store_true",
                        help="a smoke run: 5000 steps, evaluations of 10 episodes")
    parser.add_argument("--table", type=Path, default=None, metavar="JSONL",
                        help="print the table of the rows an earlier run wrote with --out")
    return parser.parse_args(argv)


class Clock:
    """Wall time of a run, and how much of it evaluations took."""

    def __init__(self) -> None:
        self.start = time.perf_counter()
        self.evaluating = 0.0

    def timed(self, fn: Callable[[], Any]) -> Any:
        begin = time.perf_counter()
        try:
            return fn()
        finally:
            self.evaluating += time.perf_counter() - begin

    def record(self, env_steps: int, solved_at: Optional[int]) -> dict[str, Any]:
        wall = time.perf_counter() - self.start
        training = wall - self.evaluating
        return {"solved_at": solved_at, "env_steps": env_steps, "wall_time": wall,
                "training_time": training, "steps_per_second": env_steps / training}


def run_mskernel(config: Any) -> dict[str, Any]:
    import mskernel

    result = mskernel.rl.Trainer(config).train()
    return {"solved_at": result.solved_at, "env_steps": result.env_steps,
            "wall_time": result.wall_time,
            "training_time": result.wall_time - result.evaluation_time,
            "steps_per_second": result.steps_per_second}


class Greedy:
    """A Stable-Baselines3 model as ``mskernel.rl.evaluate`` calls a policy."""

    def __init__(self, model: Any) -> None:
        self.model = model

    def act(self, observations: np.ndarray, rng: Any,
            explore: bool = False) -> tuple[np.ndarray, dict[str, np.ndarray]]:
        return self.model.predict(observations, deterministic=not explore)[0], {}


def run_sb3(config: Any) -> dict[str, Any]:
    import mskernel
    from stable_baselines3 import DQN, PPO
    from stable_baselines3.common.callbacks import BaseCallback
    from stable_baselines3.common.env_util import make_vec_env

    algorithm, evaluation, clock = config.algorithm, config.evaluation, Clock()
    env = make_vec_env(config.env.id, n_envs=config.env.num_envs, seed=config.seed)

    def linear(value: float, anneal: bool) -> Any:
        return (lambda remaining: value * remaining) if anneal else value

    if algorithm.name == "ppo":
        model = PPO("MlpPolicy", env, seed=config.seed, device="cpu", verbose=0,
                    learning_rate=linear(algorithm.learning_rate, algorithm.anneal_learning_rate),
                    n_steps=algorithm.n_steps, batch_size=algorithm.batch_size,
                    n_epochs=algorithm.n_epochs, gamma=algorithm.gamma,
                    gae_lambda=algorithm.gae_lambda,
                    clip_range=linear(algorithm.clip_range, algorithm.anneal_clip_range),
                    ent_coef=algorithm.ent_coef, vf_coef=algorithm.vf_coef,
                    max_grad_norm=algorithm.max_grad_norm,
                    normalize_advantage=algorithm.normalize_advantage,
                    policy_kwargs={"net_arch": list(algorithm.hidden_sizes)})
    else:
        model = DQN("MlpPolicy", env, seed=config.seed, device="cpu", verbose=0,
                    learning_rate=algorithm.learning_rate, buffer_size=algorithm.buffer_size,
                    learning_starts=algorithm.learning_starts, batch_size=algorithm.batch_size,
                    tau=algorithm.tau, gamma=algorithm.gamma, train_freq=algorithm.train_freq,
                    gradient_steps=algorithm.gradient_steps,
                    target_update_interval=algorithm.target_update_interval,
                    exploration_fraction=algorithm.exploration_fraction,
                    exploration_initial_eps=algorithm.exploration_initial_eps,
                    exploration_final_eps=algorithm.exploration_final_eps,
                    max_grad_norm=algorithm.max_grad_norm,
                    policy_kwargs={"net_arch": list(algorithm.hidden_sizes)})

    class Evaluate(BaseCallback):
        """Evaluates where mskernel's Trainer does: after each update phase, once
        ``interval`` more environment steps were taken; stops at the target."""

        def __init__(self) -> None:
            super().__init__()
            self.next, self.solved_at = evaluation.interval, None

        def _on_rollout_start(self) -> None:
            if self.num_timesteps >= self.next and self.solved_at is None:
                self.check()

        def check(self) -> None:
            self.next += evaluation.interval
            result = clock.timed(lambda: mskernel.rl.evaluate(
                Greedy(self.model), config.env, evaluation.episodes, evaluation.num_envs,
                seed=config.seed + EVALUATION_OFFSET))
            if result.mean >= evaluation.target:
                self.solved_at = self.num_timesteps

        def _on_step(self) -> bool:
            return self.solved_at is None

    callback = Evaluate()
    clock.start = time.perf_counter()
    model.learn(config.total_steps, callback=callback)
    if callback.solved_at is None:   # the run's end, as mskernel's Trainer evaluates it
        callback.check()
    return clock.record(model.num_timesteps, callback.solved_at)


def main(argv: Optional[Sequence[str]] = None) -> list[dict[str, Any]]:
    args = parse_args(argv)
    if args.table is not None:
        rows = [json.loads(line) for line in args.table.read_text(encoding="utf-8").splitlines()
                if line.strip()]
        print(table(rows))
        return rows
    os.environ["MSKERNEL_NUM_THREADS"] = str(args.threads)
    import mskernel
    import torch

    torch.set_num_threads(args.threads)
    runners = {"mskernel": run_mskernel, "sb3": run_sb3}
    rows = []
    for name in args.algorithms:
        base = mskernel.rl.load_config(CONFIGS[name])
        if args.quick:
            base = base.model_copy(update={
                "total_steps": 5000,
                "evaluation": base.evaluation.model_copy(update={"episodes": 10})})
        for seed in args.seeds:
            for framework in args.frameworks:   # interleaved: both see the same host load
                config = base.model_copy(update={"seed": seed})
                row = {"algorithm": name, "framework": framework, "seed": seed,
                       "threads": args.threads, "load_average": os.getloadavg()[0],
                       **runners[framework](config)}
                rows.append(row)
                print(json.dumps(row), flush=True)
                if args.out is not None:
                    with args.out.open("a", encoding="utf-8") as out:
                        out.write(json.dumps(row) + "\n")
    print(table(rows))
    return rows


def table(rows: list[dict[str, Any]]) -> str:
    """Markdown: per algorithm and framework, seeds solved, median steps to solve and median
    training steps per second; then mskernel's ratio to Stable-Baselines3."""
    import stable_baselines3
    import torch

    lines = [f"Python {platform.python_version()}, PyTorch {torch.__version__}, "
             f"Stable-Baselines3 {stable_baselines3.__version__}, {sys.platform}", "",
             "| algorithm | framework | solved | steps to solve (median, per seed) | "
             "training steps/s (median) |", "|---|---|---|---|---|"]
    summary: dict[tuple[str, str], tuple[Optional[float], float]] = {}
    for algorithm in sorted({r["algorithm"] for r in rows}, reverse=True):
        for framework in ("mskernel", "sb3"):
            runs = [r for r in rows if (r["algorithm"], r["framework"]) == (algorithm, framework)]
            if not runs:
                continue
            solved = [r["solved_at"] for r in runs if r["solved_at"] is not None]
            steps = float(np.median(solved)) if solved else None
            speed = float(np.median([r["steps_per_second"] for r in runs]))
            summary[algorithm, framework] = (steps, speed)
            per_seed = ", ".join("-" if r["solved_at"] is None else str(r["solved_at"])
                                 for r in runs)
            lines.append(f"| {algorithm} | {framework} | {len(solved)}/{len(runs)} | "
                         f"{'-' if steps is None else f'{steps:.0f}'} ({per_seed}) | "
                         f"{speed:.0f} |")
    for algorithm in sorted({a for a, _ in summary}, reverse=True):
        if (algorithm, "mskernel") in summary and (algorithm, "sb3") in summary:
            (ms_steps, ms_speed), (sb_steps, sb_speed) = (summary[algorithm, "mskernel"],
                                                          summary[algorithm, "sb3"])
            steps = (f"{sb_steps / ms_steps:.2f}x fewer steps" if ms_steps and sb_steps
                     else "steps: not comparable")
            lines.append(f"\n{algorithm}: mskernel {ms_speed / sb_speed:.2f}x "
                         f"Stable-Baselines3's training throughput; {steps} to solve "
                         "(medians; above 1: mskernel better)")
    return "\n".join(lines)


if __name__ == "__main__":
    main()
