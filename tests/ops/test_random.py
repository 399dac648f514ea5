"""Random ops: the Threefry bit generator against Random123's known answers, the documented key
and counter layout, determinism, independence of derived keys, and the distributions (with
SciPy as the oracle).

Statistical checks use fixed keys, so they are deterministic; their bounds (5 standard errors,
KS p-value above 1e-3) are ones a correct generator passes for all but a tiny fraction of
keys, while a biased transform (wrong scale, off-by-one range, a lost tail) fails them.
"""

import itertools
import math
import re

import numpy as np
import pytest
from scipy import stats

from mskernel.errors import OpError
from mskernel.ir import GraphBuilder, tensor_type
from mskernel.ops import op_registry
from mskernel.ops.random import OPS, ndtri, threefry2x32
from mskernel.runtime.interpreter import run_graph

N = 100_000


def run(op, *args, **attrs):
    b = GraphBuilder()
    inputs = [b.input(tensor_type(np.asarray(a).dtype, np.shape(a))) for a in args]
    return run_graph(b.build([b.op(op, *inputs, **attrs)]), args)[0]


def key(seed):
    return run("random_key", seed=seed)


def T(k, c0, c1):
    y0, y1 = threefry2x32(np.array(k, np.uint32), np.array([c0], np.uint32),
                          np.array([c1], np.uint32))
    return int(y0[0]), int(y1[0])


def reference(op, *args, **attrs):
    """Call an op's reference directly (many small draws without building graphs)."""
    opdef = op_registry().get(op)
    return opdef.reference(*args, **opdef.bind_attrs(attrs))


def assert_moments(x, mean, var):
    """Sample mean and variance within 5 standard errors of the true ones."""
    x = np.asarray(x, np.float64)
    n = x.size
    assert abs(x.mean() - mean) < 5 * math.sqrt(var / n), (x.mean(), mean)
    m4 = np.mean((x - x.mean()) ** 4)
    assert abs(x.var() - var) < 5 * math.sqrt((m4 - var**2) / n), (x.var(), var)


# -- Threefry-2x32 --------------------------------------------------------------------------------

# Random123 kat_vectors: (rounds, counter, key, result).
KAT = [
    (20, (0x00000000, 0x00000000), (0x00000000, 0x00000000), (0x6B200159, 0x99BA4EFE)),
    (20, (0xFFFFFFFF, 0xFFFFFFFF), (0xFFFFFFFF, 0xFFFFFFFF), (0x1CB996FC, 0xBB002BE7)),
    (20, (0x243F6A88, 0x85A308D3), (0x13198A2E, 0x03707344), (0xC4923A9C, 0x483DF7A0)),
    (13, (0x00000000, 0x00000000), (0x00000000, 0x00000000), (0x9D1C5EC6, 0x8BD50731)),
    (13, (0xFFFFFFFF, 0xFFFFFFFF), (0xFFFFFFFF, 0xFFFFFFFF), (0xFD36D048, 0x2D17272C)),
    (13, (0x243F6A88, 0x85A308D3), (0x13198A2E, 0x03707344), (0xBA3E4725, 0xF27D669E)),
    (32, (0x00000000, 0x00000000), (0x00000000, 0x00000000), (0xCEE3D47E, 0xA23DFD5C)),
    (32, (0xFFFFFFFF, 0xFFFFFFFF), (0xFFFFFFFF, 0xFFFFFFFF), (0x6E2FE0D0, 0xB1B76F82)),
]


@pytest.mark.parametrize("rounds, counter, k, expected", KAT)
def test_threefry_matches_random123_known_answers(rounds, counter, k, expected):
    y0, y1 = threefry2x32(np.array(k, np.uint32), np.array([counter[0]], np.uint32),
                          np.array([counter[1]], np.uint32), rounds)
    assert (int(y0[0]), int(y1[0])) == expected


def test_threefry_is_elementwise_over_counter_arrays():
    k = np.array([0x13198A2E, 0x03707344], np.uint32)
    c0 = np.array([0, 0xFFFFFFFF, 0x243F6A88, 5], np.uint32)
    c1 = np.array([0, 0xFFFFFFFF, 0x85A308D3, 9], np.uint32)
    y0, y1 = threefry2x32(k, c0, c1)
    assert (int(y0[2]), int(y1[2])) == (0xC4923A9C, 0x483DF7A0)
    assert [(int(a), int(b)) for a, b in zip(y0, y1)] == [T(k, a, b) for a, b in zip(c0, c1)]


# -- keys and the counter layout ----------------------------------------------------------------

@pytest.mark.parametrize("seed, words", [
    (0, (0, 0)), (42, (0, 42)), (2**32 + 7, (1, 7)), (-1, (0xFFFFFFFF, 0xFFFFFFFF)),
    (2**64 - 1, (0xFFFFFFFF, 0xFFFFFFFF)), (-(2**63), (0x80000000, 0)),
])
def test_random_key_splits_the_seed_into_two_words(seed, words):
    k = key(seed)
    assert k.dtype == np.uint32 and k.shape == (2,)
    assert tuple(int(w) for w in k) == words


def test_seed_wider_than_64_bits_is_rejected():
    with pytest.raises(OpError, match=r"random_key.*seed must fit in 64 bits"):
        GraphBuilder().op("random_key", seed=2**64)


def test_split_fold_in_and_draws_follow_the_documented_counters():
    k = key(1234)
    split = run("random_split", k, num=3)
    assert [tuple(map(int, row)) for row in split] == [T(k, 0, j) for j in range(3)]
    assert tuple(map(int, run("random_fold_in", k, data=7))) == T(k, 0xFFFFFFFF, 7)
    assert tuple(map(int, run("random_fold_in", k, data=-1))) == T(k, 0xFFFFFFFF, 0xFFFFFFFF)
    bits = run("random_bits", k, shape=(2, 3))
    assert [int(b) for b in bits.ravel()] == [T(k, 6, i)[0] for i in range(6)]
    (word,) = run("random_randint", k, shape=(1,), minval=0, maxval=2**64, dtype="uint64")
    hi, lo = T(k, 1, 0)
    assert int(word) == hi << 32 | lo


def test_same_key_gives_same_numbers_and_other_keys_do_not():
    a = run("random_normal", key(5), shape=(100,))
    np.testing.assert_array_equal(a, run("random_normal", key(5), shape=(100,)))
    assert not np.any(a == run("random_normal", key(6), shape=(100,)))


def test_draws_depend_on_size_not_arrangement():
    k = key(3)
    np.testing.assert_array_equal(run("random_bits", k, shape=(2, 3)),
                                  run("random_bits", k, shape=(6,)).reshape(2, 3))
    # different sizes share no counter: no value of one draw appears in the other
    short, long = run("random_bits", k, shape=(500,)), run("random_bits", k, shape=(1000,))
    assert np.intersect1d(short, long).size == 0


def test_float32_uniform_is_float64_uniform_truncated():
    k = key(11)
    u32 = run("random_uniform", k, shape=(1000,), dtype="float32")
    u64 = run("random_uniform", k, shape=(1000,), dtype="float64")
    np.testing.assert_array_equal(u32, np.floor(u64 * 2**23) / 2**23)


def test_derived_keys_are_distinct_and_uncorrelated():
    k = key(0)
    keys = run("random_split", k, num=1000)
    folded = np.stack([run("random_fold_in", k, data=j) for j in range(20)])
    assert len({tuple(r) for r in np.concatenate([keys, folded, k[None]])}) == 1021
    bound = 5 / math.sqrt(N)
    pairs = [(keys[0], keys[1]), (folded[0], folded[1]), (key(0), key(1)), (keys[2], folded[2])]
    for a, b in pairs:
        x, y = (run("random_uniform", kk, shape=(N,), dtype="float64") for kk in (a, b))
        assert abs(np.corrcoef(x, y)[0, 1]) < bound


def test_split_of_a_split_key_does_not_repeat_its_parent():
    k = key(9)
    child = run("random_split", k, num=2)[0]
    grandchildren = run("random_split", child, num=2)
    assert not any(np.array_equal(g, c) for g in grandchildren for c in run("random_split", k))


# -- distributions ------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_uniform_matches_the_uniform_distribution(dtype):
    x = run("random_uniform", key(21), shape=(N,), dtype=dtype, minval=-2.0, maxval=3.0)
    assert x.dtype == np.dtype(dtype)
    assert x.min() >= -2.0 and x.max() < 3.0
    assert_moments(x, 0.5, 25 / 12)
    assert stats.kstest(x, stats.uniform(-2.0, 5.0).cdf).pvalue > 1e-3


@pytest.mark.parametrize("dtype, mantissa", [("float16", 10), ("bfloat16", 7)])
def test_low_precision_uniform_uses_the_mantissa_grid(dtype, mantissa):
    x = run("random_uniform", key(4), shape=(20_000,), dtype=dtype).astype(np.float64)
    steps = x * 2**mantissa
    np.testing.assert_array_equal(steps, np.round(steps))
    assert len(np.unique(x)) == 2**mantissa  # every grid point of [0, 1) occurs
    assert x.min() == 0.0 and x.max() == 1 - 2.0**-mantissa


@pytest.mark.parametrize("dtype, minval, maxval", [
    ("float32", 1e6, 1e6 + 1),          # rounding of lo + u * (hi - lo) would reach hi
    ("float16", 1000.0, 1001.0),
    ("bfloat16", 1.0, 1.0078125),       # adjacent bfloat16 values: only minval remains
    ("bfloat16", -1.0078125, -1.0),
    ("float64", -1e-300, 0.0),
])
def test_uniform_never_reaches_maxval(dtype, minval, maxval):
    x = run("random_uniform", key(8), shape=(5000,), dtype=dtype, minval=minval, maxval=maxval)
    assert x.min() >= minval and x.max() < maxval


def test_uniform_rejects_empty_or_unrepresentable_ranges():
    b = GraphBuilder()
    k = b.input(tensor_type("u32", (2,)))
    with pytest.raises(OpError, match=r"minval must be less than maxval.*\[1\.0, 1\.0\)"):
        b.op("random_uniform", k, shape=(2,), minval=1.0, maxval=1.0)
    with pytest.raises(OpError, match="in bfloat16: \\[1.0, 1.0\\)"):
        b.op("random_uniform", k, shape=(2,), dtype="bfloat16", minval=1.0, maxval=1.001)
    with pytest.raises(OpError, match="must be finite in float16"):
        b.op("random_uniform", k, shape=(2,), dtype="float16", maxval=1e5)
    with pytest.raises(OpError, match="dtype must be a floating-point type, got int32"):
        b.op("random_uniform", k, shape=(2,), dtype="int32")


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_normal_matches_the_normal_distribution(dtype):
    x = run("random_normal", key(31), shape=(N,), dtype=dtype, mean=1.5, std=2.0)
    assert x.dtype == np.dtype(dtype)
    assert_moments(x, 1.5, 4.0)
    assert stats.kstest(x, stats.norm(1.5, 2.0).cdf).pvalue > 1e-3


def test_normal_tail_frequencies_match():
    z = run("random_normal", key(32), shape=(N,), dtype="float64")
    for t in (1.0, 2.0, 3.0):
        p = 2 * stats.norm.sf(t)
        assert abs(np.mean(np.abs(z) > t) - p) < 5 * math.sqrt(p * (1 - p) / N)
    assert np.abs(z).max() < 8.58


def test_ndtri_matches_scipy():
    p = np.concatenate([np.logspace(-300, -1, 500), np.linspace(0.01, 0.99, 500),
                        1 - np.logspace(-16, -1, 200)])
    np.testing.assert_allclose(ndtri(p), stats.norm.ppf(p), rtol=2e-15, atol=0)
    np.testing.assert_array_equal(ndtri(np.array([0.0, 0.5, 1.0])), [-np.inf, 0.0, np.inf])


@pytest.mark.parametrize("lower, upper", [(-2.0, 2.0), (1.0, np.inf), (3.0, 5.0),
                                          (-np.inf, -4.0), (-0.3, 0.1), (8.0, 10.0)])
def test_truncated_normal_matches_scipy_truncnorm(lower, upper):
    x = run("random_truncated_normal", key(41), shape=(N,), dtype="float64", lower=lower,
            upper=upper, mean=-1.0, std=0.5)
    assert x.min() >= -1.0 + 0.5 * lower and x.max() <= -1.0 + 0.5 * upper
    dist = stats.truncnorm(lower, upper, loc=-1.0, scale=0.5)
    assert_moments(x, dist.mean(), dist.var())
    assert stats.kstest(x, dist.cdf).pvalue > 1e-3


def test_truncated_normal_float32_stays_in_bounds():
    x = run("random_truncated_normal", key(42), shape=(N,), dtype="float32")
    assert x.dtype == np.float32 and x.min() >= -2.0 and x.max() <= 2.0
    assert stats.kstest(x, stats.truncnorm(-2, 2).cdf).pvalue > 1e-3


def test_truncated_normal_rejects_an_empty_interval():
    b = GraphBuilder()
    with pytest.raises(OpError, match=r"lower must be less than upper, got \[1.0, 1.0\]"):
        b.op("random_truncated_normal", b.input(tensor_type("u32", (2,))), shape=(1,),
             lower=1.0, upper=1.0)


@pytest.mark.parametrize("p", [0.3, 0.999, 1e-3])
def test_bernoulli_frequency_matches_p(p):
    x = run("random_bernoulli", key(51), p=p, shape=(N,))
    assert x.dtype == np.bool_
    assert abs(x.mean() - p) < 5 * math.sqrt(p * (1 - p) / N)


def test_bernoulli_is_an_exact_threshold_on_the_bits():
    k = key(52)
    bits = run("random_bits", k, shape=(1000,))
    np.testing.assert_array_equal(run("random_bernoulli", k, p=0.25, shape=(1000,)),
                                  bits < 2**30)
    assert run("random_bernoulli", k, p=1.0, shape=(1000,)).all()
    assert not run("random_bernoulli", k, p=0.0, shape=(1000,)).any()
    with pytest.raises(OpError, match=r"p must be a probability in \[0, 1\], got 1.5"):
        GraphBuilder().op("random_bernoulli", GraphBuilder().input(tensor_type("u32", (2,))),
                          p=1.5, shape=(1,))


def test_randint_is_uniform_over_its_range():
    x = run("random_randint", key(61), shape=(N,), minval=-3, maxval=7, dtype="int32")
    assert x.dtype == np.int32
    counts = np.bincount(x + 3, minlength=10)
    assert counts.size == 10
    assert stats.chisquare(counts).pvalue > 1e-3


@pytest.mark.parametrize("dtype", ["int8", "uint8", "int64", "uint64"])
def test_randint_covers_a_full_dtype_range(dtype):
    info = np.iinfo(dtype)
    x = run("random_randint", key(62), shape=(20_000,), minval=int(info.min),
            maxval=int(info.max) + 1, dtype=dtype)
    assert x.dtype == np.dtype(dtype)
    # the full range is spread: each quarter of it holds about a quarter of the values
    quarters = (x.astype(np.float64) - float(info.min)) // ((float(info.max) - info.min + 1) / 4)
    assert stats.chisquare(np.bincount(quarters.astype(int), minlength=4)).pvalue > 1e-3


def test_randint_rejects_ranges_outside_the_dtype():
    b = GraphBuilder()
    k = b.input(tensor_type("u32", (2,)))
    with pytest.raises(OpError, match=r"\[0, 300\) does not fit in uint8 \(\[0, 255\]\)"):
        b.op("random_randint", k, shape=(2,), minval=0, maxval=300, dtype="uint8")
    with pytest.raises(OpError, match="minval must be less than maxval"):
        b.op("random_randint", k, shape=(2,), minval=4, maxval=4)
    with pytest.raises(OpError, match="dtype must be an integer type, got float32"):
        b.op("random_randint", k, shape=(2,), minval=0, maxval=4, dtype="float32")


def test_permutation_is_a_permutation_and_uniform():
    assert sorted(run("random_permutation", key(71), n=50)) == list(range(50))
    keys = run("random_split", key(72), num=2400)
    index = {p: i for i, p in enumerate(itertools.permutations(range(4)))}
    counts = np.zeros(24)
    for k in keys:
        counts[index[tuple(reference("random_permutation", k, n=4))]] += 1
    assert stats.chisquare(counts).pvalue > 1e-3


def test_categorical_frequencies_follow_softmax():
    probs = np.array([0.2, 0.3, 0.5])
    logits = np.broadcast_to(np.log(probs) + 7.0, (N, 3)).astype(np.float32)
    x = run("random_categorical", key(81), logits)
    assert x.dtype == np.int64 and x.shape == (N,)
    freq = np.bincount(x, minlength=3) / N
    np.testing.assert_array_less(np.abs(freq - probs), 5 * np.sqrt(probs * (1 - probs) / N))


def test_categorical_never_picks_a_masked_category():
    logits = np.tile(np.array([0.0, -np.inf, 0.0, -np.inf]), (1000, 1))
    x = run("random_categorical", key(82), logits)
    assert set(np.unique(x)) == {0, 2}


def test_categorical_needs_categories():
    b = GraphBuilder()
    k = b.input(tensor_type("u32", (2,)))
    with pytest.raises(OpError, match=r"non-empty last axis of categories, got f32\[3,0\]"):
        b.op("random_categorical", k, b.input(tensor_type("f32", (3, 0))))
    with pytest.raises(OpError, match=r"logits must be floating-point, got i32\[3\]"):
        b.op("random_categorical", k, b.input(tensor_type("i32", (3,))))


# -- typing -------------------------------------------------------------------------------------

@pytest.mark.parametrize("bad", [tensor_type("u32", (3,)), tensor_type("i32", (2,)),
                                 tensor_type("u32", (1, 2))])
def test_keys_must_be_u32_pairs(bad):
    b = GraphBuilder()
    with pytest.raises(OpError, match=rf"op 'random_normal'.*key must be u32\[2\].*got "
                                      rf"{re.escape(str(bad))}"):
        b.op("random_normal", b.input(bad), shape=(2,))


def test_negative_and_huge_shapes_are_rejected():
    b = GraphBuilder()
    k = b.input(tensor_type("u32", (2,)))
    with pytest.raises(OpError, match=r"shape \[2, -1\] has a negative dimension"):
        b.op("random_bits", k, shape=(2, -1))
    with pytest.raises(OpError, match="split the key and draw in parts"):
        b.op("random_normal", k, shape=(2**16, 2**15))


def test_every_random_op_is_pure_and_tagged():
    assert len(OPS) == 11
    for op in OPS:
        assert op.has_trait("random") and not op.effectful, op.name
