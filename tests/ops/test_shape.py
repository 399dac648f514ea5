"""Shape ops: the reference against PyTorch and from-scratch oracles on every sample of the
table, Python's slice rules, and the errors users see."""

import numpy as np
import pytest
import torch
from hypothesis import given, settings, strategies as st

from mskernel.errors import OpError
from mskernel.ir import GraphBuilder, tensor_type
from mskernel.ir.dtypes import dtype as to_dtype
from mskernel.ops import op_registry
from mskernel.runtime.interpreter import run_graph
from mskernel.testing import OpSample, sample_graph, samples_for


def T(a):
    return torch.from_numpy(np.array(a))  # a writable C-ordered copy; keeps 0-d arrays 0-d


def torch_dtype(dt):
    return getattr(torch, to_dtype(dt).name)


def as_storage(t):
    """A torch result as reference storage (bfloat16 as float32)."""
    return (t.float() if t.dtype == torch.bfloat16 else t).numpy()


def run(op, *args, dtypes=None, **attrs):
    return run_graph(sample_graph(OpSample(op, args, attrs, dtypes=dtypes)), list(args))


def apply(op, *types, **attrs):
    """Build one node on inputs of the given (dtype, shape) types; return its output(s)."""
    b = GraphBuilder()
    return b.op(op, *[b.input(tensor_type(dt, shape)) for dt, shape in types], **attrs)


def all_axes(x, axes):
    return tuple(range(x.ndim)) if axes is None else tuple(a % x.ndim for a in axes)


def slice_oracle(x, starts, stops, steps, axes):
    """Pick each axis's positions with range(*slice.indices(n)): Python's rules, spelled out."""
    picks = [np.arange(d) for d in x.shape]
    steps = steps or (1,) * len(starts)
    for axis, start, stop, step in zip(all_axes(x, axes), starts, stops, steps):
        n = x.shape[axis]
        picks[axis] = np.array(range(*slice(start, stop, step).indices(n)), dtype=np.intp)
    return x[np.ix_(*picks)]


def pad_oracle(x, pads, mode, value):
    """np.pad's modes from scratch: map each output position back to a source position."""
    widths = [(pads[2 * a], pads[2 * a + 1]) for a in range(x.ndim)]
    starts = [max(-lo, 0) for lo, _ in widths]
    kept = [d - s - max(-hi, 0) for d, s, (_, hi) in zip(x.shape, starts, widths)]
    out_shape = tuple(k + max(lo, 0) + max(hi, 0) for k, (lo, hi) in zip(kept, widths))
    if mode == "constant":
        out = np.full(out_shape, value, dtype=x.dtype)
        dst = tuple(slice(max(lo, 0), max(lo, 0) + k) for k, (lo, _) in zip(kept, widths))
        out[dst] = x[tuple(slice(s, s + k) for s, k in zip(starts, kept))]
        return out
    sources = []
    for s, k, (lo, _), n in zip(starts, kept, widths, out_shape):
        p = np.arange(n) - max(lo, 0)  # position along the cropped axis
        if mode == "edge":
            p = np.clip(p, 0, k - 1)
        else:  # reflect about the first and last element, periodically
            period = 2 * (k - 1)
            p = np.abs(p) % period if period else np.zeros_like(p)
            p = np.where(p >= k, period - p, p)
        sources.append(s + p)
    return x[np.ix_(*sources)]


def iota_oracle(shape, axis, dtype):
    axis %= len(shape)
    line = torch.arange(shape[axis], dtype=torch.float64).to(torch_dtype(dtype))
    view = [-1 if i == axis else 1 for i in range(len(shape))]
    return as_storage(line.reshape(view).expand(shape).contiguous())


def expand_dims_oracle(x, axes):
    t = T(x)
    for axis in sorted(a % (x.ndim + len(axes)) for a in axes):
        t = t.unsqueeze(axis)
    return t.numpy()


ORACLES = {
    "constant": lambda value, dtype: value,
    "full": lambda shape, value, dtype: as_storage(
        torch.full(shape, value, dtype=torch_dtype(dtype))),
    "iota": iota_oracle,
    "reshape": lambda x, shape: T(x).reshape(shape).numpy(),
    "transpose": lambda x, perm: T(x).permute(
        tuple(reversed(range(x.ndim))) if perm is None else perm).numpy(),
    "broadcast_to": lambda x, shape: T(x).broadcast_to(shape).contiguous().numpy(),
    "concat": lambda *xs, axis: torch.cat([T(x) for x in xs], dim=axis).numpy(),
    "stack": lambda *xs, axis: torch.stack([T(x) for x in xs], dim=axis).numpy(),
    "split": lambda x, axis, sizes: [p.numpy() for p in torch.split(T(x), list(sizes), axis)],
    "slice": slice_oracle,
    "squeeze": lambda x, axes: (T(x).squeeze() if axes is None else T(x).squeeze(axes)).numpy(),
    "expand_dims": expand_dims_oracle,
    "tile": lambda x, reps: torch.tile(T(x), reps).numpy(),
    "flip": lambda x, axes: torch.flip(T(x), all_axes(x, axes)).numpy(),
    "pad": pad_oracle,
    "repeat": lambda x, repeats, axis: torch.repeat_interleave(T(x), repeats, axis).numpy(),
    "tril": lambda x, k: torch.tril(T(x), k).numpy(),
    "triu": lambda x, k: torch.triu(T(x), k).numpy(),
}

SAMPLES = [s for op in ORACLES for s in samples_for(op)]


def test_every_shape_op_has_an_oracle():
    from mskernel.ops.shape import OPS

    assert sorted(op.name for op in OPS) == sorted(ORACLES)


@pytest.mark.parametrize("sample", SAMPLES, ids=str)
def test_reference_matches_oracle(sample):
    graph = sample_graph(sample)
    got = run_graph(graph, list(sample.args))
    expected = ORACLES[sample.op](*sample.args, **graph.nodes[0].attrs)
    expected = expected if isinstance(expected, list) else [expected]
    assert len(got) == len(expected)
    for actual, want in zip(got, expected):
        np.testing.assert_array_equal(actual, want, strict=True, err_msg=str(sample))


# --- slice: Python's rules -------------------------------------------------------------------

@settings(max_examples=150, deadline=None)
@given(n=st.integers(0, 6), start=st.integers(-9, 9), stop=st.integers(-9, 9),
       step=st.integers(-4, 4).filter(bool))
def test_slice_follows_python_list_slicing(n, start, stop, step):
    x = np.arange(n, dtype=np.int64)
    (out,) = run("slice", x, starts=(start,), stops=(stop,), steps=(step,))
    assert out.tolist() == list(range(n))[start:stop:step]


def test_slice_to_the_end_with_negative_steps_uses_a_stop_before_the_start():
    x = np.arange(5)
    (out,) = run("slice", x, starts=(-1,), stops=(-(2**63),), steps=(-1,))
    assert out.tolist() == [4, 3, 2, 1, 0]
    (out,) = run("slice", x, starts=(-1,), stops=(-6,), steps=(-2,))
    assert out.tolist() == [4, 2, 0]


def test_slice_with_axes_leaves_other_axes_whole():
    x = np.arange(24).reshape(2, 3, 4)
    (out,) = run("slice", x, starts=(1, 0), stops=(3, 2), axes=(-1, 0))
    np.testing.assert_array_equal(out, x[0:2, :, 1:3])


# --- semantics worth stating -----------------------------------------------------------------

def test_reshape_infers_the_minus_one():
    assert apply("reshape", ("f32", (2, 3, 4)), shape=(4, -1)).type.shape == (4, 6)
    assert apply("reshape", ("f32", (0, 3)), shape=(-1, 6)).type.shape == (0, 6)


def test_split_always_returns_a_tuple():
    parts = apply("split", ("f32", (3, 2)), axis=0, sizes=(3,))
    assert isinstance(parts, tuple) and len(parts) == 1 and parts[0].type.shape == (3, 2)


def test_pad_crops_before_padding():
    x = np.arange(5.0)
    (out,) = run("pad", x, pads=(-2, 2), mode="reflect")
    np.testing.assert_array_equal(out, [2, 3, 4, 3, 2])
    (out,) = run("pad", x, pads=(-1, 2), mode="edge")
    np.testing.assert_array_equal(out, [1, 2, 3, 4, 4, 4])


def test_pad_agrees_with_torch_modes():
    x = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    pairs = [((1, 2, 0, 1), "reflect", "reflect"), ((2, 1, 1, 2), "edge", "replicate")]
    for pads, mode, torch_mode in pairs:
        (out,) = run("pad", x, pads=(0, 0) + pads[2:] + pads[:2], mode=mode)
        want = torch.nn.functional.pad(T(x), pads, mode=torch_mode).numpy()
        np.testing.assert_array_equal(out, want)
    (out,) = run("pad", x, pads=(0, 1, -1, 2, 1, -3), value=7.0)
    want = torch.nn.functional.pad(T(x), (1, -3, -1, 2, 0, 1), value=7.0).numpy()
    np.testing.assert_array_equal(out, want)


def test_bfloat16_constant_is_rounded_to_its_declared_type():
    value = np.array([0.1, 1 / 3], np.float32)
    node_out = apply("constant", value=value, dtype="bfloat16")
    assert str(node_out.type) == "bf16[2]"
    (out,) = run("constant", value=value, dtype="bfloat16")
    assert np.all(out.view(np.uint32) & 0xFFFF == 0)
    np.testing.assert_allclose(out, value, rtol=2**-8)


def test_data_movers_carry_the_shape_trait():
    movers = {"reshape", "transpose", "broadcast_to", "concat", "stack", "split", "slice",
              "squeeze", "expand_dims", "tile", "flip", "repeat"}
    for name in movers:
        assert op_registry().get(name).has_trait("shape"), name
    for name in ("pad", "tril", "triu", "full", "iota", "constant"):
        assert not op_registry().get(name).has_trait("shape"), name


# --- errors ----------------------------------------------------------------------------------

F23 = ("f32", (2, 3))


@pytest.mark.parametrize("op, types, attrs, message", [
    ("reshape", [F23], {"shape": (4, 2)},
     r"op 'reshape'.*cannot reshape f32\[2,3\] \(6 elements\) to \[4, 2\] \(8 elements\)"),
    ("reshape", [F23], {"shape": (4, -1)}, r"6 is not a multiple of 4"),
    ("reshape", [F23], {"shape": (-1, -1)}, r"at most one -1"),
    ("split", [F23], {"axis": 1, "sizes": (1, 1)},
     r"op 'split'.*sizes \[1, 1\] sum to 2, but axis 1 .* has size 3"),
    ("squeeze", [("f32", (1, 3))], {"axes": (1,)},
     r"op 'squeeze'.*cannot squeeze axis 1 of shape \[1, 3\]: it has size 3, not 1"),
    ("transpose", [F23], {"perm": (0, 0)}, r"perm \[0, 0\] repeats an axis"),
    ("transpose", [F23], {"perm": (0, 1, 2)}, r"perm \[0, 1, 2\] has 3 entries for a rank-2"),
    ("broadcast_to", [F23], {"shape": (3, 3)}, r"cannot broadcast shape \[2, 3\] to \[3, 3\]"),
    ("concat", [F23, ("f32", (3, 3))], {"axis": 1},
     r"input 1 has shape \[3, 3\], which does not match input 0's \[2, 3\] outside axis 1"),
    ("concat", [F23, ("i32", (2, 3))], {"axis": 0}, r"same dtype"),
    ("concat", [], {"axis": 0}, r"at least one tensor"),
    ("stack", [F23, ("f32", (3, 2))], {"axis": 0}, r"input 1 has \[3, 2\]"),
    ("slice", [F23], {"starts": (0,), "stops": (1,)}, r"one entry per axis of \[2, 3\]"),
    ("slice", [F23], {"starts": (0, 0), "stops": (1, 1), "steps": (1, 0)}, r"contains 0"),
    ("expand_dims", [F23], {"axes": (3,)}, r"axis 3 is out of range for rank 3"),
    ("pad", [F23], {"pads": (0, 0, -2, -2)}, r"crop 4 elements from axis 1, which has only 3"),
    ("pad", [F23], {"pads": (0, 1)}, r"pads needs a \(lo, hi\) pair per axis: 4 values"),
    ("pad", [("f32", (0, 3))], {"pads": (1, 0, 0, 0), "mode": "edge"},
     r"mode 'edge' cannot pad axis 0: it has no elements"),
    ("pad", [F23], {"pads": (0, 0, 0, 0), "mode": "wrap"}, r"mode must be one of"),
    ("pad", [("i32", (2,))], {"pads": (1, 1), "value": 0.5},
     r"value 0.5 is not representable in int32"),
    ("tile", [F23], {"reps": (-1,)}, r"reps \[-1\] has a negative dimension"),
    ("repeat", [F23], {"repeats": -1}, r"repeats must be non-negative"),
    ("tril", [("f32", (3,))], {}, r"rank >= 2"),
    ("full", [], {"shape": (2,), "value": 300, "dtype": "int8"},
     r"value 300 is not representable in int8"),
    ("full", [], {"shape": (2,), "value": 1e6, "dtype": "float16"},
     r"value 1e\+06 is not representable in float16"),
    ("iota", [], {"shape": (300,), "axis": 0, "dtype": "int8"}, r"length 300 .* overflows int8"),
    ("iota", [], {"shape": (), "axis": 0, "dtype": "int32"}, r"rank 1 or more"),
    ("constant", [], {"value": np.zeros(2, np.float64), "dtype": "bfloat16"},
     r"a bfloat16 constant is stored as float32, got a float64 array"),
])
def test_bad_input_names_the_problem(op, types, attrs, message):
    with pytest.raises(OpError, match=message):
        apply(op, *types, **attrs)
