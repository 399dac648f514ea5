"""Port of MindSpore's beginner tutorial "Saving and Loading the Model" (docs: tutorials/
source_en/beginner/save_load.md), with ``mindspore`` renamed ``mskernel``."""

import numpy as np
import mskernel
from mskernel import nn
from mskernel import Tensor


def network():
    model = nn.SequentialCell(
                nn.Flatten(),
                nn.Dense(28*28, 512),
                nn.ReLU(),
                nn.Dense(512, 512),
                nn.ReLU(),
                nn.Dense(512, 10))
    return model


model = network()
mskernel.save_checkpoint(model, "model.ckpt")

model = network()
param_dict = mskernel.load_checkpoint("model.ckpt")
param_not_load, _ = mskernel.load_param_into_net(model, param_dict)
print(param_not_load)

mskernel.set_context(mode=mskernel.GRAPH_MODE, jit_syntax_level=mskernel.STRICT)
model = network()
inputs = Tensor(np.ones([1, 1, 28, 28]).astype(np.float32))
mskernel.export(model, inputs, file_name="model", file_format="MINDIR")

graph = mskernel.load("model.mindir")
model = nn.GraphCell(graph)
outputs = model(inputs)
print(outputs.shape)
