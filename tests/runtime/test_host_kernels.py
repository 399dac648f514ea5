"""Host kernels: a plugin's kernel for an op runs beside the preferred backend — no fallback,
no transfer on a host-memory backend, counted transfers beside a device backend — and its
results are checked against the op's rule."""

import warnings

import numpy as np
import pytest
from scipy import special

from mskernel.errors import BackendError, MskernelError, PluginError
from mskernel.ir import TOKEN, GraphBuilder, RefType, SourceLoc, tensor_type
from mskernel.ops import RuleRegistry
from mskernel.runtime import HOST_KERNEL_RULE, CompiledGraph, FallbackWarning, HostKernel, partition
from mskernel.runtime.host_kernels import HostKernelExecutable, host_kernels
from mskernel.runtime.interpreter import run_graph
from mskernel.runtime.reference import ReferenceBackend

ERF = {"erf": HostKernel(special.erf, owner="mskernel-acme")}


def chain_graph(dtype="f32"):
    """x → exp → add(x) → erf → mul(x) → tanh: 'fast' claims exp, add and mul."""
    b = GraphBuilder("chain")
    x = b.input(tensor_type(dtype, (4, 8)), "x")
    a = b.op("add", b.op("exp", x), x)
    m = b.op("mul", b.op("erf", a, loc=SourceLoc("model.py", 7)), x)
    return b.build([b.op("tanh", m)])


def compiled(plan, backends, kernels):
    by_name = {b.name: b for b in backends}
    executables = [HostKernelExecutable(s.graph, by_name[s.backend], kernels) if s.host_kernel
                   else by_name[s.backend].compile(s.graph, None) for s in plan.segments]
    return CompiledGraph(plan, by_name, executables)


def test_a_host_kernel_runs_beside_the_preferred_backend(subset_backend):
    fast, ref = subset_backend("fast", ["exp", "add", "mul"]), ReferenceBackend()
    fast.host_memory = True
    g = chain_graph()
    with pytest.warns(FallbackWarning) as caught:
        plan = partition(g, [fast, ref], "warn", ERF)
    assert len(caught) == 1 and "'tanh'" in str(caught[0].message)  # erf is no fallback
    erf = plan.placements[2]
    assert (erf.node.op, erf.backend, erf.host_kernel, erf.fallback_reason) == (
        "erf", "fast", "mskernel-acme", None)
    assert [(s.backend, s.host_kernel) for s in plan.segments] == [
        ("fast", False), ("fast", True), ("fast", False), ("reference", False)]
    assert [(t.source, t.target) for t in plan.transfers] == [("fast", "reference")]
    text = plan.explain()
    assert "host kernel of mskernel-acme, beside fast [model.py:7]" in text
    assert "(1 on host kernels)" in text and "[1] host kernels beside fast: 1 node(s)" in text
    x = np.random.default_rng(0).standard_normal((4, 8)).astype(np.float32)
    (got,) = compiled(plan, [fast, ref], ERF)(x)
    np.testing.assert_allclose(got, run_graph(g, [x])[0], rtol=1e-6)


def test_beside_a_device_backend_the_host_round_trip_is_counted(subset_backend):
    device = subset_backend("device", ["exp", "add", "mul", "tanh"])
    device.host_memory = False
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no fallback
        plan = partition(chain_graph(), [device, ReferenceBackend()], "warn", ERF)
    assert [(t.value.type.shape, t.source, t.target) for t in plan.transfers] == [
        ((4, 8), "device", "host"), ((4, 8), "host", "device")]
    assert "transfers: 2 (256 B)" in plan.explain()


def test_the_backends_own_kernel_wins(subset_backend):
    fast = subset_backend("fast", ["exp", "add", "mul", "erf", "tanh"])
    plan = partition(chain_graph(), [fast, ReferenceBackend()], "deny", ERF)
    assert all(p.host_kernel is None for p in plan.placements) and len(plan.segments) == 1
    ref = ReferenceBackend()
    plan = partition(chain_graph(), [ref], "deny", ERF)  # the reference claims erf itself
    assert all(p.host_kernel is None for p in plan.placements)


def test_a_kernel_covers_its_dtypes_and_tensor_only_nodes(subset_backend):
    fast = subset_backend("fast", ["exp", "add", "mul", "tanh"])
    doubles = {"erf": HostKernel(special.erf, dtypes=("float64",))}
    with pytest.raises(BackendError, match="'erf'.*deny"):  # float32 erf: a fallback
        partition(chain_graph("f32"), [fast, ReferenceBackend()], "deny", doubles)
    plan = partition(chain_graph("f64"), [fast, ReferenceBackend()], "deny", doubles)
    assert plan.placements[2].host_kernel == "unknown"
    kernel = HostKernel(lambda *a, **k: None)
    b = GraphBuilder()
    b.op("ref_load", b.input(RefType(tensor_type("f32", (2,))), "cell"), b.input(TOKEN, "t"))
    assert "tensors and tokens only" in kernel.reason_unsupported(b.nodes[-1])


def test_results_are_checked_and_inputs_are_read_only(subset_backend):
    fast = subset_backend("fast", ["exp", "add", "mul", "tanh"])
    fast.host_memory = True
    g = chain_graph()
    x = np.ones((4, 8), np.float32)

    def run_with(fn):
        kernels = {"erf": HostKernel(fn, owner="mskernel-acme")}
        return compiled(partition(g, [fast], "deny", kernels), [fast], kernels)(x)

    with pytest.raises(MskernelError, match=r"host kernel \(mskernel-acme\) of op 'erf' at "
                                            r"model.py:7 produced shape \(8,\)"):
        run_with(lambda a: special.erf(a[0]))
    with pytest.raises(ValueError, match="read-only"):
        run_with(lambda a: np.exp(a, out=a))
    (got,) = run_with(lambda a: special.erf(a).astype(np.float64))  # cast to the rule's dtype
    assert got.dtype == np.float32


def test_host_kernels_are_read_from_the_rules_with_their_owner():
    rules = RuleRegistry()
    rules.register(HOST_KERNEL_RULE, "erf", HostKernel(special.erf), owner="mskernel-acme")
    assert host_kernels(rules)["erf"].owner == "mskernel-acme"
    rules.register(HOST_KERNEL_RULE, "tanh", np.tanh, owner="mskernel-sloppy")
    with pytest.raises(PluginError, match="mskernel-sloppy registered a 'host_kernel' rule for "
                                          "op 'tanh' that is not a HostKernel"):
        host_kernels(rules)
    with pytest.raises(PluginError, match="must be callable"):
        HostKernel("erf")
