"""Checking a cell against a PyTorch module with the same weights (the oracle of this
plugin's tests; PyTorch is imported only when a check runs).

:func:`compare_with_torch` copies the cell's parameters into the module, runs both on the same
inputs and compares the outputs and the gradients of a weighted sum of the outputs with
respect to every floating-point input and every trainable parameter; then it checks that the
cell and its gradient compiled with ``mskernel.jit`` give the eager results.
"""

from __future__ import annotations

from typing import Any, Callable, Mapping, Optional, Sequence

import numpy as np
from mskernel_autodiff.api import value_and_grad

from mskernel import float32, jit
from mskernel_sdk import Tensor, assert_close, tree_flatten

from .cell import Cell

__all__ = ["compare_with_torch", "copy_to_torch", "leaves"]

#: float32 tolerances for results that sum many products, in an order that differs between
#: the two frameworks.
RTOL, ATOL = 1e-4, 1e-5


def leaves(out: Any) -> list[Any]:
    """The tensors of a (nested) tuple result, ``None`` s dropped."""
    return tree_flatten(out)[0]


def copy_to_torch(cell: Cell, module: Any, names: Optional[Mapping[str, str]] = None) -> None:
    """Copy every parameter of ``cell`` into ``module``'s parameter or buffer of the same name
    (or ``names[cell_name]``); every one of ``module``'s parameters must be covered."""
    import torch

    targets = dict(module.named_parameters()) | dict(module.named_buffers())
    covered = set()
    for name, param in cell.parameters_and_names():
        target = (names or {}).get(name, name)
        if target not in targets:
            if param.requires_grad:
                raise KeyError(f"{target!r} is not a parameter of the torch module; it has "
                               f"{sorted(targets)}")
            continue  # a buffer PyTorch keeps elsewhere (a dropout layer's random key)
        with torch.no_grad():
            targets[target].copy_(torch.from_numpy(np.array(param)))
        covered.add(target)
    missing = set(dict(module.named_parameters())) - covered
    if missing:
        raise KeyError(f"torch parameters without a counterpart in the cell: {sorted(missing)}")


def compare_with_torch(cell: Cell, module: Any, inputs: Sequence[np.ndarray],
                       names: Optional[Mapping[str, str]] = None, *, rtol: float = RTOL,
                       atol: float = ATOL, check_jit: bool = True, seed: int = 0) -> None:
    """Compare ``cell(*inputs)`` with ``module(*inputs)`` — values, then gradients — and the
    jitted cell with the eager one.  ``cell.training`` and ``module.training`` are the
    caller's to set.  Parameters are copied from the cell to the module first."""
    import torch

    copy_to_torch(cell, module, names)
    rng = np.random.default_rng(seed)
    floating = [i for i, x in enumerate(inputs) if np.asarray(x).dtype.kind == "f"]
    params = cell.trainable_params()

    t_inputs = [torch.from_numpy(np.array(x)) for x in inputs]
    for i in floating:
        t_inputs[i].requires_grad_(True)
    t_out = leaves(module(*t_inputs))
    cotangents = [rng.standard_normal(o.shape).astype(np.float32) for o in t_out]
    sum(((o * torch.from_numpy(c)).sum() for o, c in zip(t_out, cotangents, strict=True)),
        torch.zeros(())).backward()
    t_params = dict(module.named_parameters())

    def loss(*xs: Any) -> Any:
        total = Tensor(np.float32(0))
        for o, c in zip(leaves(cell(*xs)), cotangents, strict=True):
            total = total + (o * Tensor(c)).sum()
        return total

    ours = [Tensor(x) for x in inputs]
    out = leaves(cell(*ours))
    assert len(out) == len(t_out), f"{len(out)} outputs, torch has {len(t_out)}"
    for k, (o, t) in enumerate(zip(out, t_out, strict=True)):
        assert_close(o, t.detach().numpy(), float32, rtol=rtol, atol=atol, what=f"output {k}")
    step = value_and_grad(loss, tuple(floating) or None, weights=params)
    _, grads = step(*ours)
    input_grads, param_grads = grads if floating else ((), grads)
    for i, g in zip(floating, input_grads, strict=True):
        assert_close(g, t_inputs[i].grad.numpy(), float32, rtol=rtol, atol=atol,
                     what=f"gradient of input {i}")
    by_id = {id(p): n for n, p in cell.parameters_and_names()}
    for p, g in zip(params, param_grads, strict=True):
        name = by_id[id(p)]
        target = t_params[(names or {}).get(name, name)]
        assert_close(g, target.grad.numpy(), float32, rtol=rtol, atol=atol,
                     what=f"gradient of {name}")
    if check_jit:
        _compare_jit(cell, step, ours, out, grads)


def _compare_jit(cell: Cell, step: Callable, inputs: list[Tensor], out: list[Any],
                 grads: Any) -> None:
    """The jitted cell and gradient equal the eager ones (state such as moving statistics
    advances once more per call; outputs do not depend on it in the same call)."""
    for k, (o, e) in enumerate(zip(leaves(jit(cell)(*inputs)), out, strict=True)):
        assert_close(o, e, float32, rtol=RTOL, atol=ATOL, what=f"jitted output {k}")
    _, jit_grads = jit(step)(*inputs)
    for k, (g, e) in enumerate(zip(leaves(jit_grads), leaves(grads), strict=True)):
        assert_close(g, e, float32, rtol=RTOL, atol=ATOL, what=f"jitted gradient {k}")
