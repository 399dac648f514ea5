"""Solve CartPole-v1 with PPO: a mean greedy return >= 475 over 100 episodes within 100k
environment steps, for each of three seeds; each trained policy is saved, reloaded from its
checkpoint and evaluated on 100 new episodes.

    python examples/rl/ppo_cartpole.py [--seeds 0 1 2] [--checkpoints DIR] [--quiet]

The configuration is `ppo_cartpole.toml` beside this file.
"""

from pathlib import Path

from seeds import run

if __name__ == "__main__":
    run(config=Path(__file__).with_name("ppo_cartpole.toml"))
