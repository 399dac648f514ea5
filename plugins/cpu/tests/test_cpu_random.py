"""The random ops on the cpu backend beyond the conformance samples: draws large enough to take
the vectorised and multi-threaded paths agree with the reference interpreter (bit for bit for
keys, integers, booleans, permutations and categories; within the dtype's tolerance for floats),
do not depend on the thread count, and have the moments their distributions promise."""

from __future__ import annotations

import math

import numpy as np
import pytest

from mskernel_sdk import OpSample, assert_close, dtype as to_dtype, run_reference, sample_graph

import mskernel_cpu

KEY = np.array([0x12345678, 0x9ABCDEF0], np.uint32)
N = 1 << 20


def run_both(compile_cpu, op, args, **attrs):
    """(cpu result, reference result) as host arrays."""
    graph = sample_graph(OpSample(op, tuple(args), attrs))
    (expected,) = run_reference(graph, list(args))
    (actual,) = compile_cpu(graph).run(list(args))
    return actual.to_host(), expected


def run_cpu(compile_cpu, op, args, **attrs):
    graph = sample_graph(OpSample(op, tuple(args), attrs))
    (actual,) = compile_cpu(graph).run(list(args))
    return actual.to_host()


@pytest.fixture
def threads():
    """set_num_threads for one test, restored afterwards."""
    before = mskernel_cpu.get_num_threads()
    yield mskernel_cpu.set_num_threads
    mskernel_cpu.set_num_threads(before)


def test_threefry_known_answers(compile_cpu):
    # Random123's known-answer vectors for Threefry-2x32-20; random_split's row j is the block
    # of counter (0, j), so a zero key's first row is T((0, 0), (0, 0)).
    got = run_cpu(compile_cpu, "random_split", [np.zeros(2, np.uint32)], num=1)
    assert [hex(v) for v in got[0]] == ["0x6b200159", "0x99ba4efe"]


EXACT_DRAWS = {
    "bits": ("random_bits", {"shape": (N,)}),
    "bernoulli": ("random_bernoulli", {"shape": (N,), "p": 0.3}),
    "randint_small": ("random_randint", {"shape": (N,), "minval": -7, "maxval": 1000,
                                         "dtype": "int32"}),
    "randint_pow2": ("random_randint", {"shape": (N,), "minval": 3, "maxval": 3 + 256,
                                        "dtype": "uint16"}),
    "randint_wide": ("random_randint", {"shape": (N,), "minval": -(2**62), "maxval": 2**62,
                                        "dtype": "int64"}),
    "permutation": ("random_permutation", {"n": N}),
    "permutation_small": ("random_permutation", {"n": 1000}),
    "split": ("random_split", {"num": 1 << 16}),
}


@pytest.mark.parametrize("case", sorted(EXACT_DRAWS))
def test_exact_draws_match_reference(case, compile_cpu):
    op, attrs = EXACT_DRAWS[case]
    got, want = run_both(compile_cpu, op, [KEY], **attrs)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(got, want)


FLOAT_DRAWS = {
    "uniform": ("random_uniform", {"minval": -3.0, "maxval": 0.5}),
    "normal": ("random_normal", {"mean": 1.0, "std": 2.0}),
    "truncated_normal": ("random_truncated_normal", {"lower": -0.5, "upper": 4.0}),
    "truncated_tail": ("random_truncated_normal", {"lower": 1.0, "upper": math.inf, "std": 2.0}),
}


@pytest.mark.parametrize("dt", ["float32", "float64", "float16", "bfloat16"])
@pytest.mark.parametrize("case", sorted(FLOAT_DRAWS))
def test_float_draws_match_reference(case, dt, compile_cpu):
    op, attrs = FLOAT_DRAWS[case]
    n = N if dt in ("float32", "float64") else N // 16
    got, want = run_both(compile_cpu, op, [KEY], shape=(n,), dtype=dt, **attrs)
    assert_close(got, want, to_dtype(dt), what=f"{op} {dt}")


@pytest.mark.parametrize("dt", ["float32", "float64"])
def test_categorical_matches_reference(dt, compile_cpu):
    rng = np.random.default_rng(0)
    logits = rng.normal(size=(512, 1000)).astype(dt)
    logits[:, 7] = -np.inf
    got, want = run_both(compile_cpu, "random_categorical", [KEY, logits])
    np.testing.assert_array_equal(got, want)


def test_uniform_stays_below_maxval(compile_cpu):
    # float16 rounds values just below 1.0 up to 1.0; the cap keeps them in [0, 1).
    for dt in ("float16", "bfloat16"):
        got = run_cpu(compile_cpu, "random_uniform", [KEY], shape=(N // 4,), dtype=dt)
        assert got.max() < 1.0 and got.min() >= 0.0


SAME_FOR_ANY_THREADS = [
    ("random_normal", [KEY], {"shape": (N,)}),
    ("random_normal", [KEY], {"shape": (N // 4,), "dtype": "float64"}),
    ("random_uniform", [KEY], {"shape": (N,)}),
    ("random_bits", [KEY], {"shape": (N,)}),
    ("random_permutation", [KEY], {"n": N // 4}),
    ("random_categorical", [KEY, np.zeros((4096, 64), np.float32)], {}),
]


@pytest.mark.parametrize("op,args,attrs", SAME_FOR_ANY_THREADS,
                         ids=[f"{op}-{i}" for i, (op, _, _) in enumerate(SAME_FOR_ANY_THREADS)])
def test_thread_count_does_not_change_draws(op, args, attrs, compile_cpu, threads):
    threads(1)
    one = run_cpu(compile_cpu, op, args, **attrs)
    threads(2)
    two = run_cpu(compile_cpu, op, args, **attrs)
    np.testing.assert_array_equal(one, two)


@pytest.mark.parametrize("dt", ["float32", "float64"])
def test_moments(dt, compile_cpu):
    # Mean and variance within 5 standard errors (for a normal, var(s^2) = 2 sigma^4 / n).
    uniform = run_cpu(compile_cpu, "random_uniform", [KEY], shape=(N,), dtype=dt)
    assert abs(uniform.mean() - 0.5) < 5 * math.sqrt(1 / 12 / N)
    assert abs(uniform.var() - 1 / 12) < 5 * math.sqrt(1 / 180 / N)
    normal = run_cpu(compile_cpu, "random_normal", [KEY], shape=(N,), dtype=dt, mean=1.0, std=3.0)
    assert abs(normal.mean() - 1.0) < 5 * 3.0 / math.sqrt(N)
    assert abs(normal.var() - 9.0) < 5 * 9.0 * math.sqrt(2 / N)
    bits = run_cpu(compile_cpu, "random_bits", [KEY], shape=(N,))
    ones = np.unpackbits(bits.view(np.uint8)).mean()
    assert abs(ones - 0.5) < 5 * 0.5 / math.sqrt(32 * N)


def test_reshaping_a_draw_does_not_change_it(compile_cpu):
    flat = run_cpu(compile_cpu, "random_normal", [KEY], shape=(24,))
    shaped = run_cpu(compile_cpu, "random_normal", [KEY], shape=(2, 3, 4))
    np.testing.assert_array_equal(shaped.reshape(-1), flat)
