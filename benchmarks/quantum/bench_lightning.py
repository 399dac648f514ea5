"""PennyLane's ``lightning.qubit`` (pennylane-lightning, C++ kernels, adjoint gradients) on the
benchmark workload; one JSON line per result.  ``BENCH_THREADS`` sets OMP_NUM_THREADS before
lightning loads.

PennyLane numbers wires with wire 0 as the most significant bit; our qubit q is wire n-1-q,
so both simulators touch the same amplitudes in the same memory order.
"""

import os
import sys
from importlib.metadata import version

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import workload as w  # noqa: E402

os.environ["OMP_NUM_THREADS"] = str(w.THREADS)

import pennylane as qml  # noqa: E402
from pennylane import numpy as pnp  # noqa: E402

ROTATIONS = {"RX": qml.RX, "RY": qml.RY, "RZ": qml.RZ}


def apply_gates(gates, params, n):
    for name, target, control, param in gates:
        if name == "CNOT":
            qml.CNOT(wires=[n - 1 - control, n - 1 - target])
        else:
            ROTATIONS[name](params[param], wires=n - 1 - target)


def main() -> None:
    dtype = {"complex128": "complex128", "complex64": "complex64"}[
        os.environ.get("BENCH_DTYPE", "complex128")]
    for n in w.qubit_counts():
        gates = w.layered_circuit(n, w.LAYERS[n])
        values = w.parameter_values(w.parameter_count(gates))
        dev = qml.device("lightning.qubit", wires=n, c_dtype=getattr(pnp, dtype))
        observable = qml.Hamiltonian([1.0] * (n - 1), [qml.Z(n - 1 - a) @ qml.Z(n - 1 - b)
                                                       for a, b in w.zz_pairs(n)])

        @qml.qnode(dev, diff_method=None)
        def evolve(params):
            apply_gates(gates, params, n)
            return qml.state()

        @qml.qnode(dev, diff_method="adjoint")
        def energy(params):
            apply_gates(gates, params, n)
            return qml.expval(observable)

        params = pnp.array(values, requires_grad=True)
        gradient = qml.grad(energy)
        extra = {"dtype": dtype, "version": f"pennylane {qml.__version__}, "
                                            f"lightning {version('pennylane-lightning')}"}
        w.report("lightning", "evolve", n, w.measure(lambda: evolve(params), w.repeats_for(n)),
                 **extra)
        w.report("lightning", "grad", n, w.measure(lambda: gradient(params), w.repeats_for(n)),
                 n_params=len(values), **extra)


if __name__ == "__main__":
    main()
