"""The model file: a graph and its weights in one versioned file, without pickle.

It is the tensor container of :mod:`.container` under the magic ``b"MSKERNEL"``.  Besides
``format_version``, ``producer`` (``"mskernel <version>"``), ``tensors`` and ``payload``, its
header holds ``graph`` (the printed text form), ``requires`` (distribution → the version of it
that wrote the file, for every distribution owning an op the graph uses; ``null`` when the op
was registered in-process rather than by an installed distribution) and ``op_owners`` (op →
distribution, to name the op in messages).

Files are written atomically, so a crash leaves the previous file intact.  Loading reads bytes
only — JSON, the text form and ``numpy.frombuffer`` — and never executes anything from the
file; it makes the container's checks (prefix, sizes, the SHA-256 of the whole file, the
tensor layout), checks that every name in ``requires`` and ``op_owners`` is a distribution
name (PEP 508) with a version (PEP 440) and that each is installed, and then parses the
graph.  Every problem is a :class:`~mskernel.errors.FileFormatError` of one line naming the
file.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from importlib import metadata
from typing import Any, Mapping, Optional, Union

import numpy as np
from packaging.version import InvalidVersion, Version

from .._version import __version__
from ..defaults import or_default_ops
from ..errors import FileFormatError, MskernelError, UnknownOpError
from ..hooks.markers import hookimpl
from .container import (
    ALIGNMENT, Kind, PathLike, quote_name, read_container, write_container,
)
from .dtypes import DType
from .graph import Graph
from .lookup import OpLookup, OpSchema
from .parser import parse_graph
from .printer import print_graph

MAGIC = b"MSKERNEL"
#: The version this mskernel writes; it reads every version from 1 up to this one.
FORMAT_VERSION = 2
MODEL_FILE = Kind(MAGIC, FORMAT_VERSION, "model file", "mskernel")
CORE_DISTRIBUTION = "mskernel"

#: PEP 508's name grammar, and PEP 440's version grammar (packaging's VERSION_PATTERN): the
#: only text of ``requires`` that messages show, and remedies quote as shell commands.
_DISTRIBUTION = re.compile(r"[A-Z0-9]([A-Z0-9._-]*[A-Z0-9])?", re.IGNORECASE)
_VERSION = re.compile(r"""
    v?(\d+!)?\d+(\.\d+)*                                # epoch, release
    ([-_.]?(a|b|c|rc|alpha|beta|pre|preview)[-_.]?\d*)?   # pre-release
    (-\d+|[-_.]?(post|rev|r)[-_.]?\d*)?                  # post-release
    ([-_.]?dev[-_.]?\d*)?                                 # development release
    (\+[a-z0-9]+([-_.][a-z0-9]+)*)?                      # local version
""", re.IGNORECASE | re.VERBOSE)

__all__ = ["ALIGNMENT", "FORMAT_VERSION", "MAGIC", "Model", "load_model", "save_model"]


@dataclass(frozen=True)
class Model:
    """What :func:`load_model` returns.  ``weights`` hold arrays in reference storage
    (bfloat16 as float32); ``weight_dtypes`` gives each weight's IR dtype."""

    graph: Graph
    weights: dict[str, np.ndarray]
    format_version: int
    producer: str
    requires: dict[str, Optional[str]]
    weight_dtypes: dict[str, DType]


def installed_version(distribution: str) -> Optional[str]:
    """The installed version of ``distribution`` (the running core's for ``mskernel``), or
    ``None`` when no distribution of that name is installed."""
    if distribution == CORE_DISTRIBUTION:
        return __version__
    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:
        return None


def save_model(path: PathLike, graph: Graph, weights: Optional[Mapping[str, Any]] = None, *,
               dtypes: Optional[Mapping[str, Union[DType, str]]] = None,
               registry: Optional[OpLookup[OpSchema]] = None) -> None:
    """Write ``graph`` and ``weights`` (name → array in reference storage) to ``path``,
    atomically.  ``dtypes`` gives the IR dtype of weights whose array dtype does not say it
    (``{"w": "bfloat16"}`` for a float32 array holding bfloat16 values).  ``registry`` (default:
    the process-wide one) tells which distribution owns each op the graph uses."""
    registry = or_default_ops(registry)
    op_owners = {op: registry.get(op).owner for op in sorted(graph.ops_used())}
    for op, owner in op_owners.items():
        if not _DISTRIBUTION.fullmatch(owner):
            raise ValueError(f"op '{op}' is owned by {owner!r}, which is not a distribution "
                             "name (PEP 508); a model file records the distribution of each op")
    requires = {d: installed_version(d) for d in sorted(set(op_owners.values()))}
    fields = {"graph": print_graph(graph), "requires": requires, "op_owners": op_owners}
    write_container(path, MODEL_FILE, f"mskernel {__version__}", fields, dict(weights or {}),
                    dtypes)


def load_model(path: PathLike, registry: Optional[OpLookup[OpSchema]] = None) -> Model:
    """Read a model file; raise :class:`~mskernel.errors.FileFormatError` (one line) saying
    what is wrong when it is not a model file, is truncated, damaged or forged (see
    :mod:`.container`), holds graph text that does not parse, was written by a newer
    mskernel, or needs a plugin distribution that is not installed.  ``registry`` (default:
    the process-wide one) resolves the graph's op names."""
    name = os.fspath(path)
    registry = or_default_ops(registry)
    container = read_container(path, MODEL_FILE,
                               {"graph": str, "requires": dict, "op_owners": dict})
    requires = _check_requires(name, container.header, registry)
    try:
        graph = parse_graph(container.header["graph"], registry)
    except MskernelError as exc:  # its first line says where and what; the rest quotes text
        where_what = str(exc).split("\n", 1)[0]
        raise FileFormatError(f"{name}: the stored graph does not parse: {where_what}") from exc
    return Model(graph, container.tensors, container.format_version, container.producer,
                 requires, container.dtypes)


@hookimpl
def mskernel_register_model_readers(readers: Any) -> None:
    """The model file is the format ``mskernel.export`` writes as ``"MINDIR"``."""
    readers.register("mindir", load_model, suffixes=(".mindir", ".mskernel"), magic=MAGIC)


def _check_requires(path: str, header: dict[str, Any],
                    registry: OpLookup[OpSchema]) -> dict[str, Optional[str]]:
    """The ``requires`` table, after checking each distribution is present and at least as
    new as the one that wrote the file (an in-process registration of its ops counts as
    present)."""
    requires, op_owners = header["requires"], header["op_owners"]
    for dist, recorded in requires.items():
        if not _DISTRIBUTION.fullmatch(dist):
            raise FileFormatError(f"{path}: invalid header: requires names {quote_name(dist)}, "
                                  "which is not a distribution name")
        if recorded is not None and not (isinstance(recorded, str)
                                         and _VERSION.fullmatch(recorded)):
            raise FileFormatError(f"{path}: invalid header: requires[{dist!r}] is not a "
                                  "version")
    for op, owner in op_owners.items():
        if not (isinstance(owner, str) and owner in requires):
            raise FileFormatError(f"{path}: invalid header: op_owners gives {quote_name(op)} an "
                                  "owner that requires does not list")
    problems = []
    for dist, recorded in requires.items():
        ops = sorted(op for op, owner in op_owners.items() if owner == dist)
        for_ops = (f" for op{'s' if len(ops) > 1 else ''} "
                   f"{', '.join(repr(op) for op in ops)}" if ops else "")
        installed = installed_version(dist)
        if installed is None and not any(_defines(registry, op, dist) for op in ops):
            bound = f" (>= {recorded})" if recorded else ""
            problems.append(f"this model needs {dist}{bound}{for_ops}; install it with "
                            f"`pip install {dist}`")
        elif installed is not None and recorded and not _at_least(installed, recorded):
            problems.append(f"this model needs {dist} >= {recorded}{for_ops}, but "
                            f"{installed} is installed; upgrade it with "
                            f"`pip install -U {dist}`")
    if problems:
        raise FileFormatError(f"{path}: " + "; ".join(problems))
    return dict(requires)


def _at_least(installed: str, recorded: str) -> bool:
    try:
        return Version(installed) >= Version(recorded)
    except InvalidVersion:
        return True  # a version this check cannot read is not held against the user


def _defines(registry: OpLookup[OpSchema], op: str, distribution: str) -> bool:
    """Whether ``registry`` has op ``op`` from ``distribution`` (registered in-process)."""
    try:
        return registry.get(op).owner == distribution
    except UnknownOpError:
        return False
