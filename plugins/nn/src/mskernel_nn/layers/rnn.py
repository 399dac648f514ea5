"""Recurrent layers: ``LSTM`` and ``GRU`` (MindSpore 2.x's signatures and PyTorch's weight
layout: ``weight_ih_l{k}`` ``[gates * hidden, input]``, ``weight_hh_l{k}``, ``bias_ih_l{k}``,
``bias_hh_l{k}``, with a ``_reverse`` suffix for the backward direction; LSTM gates in the
order input, forget, cell, output; GRU gates reset, update, new).

Sequences are ``[T, N, input_size]`` (``[N, T, input_size]`` with ``batch_first``).  The
input projections of all time steps are one matrix product; the recurrence runs through
:func:`mskernel.ops.scan` — a Python loop eagerly, one ``While`` node under ``@jit`` whatever
the sequence length.  Weights default to ``Uniform(1 / sqrt(hidden_size))``.
"""

from __future__ import annotations

import math
from typing import Any, Optional

from mskernel import float32, ops as F
from mskernel.ops import scan
from mskernel_sdk import Tensor

from ..cell import Cell
from ..initializer import Uniform, parameter
from .basic import Dropout

__all__ = ["GRU", "LSTM"]


class _RNN(Cell):
    """Layers of recurrent cells run over a sequence in one or both directions."""

    gates: int

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1,
                 has_bias: bool = True, batch_first: bool = False, dropout: float = 0.0,
                 bidirectional: bool = False, dtype: Any = float32) -> None:
        super().__init__()
        if num_layers < 1:
            raise ValueError(f"num_layers must be at least 1, got {num_layers}")
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.num_layers = num_layers
        self.has_bias = has_bias
        self.batch_first = batch_first
        self.num_directions = 2 if bidirectional else 1
        init = Uniform(1 / math.sqrt(hidden_size))
        rows = self.gates * hidden_size
        for layer in range(num_layers):
            width = input_size if layer == 0 else hidden_size * self.num_directions
            for suffix in ("", "_reverse")[:self.num_directions]:
                name = f"l{layer}{suffix}"
                setattr(self, f"weight_ih_{name}", parameter(init, (rows, width), dtype))
                setattr(self, f"weight_hh_{name}", parameter(init, (rows, hidden_size), dtype))
                if has_bias:
                    setattr(self, f"bias_ih_{name}", parameter(init, (rows,), dtype))
                    setattr(self, f"bias_hh_{name}", parameter(init, (rows,), dtype))
        self.dropout = dropout
        if dropout > 0 and num_layers > 1:
            self.dropout_op = Dropout(p=dropout)

    def _weights(self, layer: int, direction: int) -> tuple[Optional[Tensor], ...]:
        name = f"l{layer}{'_reverse' if direction else ''}"
        params = self._params
        if self.has_bias:
            return (params[f"weight_ih_{name}"], params[f"weight_hh_{name}"],
                    params[f"bias_ih_{name}"], params[f"bias_hh_{name}"])
        return params[f"weight_ih_{name}"], params[f"weight_hh_{name}"], None, None

    def _run(self, x: Any, initial: list[Any]) -> tuple[Tensor, list[Any]]:
        """The output sequence ``[T, N, directions * hidden]`` and the final carry of each
        layer and direction, from the initial carries in the same order."""
        layer_input = F.asarray(x)
        finals: list[Any] = []
        for layer in range(self.num_layers):
            outputs = []
            for direction in range(self.num_directions):
                w_ih, w_hh, b_ih, b_hh = self._weights(layer, direction)
                projected = F.matmul(layer_input, F.transpose(w_ih))
                input_bias, step_bias = self._biases(b_ih, b_hh)
                if input_bias is not None:
                    projected = F.add(projected, input_bias)
                step = self._stepper(F.transpose(w_hh), step_bias)
                carry, ys = scan(step, initial[layer * self.num_directions + direction],
                                 projected, reverse=direction == 1)
                finals.append(carry)
                outputs.append(ys)
            layer_input = outputs[0] if len(outputs) == 1 else F.concat(outputs, axis=-1)
            if self.training and layer < self.num_layers - 1 and "dropout_op" in self._cells:
                layer_input = self.dropout_op(layer_input)
        return layer_input, finals

    def _biases(self, b_ih: Optional[Tensor], b_hh: Optional[Tensor]
                ) -> tuple[Optional[Tensor], Optional[Tensor]]:
        """The bias added to every step's input projection (outside the loop) and the one
        a step adds itself."""
        raise NotImplementedError

    def _stepper(self, w_hh_t: Tensor, bias: Optional[Tensor]) -> Any:
        """``step(carry, projected_x_t) -> (carry, h_t)`` of the recurrence."""
        raise NotImplementedError

    def _sequence(self, x: Any) -> Tensor:
        x = F.asarray(x)
        if x.ndim != 3 or x.shape[-1] != self.input_size:
            layout = "[N, T, input_size]" if self.batch_first else "[T, N, input_size]"
            raise ValueError(f"{type(self).__name__} expects x of shape {layout} with "
                             f"input_size {self.input_size}, got {list(x.shape)}")
        return F.swapaxes(x, 0, 1) if self.batch_first else x

    def _states(self, given: Any, batch: int, like: Tensor, what: str) -> list[Tensor]:
        """A ``[layers * directions, N, hidden]`` initial state (zeros when ``None``) split
        per layer and direction."""
        count = self.num_layers * self.num_directions
        shape = (count, batch, self.hidden_size)
        state = F.zeros(shape, like.dtype) if given is None else F.asarray(given)
        if state.shape != shape:
            raise ValueError(f"{type(self).__name__}: {what} must have shape {list(shape)}, "
                             f"got {list(state.shape)}")
        return [state[i] for i in range(count)]

    def _output(self, ys: Tensor) -> Tensor:
        return F.swapaxes(ys, 0, 1) if self.batch_first else ys

    def extend_repr(self) -> str:
        return (f"input_size={self.input_size}, hidden_size={self.hidden_size}, "
                f"num_layers={self.num_layers}, batch_first={self.batch_first}, "
                f"bidirectional={self.num_directions == 2}")


def _with_bias(y: Tensor, bias: Optional[Tensor]) -> Tensor:
    return y if bias is None else F.add(y, bias)


class LSTM(_RNN):
    """Long short-term memory: ``construct(x, hx=None)`` returns ``(output, (h_n, c_n))``;
    ``hx`` is ``(h_0, c_0)``, each ``[num_layers * num_directions, N, hidden_size]``
    (zeros when omitted)."""

    gates = 4

    def construct(self, x: Any, hx: Any = None) -> tuple[Tensor, tuple[Tensor, Tensor]]:
        seq = self._sequence(x)
        h0, c0 = (None, None) if hx is None else hx
        hs = self._states(h0, seq.shape[1], seq, "h_0")
        cs = self._states(c0, seq.shape[1], seq, "c_0")
        ys, finals = self._run(seq, list(zip(hs, cs)))
        h_n = F.stack([h for h, _ in finals])
        c_n = F.stack([c for _, c in finals])
        return self._output(ys), (h_n, c_n)

    def _biases(self, b_ih: Optional[Tensor], b_hh: Optional[Tensor]
                ) -> tuple[Optional[Tensor], Optional[Tensor]]:
        return (None if b_ih is None else F.add(b_ih, b_hh)), None

    def _stepper(self, w_hh_t: Tensor, bias: Optional[Tensor]) -> Any:
        def step(carry: tuple[Tensor, Tensor], x_t: Tensor) -> tuple[Any, Tensor]:
            h, c = carry
            gates = F.add(x_t, F.matmul(h, w_hh_t))
            i, f, g, o = F.split(gates, 4, axis=-1)
            c = F.add(F.multiply(F.sigmoid(f), c), F.multiply(F.sigmoid(i), F.tanh(g)))
            h = F.multiply(F.sigmoid(o), F.tanh(c))
            return (h, c), h

        return step


class GRU(_RNN):
    """Gated recurrent unit: ``construct(x, hx=None)`` returns ``(output, h_n)``; ``hx`` is
    ``h_0``, ``[num_layers * num_directions, N, hidden_size]`` (zeros when omitted)."""

    gates = 3

    def construct(self, x: Any, hx: Any = None) -> tuple[Tensor, Tensor]:
        seq = self._sequence(x)
        ys, finals = self._run(seq, self._states(hx, seq.shape[1], seq, "h_0"))
        return self._output(ys), F.stack(finals)

    def _biases(self, b_ih: Optional[Tensor], b_hh: Optional[Tensor]
                ) -> tuple[Optional[Tensor], Optional[Tensor]]:
        if b_ih is None:
            return None, None
        b_r, b_z, b_n = F.split(b_hh, 3)  # b_n is scaled by the reset gate, inside the loop
        return F.add(b_ih, F.concat([b_r, b_z, F.zeros_like(b_n)])), b_n

    def _stepper(self, w_hh_t: Tensor, bias: Optional[Tensor]) -> Any:
        def step(h: Tensor, x_t: Tensor) -> tuple[Tensor, Tensor]:
            x_r, x_z, x_n = F.split(x_t, 3, axis=-1)
            h_r, h_z, h_n = F.split(F.matmul(h, w_hh_t), 3, axis=-1)
            h_n = _with_bias(h_n, bias)
            r = F.sigmoid(F.add(x_r, h_r))
            z = F.sigmoid(F.add(x_z, h_z))
            n = F.tanh(F.add(x_n, F.multiply(r, h_n)))
            h = F.add(n, F.multiply(z, F.subtract(h, n)))  # (1 - z) * n + z * h
            return h, h

        return step
