"""The anchor workloads, framework-free: shapes, the shared batch, the optimizer settings and
the FLOPs of one step.

Every framework's models (:mod:`.torch_models`, :mod:`.mskernel_models`) are built from these
figures, so the two implementations have the same layers, the same loss and the same update:

- ``lenet5`` — LeNet-5 on 1×32×32 images: conv5×5 → 6, ReLU, max-pool 2, conv5×5 → 16,
  ReLU, max-pool 2, dense 400 → 120 → 84 → 10 (ReLU between); softmax cross-entropy;
- ``mlp`` — 784 → 1024 → 1024 → 10 with ReLU; softmax cross-entropy;
- ``resnet_small`` — 3×32×32: conv3×3 → 16 + batch norm + ReLU, three basic blocks (16;
  32 stride 2 and 64 stride 2, each with a 1×1 conv + batch norm shortcut), global average
  pool, dense 64 → 10; softmax cross-entropy;
- ``transformer`` — one post-LN encoder layer (d 256, 4 heads, FFN 1024 ReLU, no dropout) on
  sequences of 128, mean squared error against a random target;
- ``inference_lenet`` — LeNet-5's forward pass only, in inference mode.

A training step is forward, loss, backward and SGD with momentum 0.9 (lr 0.01, no dampening:
PyTorch's ``SGD`` and MindSpore's ``Momentum`` are the same update), and ends with the loss
on the host; an inference step ends with the output on the host.  One fixed batch is reused
every step (no data pipeline).

FLOPs count matmuls and convolutions only (2 per multiply-add), as
``torch.utils.flop_counter`` does, plus the attention products it misses; a training step is
three times the forward pass less the input gradient of the first layer (nobody needs it).
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import pairwise

import numpy as np

LEARNING_RATE = 0.01
MOMENTUM = 0.9
#: seeds of the weights (each framework's own generator) and of the shared batch
WEIGHT_SEED, BATCH_SEED = 0, 1

CLASSES = 10
D_MODEL, HEADS, D_FF, SEQ = 256, 4, 1024, 128
#: (in_channels, out_channels, stride) of resnet_small's basic blocks, after a 16-channel stem
RESNET_BLOCKS = ((16, 16, 1), (16, 32, 2), (32, 64, 2))
MLP_SIZES = (784, 1024, 1024, CLASSES)


def dense_flops(rows: int, fan_in: int, fan_out: int) -> int:
    return 2 * rows * fan_in * fan_out


def conv_flops(batch: int, c_in: int, c_out: int, kernel: int, out_size: int) -> int:
    return 2 * batch * c_out * out_size * out_size * c_in * kernel * kernel


def _lenet_layers(w: Workload) -> list[int]:
    b = w.batch
    return [conv_flops(b, 1, 6, 5, 28), conv_flops(b, 6, 16, 5, 10),
            dense_flops(b, 400, 120), dense_flops(b, 120, 84), dense_flops(b, 84, CLASSES)]


def _mlp_layers(w: Workload) -> list[int]:
    return [dense_flops(w.batch, i, o) for i, o in pairwise(w.mlp_sizes)]


def _resnet_layers(w: Workload) -> list[int]:
    b = w.batch
    layers, size = [conv_flops(b, 3, 16, 3, 32)], 32
    for c_in, c_out, stride in RESNET_BLOCKS:
        size //= stride
        layers += [conv_flops(b, c_in, c_out, 3, size), conv_flops(b, c_out, c_out, 3, size)]
        if stride != 1 or c_in != c_out:
            layers.append(conv_flops(b, c_in, c_out, 1, size))
    return layers + [dense_flops(b, 64, CLASSES)]


def _transformer_layers(w: Workload) -> list[int]:
    b, seq = w.batch, w.seq
    tokens = b * seq
    return [dense_flops(tokens, D_MODEL, 3 * D_MODEL),        # q, k, v projections
            2 * 2 * b * seq * seq * D_MODEL,                  # q kᵀ and attention · v
            dense_flops(tokens, D_MODEL, D_MODEL),            # output projection
            dense_flops(tokens, D_MODEL, D_FF), dense_flops(tokens, D_FF, D_MODEL)]


_LAYERS = {"lenet5": _lenet_layers, "inference_lenet": _lenet_layers, "mlp": _mlp_layers,
           "resnet_small": _resnet_layers, "transformer": _transformer_layers}


@dataclass(frozen=True)
class Workload:
    """One anchor workload at one batch size (``key`` is ``"<name>_b<batch>"``, with
    ``_h<hidden>`` / ``_s<seq>`` when the MLP's width or the transformer's sequence differs
    from the anchor's, as in the scaling sweep)."""

    name: str
    batch: int
    #: the MLP's hidden width
    hidden: int = MLP_SIZES[1]
    #: the transformer's sequence length
    seq: int = SEQ

    @property
    def key(self) -> str:
        key = f"{self.name}_b{self.batch}"
        if self.hidden != MLP_SIZES[1]:
            key += f"_h{self.hidden}"
        return key + (f"_s{self.seq}" if self.seq != SEQ else "")

    @property
    def mlp_sizes(self) -> tuple[int, ...]:
        """The MLP's layer widths, both hidden layers ``hidden`` wide."""
        return (MLP_SIZES[0], self.hidden, self.hidden, CLASSES)

    @property
    def training(self) -> bool:
        return self.name != "inference_lenet"

    @property
    def gemm_bound(self) -> bool:
        """Whether nearly all its time should be GEMM (compared with the machine's SGEMM)."""
        return self.name in ("mlp", "transformer")

    @property
    def input_shape(self) -> tuple[int, ...]:
        b = self.batch
        return {"mlp": (b, MLP_SIZES[0]), "resnet_small": (b, 3, 32, 32),
                "transformer": (b, self.seq, D_MODEL)}.get(self.name, (b, 1, 32, 32))

    @property
    def forward_flop(self) -> int:
        return sum(_LAYERS[self.name](self))

    @property
    def step_flop(self) -> int:
        """The FLOPs of one step: the forward pass, or a whole training step."""
        if not self.training:
            return self.forward_flop
        return 3 * self.forward_flop - _LAYERS[self.name](self)[0]

    def batch_arrays(self) -> tuple[np.ndarray, np.ndarray]:
        """The fixed batch both frameworks use: float32 inputs and the labels (int64 class
        indices, or the transformer's float32 regression target)."""
        rng = np.random.default_rng(BATCH_SEED)
        x = rng.standard_normal(self.input_shape, dtype=np.float32)
        if self.name == "transformer":
            return x, rng.standard_normal(self.input_shape, dtype=np.float32)
        return x, rng.integers(0, CLASSES, self.batch, dtype=np.int64)


WORKLOADS = {w.key: w for w in (
    Workload("lenet5", 32), Workload("lenet5", 256), Workload("mlp", 128),
    Workload("resnet_small", 64), Workload("transformer", 16),
    Workload("inference_lenet", 1), Workload("inference_lenet", 256))}

#: the scaling sweep: the MLP at hidden widths 256 → 4096, the transformer at sequences
#: 64 → 512 (the anchors' own sizes included), to see how each framework's cost grows
SWEEP = {w.key: w for w in (
    *(Workload("mlp", 128, hidden=h) for h in (256, 512, 1024, 2048, 4096)),
    *(Workload("transformer", 16, seq=s) for s in (64, 128, 256, 512)))}

#: every workload a measurement can name
ALL_WORKLOADS = WORKLOADS | SWEEP
