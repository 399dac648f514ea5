"""Port of MindSpore's beginner tutorial "Tensor" (docs: tutorials/source_en/beginner/
tensor.md), with ``mindspore`` renamed ``mskernel``."""

import numpy as np
import mskernel
from mskernel import ops
from mskernel import Tensor
from mskernel.common.initializer import One, Normal

data = [1, 0, 1, 0]
x_data = Tensor(data)
print(x_data, x_data.shape, x_data.dtype)

np_array = np.array(data)
x_np = Tensor(np_array)
print(x_np, x_np.shape, x_np.dtype)

tensor1 = mskernel.Tensor(shape=(2, 2), dtype=mskernel.float32, init=One())
tensor2 = mskernel.Tensor(shape=(2, 2), dtype=mskernel.float32, init=Normal())
print("tensor1:\n", tensor1)
print("tensor2:\n", tensor2)

x_ones = ops.ones_like(x_data)
print(f"Ones Tensor: \n {x_ones} \n")
x_zeros = ops.zeros_like(x_data)
print(f"Zeros Tensor: \n {x_zeros} \n")

x = Tensor(np.array([[1, 2], [3, 4]]), mskernel.int32)
print("x_shape:", x.shape)
print("x_dtype:", x.dtype)
print("x_itemsize:", x.itemsize)
print("x_nbytes:", x.nbytes)
print("x_ndim:", x.ndim)
print("x_size:", x.size)
print("x_strides:", x.strides)

tensor = Tensor(np.array([[0, 1], [2, 3]]).astype(np.float32))
print("First row: {}".format(tensor[0]))
print("value of bottom right corner: {}".format(tensor[1, 1]))
print("Last column: {}".format(tensor[:, -1]))
print("First column: {}".format(tensor[..., 0]))

x = Tensor(np.array([1, 2, 3]), mskernel.float32)
y = Tensor(np.array([4, 5, 6]), mskernel.float32)
print("add:", x + y)
print("sub:", x - y)
print("mul:", x * y)
print("div:", y / x)
print("mod:", y % x)
print("floordiv:", y // x)

data1 = Tensor(np.array([[0, 1], [2, 3]]).astype(np.float32))
data2 = Tensor(np.array([[4, 5], [6, 7]]).astype(np.float32))
output = ops.concat((data1, data2), axis=0)
print(output)
print("shape:\n", output.shape)

output = ops.stack([data1, data2])
print(output)
print("shape:\n", output.shape)

t = Tensor([1., 1., 1., 1., 1.])
print(f"t: {t}", type(t))
n = t.asnumpy()
print(f"n: {n}", type(n))

n = np.ones(5)
t = Tensor.from_numpy(n)
np.add(n, 1, out=n)
print(f"n: {n}", type(n))
print(f"t: {t}", type(t))
