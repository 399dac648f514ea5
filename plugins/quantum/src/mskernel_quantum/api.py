"""``mskernel.quantum``: the public names of mskernel-quantum (MindQuantum users will
recognise them)::

    from mskernel.quantum import Circuit, Simulator, Hamiltonian, H, X, RX, RY

    circuit = Circuit()
    circuit += H.on(0)
    circuit += X.on(1, 0)
    circuit += RY("theta").on(1)
    sim = Simulator(2)
    f = sim.get_expectation_with_grad(Hamiltonian("0.5 Z0 Z1 + 0.3 X1"), circuit)
    energy, gradient = f([0.3])

In models: ``expectation(params, circuit, hamiltonian)`` is the differentiable op on tensors,
and ``MQLayer`` a circuit as a trainable layer; ``MQLayer`` is imported on first use, as it
needs mskernel-nn, which this plugin does not require.
"""

from .circuit import Circuit
from .errors import ParameterError, QasmError, QuantumError
from .gates import (
    CNOT, CZ, H, I, ISWAP, RX, RY, RZ, S, SWAP, SX, T, U3, X, Y, Z, FixedGate, Gate, Measure,
    ParameterizedGate, PhaseShift, Rxx, Ryy, Rzz, SXdag, Sdag, Tdag, Toffoli, UnivMathGate,
)
from .hamiltonian import Hamiltonian, PauliTerm, QubitOperator
from .noise import (
    AmplitudeDampingChannel, BitFlipChannel, DepolarizingChannel, NoiseChannel, PauliChannel,
    PhaseFlipChannel,
)
from .ops import expectation
from .parameters import Parameter, ParameterExpression
from .simulator import SamplingResult, Simulator

__all__ = [
    "AmplitudeDampingChannel", "BitFlipChannel", "CNOT", "CZ", "Circuit", "DepolarizingChannel",
    "FixedGate", "Gate", "H", "Hamiltonian", "I", "ISWAP", "Measure", "NoiseChannel",
    "Parameter", "ParameterError", "ParameterExpression", "ParameterizedGate", "PauliChannel",
    "PauliTerm", "PhaseFlipChannel", "PhaseShift", "QasmError", "QuantumError",
    "QubitOperator", "RX", "RY", "RZ", "Rxx", "Ryy", "Rzz", "S", "SWAP", "SX", "SXdag",
    "SamplingResult", "Sdag", "Simulator", "T", "Tdag", "Toffoli", "U3", "UnivMathGate", "X",
    "Y", "Z", "expectation",
]


def __getattr__(name: str):
    if name == "MQLayer":
        from .layer import MQLayer

        return MQLayer
    raise AttributeError(f"module 'mskernel.quantum' has no attribute '{name}'")


def __dir__() -> list[str]:
    return sorted([*globals(), "MQLayer"])
