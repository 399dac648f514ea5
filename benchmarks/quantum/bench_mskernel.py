"""mskernel-quantum on the benchmark workload (see workload.py); one JSON line per result.
``BENCH_THREADS`` sets the thread count (MSKERNEL_NUM_THREADS)."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import workload as w  # noqa: E402 - sets nothing, but keep framework imports after it

os.environ["MSKERNEL_NUM_THREADS"] = str(w.THREADS)

import numpy as np  # noqa: E402
from mskernel_quantum import _native  # noqa: E402
from mskernel_quantum.api import CNOT, RX, RY, RZ, Circuit, Hamiltonian, Simulator  # noqa: E402

ROTATIONS = {"RX": RX, "RY": RY, "RZ": RZ}


def build(gates):
    circuit = Circuit()
    for name, target, control, param in gates:
        if name == "CNOT":
            circuit += CNOT.on(target, control)
        else:
            circuit += ROTATIONS[name](f"p{param}").on(target)
    return circuit


def main() -> None:
    dtype = os.environ.get("BENCH_DTYPE", "complex128")
    for n in w.qubit_counts():
        gates = w.layered_circuit(n, w.LAYERS[n])
        circuit = build(gates)
        params = np.array(w.parameter_values(w.parameter_count(gates)))
        ham = Hamiltonian([(1.0, f"Z{a} Z{b}") for a, b in w.zz_pairs(n)])
        sim = Simulator(n, dtype=dtype)

        def evolve():
            sim.reset()
            sim.apply_circuit(circuit, params)

        grad_ops = Simulator(n, dtype=dtype).get_expectation_with_grad(ham, circuit)
        extra = {"dtype": dtype, "isa": _native.isa()}
        w.report("mskernel", "evolve", n, w.measure(evolve, w.repeats_for(n)), **extra)
        w.report("mskernel", "grad", n, w.measure(lambda: grad_ops(params), w.repeats_for(n)),
                 n_params=len(params), **extra)


if __name__ == "__main__":
    main()
