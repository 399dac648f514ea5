"""``mskernel rl``: train from a configuration file, evaluate a saved policy.

    mskernel rl train ppo_cartpole.toml --save ppo.ckpt
    mskernel rl evaluate ppo.ckpt --episodes 100
"""

from __future__ import annotations

import argparse
import logging


def configure(parser: argparse.ArgumentParser) -> None:
    actions = parser.add_subparsers(dest="rl_command", required=True)
    train = actions.add_parser("train", help="train as a configuration file says")
    train.add_argument("config", help="a .json, .toml or .yaml TrainerConfig")
    train.add_argument("--save", metavar="FILE", help="save the trained policy to FILE")
    train.add_argument("--quiet", action="store_true", help="no progress lines")
    evaluate = actions.add_parser("evaluate", help="the greedy returns of a saved policy")
    evaluate.add_argument("checkpoint", help="a policy saved by `mskernel rl train --save`")
    evaluate.add_argument("--episodes", type=int, default=100)
    evaluate.add_argument("--seed", type=int, default=0)


def run(args: argparse.Namespace) -> int:
    from .trainer import Trainer, evaluate, load_policy

    if args.rl_command == "train":
        if not args.quiet:
            logging.basicConfig(level=logging.INFO, format="%(message)s")
        trainer = Trainer(args.config)
        result = trainer.train()
        solved = "not solved" if result.solved_at is None else f"solved at {result.solved_at}"
        last = result.evaluations[-1]
        print(f"{result.env_steps} environment steps in {result.wall_time:.1f} s "
              f"({result.steps_per_second:.0f}/s), {solved}; greedy return {last.mean:.1f} "
              f"± {last.std:.1f} over {last.episodes} episodes")
        for failure in result.failures:
            print(f"recovered: {failure}")
        if args.save:
            trainer.save(args.save)
            print(f"saved the policy to {args.save}")
        return 0
    policy, config, _ = load_policy(args.checkpoint)
    result = evaluate(policy, config.env, args.episodes, config.evaluation.num_envs, args.seed)
    print(f"{config.env.id}: greedy return {result.mean:.1f} ± {result.std:.1f} over "
          f"{result.episodes} episodes")
    return 0
