"""PyTorch → mskernel, as MindSpore's model migration does it: the network through ONNX, the
weights by name.

- :func:`import_torch` exports a ``torch.nn.Module`` with ``torch.onnx.export`` (the
  ``torch.export``-based exporter, ``dynamo=True``, which needs ``onnxscript``; with
  ``optimize=False`` so that every parameter and buffer stays an initializer under its
  ``state_dict`` name instead of being folded into its neighbours) and imports the model:
  a graph whose weight inputs are the ``state_dict`` entries.
- :func:`map_state_dict` maps a ``state_dict`` (a torch one, or
  :attr:`ImportedModel.weights <mskernel_onnx.importer.ImportedModel.weights>`) onto the
  parameters of an equivalent mskernel ``Cell`` and reports what did not map;
  :func:`load_torch_state_dict` also loads them.

The mapping (:data:`RENAMES`): a torch entry ``<path>.<name>`` maps onto the cell's
parameter ``<path>.<name'>`` where ``name'`` depends on the kind of cell at ``<path>``:

=====================================  ====================================================
cell at ``<path>``                     torch name → mskernel (MindSpore) name
=====================================  ====================================================
``BatchNorm1d/2d/3d``                  ``weight`` → ``gamma``, ``bias`` → ``beta``,
                                       ``running_mean`` → ``moving_mean``,
                                       ``running_var`` → ``moving_variance``;
                                       ``num_batches_tracked`` has no counterpart
``LayerNorm``, ``GroupNorm``           ``weight`` → ``gamma``, ``bias`` → ``beta``
``Embedding``                          ``weight`` → ``embedding_table``
``PReLU``                              ``weight`` → ``w``
anything else                          the same name (``Conv*``/``Dense``/``LSTM``/``GRU``/
                                       ``MultiheadAttention`` use PyTorch's names)
=====================================  ====================================================

Layouts: convolution weights are ``[out, in / groups, *kernel]`` (transposed convolutions
``[in, out / groups, *kernel]``) in both, ``Dense.weight`` is ``[out, in]`` as
``Linear.weight``; a 2-d weight given as ``[in, out]`` (as ONNX ``MatMul`` initializers and
Keras hold it) is transposed, and the report says so.  ``prefixes`` renames sub-module paths
whose names differ (``{"downsample": "down_sample_layer"}``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping, Optional, Sequence

import numpy as np

from .importer import ImportedModel, import_model

#: cell class name → {torch parameter name: mskernel parameter name}
RENAMES: dict[str, dict[str, str]] = {
    **{f"BatchNorm{d}d": {"weight": "gamma", "bias": "beta", "running_mean": "moving_mean",
                          "running_var": "moving_variance"} for d in (1, 2, 3)},
    "LayerNorm": {"weight": "gamma", "bias": "beta"},
    "GroupNorm": {"weight": "gamma", "bias": "beta"},
    "Embedding": {"weight": "embedding_table"},
    "PReLU": {"weight": "w"},
}
#: torch entries with no mskernel counterpart, and why
NO_COUNTERPART = {"num_batches_tracked": "BatchNorm's update counter; mskernel's BatchNorm "
                                         "uses a fixed momentum and keeps no counter"}


def torch_to_onnx(module: Any, args: Sequence[Any], *, opset: int = 18) -> Any:
    """``module`` (in eval mode) as an ``onnx.ModelProto`` at the example ``args``."""
    import torch

    module.eval()
    with torch.no_grad():
        program = torch.onnx.export(module, tuple(args), dynamo=True, optimize=False,
                                    opset_version=opset, verbose=False)
    return program.model_proto


def import_torch(module: Any, *args: Any, opset: int = 18) -> ImportedModel:
    """Export ``module`` at the example ``args`` and import it; its weight inputs are the
    ``state_dict`` entries the forward pass uses, under their ``state_dict`` names."""
    model = torch_to_onnx(module, args, opset=opset)
    return import_model(model, weight_names=set(module.state_dict()))


@dataclass
class MappingReport:
    """What :func:`map_state_dict` did: ``mapped`` (source → target, and how: ``"same"``,
    ``"renamed"``, ``"transposed"``), ``unmapped`` source entries with the reason, and the
    target parameters ``missing`` a value (they keep theirs)."""

    mapped: list[tuple[str, str, str]] = field(default_factory=list)
    unmapped: dict[str, str] = field(default_factory=dict)
    missing: list[str] = field(default_factory=list)

    @property
    def complete(self) -> bool:
        """Every target parameter got a value, and every source entry went somewhere (or
        has no counterpart by design)."""
        return not self.missing and all(
            name.rsplit(".", 1)[-1] in NO_COUNTERPART for name in self.unmapped)

    def __str__(self) -> str:
        how = {kind: sum(1 for *_, k in self.mapped if k == kind)
               for kind in ("same", "renamed", "transposed")}
        lines = [f"mapped {len(self.mapped)} tensors ({how['same']} by the same name, "
                 f"{how['renamed']} renamed, {how['transposed']} transposed)"]
        lines += [f"  not mapped: {name}: {why}" for name, why in self.unmapped.items()]
        lines += [f"  no value for the cell's {name} (it keeps its own)" for name in self.missing]
        return "\n".join(lines)


def map_state_dict(state_dict: Mapping[str, Any], cell: Any,
                   prefixes: Optional[Mapping[str, str]] = None
                   ) -> tuple[dict[str, np.ndarray], MappingReport]:
    """The arrays of ``state_dict`` under the names of ``cell``'s parameters (see the module
    doc for the mapping), and the report."""
    kinds = {path: type(sub).__name__ for path, sub in cell.cells_and_names()}
    targets = {name: tuple(p.shape) for name, p in cell.parameters_and_names()}
    report = MappingReport()
    out: dict[str, np.ndarray] = {}
    for source, value in state_dict.items():
        array = _numpy(value)
        path, _, leaf = _renamed(source, prefixes or {}).rpartition(".")
        if leaf in NO_COUNTERPART:
            report.unmapped[source] = NO_COUNTERPART[leaf]
            continue
        renamed = RENAMES.get(kinds.get(path, ""), {}).get(leaf, leaf)
        target = f"{path}.{renamed}" if path else renamed
        if target not in targets:
            report.unmapped[source] = f"the cell has no parameter {target}"
            continue
        wanted = targets[target]
        if array.shape == wanted:
            kind = "same" if target == source else "renamed"
        elif array.ndim == 2 and array.T.shape == wanted:
            array, kind = np.ascontiguousarray(array.T), "transposed"
        else:
            report.unmapped[source] = (f"shape {list(array.shape)} does not fit {target} "
                                       f"{list(wanted)}")
            continue
        out[target] = array
        report.mapped.append((source, target, kind))
    report.missing = [name for name in targets if name not in out and _is_weight(cell, name)]
    return out, report


def load_torch_state_dict(cell: Any, state_dict: Mapping[str, Any],
                          prefixes: Optional[Mapping[str, str]] = None) -> MappingReport:
    """Map ``state_dict`` onto ``cell`` and load what mapped into it
    (``mskernel.load_param_into_net``); return the report."""
    import mskernel

    arrays, report = map_state_dict(state_dict, cell, prefixes)
    mskernel.load_param_into_net(cell, arrays)
    return report


def _renamed(name: str, prefixes: Mapping[str, str]) -> str:
    parts = name.split(".")
    return ".".join(prefixes.get(part, part) for part in parts[:-1]) + (
        "." if len(parts) > 1 else "") + parts[-1]


def _is_weight(cell: Any, name: str) -> bool:
    """Parameters that hold learned or tracked values (not a dropout layer's RNG key)."""
    return dict(cell.parameters_and_names())[name].dtype.is_floating


def _numpy(value: Any) -> np.ndarray:
    if hasattr(value, "detach"):  # a torch tensor
        return value.detach().cpu().numpy()
    return np.asarray(value)
