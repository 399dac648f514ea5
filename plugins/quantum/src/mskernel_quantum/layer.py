"""``MQLayer``: a parameterised circuit as a layer of an mskernel model (MindQuantum's
``MQLayer``), trained by the same optimizers as any other cell::

    from mskernel import nn
    from mskernel.quantum import MQLayer, Circuit, Hamiltonian, RY, RZ, X

    circuit = Circuit([RY("x0").on(0), RY("x1").on(1),       # encoder: data as angles
                       RY("a").on(0), RZ("b").on(1), X.on(1, 0)])   # ansatz: trained
    layer = MQLayer(circuit, [Hamiltonian("Z0"), Hamiltonian("Z1")],
                    encoder_params_name=["x0", "x1"])
    net = nn.SequentialCell(layer, nn.Dense(2, 2))
    logits = net(x)                                # x: [batch, 2] -> [batch, 2]

The circuit's parameters split into *encoder* parameters, named by ``encoder_params_name`` and
fed as the layer's input ``x`` of shape ``[..., E]`` (in that order), and *ansatz* parameters
— all the others, in ``circuit.params_name`` order — held by the trainable parameter
``weight`` of shape ``[W]``.  The output has shape ``[..., K]``: ``<H_k>`` for each of the
``K`` Hamiltonians and each row of ``x``.  A circuit without encoder parameters gives a layer
called without input (output ``[K]``).

The layer computes with the op ``quantum.expectation`` (one per Hamiltonian, batched over
``x``), whose derivative rule this plugin registers, so gradients reach both ``weight`` and
``x`` — eagerly, under ``mskernel.jit`` and in ``Model`` training.  It needs mskernel-nn
(and mskernel-autodiff to train), which this plugin does not install: ``pip install
mskernel-nn mskernel-autodiff``.
"""

from __future__ import annotations

from typing import Any, Optional, Sequence, Union

import numpy as np
from mskernel import ops
from mskernel_sdk import Parameter

from .circuit import Circuit
from .errors import QuantumError
from .hamiltonian import Hamiltonian
from .ops import apply_expectation, read_attributes

try:
    from mskernel.nn import Cell, initializer
except ImportError as exc:
    raise ImportError("mskernel.quantum.MQLayer needs mskernel-nn (and mskernel-autodiff to "
                      "train it): pip install mskernel-nn mskernel-autodiff") from exc

__all__ = ["MQLayer"]

HamiltoniansLike = Union[Hamiltonian, str, Sequence[Union[Hamiltonian, str]]]


class MQLayer(Cell):
    """Expectations of ``hamiltonians`` after ``circuit``; see :mod:`mskernel_quantum.layer`.

    ``weight`` initialises the ansatz parameters: an mskernel.nn initializer or its name
    (MindQuantum's default ``"normal"``: N(0, 0.01²)), a number or an array of shape ``[W]``.
    ``dtype`` is the weight's, and the input is cast to it.
    """

    def __init__(self, circuit: Circuit, hamiltonians: HamiltoniansLike,
                 encoder_params_name: Sequence[str] = (), weight: Any = "normal",
                 dtype: Any = "float32") -> None:
        super().__init__()
        if not isinstance(circuit, Circuit):
            raise TypeError(f"MQLayer: circuit must be a Circuit, got {type(circuit).__name__}")
        single = isinstance(hamiltonians, (Hamiltonian, str))
        hams = [Hamiltonian(h) for h in ([hamiltonians] if single else hamiltonians)]
        if not hams:
            raise QuantumError("MQLayer needs at least one Hamiltonian")
        names = circuit.params_name
        encoder = list(encoder_params_name)
        unknown = [n for n in encoder if n not in names]
        if unknown or len(set(encoder)) != len(encoder):
            raise QuantumError(f"encoder_params_name must name distinct circuit parameters "
                               f"({', '.join(names) or 'none'}); got {encoder}")
        ansatz = [n for n in names if n not in encoder]
        self.circuit_json = circuit.to_json()
        self.hamiltonian_texts = [str(h) for h in hams]
        for text in self.hamiltonian_texts:
            read_attributes(self.circuit_json, text)  # unitary circuit, readable Hamiltonian
        self.encoder_params_name, self.ansatz_params_name = encoder, ansatz
        position = {n: i for i, n in enumerate(encoder + ansatz)}
        order = [position[n] for n in names]
        self._order: Optional[np.ndarray] = (
            None if order == list(range(len(names))) else np.array(order, dtype=np.int64))
        self.weight = Parameter(initializer(weight, (len(ansatz),), dtype))

    def construct(self, x: Any = None) -> Any:
        params = self._params_for(x)
        return ops.stack([apply_expectation(params, self.circuit_json, h)
                          for h in self.hamiltonian_texts], axis=-1)

    def _params_for(self, x: Any) -> Any:
        """The circuit's parameter vectors ``[..., P]`` in ``params_name`` order."""
        if not self.encoder_params_name:
            if x is not None:
                raise QuantumError("this MQLayer's circuit has no encoder parameters; call it "
                                   "without input")
            return self.weight
        if x is None:
            raise QuantumError(f"MQLayer needs the encoder input x of shape [..., "
                               f"{len(self.encoder_params_name)}] "
                               f"({', '.join(self.encoder_params_name)})")
        x = ops.astype(x, self.weight.dtype)
        if x.ndim == 0 or x.shape[-1] != len(self.encoder_params_name):
            raise QuantumError(f"MQLayer: the input must have shape [..., "
                               f"{len(self.encoder_params_name)}] (one column per encoder "
                               f"parameter: {', '.join(self.encoder_params_name)}), got "
                               f"{list(x.shape)}")
        weights = ops.broadcast_to(self.weight, tuple(x.shape[:-1]) + tuple(self.weight.shape))
        params = ops.concat([x, weights], axis=-1)
        return params if self._order is None else ops.gather(params, self._order, axis=-1)

    def extend_repr(self) -> str:
        return (f"encoder={len(self.encoder_params_name)}, ansatz={len(self.ansatz_params_name)}"
                f", hamiltonians={len(self.hamiltonian_texts)}")
