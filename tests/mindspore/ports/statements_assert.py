"""Port of the ``assert`` example of MindSpore's "Graph Mode Syntax - Python Statements"
(docs: tutorials/source_en/compile/statements.md), with ``mindspore`` renamed ``mskernel``.
Like the tutorial's, the program ends with an ``AssertionError``."""

import mskernel
from mskernel import nn


class Net(nn.Cell):
    def __init__(self):
        super(Net, self).__init__()

    @mskernel.jit
    def construct(self, x):
        assert x in [2, 3, 4]
        return x


net = Net()
net(mskernel.tensor(-1))
