"""Port of MindSpore's "Graph Mode Syntax - Python Statements" (docs: tutorials/source_en/
compile/statements.md), with ``mindspore`` renamed ``mskernel``: every example that does not
end in an error (``raise`` and ``assert`` are ports of their own).  Left out: the ``for``
example that assigns a global tensor with ``z += i`` (Python, unlike MindSpore's parser,
rejects that without ``global``), and the generator expression a jitted function returns
(MindSpore makes it a list)."""

import mskernel
from mskernel import nn


class Net(nn.Cell):
    @mskernel.jit
    def construct(self, x):
        i = 0
        while i < 5:
            if i > 3:
                pass
            else:
                x = x * 1.5
            i += 1
        return x


net = Net()
ret = net(10)
print("ret:", ret)


class Net(nn.Cell):
    @mskernel.jit
    def construct(self, x):
        if x > 0:
            return x
        else:
            return 0


net = Net()
ret = net(10)
print("ret:", ret)


@mskernel.jit
def foo():
    x = 3
    print("x:", x)


res = foo()
assert res is None


class Net(nn.Cell):
    @mskernel.jit
    def construct(self, x):
        for i in range(8):
            if i > 5:
                x *= 3
                break
            x = x * 2
        return x


net = Net()
ret = net(10)
print("ret:", ret)


class Net(nn.Cell):
    @mskernel.jit
    def construct(self, x):
        for i in range(4):
            if i > 2:
                x *= 3
                continue
        return x


net = Net()
ret = net(3)
print("ret:", ret)

x = mskernel.tensor([1, 4], mskernel.int32)
y = mskernel.tensor([0, 3], mskernel.int32)
m = 1
n = 2


@mskernel.jit()
def test_cond(x, y):
    if (x > y).any():
        return m
    else:
        return n


ret = test_cond(x, y)
print('ret:{}'.format(ret))


@mskernel.jit()
def test_cond(x, y):
    out = 3
    if (x > y).any():
        out = m
    else:
        out = n
    return out


ret = test_cond(x, y)
print('ret:{}'.format(ret))


@mskernel.jit()
def test_cond(x, y):
    out = 2
    if (x > y).any():
        out = m
    return out


ret = test_cond(x, y)
print('ret:{}'.format(ret))


@mskernel.jit()
def test_cond(x, y):
    while x < y:
        x += 1
        return m
    return n


ret = test_cond(1, 5)
print('ret:{}'.format(ret))


def ops1(a, b):
    return a + b


@mskernel.jit()
def test_cond(x, y):
    out = m
    while x < y:
        x += 1
        out = ops1(out, x)
    return out


ret = test_cond(1, 5)
print('ret:{}'.format(ret))


def number_add(x, y):
    return x + y


@mskernel.jit()
def test(x, y):
    return number_add(x, y)


ret = test(1, 5)
print('ret:{}'.format(ret))


@mskernel.jit()
def test(x, y):
    number_add = lambda x, y: x + y
    return number_add(x, y)


ret = test(1, 5)
print('ret:{}'.format(ret))

from mskernel import ops


def add(x, y):
    return x + y


@mskernel.jit()
def test():
    add_ = ops.partial(add, x=2)
    m = add_(y=3)
    n = add_(y=5)
    return m, n


m, n = test()
print('m:{}'.format(m))
print('n:{}'.format(n))


@mskernel.jit()
def test():
    l = [x * x for x in range(1, 11) if x % 2 == 0]
    return l


ret = test()
print('ret:{}'.format(ret))


@mskernel.jit()
def test():
    x = [('a', 1), ('b', 2), ('c', 3)]
    res = {k: v for (k, v) in x if v > 1}
    return res


ret = test()
print('ret:{}'.format(ret))


@mskernel.jit_class
class Sample:
    def __init__(self):
        super(Sample, self).__init__()
        self.num = mskernel.tensor([2])

    def __enter__(self):
        return self.num * 2

    def __exit__(self, exc_type, exc_value, traceback):
        return self.num * 4


class TestNet(nn.Cell):
    @mskernel.jit
    def construct(self):
        res = 1
        obj = Sample()
        with obj as sample:
            res += sample
        return res, obj.num


test_net = TestNet()
out1, out2 = test_net()
print("out1:", out1)
print("out2:", out2)
