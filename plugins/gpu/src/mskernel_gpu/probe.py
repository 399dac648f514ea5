"""What this machine has of CUDA: the driver, its devices and the libraries the backend uses.

Nothing here needs a device or raises for a missing one: each probe records what it found
or why not, and :func:`probe` gathers them into a :class:`Probe` that the backend's
availability, ``mskernel plugins info gpu`` and the benchmarks print.

- the driver: ``libcuda.so.1`` opened with ``ctypes`` (the driver API ``cuInit``,
  ``cuDriverGetVersion``, ``cuDeviceGetCount``, the device names and compute capabilities);
- CuPy (``cupy-cuda12x``): imported, its version;
- NVRTC, cuBLAS and cuDNN: the shared objects of NVIDIA's wheels (``nvidia-cuda-nvrtc-cu12``
  …) are found in the ``nvidia`` namespace package and loaded ``RTLD_GLOBAL`` before CuPy
  looks for them (CuPy's finder searches the interpreter's own site-packages, not a
  virtualenv's base environment); a system CUDA found by ``dlopen`` works too;
- the cuDNN frontend (``nvidia-cudnn-frontend``, import ``cudnn``): its version, and the
  cuDNN library version it loads when a device is present.
"""

from __future__ import annotations

import ctypes
import functools
import importlib.metadata
import importlib.util
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

#: (wheel package under ``nvidia/``, shared object) of the libraries the backend loads
LIBRARIES = {
    "nvrtc": ("cuda_nvrtc", "libnvrtc.so.12"),
    "cublas": ("cublas", "libcublas.so.12"),
    "cudnn": ("cudnn", "libcudnn.so.9"),
}


@dataclass(frozen=True)
class Device:
    index: int
    name: str
    capability: tuple[int, int]

    def __str__(self) -> str:
        return f"{self.index}: {self.name} (sm_{self.capability[0]}{self.capability[1]})"


@dataclass(frozen=True)
class Probe:
    """What was found; ``missing`` names what keeps the backend from running (empty when it
    can run)."""

    driver: str
    devices: tuple[Device, ...]
    cupy: str
    libraries: dict[str, str] = field(default_factory=dict)
    cudnn_frontend: str = ""
    missing: tuple[str, ...] = ()

    @property
    def available(self) -> bool:
        return not self.missing

    def lines(self) -> list[str]:
        """One line per thing probed."""
        devices = ", ".join(map(str, self.devices)) or "none"
        return [f"driver: {self.driver}", f"devices: {devices}", f"CuPy: {self.cupy}",
                *(f"{name}: {found}" for name, found in self.libraries.items()),
                f"cuDNN frontend: {self.cudnn_frontend}"]

    def summary(self) -> str:
        """The reason of the backend's availability: what is missing first, then all that
        was probed."""
        found = "; ".join(self.lines())
        if self.missing:
            return f"{'; '.join(self.missing)} (probed: {found})"
        return found


def _wheel_library(package: str, soname: str) -> Optional[Path]:
    """``soname`` in the NVIDIA wheel ``nvidia.<package>``, if installed."""
    try:
        spec = importlib.util.find_spec(f"nvidia.{package}")
    except (ImportError, ValueError):
        return None
    for location in (spec.submodule_search_locations or []) if spec else []:
        path = Path(location) / "lib" / soname
        if path.exists():
            return path
    return None


@functools.cache
def load_library(name: str) -> str:
    """Load the CUDA library ``name`` (a key of :data:`LIBRARIES`) globally, from its NVIDIA
    wheel or the system; returns where it came from, raises ``OSError`` when absent."""
    package, soname = LIBRARIES[name]
    path = _wheel_library(package, soname)
    ctypes.CDLL(str(path) if path else soname, mode=ctypes.RTLD_GLOBAL)
    return str(path) if path else f"{soname} (system)"


def _library_report(name: str) -> str:
    try:
        where = load_library(name)
    except OSError:
        package, soname = LIBRARIES[name]
        return (f"{soname} not found (pip install nvidia-{package.replace('_', '-')}-cu12, "
                "or mskernel-gpu[cuda])")
    if name == "nvrtc":
        from cupy_backends.cuda.libs import nvrtc

        major, minor = nvrtc.getVersion()
        return f"NVRTC {major}.{minor} from {where}"
    return f"found: {where}"


class _Driver:
    """The CUDA driver API through ``ctypes`` (no runtime library needed to ask it)."""

    def __init__(self) -> None:
        self.lib = ctypes.CDLL("libcuda.so.1")
        self.check(self.lib.cuInit(0), "cuInit")

    def check(self, status: int, call: str) -> None:
        if status != 0:
            raise RuntimeError(f"{call} failed with CUresult {status}")

    def version(self) -> str:
        v = ctypes.c_int()
        self.check(self.lib.cuDriverGetVersion(ctypes.byref(v)), "cuDriverGetVersion")
        return f"{v.value // 1000}.{v.value % 1000 // 10}"

    def devices(self) -> tuple[Device, ...]:
        count = ctypes.c_int()
        self.check(self.lib.cuDeviceGetCount(ctypes.byref(count)), "cuDeviceGetCount")
        found = []
        for i in range(count.value):
            handle, name = ctypes.c_int(), ctypes.create_string_buffer(256)
            major, minor = ctypes.c_int(), ctypes.c_int()
            self.check(self.lib.cuDeviceGet(ctypes.byref(handle), i), "cuDeviceGet")
            self.check(self.lib.cuDeviceGetName(name, 256, handle), "cuDeviceGetName")
            for attribute, out in ((75, major), (76, minor)):  # COMPUTE_CAPABILITY_MAJOR/MINOR
                self.check(self.lib.cuDeviceGetAttribute(ctypes.byref(out), attribute, handle),
                           "cuDeviceGetAttribute")
            found.append(Device(i, name.value.decode(errors="replace"), (major.value, minor.value)))
        return tuple(found)


def _cudnn_frontend() -> str:
    if importlib.util.find_spec("cudnn") is None:
        return "not installed (pip install nvidia-cudnn-frontend, or mskernel-gpu[cuda])"
    try:
        version = importlib.metadata.version("nvidia-cudnn-frontend")
    except importlib.metadata.PackageNotFoundError:
        version = "unknown version"
    return f"nvidia-cudnn-frontend {version}"


@functools.cache
def probe() -> Probe:
    """Probe once per process (see the module's docstring)."""
    missing: list[str] = []
    devices: tuple[Device, ...] = ()
    try:
        driver = _Driver()
        version = driver.version()
        devices = driver.devices()
        driver_line = f"libcuda.so.1, CUDA {version}"
        if not devices:
            missing.append(f"no CUDA device (the driver, CUDA {version}, counts 0)")
    except OSError as exc:
        driver_line = f"libcuda.so.1 not found ({exc})"
        missing.append("no CUDA driver: libcuda.so.1 not found, so no device can be counted")
    except RuntimeError as exc:
        driver_line = f"libcuda.so.1 present but unusable: {exc}"
        missing.append(f"the CUDA driver does not initialise: {exc}")
    libraries = {name: _library_report(name) for name in LIBRARIES}
    for name in ("nvrtc", "cublas"):
        if "not found" in libraries[name]:
            missing.append(f"{LIBRARIES[name][1]} not found")
    try:
        import cupy  # imports without a driver

        cupy_line = f"cupy-cuda12x {cupy.__version__}"
    except Exception as exc:  # a broken install: reported, never fatal
        cupy_line = f"CuPy does not import: {type(exc).__name__}: {exc}"
        missing.append("CuPy does not import")
    return Probe(driver_line, devices, cupy_line, libraries, _cudnn_frontend(), tuple(missing))
