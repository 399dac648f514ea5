"""MindSpore's names for the core's things: the tensor's attributes and constructors, the
``mstype`` dtype module, ``mskernel.common``, the context settings, the global seed and
``ParameterTuple`` — each checked against NumPy or the plain mskernel spelling."""

import importlib

import numpy as np
import pytest

import mskernel as ms
from mskernel.frontend.device import get_device, set_device, swap_default
from mskernel.frontend.trace import trace_function
from mskernel.ir.types import TensorType

Tensor = ms.Tensor


@pytest.fixture
def restore_context():
    previous = swap_default(None)
    settings = {key: ms.get_context(key) for key in ("mode", "jit_syntax_level")}
    yield
    ms.set_context(**settings)
    swap_default(previous)


def aligned(values: np.ndarray) -> np.ndarray:
    """A copy of ``values`` whose data starts on a 64-byte boundary."""
    raw = np.empty(values.nbytes + 64, np.uint8)
    start = -raw.ctypes.data % 64
    out = raw[start:start + values.nbytes].view(values.dtype).reshape(values.shape)
    out[...] = values
    return out


# -- Tensor -------------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", [np.int32, np.float64, np.uint8, np.bool_])
def test_size_attributes_are_numpy_s(dtype):
    arr = np.arange(24).reshape(2, 3, 4).astype(dtype)
    t = Tensor(arr)
    assert (t.itemsize, t.nbytes, t.strides, t.dim()) == (arr.itemsize, arr.nbytes,
                                                           arr.strides, arr.ndim)


def test_bfloat16_counts_two_bytes_an_element():
    t = Tensor(np.ones((3, 2)), ms.bfloat16)
    assert (t.itemsize, t.nbytes, t.strides) == (2, 12, (4, 2))


def test_asnumpy_is_a_copy_and_view_reshapes():
    t = Tensor(np.arange(6, dtype=np.float32))
    a = t.asnumpy()
    a[0] = 100
    np.testing.assert_array_equal(t.asnumpy(), np.arange(6))
    np.testing.assert_array_equal(t.view(2, 3).numpy(), np.arange(6).reshape(2, 3))
    np.testing.assert_array_equal(t.view((3, -1)).numpy(), np.arange(6).reshape(3, 2))


def test_print_shows_the_values_as_numpy_prints_them():
    arr = np.array([[0.5, 1.0], [2.25, -3.0]], np.float32)
    assert str(Tensor(arr)) == str(arr)
    assert str(Tensor([1, 0, 1])) == "[1 0 1]"
    assert repr(Tensor([1, 0])) == "Tensor([1, 0], dtype=int64)"
    printed = []
    trace_function(lambda x: printed.append(str(x)) or x, [TensorType(ms.float32, (2,))], "p")
    assert printed == ["Tensor(traced, shape=(2,), dtype=float32)"]


def test_from_numpy_shares_memory_where_the_device_holds_the_array_as_is():
    n = aligned(np.ones(5))
    t = Tensor.from_numpy(n)
    assert t.dtype is ms.float64 and t.shape == (5,)
    np.add(n, 1, out=n)
    np.testing.assert_array_equal(t.numpy(), np.full(5, 2.0))


def test_from_numpy_copies_what_the_device_cannot_share():
    n = np.ones(8, np.float32)[1::2]  # not contiguous
    t = Tensor.from_numpy(n)
    n[:] = 7
    np.testing.assert_array_equal(t.numpy(), np.ones(4))
    with pytest.raises(TypeError, match="takes a NumPy array, got list"):
        Tensor.from_numpy([1, 2])


def test_the_reference_backend_copies_what_tensor_is_given(restore_context):
    set_device("reference")
    n = np.ones(3, np.float32)
    t = Tensor(n)
    n[0] = 5
    np.testing.assert_array_equal(t.numpy(), np.ones(3))


class Halves:
    """An initializer: ``init(shape, dtype)`` gives the values."""

    def __call__(self, shape, dtype):
        return np.full(shape, 0.5, ms.dtype(dtype).storage)


def test_tensor_from_an_initializer_is_filled_at_once():
    t = Tensor(shape=(2, 3), dtype=ms.float32, init=Halves())
    assert t.init_data() is t
    np.testing.assert_array_equal(t.numpy(), np.full((2, 3), 0.5, np.float32))
    assert Tensor(shape=4, init=Halves()).dtype is ms.float32
    with pytest.raises(TypeError, match="needs the shape"):
        Tensor(init=Halves())
    with pytest.raises(TypeError, match="init must be an initializer"):
        Tensor(shape=(2,), init="ones")
    with pytest.raises(TypeError, match="either input_data or init"):
        Tensor([1.0], init=Halves(), shape=(1,))
    with pytest.raises(ValueError, match=r"data has shape \(2,\), not the given \(3,\)"):
        Tensor([1, 2], shape=(3,))


def test_tensor_initialised_inside_a_trace_is_concrete():
    def f(x):
        w = Tensor(shape=(2,), dtype=ms.float32, init=Halves())
        assert not w.is_traced
        return x + w

    graph, _, _ = trace_function(f, [TensorType(ms.float32, (2,))], "f")
    assert [n.op for n in graph.nodes] == ["constant", "add"]


def test_the_tensor_function():
    t = ms.tensor([1, 2], ms.int32)
    assert isinstance(t, Tensor) and t.dtype is ms.int32


# -- dtypes ---------------------------------------------------------------------------------------


def test_dtype_is_the_mstype_module_and_still_callable():
    from mskernel import dtype as mstype  # noqa: PLC0415 - the import is the test

    assert mstype is importlib.import_module("mskernel.common.dtype") is ms.common.dtype
    assert (mstype.int32, mstype.float32, mstype.bool_) == (ms.int32, ms.float32, ms.bool_)
    assert (mstype.half, mstype.single, mstype.double) == (ms.float16, ms.float32, ms.float64)
    assert ms.dtype("f32") is ms.float32 and ms.dtype(np.int8) is ms.int8
    assert mstype.pytype_to_dtype(int) is ms.int64
    assert mstype.dtype_to_nptype(ms.int16) is np.int16
    assert mstype.dtype_to_pytype(ms.uint8) is int
    assert ms.int64 in mstype.int_type and ms.bfloat16 in mstype.float_type
    with pytest.raises(TypeError, match="NumPy has no bfloat16"):
        mstype.dtype_to_nptype(ms.bfloat16)


def test_common_holds_mindspore_s_names():
    common = ms.common
    assert common.Tensor is Tensor and common.Parameter is ms.Parameter
    assert common.ParameterTuple is ms.ParameterTuple and common.set_seed is ms.set_seed


# -- context ----------------------------------------------------------------------------------


def test_context_settings_read_back(restore_context):
    assert ms.context.get_context is ms.get_context
    assert (ms.GRAPH_MODE, ms.PYNATIVE_MODE, ms.STRICT, ms.LAX) == (0, 1, 0, 2)
    ms.set_context(mode=ms.GRAPH_MODE, jit_syntax_level=ms.STRICT)
    assert ms.get_context("mode") == ms.GRAPH_MODE
    assert ms.get_context("jit_syntax_level") == ms.STRICT
    with pytest.raises(ValueError, match=r"unknown setting\(s\) enable_turbo; mskernel knows "
                                          r"mode, device_target"):
        ms.set_context(enable_turbo=True)
    with pytest.raises(ValueError, match="mode"):
        ms.set_context(mode=7)
    assert ms.get_context("mode") == ms.GRAPH_MODE  # a refused call changes nothing
    with pytest.warns(UserWarning, match="MSKERNEL_DUMP_IR"):
        ms.set_context(save_graphs=True)
    ms.set_context(save_graphs=False)


def test_device_target_cpu_is_the_first_available_host_backend(restore_context):
    ms.set_context(device_target="CPU")
    assert get_device() in ("cpu", "reference")
    assert ms.get_context("device_target") == "CPU"
    set_device("reference")
    assert get_device() == "reference"
    with pytest.raises(ValueError, match="only device_id 0 exists"):
        ms.set_device("CPU", 1)
    # without mskernel-ascend there is no such backend; with it, it says what is missing
    with pytest.raises(ms.errors.BackendError, match="unknown backend 'Ascend'|backend "
                       r"'ascend' \(mskernel-ascend\) is not available: no Ascend NPU runtime"):
        ms.set_device("Ascend")


# -- seeds and parameter tuples -----------------------------------------------------------------


def test_set_seed_seeds_mskernel_random_and_numpy():
    ms.set_seed(7)
    first = (ms.random.randn(3).numpy(), np.random.rand(3))
    ms.set_seed(7)
    second = (ms.random.randn(3).numpy(), np.random.rand(3))
    assert ms.get_seed() == 7
    for a, b in zip(first, second):
        np.testing.assert_array_equal(a, b)
    with pytest.raises(ValueError, match="non-negative"):
        ms.set_seed(-1)


def test_parameter_tuple_holds_parameters_and_clones_them():
    w = ms.Parameter(np.arange(3, dtype=np.float32), name="fc.weight")
    params = ms.ParameterTuple([w])
    assert params[0] is w and isinstance(params, tuple)
    same, zeros, halves = (params.clone("m", init) for init in ("same", "zeros", Halves()))
    assert same[0].name == "m.fc.weight" and same[0] is not w
    np.testing.assert_array_equal(same[0].numpy(), w.numpy())
    np.testing.assert_array_equal(zeros[0].numpy(), np.zeros(3))
    np.testing.assert_array_equal(halves[0].numpy(), np.full(3, 0.5))
    with pytest.raises(TypeError, match="item 1 is a Tensor, not a Parameter"):
        ms.ParameterTuple([w, Tensor([1.0])])
    with pytest.raises(ValueError, match="pass an initializer"):
        params.clone("m", "normal")
