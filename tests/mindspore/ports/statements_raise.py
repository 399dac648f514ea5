"""Port of the ``raise`` example of MindSpore's "Graph Mode Syntax - Python Statements"
(docs: tutorials/source_en/compile/statements.md), with ``mindspore`` renamed ``mskernel``.
Like the tutorial's, the program ends with ``ValueError: x should be greater than y.``"""

import mskernel
from mskernel import nn


class Net(nn.Cell):
    def __init__(self):
        super(Net, self).__init__()

    @mskernel.jit
    def construct(self, x, y):
        if x <= y:
            raise ValueError("x should be greater than y.")
        else:
            x += 1
        return x


net = Net()
net(mskernel.tensor(-2), mskernel.tensor(-1))
