"""Port of MindSpore's beginner tutorial "Functional Automatic Differentiation" (docs:
tutorials/source_en/beginner/autograd.md), with ``mindspore`` renamed ``mskernel``."""

import numpy as np
import mskernel
from mskernel import ops, nn, Tensor, Parameter

np.random.seed(42)
x = ops.ones(5, mskernel.float32)  # input tensor
y = ops.zeros(3, mskernel.float32)  # expected output
w = Parameter(Tensor(np.random.randn(5, 3), mskernel.float32), name='w')  # weight
b = Parameter(Tensor(np.random.randn(3,), mskernel.float32), name='b')  # bias


def function(x, y, w, b):
    z = ops.matmul(x, w) + b
    loss = ops.binary_cross_entropy_with_logits(z, y, ops.ones_like(z), ops.ones_like(z))
    return loss


loss = function(x, y, w, b)
print(loss)

grad_fn = mskernel.grad(function, (2, 3))
grads = grad_fn(x, y, w, b)
print(grads)


def function_with_logits(x, y, w, b):
    z = ops.matmul(x, w) + b
    loss = ops.binary_cross_entropy_with_logits(z, y, ops.ones_like(z), ops.ones_like(z))
    return loss, z


grad_fn = mskernel.grad(function_with_logits, (2, 3))
grads = grad_fn(x, y, w, b)
print(grads)


def function_stop_gradient(x, y, w, b):
    z = ops.matmul(x, w) + b
    loss = ops.binary_cross_entropy_with_logits(z, y, ops.ones_like(z), ops.ones_like(z))
    return loss, ops.stop_gradient(z)


grad_fn = mskernel.grad(function_stop_gradient, (2, 3))
grads = grad_fn(x, y, w, b)
print(grads)

grad_fn = mskernel.grad(function_with_logits, (2, 3), has_aux=True)
grads, (z,) = grad_fn(x, y, w, b)
print(grads, z)


class Network(nn.Cell):
    def __init__(self):
        super().__init__()
        self.w = w
        self.b = b

    def construct(self, x):
        z = ops.matmul(x, self.w) + self.b
        return z


model = Network()
loss_fn = nn.BCEWithLogitsLoss()


def forward_fn(x, y):
    z = model(x)
    loss = loss_fn(z, y)
    return loss


grad_fn = mskernel.value_and_grad(forward_fn, None, weights=model.trainable_params())
loss, grads = grad_fn(x, y)
print(grads)
