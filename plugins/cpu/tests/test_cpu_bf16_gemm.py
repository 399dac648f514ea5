"""bfloat16 matmul on the CPU's AMX tiles or AVX-512 BF16 dot products (bf16_gemm.cpp): every
layout, odd and tile-crossing sizes, batches and the fused epilogue, against the exact product
of the same bfloat16 values, within the error of a float32 sum of ``k`` terms and one
bfloat16 rounding."""

from __future__ import annotations

import numpy as np
import pytest

import mskernel
from mskernel import ops as F
from mskernel_sdk import Tensor, tolerance_for_reduction

SHAPES = [  # n, k, m: single elements, odd k, tails of the 32 x 32 blocks and 128-row blocks
    (1, 1, 1), (3, 5, 7), (16, 32, 16), (33, 17, 45), (31, 64, 33), (130, 129, 70),
    (257, 96, 31),
]


def bf16(rng, shape):
    return Tensor(rng.standard_normal(shape).astype(np.float32)).astype(mskernel.bfloat16)


def exact(t):
    return t.astype(mskernel.float32).asnumpy().astype(np.float64)


def within(got, expected, k, magnitude):
    rtol, atol = tolerance_for_reduction("bfloat16", k, magnitude, accumulator="float32")
    error = np.abs(got - expected)
    bound = atol + rtol * np.abs(expected)
    assert np.all(error <= bound), f"worst excess {np.max(error - bound)} at k={k}"


def check(got, a, b, k):
    within(exact(got), a @ b, k, np.abs(a) @ np.abs(b))


@pytest.mark.parametrize("n,k,m", SHAPES)
@pytest.mark.parametrize("ta,tb", [(False, False), (True, False), (False, True), (True, True)])
def test_bf16_matmul_every_layout(n, k, m, ta, tb):
    rng = np.random.default_rng(n * 1000 + k)
    x = bf16(rng, (k, n) if ta else (n, k))
    y = bf16(rng, (m, k) if tb else (k, m))

    @mskernel.jit
    def product(x, y):
        return F.matmul(F.transpose(x) if ta else x, F.transpose(y) if tb else y)

    out = product(x, y)
    assert out.dtype is mskernel.bfloat16
    xa, ya = exact(x), exact(y)
    check(out, xa.T if ta else xa, ya.T if tb else ya, k)


def test_bf16_batched_matmul_with_broadcast():
    rng = np.random.default_rng(7)
    x, y = bf16(rng, (3, 2, 40, 33)), bf16(rng, (2, 33, 50))
    out = mskernel.jit(F.matmul)(x, y)
    check(out, exact(x), exact(y)[None], 33)


def test_bf16_dense_with_fused_bias_and_relu():
    rng = np.random.default_rng(8)
    x, w, b = bf16(rng, (64, 96)), bf16(rng, (96, 48)), bf16(rng, (48,))

    @mskernel.jit
    def dense(x, w, b):
        return F.relu(F.add(F.matmul(x, w), b))

    out = exact(dense(x, w, b))
    pre = exact(x) @ exact(w) + exact(b)
    within(out, np.maximum(pre, 0), 97, np.abs(exact(x)) @ np.abs(exact(w)) + np.abs(exact(b)))


def test_the_avx512_path_where_amx_is_switched_off():
    """The AVX-512 BF16 kernels (the path of CPUs without AMX), in a process told not to use
    AMX: the layouts and tails above, checked the same way."""
    import os
    import subprocess
    import sys

    code = (f"import sys; sys.path.insert(0, {os.path.dirname(__file__)!r}); "
            "import test_cpu_bf16_gemm as t\n"
            "for n, k, m in t.SHAPES:\n"
            "    for ta in (False, True):\n"
            "        t.test_bf16_matmul_every_layout(n, k, m, ta, not ta)\n"
            "t.test_bf16_batched_matmul_with_broadcast()\n"
            "print('ok')")
    env = {**os.environ, "MSKERNEL_CPU_AMX": "0"}
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0 and done.stdout.strip().endswith("ok"), done.stderr[-2000:]
