"""What one step of RL code costs in mskernel, beside the same code in PyTorch and NumPy:
the calls an RL loop makes thousands of times on tiny batches, where the framework's own
bookkeeping, not arithmetic, is the time.

- **policy step**: a PPO actor's forward pass on a batch of CartPole observations (``[B, 4]``,
  B = 1 and 8; policy and value MLPs 4 → 64 → 64, tanh), sampling by Gumbel noise drawn on
  the host, returning actions, log-probabilities and values as NumPy arrays —
  ``CategoricalPolicy.act`` (a cached ``@mskernel.jit`` call), the same in PyTorch eager
  under ``no_grad``, and in NumPy (the floor);
- **PPO update step**: one minibatch of 256 (forward, clipped loss, value loss, entropy,
  gradients, clipping by global norm, Adam) — the learner's compiled step fed NumPy columns,
  and the same in PyTorch eager;
- **DQN update step**: one minibatch of 64 on a 4 → 256 → 256 → 2 Q-network (target values
  from the target network, Huber loss, gradients, clipping, Adam), as ``dqn_cartpole.toml``
  runs it 128 times every 256 environment steps;
- **argument conversion**: a cached jit call of ``a + b`` given Tensors or NumPy arrays, and
  ``mskernel.Tensor(array)`` itself — what each NumPy argument of a compiled call adds.

One thread, cases interleaved round by round, the median over rounds of the mean of a batch of
calls, in CPU time (``--wall``: wall-clock).

    python benchmarks/rl/overheads.py [--rounds 5] [--batch 500] [--wall]
"""

from __future__ import annotations

import argparse
import copy
import os
import statistics
import time
from typing import Any, Callable

for _var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS",
             "MSKERNEL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import numpy as np  # noqa: E402

import mskernel  # noqa: E402

OBSERVATION, ACTIONS, HIDDEN, MINIBATCH = 4, 2, 64, 256
Q_HIDDEN, Q_MINIBATCH = 256, 64
Case = tuple[str, str, Callable[[], Any]]   # (measurement, framework, one call)


def plan(envs: int) -> Any:
    spec = mskernel.rl.EnvSpec((OBSERVATION,), "discrete", action_count=ACTIONS)
    return mskernel.rl.Plan(spec, total_steps=100_000, envs=envs, seed=0)


def minibatch(rng: np.random.Generator) -> tuple[np.ndarray, ...]:
    """A PPO minibatch: observations, actions, old log-probabilities, advantages, returns,
    and the clip range."""
    return (rng.standard_normal((MINIBATCH, OBSERVATION), dtype=np.float32),
            rng.integers(0, ACTIONS, MINIBATCH, dtype=np.int32),
            np.full(MINIBATCH, -np.log(ACTIONS), np.float32) + 0.05
            * rng.standard_normal(MINIBATCH, dtype=np.float32),
            rng.standard_normal(MINIBATCH, dtype=np.float32),
            rng.standard_normal(MINIBATCH, dtype=np.float32),
            np.float32(0.2))


def transitions(rng: np.random.Generator) -> tuple[np.ndarray, ...]:
    """A DQN minibatch: observations, actions, rewards, next observations, terminations,
    importance weights."""
    return (rng.standard_normal((Q_MINIBATCH, OBSERVATION), dtype=np.float32),
            rng.integers(0, ACTIONS, Q_MINIBATCH, dtype=np.int32),
            np.ones(Q_MINIBATCH, np.float32),
            rng.standard_normal((Q_MINIBATCH, OBSERVATION), dtype=np.float32),
            (rng.random(Q_MINIBATCH) < 0.05).astype(np.float32),
            np.ones(Q_MINIBATCH, np.float32))


def mskernel_cases(rng: np.random.Generator) -> list[Case]:
    rl = mskernel.rl
    config = rl.PPOConfig(n_steps=32, batch_size=MINIBATCH, hidden_sizes=(HIDDEN, HIDDEN))
    algorithm = rl.PPO(config)
    cases: list[Case] = []
    for batch in (1, 8):
        policy = algorithm.policy(plan(batch))
        observations = rng.standard_normal((batch, OBSERVATION), dtype=np.float32)
        policy.act(observations, rng)   # compiles
        cases.append((f"policy step, B={batch}", "mskernel",
                      lambda p=policy, o=observations: p.act(o, rng)))
    learner = algorithm.learner(plan(8))
    columns = minibatch(rng)
    learner._step(*columns)   # compiles
    cases.append(("PPO update step, 256", "mskernel", lambda: learner._step(*columns)))
    q_config = rl.DQNConfig(batch_size=Q_MINIBATCH, hidden_sizes=(Q_HIDDEN, Q_HIDDEN))
    q_learner = rl.DQN(q_config).learner(plan(1))
    batch = (*transitions(rng), np.float32(0.0))
    q_learner._step(*batch)   # compiles
    cases.append(("DQN update step, 64", "mskernel", lambda: q_learner._step(*batch)))

    add = mskernel.jit(lambda a, b: a + b)
    arrays = (np.ones((8, OBSERVATION), np.float32), np.ones((8, OBSERVATION), np.float32))
    tensors = tuple(mskernel.Tensor(a) for a in arrays)
    add(*tensors)
    add(*arrays)
    cases += [("jit a + b, [8, 4]", "mskernel, Tensor arguments", lambda: add(*tensors)),
              ("jit a + b, [8, 4]", "mskernel, NumPy arguments", lambda: add(*arrays)),
              ("Tensor(array), [8, 4]", "mskernel", lambda: mskernel.Tensor(arrays[0]))]
    return cases


def numpy_policy_cases(rng: np.random.Generator) -> list[Case]:
    from mskernel_reinforcement.distributions import gumbel_noise

    sizes = [OBSERVATION, HIDDEN, HIDDEN]
    layers = [(rng.standard_normal((i, o), dtype=np.float32), np.zeros(o, np.float32))
              for i, o in zip(sizes, sizes[1:])]
    policy_out = rng.standard_normal((HIDDEN, ACTIONS), dtype=np.float32)
    value_out = rng.standard_normal((HIDDEN, 1), dtype=np.float32)

    def act(observations: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        h = v = observations
        for w, b in layers:
            h, v = np.tanh(h @ w + b), np.tanh(v @ w + b)
        logits, values = h @ policy_out, (v @ value_out)[:, 0]
        actions = np.argmax(logits + gumbel_noise(rng, logits.shape), -1)
        shifted = logits - logits.max(-1, keepdims=True)
        log_probs = shifted - np.log(np.exp(shifted).sum(-1, keepdims=True))
        return actions, log_probs[np.arange(len(actions)), actions], values

    return [(f"policy step, B={b}", "numpy",
             lambda o=rng.standard_normal((b, OBSERVATION), dtype=np.float32): act(o))
            for b in (1, 8)]


def torch_cases(rng: np.random.Generator) -> list[Case]:
    import torch
    from mskernel_reinforcement.distributions import gumbel_noise
    from torch import nn

    torch.set_num_threads(1)

    def mlp(out: int) -> nn.Sequential:
        return nn.Sequential(nn.Linear(OBSERVATION, HIDDEN), nn.Tanh(),
                             nn.Linear(HIDDEN, HIDDEN), nn.Tanh(), nn.Linear(HIDDEN, out))

    policy, value = mlp(ACTIONS), mlp(1)
    params = [*policy.parameters(), *value.parameters()]
    optimizer = torch.optim.Adam(params, lr=3e-4, eps=1e-5)

    @torch.no_grad()
    def act(observations: np.ndarray) -> tuple[np.ndarray, ...]:
        obs = torch.as_tensor(observations)
        logits, values = policy(obs), value(obs)[:, 0]
        noise = torch.as_tensor(gumbel_noise(rng, tuple(logits.shape)))
        actions = torch.argmax(logits + noise, -1)
        log_prob = torch.log_softmax(logits, -1).gather(-1, actions[:, None])[:, 0]
        return actions.numpy(), log_prob.numpy(), values.numpy()

    def update(observations: np.ndarray, actions: np.ndarray, old_log_prob: np.ndarray,
               advantages: np.ndarray, returns: np.ndarray, clip: np.float32) -> list[float]:
        obs, act_, old, adv, ret = (torch.as_tensor(c) for c in
                                    (observations, actions, old_log_prob, advantages, returns))
        logits, values = policy(obs), value(obs)[:, 0]
        log_probs = torch.log_softmax(logits, -1)
        log_prob = log_probs.gather(-1, act_.long()[:, None])[:, 0]
        adv = (adv - adv.mean()) / (adv.std() + 1e-8)
        ratio = torch.exp(log_prob - old)
        policy_loss = -torch.min(ratio * adv,
                                 torch.clamp(ratio, 1 - float(clip), 1 + float(clip)) * adv).mean()
        value_loss = ((ret - values) ** 2).mean()
        entropy = -(log_probs.exp() * log_probs).sum(-1).mean()
        loss = policy_loss + 0.5 * value_loss
        optimizer.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(params, 0.5)
        optimizer.step()
        return [loss.item(), policy_loss.item(), value_loss.item(), entropy.item()]

    q_sizes = [OBSERVATION, Q_HIDDEN, Q_HIDDEN, ACTIONS]
    q_layers = [nn.Linear(i, o) for i, o in zip(q_sizes, q_sizes[1:])]
    online = nn.Sequential(q_layers[0], nn.ReLU(), q_layers[1], nn.ReLU(), q_layers[2])
    target = copy.deepcopy(online).requires_grad_(False)
    q_optimizer = torch.optim.Adam(online.parameters(), lr=2.3e-3)

    def q_update(observations: np.ndarray, actions: np.ndarray, rewards: np.ndarray,
                 next_observations: np.ndarray, terminated: np.ndarray,
                 weights: np.ndarray) -> float:
        obs, act_, rew, nxt, term, w = (torch.as_tensor(c) for c in (
            observations, actions, rewards, next_observations, terminated, weights))
        with torch.no_grad():
            y = rew + 0.99 * (1 - term) * target(nxt).max(-1).values
        q = online(obs).gather(-1, act_.long()[:, None])[:, 0]
        loss = (w * nn.functional.smooth_l1_loss(q, y, reduction="none")).mean()
        q_optimizer.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(online.parameters(), 10.0)
        q_optimizer.step()
        return loss.item()

    columns, batch = minibatch(rng), transitions(rng)
    return [(f"policy step, B={b}", "torch",
             lambda o=rng.standard_normal((b, OBSERVATION), dtype=np.float32): act(o))
            for b in (1, 8)] + [("PPO update step, 256", "torch", lambda: update(*columns)),
                                ("DQN update step, 64", "torch", lambda: q_update(*batch))]


def measure(cases: list[Case], rounds: int, batch: int,
            clock: Callable[[], float]) -> dict[tuple[str, str], float]:
    """Median over rounds of each case's mean call time (seconds), cases interleaved."""
    samples: dict[tuple[str, str], list[float]] = {(m, f): [] for m, f, _ in cases}
    for r in range(rounds):
        for measurement, framework, call in (cases if r % 2 == 0 else cases[::-1]):
            start = clock()
            for _ in range(batch):
                call()
            samples[measurement, framework].append((clock() - start) / batch)
    return {key: statistics.median(times) for key, times in samples.items()}


def report(results: dict[tuple[str, str], float]) -> str:
    lines = ["| measurement | framework | time per call | mskernel ÷ this |", "|---|---|---|---|"]
    for measurement in dict.fromkeys(m for m, _ in results):
        ours = next(t for (m, f), t in results.items() if m == measurement
                    and f.startswith("mskernel"))
        for (m, framework), seconds in results.items():
            if m == measurement:
                ratio = "" if framework.startswith("mskernel") else f"{ours / seconds:.2f}"
                lines.append(f"| {m} | {framework} | {seconds * 1e6:.1f} µs | {ratio} |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--batch", type=int, default=500, help="calls per timed batch")
    parser.add_argument("--wall", action="store_true", help="wall-clock instead of CPU time")
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    cases = mskernel_cases(rng) + numpy_policy_cases(rng)
    try:
        cases += torch_cases(rng)
    except ImportError as exc:
        print(f"skipping torch: {exc}")
    clock = time.perf_counter if args.wall else time.process_time
    print(f"backend {mskernel.get_device()}, 1 thread, {args.rounds} rounds × {args.batch} "
          f"calls, median of rounds, {'wall-clock' if args.wall else 'CPU'} time, "
          f"load average {os.getloadavg()[0]:.1f}")
    print(report(measure(cases, args.rounds, args.batch, clock)))


if __name__ == "__main__":
    main()
