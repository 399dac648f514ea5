"""Dtypes: lookup, NumPy-compatible promotion, bfloat16 rounding."""

import itertools

import numpy as np
import pytest

from mskernel.ir import dtypes as d


def test_lookup_by_name_short_name_numpy_and_python_type():
    assert d.dtype("float32") is d.float32 is d.dtype("f32") is d.dtype(np.float32)
    assert d.dtype(bool) is d.bool_ and d.dtype(int) is d.int64 and d.dtype(float) is d.float32
    assert d.dtype("bf16") is d.bfloat16
    with pytest.raises(TypeError, match="unknown dtype 'float8'.*known dtypes: bool"):
        d.dtype("float8")


NUMPY_TYPES = [dt for dt in d.ALL_DTYPES if dt is not d.bfloat16]


@pytest.mark.parametrize("a,b", list(itertools.product(NUMPY_TYPES, repeat=2)))
def test_promotion_matches_numpy(a, b):
    assert d.promote_types(a, b).storage == np.promote_types(a.storage, b.storage)


@pytest.mark.parametrize("other,expected", [
    (d.bool_, d.bfloat16), (d.int8, d.bfloat16), (d.int64, d.bfloat16), (d.uint8, d.bfloat16),
    (d.float16, d.float32), (d.float32, d.float32), (d.float64, d.float64),
    (d.complex64, d.complex64),
])
def test_bfloat16_promotes_like_jax(other, expected):
    assert d.promote_types(d.bfloat16, other) is expected
    assert d.promote_types(other, d.bfloat16) is expected


def test_promotion_is_commutative_for_every_pair():
    for a, b in itertools.product(d.ALL_DTYPES, repeat=2):
        assert d.promote_types(a, b) is d.promote_types(b, a), (a, b)


def test_bfloat16_rounding_is_round_to_nearest_even():
    one = np.float32(1.0)
    ulp = np.float32(2.0 ** -7)  # bfloat16 has 7 explicit mantissa bits
    halfway = one + ulp / 2  # exactly between 1 and 1+ulp: ties to even → 1
    above = np.nextafter(halfway, np.float32(2))
    x = np.array([halfway, above, one + ulp * 1.5, np.inf, -np.inf, np.nan, -0.0], np.float32)
    r = d.round_to_bfloat16(x)
    np.testing.assert_array_equal(r[:5], [one, one + ulp, one + 2 * ulp, np.inf, -np.inf])
    assert np.isnan(r[5]) and np.signbit(r[6])


def test_bfloat16_bits_round_trip():
    x = d.round_to_bfloat16(np.random.default_rng(0).standard_normal(1000).astype(np.float32))
    bits = d.bfloat16_to_bits(x)
    assert bits.dtype == np.uint16
    np.testing.assert_array_equal(d.bfloat16_from_bits(bits), x)


def test_dtype_properties():
    assert d.float16.is_floating and d.complex64.is_complex and d.uint8.is_integer
    assert d.bfloat16.itemsize == 2 and d.bfloat16.storage == np.float32
    assert not d.bool_.is_integer and d.bool_.is_bool
