"""THOR: the Kronecker-factored second-order optimizer MindSpore ships (``nn.thor``).

For each dense and convolution layer ``y = W a`` the curvature of the loss in ``W`` is taken
as the Kronecker product of two small factors (K-FAC, Martens & Grosse 2015; THOR, Chen et
al. 2021): ``A = E[a aᵀ]`` over the layer's inputs (a convolution's input patches) and
``G = N · gᵀ g`` over the gradients ``g`` of the mean loss with respect to the layer's outputs
(its pre-activations; ``N`` the number of rows, so ``G`` is the covariance of per-example
gradients).  The step preconditions each weight's gradient with the damped inverses,
``(G + √λ I)⁻¹ ∇W (A + √λ I)⁻¹``, and takes a momentum step with it; biases (and layers THOR
does not cover: grouped convolutions, other cells) take the plain gradient.  The inverses are
recomputed every ``frequency`` steps only: under ``mskernel.jit`` the step compiles into two
graphs, one that refreshes the inverses and one that reuses them, and each call runs the one
its optimizer's ``global_step`` asks for, so the other steps cost little more than momentum
SGD.

    opt = mskernel.boost.thor(net, learning_rate=0.01, damping=0.03, momentum=0.9,
                              frequency=50)
    model = mskernel.boost.ConvertModelUtils.convert_to_thor_model(
        mskernel.Model(net, loss, opt), network=net, loss_fn=loss, optimizer=opt)

``thor`` gives the network's ``Dense`` and ``Conv2d`` cells a probing ``construct`` (the cells,
their parameters and names stay as they are) so that their inputs and output gradients are
seen by the step; ``ThorTrainOneStepCell`` is the
step.  ``g`` is found as the gradient of the loss with respect to a zero tensor added to each
layer's output, so autodiff computes it with the weights' gradients in one backward pass.
"""

from __future__ import annotations

import contextvars
from typing import Any, Optional, Sequence

import mskernel
import numpy as np
from mskernel import float32, ops as F
from mskernel_sdk import MskernelError, Parameter, Tensor, active_trace, trace_function
from mskernel.nn import (
    Cell, Conv2d, Dense, Momentum, TrainOneStepCell, WithEvalCell, WithLossCell,
)

__all__ = ["ConvertModelUtils", "THOR", "ThorTrainOneStepCell", "thor"]


class _Probed:
    """The ``construct`` THOR gives a dense or convolution layer: the layer's computation,
    keeping the input of its last call and adding ``probe`` (zeros the step differentiates)
    to its pre-activation output."""

    def __init__(self, layer: Cell) -> None:
        self.layer = layer
        self.probe: Optional[Tensor] = None
        self.seen_input: Any = None
        self.out_shape: Optional[tuple[int, ...]] = None
        object.__setattr__(layer, "construct", self)

    def __call__(self, x: Any) -> Tensor:
        layer = self.layer
        if isinstance(layer, Dense):
            y = F.matmul(x, F.transpose(layer.weight))
            if layer.has_bias:
                y = F.add(y, layer.bias)
        else:
            y = type(layer).construct(layer, x)
        self.seen_input = x
        self.out_shape = tuple(y.shape)
        if self.probe is not None:
            y = F.add(y, self.probe)
        if isinstance(layer, Dense) and layer.activation is not None:
            y = layer.activation(y)
        return y

    # -- the factors ------------------------------------------------------------------------

    def input_factor(self, x: Tensor) -> Tensor:
        """``A``: the mean outer product of the layer's inputs — a dense layer's input rows,
        a convolution's patches (summed per image as ``patches @ patchesᵀ``, without
        transposing the patches)."""
        if isinstance(self.layer, Dense):
            a = F.reshape(x, (-1, x.shape[-1]))
            return F.divide(F.matmul(F.transpose(a), a), float(a.shape[0]))
        conv = self.layer
        patches = mskernel.ops.unfold(x, conv.kernel_size, conv.dilation, _padding(conv),
                                      conv.stride)               # [N, C kh kw, L]
        per_image = F.matmul(patches, F.transpose(patches, (0, 2, 1)))
        return F.divide(F.sum(per_image, axis=0), float(patches.shape[0] * patches.shape[2]))

    def output_rows(self, g: Tensor) -> Tensor:
        """The output gradient as rows ``g`` (a convolution's: one per output pixel)."""
        if isinstance(self.layer, Dense):
            return F.reshape(g, (-1, g.shape[-1]))
        return F.reshape(F.transpose(g, (0, 2, 3, 1)), (-1, g.shape[1]))

    @property
    def weight(self) -> Parameter:
        return self.layer.weight  # type: ignore[no-any-return]


def _padding(conv: Conv2d) -> tuple[int, int]:
    """A convolution's symmetric padding per axis, for ``unfold``."""
    pad = conv.padding
    if pad == "valid":
        return (0, 0)
    if pad == "same":
        if any(s != 1 for s in conv.stride):
            raise MskernelError("THOR: a 'same' convolution with stride > 1 pads unevenly; "
                                "give it explicit padding")
        totals = [d * (k - 1) for d, k in zip(conv.dilation, conv.kernel_size)]
        if any(t % 2 for t in totals):
            raise MskernelError("THOR: a 'same' convolution with an even kernel pads unevenly")
        return (totals[0] // 2, totals[1] // 2)
    (top, bottom), (left, right) = pad
    if top != bottom or left != right:
        raise MskernelError(f"THOR: uneven padding {pad} of a convolution is not supported")
    return (top, left)


def kronecker_factors(layer: _Probed, x: Tensor, g: Tensor) -> tuple[Tensor, Tensor]:
    """``(A, G)`` of ``layer`` from its input ``x`` and the loss's gradient ``g`` with respect
    to its output (see :mod:`mskernel_boost.thor`)."""
    rows = layer.output_rows(g)
    g_factor = F.multiply(F.matmul(F.transpose(rows), rows), float(x.shape[0]))
    return layer.input_factor(x), g_factor


def damped_inverse(factor: Tensor, damping: Tensor) -> Tensor:
    """``(factor + damping · I)⁻¹``."""
    eye = F.asarray(np.eye(factor.shape[0], dtype=np.float32))
    return mskernel.ops.inverse(F.add(factor, F.multiply(eye, damping)))


def _probe_layers(network: Cell) -> list[_Probed]:
    """Probe every ``Dense`` and ungrouped ``Conv2d`` under ``network`` (once)."""
    probed: list[_Probed] = []
    for _, cell in network.cells_and_names():
        if isinstance(cell, Dense) or (isinstance(cell, Conv2d) and cell.group == 1):
            current = cell.__dict__.get("construct")
            probed.append(current if isinstance(current, _Probed) else _Probed(cell))
    return probed


class THOR(Momentum):
    """Momentum SGD on THOR-preconditioned gradients; made by :func:`thor`.  ``damping``: a
    number, or one per step (a list, the last kept after it ends), as MindSpore's decaying
    damping tensor."""

    def __init__(self, network: Cell, learning_rate: Any, damping: Any, momentum: float,
                 weight_decay: float = 0.0, use_nesterov: bool = False,
                 frequency: int = 100) -> None:
        if isinstance(frequency, bool) or not isinstance(frequency, int) or frequency < 1:
            raise ValueError(f"thor: frequency must be an int >= 1, got {frequency!r}")
        layers = _probe_layers(network)
        if not layers:
            raise ValueError("thor: the network has no Dense or Conv2d layer to precondition")
        super().__init__(network.trainable_params(), learning_rate, momentum, weight_decay,
                         use_nesterov)
        self.frequency = frequency
        dampings = np.atleast_1d(np.asarray(damping, np.float32))
        if dampings.ndim != 1 or not np.all(dampings > 0):
            raise ValueError(f"thor: damping must be > 0 (a number or one per step), got "
                             f"{damping!r}")
        self.damping = Parameter(dampings, name="thor_damping", requires_grad=False)
        object.__setattr__(self, "layers", layers)
        object.__setattr__(self, "network", network)
        index = {id(p): i for i, p in enumerate(self.parameters)}
        object.__setattr__(self, "weight_index", [index.get(id(l.weight)) for l in layers])
        self.inverses_a = [self._identity(f"thor_a_inv.{l.weight.name}", _a_size(l))
                           for l in layers]
        self.inverses_g = [self._identity(f"thor_g_inv.{l.weight.name}", l.weight.shape[0])
                           for l in layers]

    def _identity(self, name: str, size: int) -> Parameter:
        param = Parameter(np.eye(size, dtype=np.float32), name=name, requires_grad=False)
        self.insert_param_to_cell(name, param, check_name_contain_dot=False)
        return param

    def damping_at(self, step: Tensor) -> Tensor:
        table = self.damping
        return F.take(table, F.minimum(step, table.shape[0] - 1))

    def precondition(self, grads: Sequence[Tensor]) -> tuple[Tensor, ...]:
        """The gradients with each covered weight's replaced by ``G⁻¹ ∇W A⁻¹``."""
        out = list(grads)
        for layer, i, a_inv, g_inv in zip(self.layers, self.weight_index, self.inverses_a,
                                          self.inverses_g):
            if i is None:
                continue
            w = out[i]
            flat = F.reshape(w, (w.shape[0], -1))
            out[i] = F.reshape(F.matmul(F.matmul(g_inv, flat), a_inv), w.shape)
        return tuple(out)


def _a_size(layer: _Probed) -> int:
    w = layer.weight
    return int(np.prod(w.shape[1:]))


def thor(net: Cell, learning_rate: Any, damping: Any, momentum: float,
         weight_decay: float = 0.0, use_nesterov: bool = False, frequency: int = 100,
         **mindspore_options: Any) -> THOR:
    """MindSpore's ``nn.thor``: the THOR optimizer of ``net`` (whose layers it probes).
    ``loss_scale``, ``batch_size``, ``decay_filter``, ``split_indices`` and
    ``enable_clip_grad`` are accepted for MindSpore scripts and change nothing here."""
    unknown = set(mindspore_options) - {"loss_scale", "batch_size", "decay_filter",
                                        "split_indices", "enable_clip_grad"}
    if unknown:
        raise TypeError(f"thor got unexpected keyword arguments {sorted(unknown)}")
    return THOR(net, learning_rate, damping, momentum, weight_decay, use_nesterov, frequency)


class ThorTrainOneStepCell(TrainOneStepCell):
    """One THOR training step of ``network`` with ``loss_fn`` (``loss_fn(network(x),
    label)``): the loss, the weights' and the layers' output gradients in one backward pass,
    the factors and their damped inverses when ``global_step`` is a multiple of the
    optimizer's ``frequency``, the preconditioned momentum update.  Returns the loss."""

    def __init__(self, network: Cell, loss_fn: Cell, optimizer: THOR) -> None:
        if not isinstance(optimizer, THOR):
            raise TypeError(f"ThorTrainOneStepCell needs the optimizer of mskernel.boost.thor, "
                            f"got {type(optimizer).__name__}")
        super().__init__(WithLossCell(network, loss_fn), optimizer)
        self.backbone = network
        object.__setattr__(self, "_shapes", {})
        object.__setattr__(self, "_refresh", True)

    def construct(self, x: Any, label: Any) -> Tensor:
        opt = self.optimizer
        layers = opt.layers
        probes = [F.zeros(shape, float32) for shape in self._output_shapes(x)]

        def loss_of(probes: list[Tensor], x: Any, label: Any) -> Tensor:
            for layer, probe in zip(layers, probes):
                layer.probe = probe
            try:
                return self.network(x, label)
            finally:
                for layer in layers:
                    layer.probe = None

        loss, (output_grads, grads) = mskernel.value_and_grad(
            loss_of, 0, weights=self.weights)(probes, x, label)
        if self._refresh_due() if active_trace() is None else self._refresh:
            damping = F.sqrt(opt.damping_at(opt.global_step))
            for layer, g, a_inv, g_inv in zip(layers, output_grads, opt.inverses_a,
                                              opt.inverses_g):
                a_factor, g_factor = kronecker_factors(layer, layer.seen_input, g)
                a_inv.assign_value(damped_inverse(a_factor, damping))
                g_inv.assign_value(damped_inverse(g_factor, damping))
        opt(opt.precondition(grads))
        return loss

    def _refresh_due(self) -> bool:
        """Whether this step recomputes the inverses (read from the concrete step count)."""
        return int(np.asarray(self.optimizer.global_step)) % self.optimizer.frequency == 0

    def __jit_state__(self) -> tuple[Any, ...]:
        """The training flags and whether this call refreshes the inverses: ``jit`` compiles
        each of the two steps once and runs the one this call needs."""
        object.__setattr__(self, "_refresh", self._refresh_due())
        return (super().__jit_state__(), self._refresh)

    def _output_shapes(self, x: Tensor) -> list[tuple[int, ...]]:
        """Each wrapped layer's output shape for an input like ``x`` (traced once per input
        type and training mode, outside any enclosing trace)."""
        key = (x.type, self.backbone.__jit_state__())
        if key not in self._shapes:
            contextvars.Context().run(trace_function, self.backbone, [x.type], "thor_shapes")
            self._shapes[key] = [layer.out_shape for layer in self.optimizer.layers]
        return self._shapes[key]  # type: ignore[no-any-return]


class ConvertModelUtils:
    """MindSpore's converter: a ``Model`` that trains with THOR."""

    @staticmethod
    def convert_to_thor_model(model: Any, network: Cell, loss_fn: Cell, optimizer: THOR,
                              metrics: Any = None, amp_level: str = "O0",
                              loss_scale_manager: Any = None,
                              keep_batchnorm_fp32: bool = False) -> Any:
        """``model`` (whose metrics it keeps unless ``metrics`` is given) rebuilt to train
        ``network`` with :class:`ThorTrainOneStepCell`."""
        if not isinstance(optimizer, THOR):
            return model
        if amp_level != "O0" or loss_scale_manager is not None:
            raise MskernelError("THOR trains in float32 here: mixed precision and loss "
                                "scaling are not combined with it")
        step = ThorTrainOneStepCell(network, loss_fn, optimizer)
        return mskernel.Model(step, eval_network=WithEvalCell(network, loss_fn),
                              metrics=metrics if metrics is not None else model._metrics)
