"""The native kernels against the NumPy reference kernels, for every gate size, with and
without controls, both precisions and several thread counts; and their input checks."""

import os
import subprocess
import sys

import numpy as np
import pytest

from mskernel import complex128, complex64
from mskernel_sdk import assert_close
from mskernel_quantum import _native
from mskernel_quantum.native_kernels import ISA_ENV, THREADS_ENV, NativeKernels, default_threads
from mskernel_quantum.reference_kernels import NumpyKernels
from mskernel_quantum.errors import QuantumError

from circuits import random_unitary

REFERENCE = NumpyKernels()
PRECISION = {np.complex128: (complex128, None), np.complex64: (complex64, 1e-5)}


def _state(rng, n, dtype):
    psi = rng.normal(size=2 ** n) + 1j * rng.normal(size=2 ** n)
    return (psi / np.linalg.norm(psi)).astype(dtype)


def _operands(rng, n, k, c, structure="dense"):
    """A matrix (dense, diagonal or anti-diagonal: the kernels' special cases), targets and
    controls."""
    qubits = rng.permutation(n)[: k + c].tolist()
    matrix = rng.normal(size=(2 ** k, 2 ** k)) + 1j * rng.normal(size=(2 ** k, 2 ** k))
    if structure == "diagonal":
        matrix = np.diag(np.diag(matrix))
    elif structure == "antidiagonal":
        matrix = np.fliplr(np.diag(np.diag(matrix)))
    return matrix, qubits[:k], qubits[k:]


@pytest.mark.parametrize("dtype", [np.complex128, np.complex64])
@pytest.mark.parametrize("threads", [1, 3])
@pytest.mark.parametrize("n,k,c,structure", [
    (1, 1, 0, "dense"), (4, 1, 2, "dense"), (14, 1, 1, "dense"), (14, 1, 0, "diagonal"),
    (15, 1, 2, "antidiagonal"), (14, 2, 0, "dense"), (9, 2, 2, "dense"), (16, 3, 3, "dense"),
    (8, 4, 1, "dense"), (7, 5, 0, "dense"), (14, 1, 0, "dense"), (14, 2, 0, "diagonal"),
    (9, 2, 1, "diagonal"), (3, 1, 2, "diagonal"), (12, 2, 0, "antidiagonal"),
])
def test_native_matches_reference(rng, isa, dtype, threads, n, k, c, structure):
    dt, atol = PRECISION[dtype]
    native = NativeKernels(threads)
    psi, lam = _state(rng, n, dtype), _state(rng, n, dtype)
    matrix, targets, controls = _operands(rng, n, k, c, structure)

    expected, actual = psi.copy(), psi.copy()
    REFERENCE.apply_matrix(expected, matrix, targets, controls)
    native.apply_matrix(actual, matrix, targets, controls)
    assert_close(actual, expected, dt, atol=atol)

    assert_close(native.inner_matrix(lam, psi, matrix, targets, controls),
                 REFERENCE.inner_matrix(lam, psi, matrix, targets, controls), dt, atol=atol)

    derivatives = np.stack([_operands(rng, n, k, c)[0] for _ in range(3)])
    for n_lams in (1, 3):  # one co-state per observable, swept together
        lams = [lam] + [_state(rng, n, dtype) for _ in range(n_lams - 1)]
        p1, l1, p2, l2 = psi.copy(), [x.copy() for x in lams], psi.copy(), [x.copy() for x in lams]
        sums = native.adjoint_step(p1, l1, matrix, derivatives, targets, controls)
        assert sums.shape == (n_lams, 3)
        assert_close(sums, REFERENCE.adjoint_step(p2, l2, matrix, derivatives, targets,
                                                  controls), dt, atol=atol)
        assert_close(p1, p2, dt, atol=atol)
        for a, b in zip(l1, l2):
            assert_close(a, b, dt, atol=atol)


@pytest.mark.parametrize("dtype", [np.complex128, np.complex64])
@pytest.mark.parametrize("n,threads", [(1, 1), (5, 1), (17, 1), (18, 3)])
def test_cache_blocked_runs_match_reference(rng, isa, dtype, n, threads):
    """Runs of one- and two-target gates, tiled above 16 qubits (high qubits included),
    against the reference applying the gates one by one."""
    dt, atol = PRECISION[dtype]
    gates = []
    for _ in range(25):
        k = min(n, int(rng.integers(1, 3)))
        gates.append((random_unitary(rng, 2 ** k), rng.permutation(n)[:k].tolist()))
    psi = _state(rng, n, dtype)
    expected = psi.copy()
    for matrix, targets in gates:
        REFERENCE.apply_matrix(expected, matrix, targets, [])
    _native.apply_run(psi, [m for m, _ in gates], [t for _, t in gates], threads)
    assert_close(psi, expected, dt, atol=atol)


@pytest.mark.parametrize("dtype", [np.complex128, np.complex64])
@pytest.mark.parametrize("n", [1, 6, 14])
def test_pauli_kernels_match_reference(rng, isa, dtype, n):
    dt, atol = PRECISION[dtype]
    native = NativeKernels(2)
    psi = _state(rng, n, dtype)
    masks = [int(m) for m in rng.integers(0, 2 ** n, size=(3, 3)).ravel()]
    xmasks, zmasks, coeffs = masks[:3], masks[3:6], [0.5, -1j, 2.0]
    assert_close(native.pauli_expectation(psi, xmasks[0], zmasks, coeffs),
                 REFERENCE.pauli_expectation(psi, xmasks[0], zmasks, coeffs), dt, atol=atol)
    out, expected = np.empty_like(psi), np.empty_like(psi)
    native.apply_pauli_sum(psi, out, xmasks, zmasks, coeffs)
    REFERENCE.apply_pauli_sum(psi, expected, xmasks, zmasks, coeffs)
    assert_close(out, expected, dt, atol=atol)


def test_unitaries_preserve_the_norm_in_single_precision(rng):
    psi = _state(rng, 14, np.complex64)
    native = NativeKernels(2)
    for _ in range(40):
        k = int(rng.integers(1, 3))
        targets = rng.permutation(14)[:k].tolist()
        native.apply_matrix(psi, random_unitary(rng, 2 ** k), targets, [])
    assert np.linalg.norm(psi.astype(np.complex128)) == pytest.approx(1.0, abs=1e-5)


def test_kernel_builds_are_listed_and_switchable():
    assert _native.isas()[0] == "base" and _native.isa() in _native.isas()
    with pytest.raises(ValueError, match="no kernel build 'sse1'"):
        _native.use_isa("sse1")


@pytest.mark.parametrize("isa", _native.isas() + ["sse1"])
def test_the_environment_forces_a_kernel_build(isa):
    """MSKERNEL_QUANTUM_ISA picks the build at import; each forced build simulates a random
    circuit as the NumPy reference does (an unknown name is refused)."""
    code = ("import numpy as np; from mskernel_quantum import _native;"
            "from mskernel_quantum.api import Simulator; import circuits;"
            "rng = np.random.default_rng(5); c = circuits.random_circuit(rng, 7, 40);"
            "v = {'a': 0.3, 'b': -1.1, 'c': 0.7}; print(_native.isa(), end=' ');"
            "s = Simulator(7); s.apply_circuit(c, v);"
            "r = Simulator(7, backend='numpy'); r.apply_circuit(c, v);"
            "print(np.abs(s.get_qs() - r.get_qs()).max())")
    env = {**os.environ, ISA_ENV: isa}
    proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                          cwd=os.path.dirname(__file__), timeout=120)
    if isa == "sse1":
        assert proc.returncode != 0 and "this CPU runs the kernel builds" in proc.stderr
        return
    assert proc.returncode == 0, proc.stderr
    name, error = proc.stdout.split()
    assert name == isa and float(error) < 1e-12


def test_native_kernels_refuse_bad_inputs():
    native = NativeKernels(1)
    psi = np.zeros(8, np.complex128)
    psi[0] = 1
    x = np.array([[0, 1], [1, 0]])
    with pytest.raises(ValueError, match="outside a state of 3 qubits"):
        native.apply_matrix(psi, x, [3], [])
    with pytest.raises(ValueError, match="used twice"):
        native.apply_matrix(psi, x, [1], [1])
    with pytest.raises(ValueError, match="must be 4x4 for 2 target"):
        native.apply_matrix(psi, x, [0, 1], [])
    with pytest.raises(ValueError, match="power of two"):
        native.apply_matrix(np.zeros(6, np.complex128), x, [0], [])
    with pytest.raises(TypeError):  # strided views would be copied and the update lost
        native.apply_matrix(psi[::2], x, [0], [])
    with pytest.raises(TypeError):
        native.apply_matrix(np.zeros(8), x, [0], [])
    with pytest.raises(ValueError, match="differ in length"):
        native.inner_matrix(psi, psi[:4].copy(), x, [0], [])


def test_thread_count_comes_from_the_environment(monkeypatch):
    monkeypatch.setenv(THREADS_ENV, "3")
    assert default_threads() == 3 and NativeKernels().threads == 3
    assert NativeKernels(1).threads == 1
    monkeypatch.setenv(THREADS_ENV, "zero")
    with pytest.raises(QuantumError, match="is not an integer"):
        default_threads()
    with pytest.raises(QuantumError, match="at least 1"):
        NativeKernels(0)
