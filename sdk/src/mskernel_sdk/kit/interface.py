"""The ``interface`` stage: what every backend owes the runtime, whatever it computes."""

from __future__ import annotations

import numpy as np
from mskernel.hooks import plugin_host
from mskernel.ir import ALL_DTYPES, DType, TensorType
from mskernel.runtime import DeviceArray, OpSupport
from mskernel.testing import random_array

from ..samples import sample_rng
from .compare import CheckFailure
from .subject import Subject

#: Shapes every claimed dtype is transferred in: a scalar, an empty tensor, a 3-D tensor.
TRANSFER_SHAPES = ((), (0, 3), (2, 3, 4))


def check_capabilities(subject: Subject) -> str:
    """Every claimed op is defined and described by an :class:`OpSupport`."""
    ops = plugin_host().ops
    unknown = sorted(op for op in subject.capabilities.ops if op not in ops)
    malformed = sorted(op for op, support in subject.capabilities.ops.items()
                       if not isinstance(support, OpSupport))
    problems = ([f"claims ops no installed plugin defines: {', '.join(unknown)}"] if unknown
                else []) + ([f"claims described by something other than an OpSupport: "
                             f"{', '.join(malformed)}"] if malformed else [])
    if problems:
        raise CheckFailure("; ".join(problems))
    core = set(subject.core_ops)
    return (f"claims {len(subject.capabilities.ops)} ops, "
            f"{len(core & set(subject.capabilities.ops))} of the {len(core)} core ops")


def claimed_dtypes(subject: Subject) -> list[DType]:
    """The dtypes some claimed op accepts (all dtypes when a claim names none)."""
    supports = list(subject.capabilities.ops.values())
    if not supports or any(s.dtypes is None for s in supports):
        return list(ALL_DTYPES)
    return sorted({dt for s in supports for dt in s.dtypes or ()}, key=lambda dt: dt.name)


def check_transfers(subject: Subject, seed: int) -> str:
    """``to_device`` then ``to_host`` gives back the same values in the dtype's storage, for
    every claimed dtype."""
    rng = sample_rng(seed, "transfers")
    backend = subject.backend
    dtypes = claimed_dtypes(subject)
    problems = []
    for dt in dtypes:
        for shape in TRANSFER_SHAPES:
            type_ = TensorType(dt, shape)
            host = random_array(rng, shape, dt)
            try:
                device = backend.to_device(host.copy(), type_)
                back = device.block_until_ready().to_host()
            except Exception as exc:
                problems.append(f"{type_}: raised {type(exc).__name__}: {exc}")
                continue
            if not isinstance(device, DeviceArray) or device.backend is not backend \
                    or device.type != type_:
                problems.append(f"{type_}: to_device must return a DeviceArray of this backend "
                                f"with the given type, got {device!r}")
            elif not isinstance(back, np.ndarray) or back.dtype != dt.storage \
                    or back.shape != shape:
                problems.append(f"{type_}: to_host must return a {dt.storage} array of shape "
                                f"{shape}, got {getattr(back, 'dtype', type(back).__name__)}"
                                f"{list(np.shape(back))}")
            elif not np.array_equal(back, host, equal_nan=dt.is_inexact):
                problems.append(f"{type_}: values changed in the round trip")
    if problems:
        raise CheckFailure(f"transfers (seed {seed}): " + "; ".join(problems))
    return f"{len(dtypes)} dtypes x {len(TRANSFER_SHAPES)} shapes"
