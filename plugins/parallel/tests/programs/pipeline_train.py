"""Train a four-layer perceptron as pipeline stages (1F1B over micro-batches), or alone, and
save the losses and parameters for the test to compare.

    mskernel run -n 2 pipeline_train.py --out DIR --micro 4     # 2 stages x 4 micro-batches
    python pipeline_train.py --out DIR --serial --stages 2
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

import mskernel
from mskernel import communication, nn, ops
from mskernel.parallel import PipelineSGD

BATCH, WIDTH, STEPS, LR = 16, 12, 3, 0.1


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--stages", type=int, default=0, help="default: the ranks")
    parser.add_argument("--micro", type=int, default=4)
    parser.add_argument("--serial", action="store_true")
    parser.add_argument("--recompute", action="store_true", help="every stage recomputes")
    parser.add_argument("--cells", type=int, default=0,
                        help="this many cells, grouped into the stages by their predicted cost")
    args = parser.parse_args()
    communication.init()
    count = args.stages or communication.get_group_size()
    rng = np.random.default_rng(0)
    stages = [nn.SequentialCell([nn.Dense(WIDTH, WIDTH), nn.Tanh()])
              for _ in range(args.cells or count)]
    for s, stage in enumerate(stages):
        for name, p in stage.parameters_and_names():
            p.name = f"stage{s}.{name}"
            p.set_data(mskernel.Tensor(rng.standard_normal(p.shape).astype(np.float32) * 0.5))
    batches = [(rng.standard_normal((BATCH, WIDTH)).astype(np.float32),
                rng.standard_normal((BATCH, WIDTH)).astype(np.float32)) for _ in range(STEPS)]

    def loss_fn(out, y):  # type: ignore[no-untyped-def]
        return ops.mean(ops.square(out - y))

    if args.serial:
        params = [p for stage in stages for _, p in stage.parameters_and_names()]

        def whole(x, y):  # type: ignore[no-untyped-def]
            for stage in stages:
                x = stage(x)
            return loss_fn(x, y)

        step = mskernel.value_and_grad(whole, grad_position=None, weights=params)
        losses = []
        for x, y in batches:
            loss, grads = step(x, y)
            for p, g in zip(params, grads):
                p.set_data(mskernel.Tensor(p.numpy() - LR * g.numpy()))
            losses.append(float(loss.numpy()))
        result = {p.name: p.numpy() for p in params}
    else:
        build = PipelineSGD.from_cells if args.cells else PipelineSGD
        trainer = build(stages, loss_fn, *batches[0], micro_batches=args.micro,
                        learning_rate=LR, recompute=args.recompute)
        if communication.get_rank() == 0:
            print(f"stages {trainer.assignment}", flush=True)
        losses = [trainer.step(x, y) for x, y in batches]
        print(f"stage {communication.get_rank()} held {trainer.peak_held} micro-batches",
              flush=True)
        result = trainer.parameters()
    if communication.get_rank() == 0:
        args.out.mkdir(parents=True, exist_ok=True)
        np.savez(args.out / "result.npz", losses=np.array(losses),
                 **{f"param:{n}": w for n, w in result.items()})


if __name__ == "__main__":
    main()
