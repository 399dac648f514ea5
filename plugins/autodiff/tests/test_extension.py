"""A third-party plugin makes its ops differentiable and batchable without touching
mskernel-autodiff: the
throwaway distribution ``mskernel-cubedemo`` (``tests/fixtures``) is installed for real — a
``.dist-info`` with an entry point in a folder on ``sys.path`` — and registers ops and rules
through the core's hooks; grad, jvp, vmap, higher orders and compiled graphs then work on them,
and an op without rules gets an error that says what to register."""

import importlib
import shutil
import sys
from pathlib import Path

import numpy as np
import pytest

import mskernel
from mskernel import get_device, jit, ops, set_device
from mskernel.hooks import plugin_host
from mskernel.hooks.host import fresh_host
from mskernel_sdk import apply, op_registry
from mskernel_autodiff.batching import MissingBatchRuleError
from mskernel_autodiff.lookup import MissingRuleError
from mskernel_autodiff.testing import check_grads

FIXTURES = Path(__file__).resolve().parent / "fixtures"
PACKAGE = "mskernel_cubedemo"


@pytest.fixture(scope="module")
def cubedemo(tmp_path_factory):
    """``mskernel-cubedemo`` installed into a fresh folder on ``sys.path``, with a fresh
    plugin host that discovers it next to the installed mskernel-autodiff."""
    root = tmp_path_factory.mktemp("site-packages")
    shutil.copytree(FIXTURES / PACKAGE, root / PACKAGE,
                    ignore=shutil.ignore_patterns("__pycache__"))
    info = root / "mskernel_cubedemo-0.1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: mskernel-cubedemo\n"
                                   "Version: 0.1.0\nRequires-Dist: mskernel>=0.1,<0.2\n")
    (info / "entry_points.txt").write_text(
        f"[mskernel.plugins]\ncubedemo = {PACKAGE}.plugin\n")
    device = get_device()
    sys.path.insert(0, str(root))
    importlib.invalidate_caches()
    try:
        with fresh_host():
            set_device(device)  # the same backend, as the new host provides it
            yield plugin_host()
    finally:
        sys.path.remove(str(root))
        for name in [m for m in sys.modules if m.split(".")[0] == PACKAGE]:
            del sys.modules[name]
        importlib.invalidate_caches()


def cube(x):
    return apply("cubedemo.cube", x)


def snap(x):
    return apply("cubedemo.snap", x)


def opaque(x):
    return apply("cubedemo.opaque", x)


def tensor(a):
    return mskernel.Tensor(np.asarray(a, np.float64))


X = np.array([0.3, -1.2, 2.0])


def test_the_plugin_registers_ops_and_rules_through_the_hooks(cubedemo):
    record = cubedemo.record("cubedemo")
    assert record.status == "ok", record.reason
    assert op_registry().get("cubedemo.cube").owner == "mskernel-cubedemo"
    assert cubedemo.rules_registered_by("cubedemo") == [
        ("batch", "cubedemo.cube"), ("jvp", "cubedemo.cube"),
        ("nondifferentiable", "cubedemo.snap"), ("vjp", "cubedemo.cube")]
    source = (FIXTURES / PACKAGE / "plugin.py").read_text()
    assert "mskernel_autodiff" not in source


@pytest.mark.parametrize("run", [lambda fn: fn, jit], ids=["eager", "jit"])
def test_new_op_is_differentiable_in_both_modes(cubedemo, run):
    f = lambda x: ops.sum(ops.sin(cube(x)) + snap(x) * 0.5)  # snap contributes nothing
    g = run(mskernel.grad(f))(tensor(X))
    np.testing.assert_allclose(g.numpy(), np.cos(X ** 3) * 3 * X ** 2, rtol=1e-12)
    second = run(mskernel.grad(lambda x: ops.sum(mskernel.grad(f)(x))))(tensor(X))
    expected = -np.sin(X ** 3) * 9 * X ** 4 + np.cos(X ** 3) * 6 * X
    np.testing.assert_allclose(second.numpy(), expected, rtol=1e-12)
    _, tangent = run(lambda x: mskernel.jvp(cube, (x,), (ops.ones_like(x),)))(tensor(X))
    np.testing.assert_allclose(tangent.numpy(), 3 * X ** 2, rtol=1e-12)


def test_new_op_is_batchable_and_an_op_without_a_batch_rule_says_what_to_register(cubedemo):
    xs = np.stack([X, 2 * X])
    per_example = mskernel.vmap(mskernel.grad(lambda x: ops.sum(cube(x))))(tensor(xs))
    np.testing.assert_allclose(per_example.numpy(), 3 * xs ** 2, rtol=1e-12)
    with pytest.raises(MissingBatchRuleError) as missing:
        mskernel.vmap(opaque)(tensor(xs))
    for part in ("op 'cubedemo.opaque' has no 'batch' rule", "defined by mskernel-cubedemo",
                 "rules.register('batch', 'cubedemo.opaque', rule)",
                 "rules.register('not_batchable', 'cubedemo.opaque', 'why')"):
        assert part in str(missing.value), missing.value


def test_check_grads_on_the_new_op(cubedemo):
    check_grads(lambda x: cube(ops.tanh(x)), (tensor(X),), order=3, rtol=1e-5, atol=1e-7)


def test_an_op_without_rules_names_itself_its_plugin_and_the_remedy(cubedemo):
    x = tensor(X)
    with pytest.raises(MissingRuleError) as reverse:
        mskernel.grad(lambda x: ops.sum(opaque(x)))(x)
    message = str(reverse.value)
    for part in ("op 'cubedemo.opaque' has no 'vjp' rule", "defined by mskernel-cubedemo",
                 "rules.register('vjp', 'cubedemo.opaque', rule)", "mskernel_register_rules",
                 "mskernel.stop_gradient"):
        assert part in message, message
    with pytest.raises(MissingRuleError, match=r"'cubedemo.opaque' has no 'jvp' rule.*"
                                               r"rules.register\('jvp', 'cubedemo.opaque'"):
        mskernel.jvp(opaque, (x,), (x,))
    # the op is fine where no derivative has to pass through it
    g = mskernel.grad(lambda x: ops.sum(x * mskernel.stop_gradient(opaque(x))))(x)
    np.testing.assert_allclose(g.numpy(), np.sinh(X), rtol=1e-12)
    g = mskernel.grad(lambda x: ops.sum(x * 2.0) + 0.0 * float(ops.sum(opaque(x))))(x)
    np.testing.assert_allclose(g.numpy(), np.full(3, 2.0))
