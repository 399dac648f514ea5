"""Solve CartPole-v1 with DQN: a mean greedy return >= 475 over 100 episodes within 200k
environment steps, for each of three seeds; each trained policy is saved, reloaded from its
checkpoint and evaluated on 100 new episodes.

    python examples/rl/dqn_cartpole.py [--seeds 0 1 2] [--checkpoints DIR] [--quiet]

The configuration is `dqn_cartpole.toml` beside this file.
"""

from pathlib import Path

from seeds import run

if __name__ == "__main__":
    run(config=Path(__file__).with_name("dqn_cartpole.toml"))
