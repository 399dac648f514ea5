"""Pendulum-v1 with SAC: a mean greedy return >= -200 over 100 episodes within 20k environment
steps, for each of three seeds; each trained policy is saved, reloaded from its checkpoint and
evaluated on 100 new episodes.

    python examples/rl/sac_pendulum.py [--seeds 0 1 2] [--checkpoints DIR] [--quiet]

The configuration is `sac_pendulum.toml` beside this file.
"""

from pathlib import Path

from seeds import run

if __name__ == "__main__":
    run(config=Path(__file__).with_name("sac_pendulum.toml"))
