"""Qiskit Aer's state-vector simulator on the benchmark workload; one JSON line per result.

Aer has no adjoint gradient: ``expectation`` times one expectation value (the
parameter-shift rule would need two per parameter).  The circuit is transpiled once, outside
the timing; Aer's gate fusion is on (its default).  ``BENCH_THREADS`` sets
``max_parallel_threads``.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import workload as w  # noqa: E402

os.environ["OMP_NUM_THREADS"] = str(w.THREADS)

import qiskit  # noqa: E402
import qiskit_aer  # noqa: E402
from qiskit import QuantumCircuit, transpile  # noqa: E402
from qiskit.quantum_info import SparsePauliOp  # noqa: E402
from qiskit_aer import AerSimulator  # noqa: E402


def build(gates, values, n):
    qc = QuantumCircuit(n)
    for name, target, control, param in gates:
        if name == "CNOT":
            qc.cx(control, target)
        else:
            getattr(qc, name.lower())(values[param], target)
    return qc


def main() -> None:
    precision = {"complex128": "double", "complex64": "single"}[
        os.environ.get("BENCH_DTYPE", "complex128")]
    for n in w.qubit_counts():
        gates = w.layered_circuit(n, w.LAYERS[n])
        values = w.parameter_values(w.parameter_count(gates))
        aer = AerSimulator(method="statevector", precision=precision,
                           max_parallel_threads=w.THREADS)
        evolve = build(gates, values, n)
        evolve.save_statevector()
        evolve = transpile(evolve, aer, optimization_level=0)
        observable = SparsePauliOp.from_sparse_list([("ZZ", [a, b], 1.0)
                                                     for a, b in w.zz_pairs(n)], num_qubits=n)
        expect = build(gates, values, n)
        expect.save_expectation_value(observable, list(range(n)))
        expect = transpile(expect, aer, optimization_level=0)
        extra = {"dtype": precision, "version": f"qiskit {qiskit.__version__}, "
                                                f"qiskit-aer {qiskit_aer.__version__}"}
        w.report("qiskit-aer", "evolve", n,
                 w.measure(lambda: aer.run(evolve).result(), w.repeats_for(n)), **extra)
        w.report("qiskit-aer", "expectation", n,
                 w.measure(lambda: aer.run(expect).result(), w.repeats_for(n)),
                 n_params=len(values), **extra)


if __name__ == "__main__":
    main()
