"""On an NVIDIA GPU (marked ``gpu``: skipped without one, failed under
``MSKERNEL_REQUIRE_GPU=1``): transfers, generated kernels, GEMM epilogues, convolutions,
CUDA-graph replay and a jitted training step, each against the reference."""

from __future__ import annotations

import numpy as np
import pytest

from mskernel.hooks.host import host
from mskernel_sdk import (
    CompileOptions, DeviceArray, GraphBuilder, assert_close, compile_graph, dtype,
    random_array, run_reference, samples_for, sample_graph, tensor_type,
)

pytestmark = pytest.mark.gpu


@pytest.fixture(scope="module")
def gpu():
    host().load_external()
    return host().backends.get("gpu")


def on_gpu(graph, opt_level=2):
    return compile_graph(graph, backends=["gpu"],
                         options=CompileOptions(opt_level=opt_level, fallback="deny"))


@pytest.mark.parametrize("dt", ["float32", "float16", "bfloat16", "int64", "bool", "complex64"])
def test_transfers_round_trip(gpu, dt):
    x = random_array(np.random.default_rng(0), (3, 5), dt)
    arr = gpu.to_device(x, tensor_type(dt, (3, 5)))
    assert isinstance(arr, DeviceArray) and arr.backend is gpu
    np.testing.assert_array_equal(gpu.to_host(arr), x)


@pytest.mark.parametrize("op", ["gpu.fused", "gpu.matmul_bias_act", "gpu.conv_wgrad"])
def test_generated_and_epilogue_kernels_agree_with_reference(gpu, op):
    for sample in samples_for(op):
        graph = sample_graph(sample)
        (want,) = run_reference(graph, list(sample.args))
        (got,) = on_gpu(graph, opt_level=0)(*sample.args)
        assert_close(np.asarray(got), want, graph.outputs[0].type.dtype, what=str(sample),
                     rtol=2e-2 if "16" in graph.outputs[0].type.dtype.name else None)


def softmax_graph(shape, dt="f32"):
    b = GraphBuilder("softmax")
    x = b.input(tensor_type(dt, shape), "x")
    return b.build([b.op("softmax", x, axis=-1)])


def test_fused_softmax_on_device_and_replayed_as_a_cuda_graph(gpu):
    graph = softmax_graph((64, 1000))
    compiled = on_gpu(graph)
    x = np.random.default_rng(1).standard_normal((64, 1000), dtype=np.float32)
    (want,) = run_reference(graph, [x])
    for _ in range(3):  # the second and third runs replay the captured graph
        (got,) = compiled(x)
        assert_close(np.asarray(got), want, dtype("f32"), rtol=1e-5)


def test_convolutions_agree_with_reference(gpu):
    for op in ("conv", "conv_transpose"):
        for sample in samples_for(op):
            graph = sample_graph(sample)
            (want,) = run_reference(graph, list(sample.args))
            (got,) = on_gpu(graph, opt_level=0)(*sample.args)
            t = graph.outputs[0].type.dtype
            assert_close(np.asarray(got), want, t, what=str(sample),
                         rtol=1e-2 if t.name in ("float16", "bfloat16") else 1e-4,
                         atol=1e-2 if t.name in ("float16", "bfloat16") else 1e-4)


def test_a_jitted_training_step_matches_the_cpu():
    import mskernel
    from mskernel import nn

    def run(device):
        mskernel.random.set_seed(0)
        net = nn.SequentialCell([nn.Dense(32, 64), nn.ReLU(), nn.Dense(64, 10)])
        step = nn.TrainOneStepCell(nn.WithLossCell(net, nn.CrossEntropyLoss()),
                                   nn.Momentum(net.trainable_params(), 0.01, 0.9))
        x = mskernel.Tensor(np.random.default_rng(2).standard_normal((256, 32), np.float32))
        y = mskernel.Tensor(np.random.default_rng(3).integers(0, 10, 256))
        with mskernel.device(device):
            jitted = mskernel.jit(step)
            return [float(jitted(x, y)) for _ in range(5)]

    gpu_losses, cpu_losses = run("gpu"), run("cpu")
    np.testing.assert_allclose(gpu_losses, cpu_losses, rtol=1e-4)


def test_tf32_is_opt_in():
    import mskernel_gpu

    assert mskernel_gpu.get_float32_matmul_precision() == "highest"
    mskernel_gpu.set_float32_matmul_precision("high")
    try:
        assert mskernel_gpu.get_float32_matmul_precision() == "high"
    finally:
        mskernel_gpu.set_float32_matmul_precision("highest")
