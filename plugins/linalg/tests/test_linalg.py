"""The ``linalg.*`` ops against NumPy and PyTorch: values (batched, eagerly and under
``@jit``), reverse-mode gradients against ``torch.autograd``, forward-mode tangents against
``torch.func.jvp``, and the errors."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import mskernel as ms
from mskernel import Tensor, ops
from mskernel_autodiff.api import grad, jvp

RNG = np.random.default_rng(2)


def general(*batch: int, n: int = 4) -> np.ndarray:
    return (RNG.standard_normal((*batch, n, n)) + 3 * np.eye(n)).astype(np.float64)


def spd(*batch: int, n: int = 4) -> np.ndarray:
    a = RNG.standard_normal((*batch, n, n))
    return (a @ np.swapaxes(a, -1, -2) + n * np.eye(n)).astype(np.float64)


def _sym(x: np.ndarray) -> np.ndarray:
    return (x + np.swapaxes(x, -1, -2)) / 2


def _u_s2_vt(s, u, v):
    return ops.matmul(u * ops.expand_dims(s * s, -2), ops.swapaxes(v, -1, -2))


def _torch_u_s2_vt(a):
    u, s, vh = torch.linalg.svd(a, full_matrices=False)
    return (u * (s * s)[..., None, :]) @ vh


#: name, ours, torch's, inputs, whether gradients are taken within symmetric matrices
CASES = [
    ("inverse", ops.inverse, torch.linalg.inv, (general(2),), False),
    ("solve", ops.solve, torch.linalg.solve, (general(2), RNG.standard_normal((2, 4, 3))),
     False),
    ("solve_vector", ops.solve, torch.linalg.solve, (general(), RNG.standard_normal(4)), False),
    ("det", ops.det, torch.linalg.det, (general(3),), False),
    ("slogdet", lambda a: ops.slogdet(a)[1], lambda a: torch.linalg.slogdet(a)[1],
     (general(2),), False),
    ("cholesky", ops.cholesky, torch.linalg.cholesky, (spd(2),), True),
    ("cholesky_upper", lambda a: ops.cholesky(a, upper=True),
     lambda a: torch.linalg.cholesky(a, upper=True), (spd(),), True),
    ("eigvalsh", lambda a: ops.eigh(a)[0], lambda a: torch.linalg.eigh(a)[0], (spd(2),), True),
    # |v|² is independent of each eigenvector's sign
    ("eigh_vectors", lambda a: ops.square(ops.eigh(a)[1]),
     lambda a: torch.linalg.eigh(a)[1] ** 2, (spd(2),), True),
    ("lstsq", ops.lstsq, lambda a, b: torch.linalg.lstsq(a, b).solution,
     (RNG.standard_normal((6, 3)), RNG.standard_normal((6, 2))), False),
    *((f"qr_{which}_{m}x{n}", lambda a, i=i: ops.qr(a)[i], lambda a, i=i: torch.linalg.qr(a)[i],
       (RNG.standard_normal((2, m, n)),), False)
      for m, n in ((5, 3), (3, 3), (3, 5)) for i, which in enumerate("qr")),
    *((f"svd_{m}x{n}", lambda a: ops.svd(a)[0], lambda a: torch.linalg.svdvals(a),
       (RNG.standard_normal((2, m, n)),), False) for m, n in ((5, 3), (3, 5))),
    # each singular pair is unique up to a common sign: u², v² and u s² vᵀ do not see it
    *((f"svd_{name}_{m}x{n}", ours, theirs, (RNG.standard_normal((2, m, n)),), False)
      for m, n in ((5, 3), (3, 5)) for name, ours, theirs in (
          ("u", lambda a: ops.square(ops.svd(a)[1]),
           lambda a: torch.linalg.svd(a, full_matrices=False)[0] ** 2),
          ("v", lambda a: ops.square(ops.svd(a)[2]),
           lambda a: torch.linalg.svd(a, full_matrices=False)[2].mT ** 2),
          ("usv", lambda a: _u_s2_vt(*ops.svd(a)), lambda a: _torch_u_s2_vt(a)))),
]


def _weights(shape) -> np.ndarray:
    return np.random.default_rng(9).standard_normal(shape)


@pytest.mark.parametrize("name, ours, theirs, inputs, symmetric", CASES,
                         ids=[c[0] for c in CASES])
def test_values_and_reverse_mode_match_torch(name, ours, theirs, inputs, symmetric):
    want = theirs(*(torch.tensor(v) for v in inputs))
    got = ours(*inputs)
    np.testing.assert_allclose(np.asarray(got), want.numpy(), rtol=1e-9, atol=1e-10)
    np.testing.assert_allclose(np.asarray(ms.jit(ours)(*inputs)), want.numpy(), rtol=1e-9,
                               atol=1e-10)
    weights = _weights(want.shape)
    leaves = [torch.tensor(v, requires_grad=True) for v in inputs]
    (theirs(*leaves) * torch.tensor(weights)).sum().backward()
    grads = grad(lambda *a: ops.sum(ops.multiply(ours(*a), Tensor(weights))),
                 argnums=tuple(range(len(inputs))))(*(Tensor(v) for v in inputs))
    for i, (g, leaf) in enumerate(zip(grads, leaves)):
        want_grad = leaf.grad.numpy()
        if symmetric:
            want_grad = _sym(want_grad)
        np.testing.assert_allclose(np.asarray(g), want_grad, rtol=1e-7, atol=1e-9,
                                   err_msg=f"gradient of {name} w.r.t. input {i}")


@pytest.mark.parametrize("name, ours, theirs, inputs, symmetric", CASES,
                         ids=[c[0] for c in CASES])
def test_forward_mode_matches_torch(name, ours, theirs, inputs, symmetric):
    tangents = [RNG.standard_normal(np.shape(v)) for v in inputs]
    if symmetric:
        tangents = [_sym(t) for t in tangents]
    _, want = torch.func.jvp(theirs, tuple(torch.tensor(v) for v in inputs),
                             tuple(torch.tensor(t) for t in tangents))
    _, got = jvp(ours, tuple(Tensor(v) for v in inputs), tuple(Tensor(t) for t in tangents))
    np.testing.assert_allclose(np.asarray(got), want.numpy(), rtol=1e-7, atol=1e-9,
                               err_msg=name)


def test_vmap_maps_over_a_stack_of_matrices():
    stack, rhs = general(5), RNG.standard_normal(4)
    np.testing.assert_allclose(ms.vmap(ops.det)(stack).numpy(), np.linalg.det(stack),
                               rtol=1e-10)
    np.testing.assert_allclose(ms.vmap(ops.solve, in_axes=(0, None))(stack, rhs).numpy(),
                               np.linalg.solve(stack, rhs[None, :, None])[..., 0], rtol=1e-10)
    w, _ = ms.vmap(ops.eigh)(spd(3))
    assert w.shape == (3, 4)
    s, _, _ = ms.vmap(ops.svd)(stack)
    np.testing.assert_allclose(s.numpy(), np.linalg.svd(stack)[1], rtol=1e-10)
    q, r = ms.vmap(ops.qr)(stack)
    np.testing.assert_allclose(ops.matmul(q, r).numpy(), stack, atol=1e-12)


def test_second_derivatives_through_the_rules():
    a = general()
    hessian_row = grad(lambda m: ops.sum(grad(lambda x: ops.det(x))(m)))(Tensor(a))
    t = torch.tensor(a, requires_grad=True)
    (first,) = torch.autograd.grad(torch.linalg.det(t), t, create_graph=True)
    (second,) = torch.autograd.grad(first.sum(), t)
    np.testing.assert_allclose(np.asarray(hessian_row), second.numpy(), rtol=1e-8, atol=1e-10)


def test_float32_and_integer_inputs():
    a = general().astype(np.float32)
    assert ops.inverse(a).dtype is ms.float32
    assert ops.det(np.array([[2, 0], [0, 3]])).dtype is ms.float32
    assert float(ops.det(np.array([[2, 0], [0, 3]]))) == pytest.approx(6.0)


def test_singular_and_indefinite_matrices():
    singular = np.array([[1.0, 2.0], [2.0, 4.0]])
    assert float(ops.det(singular)) == 0.0
    sign, _ = ops.slogdet(singular)
    assert float(sign) == 0.0
    assert not np.isfinite(ops.inverse(singular).numpy()).all()
    with pytest.raises(ValueError, match="linalg.cholesky: the matrix is not positive definite"):
        ops.cholesky(np.array([[1.0, 2.0], [2.0, 1.0]]))


def test_shape_errors_name_the_op():
    with pytest.raises(Exception, match=r"linalg.inverse.*square matrix.*\[2,3\]"):
        ops.inverse(np.ones((2, 3)))
    with pytest.raises(Exception, match=r"linalg.solve.*b must be \[..., n, k\]"):
        ops.solve(general(), np.ones((3, 2)))
    with pytest.raises(ValueError, match="eigh: UPLO must be 'L' or 'U'"):
        ops.eigh(spd(), "X")


def test_complete_factors_have_values_but_no_derivative():
    a = RNG.standard_normal((5, 3))
    q, r = ops.qr(a, mode="complete")
    assert q.shape == (5, 5) and r.shape == (5, 3)
    np.testing.assert_allclose(ops.matmul(q, r).numpy(), a, atol=1e-12)
    s, u, v = ops.svd(a, full_matrices=True)
    np.testing.assert_allclose((u.numpy()[:, :3] * s.numpy()) @ v.numpy().T, a, atol=1e-12)
    np.testing.assert_allclose(ops.svd(a, compute_uv=False).numpy(), np.linalg.svd(a)[1])
    with pytest.raises(ValueError, match=r"linalg.qr: no derivative for 5 × 3 matrices"):
        grad(lambda x: ops.sum(ops.qr(x, "complete")[0]))(Tensor(a))
    with pytest.raises(ValueError, match=r"linalg.svd: no derivative for 5 × 3 matrices"):
        grad(lambda x: ops.sum(ops.svd(x, full_matrices=True)[1]))(Tensor(a))
    with pytest.raises(ValueError, match="qr: mode must be 'reduced' or 'complete'"):
        ops.qr(a, "r")


def test_eigh_reads_the_chosen_triangle():
    a = spd()
    lower_only = np.tril(a) + np.triu(np.full_like(a, 7.0), 1)
    np.testing.assert_allclose(ops.eigh(lower_only)[0].numpy(), np.linalg.eigvalsh(a))
    np.testing.assert_allclose(ops.eigh(np.swapaxes(lower_only, 0, 1), "U")[0].numpy(),
                               np.linalg.eigvalsh(a))
