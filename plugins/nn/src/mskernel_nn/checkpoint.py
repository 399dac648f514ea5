"""Checkpoints: ``save_checkpoint``, ``load_checkpoint`` and ``load_param_into_net``
(MindSpore's names), in a safe file format.

The file is the core's tensor container (:func:`mskernel_sdk.write_container`) under the magic
``b"MSKCKPT\\0"`` — safetensors' idea: a JSON header, then the raw tensors, nothing pickled,
nothing executed on load.  Besides the tensor table its header holds ``metadata`` (the
numbers, booleans and strings of ``append_dict``).  Writing is atomic, so a crash or a kill
mid-save leaves the previous checkpoint intact.  Loading makes the container's checks (the
prefix and sizes before reading, the SHA-256 of the whole file, the exact tensor layout), then
checks that the metadata holds only such values under names no tensor has, and says which
check failed (:class:`~mskernel_sdk.FileFormatError`); nothing reaches a network unless
every check passes.

Tensors are keyed by parameter name — ``Parameter.name`` (the dotted path a
:class:`~mskernel_nn.cell.Cell` gives it, ``"features.0.weight"``).  Saving a training
wrapper (``TrainOneStepCell`` or ``Model``'s train network) saves the optimizer's state with
the weights — moments, step count, learning rate, all Parameters named after their weight
(``"moment1.features.0.weight"``, ``"global_step"``) — so training resumes exactly.

MindSpore's own ``.ckpt`` files (protobuf, :mod:`mskernel_nn.mindspore_checkpoint`) load
too — the format is told by the file's first bytes — and ``format="ckpt"`` saves one, so
weights move to MindSpore and back.
"""

from __future__ import annotations

import os
import warnings
from typing import Any, Callable, Iterable, Mapping, Optional, Sequence, Union

import numpy as np
from mskernel_sdk import (
    ContainerKind, FileFormatError, MskernelError, Parameter, Tensor, dtype as to_dtype,
    quote_name, read_container, write_container,
)

from . import __version__
from .mindspore_checkpoint import read_checkpoint, write_checkpoint

__all__ = ["CheckpointError", "load_checkpoint", "load_param_into_net", "save_checkpoint"]

MAGIC = b"MSKCKPT\x00"
#: The version this mskernel-nn writes; it reads every version from 1 up to this one.
FORMAT_VERSION = 2
CHECKPOINT = ContainerKind(MAGIC, FORMAT_VERSION, "checkpoint", "mskernel-nn")

PathLike = Union[str, "os.PathLike[str]"]
#: JSON-representable values ``append_dict`` may hold besides tensors
_SCALARS = (bool, int, float, str)


class CheckpointError(MskernelError, ValueError):
    """A checkpoint does not fit the network: missing or unexpected names (strict loading),
    a shape or dtype-kind mismatch, or names that clash."""


# -- what is saved ------------------------------------------------------------------------------


def _named_tensors(obj: Any) -> dict[str, Any]:
    """The tensors of ``obj`` by name: a Cell (its parameters, keyed by ``Parameter.name``),
    a mapping name → tensor or array, a sequence of named Parameters, or MindSpore's list of
    ``{"name": ..., "data": ...}``.  A parameter reachable twice (shared) counts once; two
    different parameters with one name are an error."""
    if hasattr(obj, "parameters_and_names"):
        pairs: Iterable[tuple[str, Any]] = (
            (p.name or path, p) for path, p in obj.parameters_and_names())
    elif isinstance(obj, Mapping):
        pairs = obj.items()
    elif isinstance(obj, (list, tuple)):
        pairs = [_list_entry(e) for e in obj]
    else:
        raise TypeError(f"cannot take a checkpoint of a {type(obj).__name__}: give a Cell, a "
                        "dict of tensors or a list of named Parameters")
    out: dict[str, Any] = {}
    for name, value in pairs:
        if not isinstance(name, str) or not name:
            raise CheckpointError(f"every checkpoint entry needs a non-empty string name, got "
                                  f"{name!r}")
        previous = out.get(name)
        if previous is not None and previous is not value:
            raise CheckpointError(f"two different tensors are named {name!r}; rename one "
                                  "(Parameter.name) before saving")
        out[name] = value
    return out


def _list_entry(entry: Any) -> tuple[Any, Any]:
    if isinstance(entry, Parameter):
        return entry.name, entry
    if isinstance(entry, Mapping) and set(entry) == {"name", "data"}:
        return entry["name"], entry["data"]
    raise TypeError(f"a checkpoint list holds named Parameters or {{'name', 'data'}} dicts, "
                    f"got {entry!r}")


def _storage(value: Any, name: str) -> tuple[np.ndarray, Any]:
    """``value`` as (array in reference storage, IR dtype)."""
    if isinstance(value, Tensor):
        if value.is_traced:
            raise CheckpointError(f"{name!r} is a traced tensor; save concrete values, outside "
                                  "@jit")
        return value.numpy(), value.dtype
    arr = np.asarray(value)
    return arr, to_dtype(arr.dtype)


# -- writing ------------------------------------------------------------------------------------


def save_checkpoint(save_obj: Any, ckpt_file_name: PathLike,
                    append_dict: Optional[Mapping[str, Any]] = None,
                    choice_func: Optional[Callable[[str], bool]] = None,
                    crc_check: bool = False, format: Optional[str] = None) -> None:
    """Save the tensors of ``save_obj`` (see :func:`_named_tensors`) to ``ckpt_file_name``,
    atomically.  ``append_dict`` adds entries of your own: tensors are stored with the
    parameters, numbers, booleans and strings in the header's metadata (``{"epoch_num": 3}``).
    ``choice_func(name)`` keeps only the parameters it returns true for.

    ``format="ckpt"`` writes MindSpore's protobuf checkpoint instead (adding ``.ckpt`` to a
    name without it, as MindSpore does), for MindSpore to load: numbers and booleans of
    ``append_dict`` become scalar tensors there, as MindSpore stores them, and
    ``crc_check`` appends MindSpore's CRC-32.  mskernel's own format always carries a
    SHA-256."""
    if format not in (None, "ckpt"):
        raise ValueError(f"save_checkpoint: format is None (mskernel's checkpoint) or 'ckpt' "
                         f"(MindSpore's), got {format!r}")
    entries = _named_tensors(save_obj)
    if choice_func is not None:
        entries = {k: v for k, v in entries.items() if choice_func(k)}
    metadata: dict[str, Any] = {}
    for key, value in (append_dict or {}).items():
        if key in entries:
            raise CheckpointError(f"append_dict key {key!r} is also a parameter name")
        if isinstance(value, _SCALARS):
            metadata[key] = value
        elif isinstance(value, (Tensor, np.ndarray)):
            entries[key] = value
        else:
            raise TypeError(f"append_dict[{key!r}] is a {type(value).__name__}; it may hold "
                            "tensors, numbers, booleans and strings")
    arrays, dtypes = {}, {}
    for name, value in entries.items():
        arrays[name], dtypes[name] = _storage(value, name)
    if format == "ckpt":
        _save_mindspore(os.fspath(ckpt_file_name), arrays, dtypes, metadata, crc_check)
        return
    write_container(ckpt_file_name, CHECKPOINT, f"mskernel-nn {__version__}",
                    {"metadata": metadata}, arrays, dtypes)


def _save_mindspore(path: str, arrays: dict[str, np.ndarray], dtypes: dict[str, Any],
                    metadata: dict[str, Any], crc_check: bool) -> None:
    entries: dict[str, Any] = {name: (arrays[name], dtypes[name]) for name in arrays}
    for key, value in metadata.items():  # MindSpore saves numbers as Tensor(value)
        if isinstance(value, str):
            entries[key] = value
        else:
            scalar = np.asarray(value, bool if isinstance(value, bool) else
                                np.int64 if isinstance(value, int) else np.float32)
            entries[key] = (scalar, to_dtype(scalar.dtype))
    write_checkpoint(path if path.endswith(".ckpt") else path + ".ckpt", entries, crc_check)


# -- reading ------------------------------------------------------------------------------------


def load_checkpoint(ckpt_file_name: PathLike, net: Any = None, strict_load: bool = False,
                    filter_prefix: Union[str, Sequence[str], None] = None,
                    specify_prefix: Union[str, Sequence[str], None] = None,
                    choice_func: Optional[Callable[[str], bool]] = None,
                    crc_check: bool = False) -> dict[str, Any]:
    """Read a checkpoint: a dict of name → :class:`~mskernel.Parameter`, plus the metadata
    entries ``append_dict`` saved (as Python values).  ``filter_prefix`` drops names starting
    with the prefix(es), ``specify_prefix`` keeps only those starting with them,
    ``choice_func(name)`` keeps those it returns true for.  With ``net``, the parameters are
    also loaded into it (:func:`load_param_into_net` with ``strict_load``).

    A MindSpore checkpoint loads the same way (its strings come back as Python strings, its
    scalar tensors as Parameters, as in MindSpore); its CRC, when it has one, is checked,
    and ``crc_check`` warns when it has none.

    Raises :class:`~mskernel_sdk.FileFormatError` naming the file and the failed check
    when it is not a checkpoint, is truncated or corrupt, or is of a newer format."""
    if _is_mindspore_checkpoint(ckpt_file_name):
        arrays, dtypes, metadata = read_checkpoint(os.fspath(ckpt_file_name), crc_check)
    else:
        container = read_container(ckpt_file_name, CHECKPOINT, {"metadata": dict})
        arrays, dtypes, metadata = (container.tensors, container.dtypes,
                                    container.header["metadata"])
        _check_metadata(os.fspath(ckpt_file_name), metadata, arrays)
    drop = _prefixes(filter_prefix)
    keep = _prefixes(specify_prefix)

    def wanted(name: str) -> bool:
        return (not name.startswith(drop) and (not keep or name.startswith(keep))
                and (choice_func is None or choice_func(name)))

    params: dict[str, Any] = {
        name: Parameter(arr, name=name, dtype=dtypes[name])
        for name, arr in arrays.items() if wanted(name)}
    if net is not None:
        load_param_into_net(net, params, strict_load=strict_load)
    params.update((k, v) for k, v in metadata.items() if wanted(k))
    return params


def _is_mindspore_checkpoint(path: PathLike) -> bool:
    """Whether ``path`` is a file that does not start with mskernel's magic (a file cut
    short inside the magic is a truncated mskernel checkpoint)."""
    try:
        with open(path, "rb") as f:
            return not MAGIC.startswith(f.read(len(MAGIC)))
    except OSError:  # read_container reports it
        return False


def _check_metadata(path: str, metadata: dict[str, Any], tensors: Mapping[str, Any]) -> None:
    """The metadata is what ``append_dict`` can save: scalars, under names no tensor has."""
    for key, value in metadata.items():
        if key in tensors:
            raise FileFormatError(f"{path}: invalid header: metadata {quote_name(key)} is also "
                                  "the name of a tensor")
        if not isinstance(value, _SCALARS):
            raise FileFormatError(f"{path}: invalid header: metadata {quote_name(key)} is a "
                                  f"{type(value).__name__}, not a number, boolean or string")


def _prefixes(value: Union[str, Sequence[str], None]) -> tuple[str, ...]:
    if value is None:
        return ()
    return (value,) if isinstance(value, str) else tuple(value)


def load_param_into_net(net: Any, parameter_dict: Mapping[str, Any],
                        strict_load: bool = False) -> tuple[list[str], list[str]]:
    """Assign the tensors of ``parameter_dict`` (name → tensor or array, as
    :func:`load_checkpoint` returns) to the parameters of ``net`` with the same names.

    Returns ``(param_not_load, ckpt_not_load)``: the network's parameters the dict has no
    value for, and the dict's tensors the network has no parameter for.  With
    ``strict_load=True`` either list being non-empty is an error; without, the matching
    parameters are loaded and a warning names the ones left as they were.  A shape mismatch,
    or a value of another kind of dtype (float for an int parameter), is always an error.
    Nothing is assigned unless every check passes."""
    targets = _named_tensors(net)
    tensors = {k: v for k, v in parameter_dict.items() if not isinstance(v, _SCALARS)}
    param_not_load = [name for name in targets if name not in tensors]
    ckpt_not_load = [name for name in tensors if name not in targets]
    problems = []
    for name, target in targets.items():
        if name in tensors:
            problem = _mismatch(name, target, tensors[name])
            if problem:
                problems.append(problem)
    if strict_load and param_not_load:
        problems.append(f"missing from the checkpoint: {', '.join(param_not_load)}")
    if strict_load and ckpt_not_load:
        problems.append(f"unexpected in the checkpoint (no such parameter): "
                        f"{', '.join(ckpt_not_load)}")
    if problems:
        raise CheckpointError(f"cannot load the checkpoint into {type(net).__name__}:\n  "
                              + "\n  ".join(problems))
    for name, target in targets.items():
        if name in tensors:
            value = tensors[name]
            target.assign_value(value if isinstance(value, Tensor)
                                else Tensor(np.asarray(value), target.dtype))
    if param_not_load:
        warnings.warn(f"{len(param_not_load)} parameter(s) of {type(net).__name__} were not in "
                      f"the checkpoint and keep their values: {', '.join(param_not_load)}",
                      stacklevel=2)
    return param_not_load, ckpt_not_load


def _mismatch(name: str, target: Any, value: Any) -> Optional[str]:
    """Why ``value`` cannot be loaded into parameter ``target``, or ``None``."""
    if not isinstance(target, Parameter):
        return f"{name}: the network's entry is a {type(target).__name__}, not a Parameter"
    if isinstance(value, Tensor):
        shape, dt = value.shape, value.dtype
    else:
        arr = np.asarray(value)
        shape, dt = arr.shape, to_dtype(arr.dtype)
    if shape != target.shape:
        return f"{name}: the checkpoint has shape {list(shape)}, the network {list(target.shape)}"
    if dt.kind != target.dtype.kind:
        return (f"{name}: the checkpoint holds {dt.name}, the network's parameter is "
                f"{target.dtype.name}")
    return None
