"""Port of MindSpore's beginner tutorial "Accelerating with Static Graphs" (docs:
tutorials/source_en/beginner/accelerate_with_static_graph.md), with ``mindspore`` renamed
``mskernel``: the six ways it runs one network, in one program."""

import numpy as np
import mskernel as ms
from mskernel import nn, Tensor


class Network(nn.Cell):
    def __init__(self):
        super().__init__()
        self.flatten = nn.Flatten()
        self.dense_relu_sequential = nn.SequentialCell(
            nn.Dense(28*28, 512),
            nn.ReLU(),
            nn.Dense(512, 512),
            nn.ReLU(),
            nn.Dense(512, 10)
        )

    def construct(self, x):
        x = self.flatten(x)
        logits = self.dense_relu_sequential(x)
        return logits


# dynamic graph mode
ms.set_context(mode=ms.PYNATIVE_MODE)
model = Network()
input = Tensor(np.ones([64, 1, 28, 28]).astype(np.float32))
output = model(input)
print(output)

# static graph mode
ms.set_context(mode=ms.GRAPH_MODE)
model = Network()
input = Tensor(np.ones([64, 1, 28, 28]).astype(np.float32))
output = model(input)
print(output)
ms.set_context(mode=ms.PYNATIVE_MODE)

# the jit decorator on a function building the network
input = Tensor(np.ones([64, 1, 28, 28]).astype(np.float32))


@ms.jit
def run(x):
    model = Network()
    return model(x)


output = run(input)
print(output)


# jit applied to a function
def run(x):
    model = Network()
    return model(x)


run_with_jit = ms.jit(run)
output = run_with_jit(input)
print(output)


# the jit decorator on construct
class Network(nn.Cell):
    def __init__(self):
        super().__init__()
        self.flatten = nn.Flatten()
        self.dense_relu_sequential = nn.SequentialCell(
            nn.Dense(28*28, 512),
            nn.ReLU(),
            nn.Dense(512, 512),
            nn.ReLU(),
            nn.Dense(512, 10)
        )

    @ms.jit
    def construct(self, x):
        x = self.flatten(x)
        logits = self.dense_relu_sequential(x)
        return logits


input = Tensor(np.ones([64, 1, 28, 28]).astype(np.float32))
model = Network()
output = model(input)
print(output)

# set_context once for the whole program
ms.set_context(mode=ms.GRAPH_MODE)
model = Network()
input = Tensor(np.ones([64, 1, 28, 28]).astype(np.float32))
output = model(input)
print(output)
