"""MindQuantum's CPU state-vector simulator (mqvector) on the benchmark workload; one JSON
line per result.  ``BENCH_THREADS`` sets OMP_NUM_THREADS before MindQuantum loads."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import workload as w  # noqa: E402

os.environ["OMP_NUM_THREADS"] = str(w.THREADS)

import mindquantum as mq  # noqa: E402
import numpy as np  # noqa: E402
from mindquantum.core.circuit import Circuit  # noqa: E402
from mindquantum.core.gates import RX, RY, RZ, X  # noqa: E402
from mindquantum.core.operators import Hamiltonian, QubitOperator  # noqa: E402
from mindquantum.simulator import Simulator  # noqa: E402

ROTATIONS = {"RX": RX, "RY": RY, "RZ": RZ}


def build(gates):
    circuit = Circuit()
    for name, target, control, param in gates:
        if name == "CNOT":
            circuit += X.on(target, control)
        else:
            circuit += ROTATIONS[name](f"p{param}").on(target)
    return circuit


def main() -> None:
    dtype = {"complex128": mq.complex128, "complex64": mq.complex64}[
        os.environ.get("BENCH_DTYPE", "complex128")]
    for n in w.qubit_counts():
        gates = w.layered_circuit(n, w.LAYERS[n])
        circuit = build(gates)
        names = circuit.params_name
        values = w.parameter_values(w.parameter_count(gates))
        params = np.array([values[int(name[1:])] for name in names])
        op = QubitOperator()
        for a, b in w.zz_pairs(n):
            op += QubitOperator(f"Z{a} Z{b}")
        ham = Hamiltonian(op)
        sim = Simulator("mqvector", n, dtype=dtype)
        resolver = dict(zip(names, params))

        def evolve():
            sim.reset()
            sim.apply_circuit(circuit, resolver)

        grad_ops = Simulator("mqvector", n, dtype=dtype).get_expectation_with_grad(ham, circuit)
        extra = {"dtype": str(dtype), "version": mq.__version__}
        w.report("mindquantum", "evolve", n, w.measure(evolve, w.repeats_for(n)), **extra)
        w.report("mindquantum", "grad", n, w.measure(lambda: grad_ops(params),
                                                     w.repeats_for(n)),
                 n_params=len(params), **extra)


if __name__ == "__main__":
    main()
