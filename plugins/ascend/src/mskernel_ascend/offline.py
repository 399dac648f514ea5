"""The offline-model path: a graph → ONNX → ATC → ``.om`` → executed through ACL.

The graph handed to ATC is the graph after ``ascend.fuse`` (the fusions of the graph engine,
written as the ONNX patterns it recognises: ``Conv`` with its bias input, followed by
``Relu``; ``Gemm`` with its bias), exported by mskernel-onnx.  Precision and layout are
ATC's to apply on the chip: the precision mode goes on its command line
(``--precision_mode``), and ATC inserts the TransData conversions to NC1HWC0 / FRACTAL_Z
itself; ``ascend-emulate`` reproduces both.

ATC (``atc``, CANN's model compiler) is run as CANN documents it::

    atc --framework=5 --model=net.onnx --output=net --soc_version=Ascend910B1 \\
        --precision_mode=force_fp16 --input_format=NCHW --input_shape="x:8,1,28,28" --log=error

``--framework=5`` is ONNX; ``--output`` names the model without its ``.om`` suffix;
``--input_shape`` fixes every input's shape (``name:d0,d1;name2:...``); ``--input_format`` is
``NCHW`` when an input is 4-D, ``ND`` otherwise.  A failing run is an :class:`AtcError` with
the command and the end of ATC's output.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional, Sequence

from mskernel_sdk import BackendError, CompileOptions, Graph, Node, TensorType, run_pipeline

from .ops import CONV2D, MATMUL_BIAS
from .passes import FUSE_PIPELINE

#: ATC's number for ONNX models
ONNX_FRAMEWORK = 5
#: The ONNX opset ATC reads (CANN's ONNX parser supports opsets 9 to 18)
ATC_OPSET = 13
#: Seconds an ATC run may take
ATC_TIMEOUT = 1800
#: Where compiled models are kept, by the hash of what produced them
CACHE_ENV = "MSKERNEL_ASCEND_CACHE"


class AtcError(BackendError):
    """ATC could not compile a model."""


@dataclass(frozen=True)
class AtcCommand:
    """One ATC invocation; :meth:`argv` is the command line."""

    model: Path
    output: Path
    soc_version: str
    precision_mode: str
    input_shapes: tuple[tuple[str, tuple[int, ...]], ...]
    atc: str = "atc"

    @property
    def input_format(self) -> str:
        return "NCHW" if any(len(shape) == 4 for _, shape in self.input_shapes) else "ND"

    def argv(self) -> list[str]:
        shapes = ";".join(f"{name}:{','.join(map(str, shape))}"
                          for name, shape in self.input_shapes)
        argv = [self.atc, f"--framework={ONNX_FRAMEWORK}", f"--model={self.model}",
                f"--output={self.output}", f"--soc_version={self.soc_version}",
                f"--precision_mode={self.precision_mode}", f"--input_format={self.input_format}"]
        if shapes:
            argv.append(f"--input_shape={shapes}")
        return argv + ["--log=error"]

    @property
    def om_path(self) -> Path:
        return self.output.with_name(self.output.name + ".om")

    def run(self, timeout: float = ATC_TIMEOUT) -> Path:
        """Run ATC; return the ``.om`` file it wrote."""
        try:
            done = subprocess.run(self.argv(), capture_output=True, text=True, timeout=timeout)
        except FileNotFoundError:
            raise AtcError(f"ATC ({self.atc}) is not installed: it comes with the CANN toolkit "
                           f"(source its set_env.sh to put it on PATH)") from None
        except subprocess.TimeoutExpired:
            raise AtcError(f"ATC ran past {timeout:.0f} s: {' '.join(self.argv())}") from None
        if done.returncode != 0 or not self.om_path.is_file():
            tail = "\n".join((done.stdout + done.stderr).strip().splitlines()[-20:])
            raise AtcError(f"ATC failed (exit code {done.returncode}): "
                           f"{' '.join(self.argv())}\n{tail}")
        return self.om_path


def onnx_graph(graph: Graph, options: CompileOptions = CompileOptions()) -> Graph:
    """``graph`` as ATC gets it: after the graph engine's fusions."""
    return run_pipeline(FUSE_PIPELINE, graph, options, backend="ascend").graph


def export_onnx(graph: Graph, path: Path, opset: int = ATC_OPSET) -> Path:
    """Write ``graph`` (after :func:`onnx_graph`) as an ONNX model for ATC."""
    from mskernel_onnx.export import save_onnx, to_onnx

    save_onnx(to_onnx(graph, opset=opset), path)
    return path


def input_shapes(graph: Graph, names: Sequence[str]) -> tuple[tuple[str, tuple[int, ...]], ...]:
    return tuple((name, tuple(v.type.shape)) for name, v in zip(names, graph.inputs)
                 if isinstance(v.type, TensorType))


def cache_dir() -> Path:
    root = os.environ.get(CACHE_ENV) or Path.home() / ".cache" / "mskernel" / "ascend"
    path = Path(root)
    path.mkdir(parents=True, exist_ok=True)
    return path


def compile_offline(graph: Graph, soc_version: str, precision_mode: str,
                    atc: str = "atc", directory: Optional[Path] = None) -> Path:
    """``graph`` compiled into an offline model for ``soc_version``: exported to ONNX and
    given to ATC, unless a model of the same ONNX, SoC and mode is in the cache."""
    import onnx

    directory = directory or cache_dir()
    lowered = onnx_graph(graph)
    staging = directory / f".{os.getpid()}-{id(graph)}.onnx"
    export_onnx(lowered, staging)
    model = onnx.load(str(staging))
    names = [i.name for i in model.graph.input]
    digest = hashlib.sha256(model.SerializeToString(deterministic=True)
                            + f"{soc_version}/{precision_mode}".encode()).hexdigest()[:24]
    onnx_path = directory / f"{digest}.onnx"
    os.replace(staging, onnx_path)
    command = AtcCommand(onnx_path, directory / digest, soc_version, precision_mode,
                         input_shapes(lowered, names), atc)
    return command.om_path if command.om_path.is_file() else command.run()


# --- the fused ops as ONNX (the patterns ATC's graph engine fuses again) ----------------------


def _pads(padding: Optional[Sequence[int]]) -> list[int]:
    pairs = list(zip(padding[0::2], padding[1::2])) if padding else [(0, 0)] * 2
    return [lo for lo, _ in pairs] + [hi for _, hi in pairs]


def conv2d_to_onnx(ctx: Any, node: Node, x: str, w: str, bias: str) -> str:
    a = node.attrs
    if a["format"] != "NCHW":
        ctx.fail("an NC1HWC0 convolution is ATC's to lower; export the graph before "
                 "ascend.layout")
    y = ctx.typed("Conv", x, w, bias, dt=ctx.in_type().dtype,
                  kernel_shape=list(ctx.in_type(1).shape[2:]),
                  strides=list(a["stride"] or (1, 1)), pads=_pads(a["padding"]),
                  dilations=list(a["dilation"] or (1, 1)), group=1)
    return ctx.typed("Relu", y, dt=ctx.in_type().dtype) if a["relu"] else y


def matmul_bias_to_onnx(ctx: Any, node: Node, x: str, w: str, bias: str) -> str:
    return ctx.typed("Gemm", x, w, bias, dt=ctx.in_type().dtype)


ONNX_TRANSLATORS = {CONV2D: conv2d_to_onnx, MATMUL_BIAS: matmul_bias_to_onnx}
