"""Running an offline model (``.om``) on an NPU through pyACL, CANN's Python bindings of
AscendCL.  Each call is the one CANN documents; each failure is an :class:`AclError` naming
the call and its error code.

Lifecycle, as CANN orders it: ``acl.init`` → ``acl.rt.set_device`` →
``acl.rt.create_context`` → ``acl.rt.create_stream`` → ``acl.mdl.load_from_file`` and
``acl.mdl.get_desc`` (the model's inputs and outputs with their sizes) → per run: device
buffers (``acl.rt.malloc``) wrapped by ``acl.create_data_buffer`` into the datasets of
``acl.mdl.create_dataset``/``add_dataset_buffer``, inputs copied in with ``acl.rt.memcpy``
(host to device), ``acl.mdl.execute``, outputs copied back (device to host) → on close:
``acl.mdl.unload``, ``acl.rt.destroy_stream``, ``acl.rt.destroy_context``,
``acl.rt.reset_device``, ``acl.finalize``.
"""

from __future__ import annotations

import importlib
from typing import Any, Callable, Optional, Sequence

import numpy as np
from mskernel_sdk import BackendError

ACL_SUCCESS = 0
ACL_MEM_MALLOC_HUGE_FIRST = 0
ACL_MEMCPY_HOST_TO_DEVICE = 1
ACL_MEMCPY_DEVICE_TO_HOST = 2


class AclError(BackendError):
    """An ACL call failed; the message names the call and its error code."""


def load_acl() -> Any:
    """The ``acl`` module of pyACL, or an :class:`AclError` saying how to get it."""
    try:
        return importlib.import_module("acl")
    except ImportError as exc:
        raise AclError(f"pyACL is not importable ({exc}): install the CANN toolkit and "
                       f"source its set_env.sh (it puts the acl module on PYTHONPATH)") from None


def check(call: str, ret: int) -> None:
    if ret != ACL_SUCCESS:
        raise AclError(f"{call} failed with ACL error {ret} (see CANN's error code list, "
                       f"and the device log under ~/ascend/log)")


def soc_name(acl: Optional[Any] = None) -> str:
    """The NPU's SoC name (``Ascend910B1``, ...), as ATC's ``--soc_version`` wants it."""
    name = (acl or load_acl()).get_soc_name()
    if not name:
        raise AclError("acl.get_soc_name returned nothing: no NPU is visible to this process "
                       "(check npu-smi info and ASCEND_RT_VISIBLE_DEVICES)")
    return str(name)


class AclModel:
    """An offline model loaded on one NPU; :meth:`run` executes it on host arrays.  Use it
    as a context manager, or call :meth:`close`."""

    def __init__(self, path: str, device_id: int = 0, acl: Optional[Any] = None) -> None:
        self.acl = acl or load_acl()
        self.device_id = device_id
        self._release: list[Callable[[], Any]] = []  # what close() calls, innermost last
        try:
            self._open(path)
        except BaseException:
            self.close()
            raise

    def _open(self, path: str) -> None:
        acl = self.acl
        check("acl.init", acl.init())
        self._release.append(acl.finalize)
        check(f"acl.rt.set_device({self.device_id})", acl.rt.set_device(self.device_id))
        self._release.append(lambda: acl.rt.reset_device(self.device_id))
        context, ret = acl.rt.create_context(self.device_id)
        check("acl.rt.create_context", ret)
        self._release.append(lambda: acl.rt.destroy_context(context))
        stream, ret = acl.rt.create_stream()
        check("acl.rt.create_stream", ret)
        self._release.append(lambda: acl.rt.destroy_stream(stream))
        self.model_id, ret = acl.mdl.load_from_file(path)
        check(f"acl.mdl.load_from_file({path!r})", ret)
        self._release.append(lambda: acl.mdl.unload(self.model_id))
        self.desc = acl.mdl.create_desc()
        self._release.append(lambda: acl.mdl.destroy_desc(self.desc))
        check("acl.mdl.get_desc", acl.mdl.get_desc(self.desc, self.model_id))
        self.input_sizes = [acl.mdl.get_input_size_by_index(self.desc, i)
                            for i in range(acl.mdl.get_num_inputs(self.desc))]
        self.output_sizes = [acl.mdl.get_output_size_by_index(self.desc, i)
                             for i in range(acl.mdl.get_num_outputs(self.desc))]

    def run(self, inputs: Sequence[np.ndarray], outputs: Sequence[tuple[np.dtype, tuple[int, ...]]]
            ) -> list[np.ndarray]:
        """Execute on ``inputs`` (in the model's input order and dtypes) and return the
        outputs as arrays of the given dtypes and shapes."""
        if len(inputs) != len(self.input_sizes) or len(outputs) != len(self.output_sizes):
            raise AclError(f"the model takes {len(self.input_sizes)} inputs and gives "
                           f"{len(self.output_sizes)} outputs; got {len(inputs)} and "
                           f"{len(outputs)}")
        acl = self.acl
        buffers: list[tuple[Any, int]] = []
        datasets: list[Any] = []
        try:
            in_set = self._dataset(self.input_sizes, buffers, datasets)
            out_set = self._dataset(self.output_sizes, buffers, datasets)
            for (ptr, size), array in zip(buffers, inputs):
                self._copy_in(ptr, size, np.ascontiguousarray(array))
            check("acl.mdl.execute", acl.mdl.execute(self.model_id, in_set, out_set))
            return [self._copy_out(ptr, size, np.dtype(dtype), shape)
                    for (ptr, size), (dtype, shape) in zip(buffers[len(inputs):], outputs)]
        finally:
            for dataset in datasets:
                for i in range(acl.mdl.get_dataset_num_buffers(dataset)):
                    acl.destroy_data_buffer(acl.mdl.get_dataset_buffer(dataset, i))
                acl.mdl.destroy_dataset(dataset)
            for ptr, _ in buffers:
                acl.rt.free(ptr)

    def _copy_in(self, device: Any, size: int, host: np.ndarray) -> None:
        """``host`` into the device buffer: through ``acl.util.bytes_to_ptr`` (CANN 6 and
        later) or ``numpy_to_ptr`` (before), the bytes held until the copy is done."""
        if host.nbytes != size:
            raise AclError(f"an input of {host.nbytes} bytes for a model input of {size} bytes")
        util = self.acl.util
        held: Any = host.tobytes() if hasattr(util, "bytes_to_ptr") else host
        source = util.bytes_to_ptr(held) if isinstance(held, bytes) else util.numpy_to_ptr(held)
        check("acl.rt.memcpy (host to device)",
              self.acl.rt.memcpy(device, size, source, size, ACL_MEMCPY_HOST_TO_DEVICE))

    def _copy_out(self, device: Any, size: int, dtype: np.dtype,
                  shape: tuple[int, ...]) -> np.ndarray:
        """A device buffer as an array: through host memory of ``acl.rt.malloc_host`` read
        by ``acl.util.ptr_to_bytes`` (CANN 6 and later), or into the array's own memory by
        ``numpy_to_ptr`` (before)."""
        if dtype.itemsize * int(np.prod(shape)) != size:
            raise AclError(f"a model output of {size} bytes read as {dtype}{list(shape)}")
        acl = self.acl
        if not hasattr(acl.util, "ptr_to_bytes"):
            host = np.empty(shape, dtype)
            check("acl.rt.memcpy (device to host)",
                  acl.rt.memcpy(acl.util.numpy_to_ptr(host), size, device, size,
                                ACL_MEMCPY_DEVICE_TO_HOST))
            return host
        staging, ret = acl.rt.malloc_host(size)
        check(f"acl.rt.malloc_host({size})", ret)
        try:
            check("acl.rt.memcpy (device to host)",
                  acl.rt.memcpy(staging, size, device, size, ACL_MEMCPY_DEVICE_TO_HOST))
            data = acl.util.ptr_to_bytes(staging, size)
            return np.frombuffer(data, dtype).reshape(shape).copy()
        finally:
            acl.rt.free_host(staging)

    def _dataset(self, sizes: Sequence[int], buffers: list[tuple[Any, int]],
                 datasets: list[Any]) -> Any:
        """A dataset of new device buffers of ``sizes`` (recorded in ``buffers`` and
        ``datasets`` for the caller to free)."""
        acl = self.acl
        dataset = acl.mdl.create_dataset()
        datasets.append(dataset)
        for size in sizes:
            ptr, ret = acl.rt.malloc(size, ACL_MEM_MALLOC_HUGE_FIRST)
            check(f"acl.rt.malloc({size})", ret)
            buffers.append((ptr, size))
            _, ret = acl.mdl.add_dataset_buffer(dataset, acl.create_data_buffer(ptr, size))
            check("acl.mdl.add_dataset_buffer", ret)
        return dataset

    def close(self) -> None:
        """Release everything the constructor acquired, in reverse order."""
        while self._release:
            self._release.pop()()

    def __enter__(self) -> "AclModel":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
