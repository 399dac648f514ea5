"""The plugin distributions of the mskernel project and the ``mskernel.<name>`` namespaces
each provides: the one place the core names plugins.  It only words the error for a name
that no installed plugin provides — ``mskernel.Model`` without mskernel-nn says to install
mskernel-nn — and never decides what is loaded.  A name missing here gets an error saying
that no plugin provides it (never a guessed ``mskernel-<name>``).  A test checks the table
against what the plugins of this repository register."""

from __future__ import annotations

from typing import Optional

#: distribution → the namespaces it registers (dotted ones are sub-modules)
KNOWN_DISTRIBUTIONS: dict[str, tuple[str, ...]] = {
    "mskernel-autodiff": (
        "autodiff", "grad", "value_and_grad", "get_grad", "vjp", "jvp", "jacrev", "jacfwd",
        "hessian", "vmap", "stop_gradient", "custom_vjp", "custom_jvp", "GradOperation",
        "ops.stop_gradient", "ops.depend", "ops.GradOperation"),
    "mskernel-nn": (
        "nn", "train", "save_checkpoint", "load_checkpoint", "load_param_into_net", "Model",
        "Callback", "RunContext", "LossMonitor", "TimeMonitor", "ModelCheckpoint",
        "CheckpointConfig", "common.initializer"),
    "mskernel-data": ("dataset", "mindrecord"),
    "mskernel-onnx": ("export", "load"),
    "mskernel-linalg": tuple(f"ops.{n}" for n in
                             ("inverse", "solve", "det", "slogdet", "cholesky", "eigh", "lstsq",
                              "qr", "svd")),
    "mskernel-parallel": ("communication", "parallel", "shard", *(f"ops.{n}" for n in (
        "AllGather", "AllReduce", "AlltoAll", "Broadcast", "NeighborExchange", "Receive",
        "ReduceOp", "ReduceScatter", "Send"))),
    "mskernel-quantum": ("quantum",),
    "mskernel-federated": ("federated",),
    "mskernel-reinforcement": ("rl",),
    "mskernel-boost": ("amp", "boost"),
    "mskernel-science": ("science", "ops.fft", "ops.ifft", "ops.rfft", "ops.irfft", "ops.fft2",
                         "ops.ifft2", "ops.fftn", "ops.ifftn", "ops.rfft2", "ops.irfft2",
                         "ops.rfftn", "ops.irfftn"),
}

_PROVIDER = {name: dist for dist, names in KNOWN_DISTRIBUTIONS.items() for name in names}


def known_provider(name: str) -> Optional[str]:
    """The distribution that provides ``mskernel.<name>``, if the project has one."""
    return _PROVIDER.get(name)
