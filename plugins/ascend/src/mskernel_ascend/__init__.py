"""mskernel-ascend: the Ascend NPU backend of mskernel.

Two backends: ``ascend`` runs graphs on an Ascend NPU through CANN (the graph is exported to
ONNX, compiled by ATC into an offline model and executed through ACL) and is ``unavailable``
with the reason wherever CANN or the NPU is missing; ``ascend-emulate`` runs the same lowered
graph on the CPU with Ascend's numerics (float16 at the boundaries the precision mode implies,
float32 accumulation in the Cube unit, saturation on float16 overflow), so that the precision
of a network on Ascend can be previewed on any machine.

User API: :func:`set_precision_mode` / :func:`get_precision_mode` (or the environment
variable ``MSKERNEL_ASCEND_PRECISION_MODE``), :func:`precision_report`, :func:`probe` (what of
CANN was found on this machine).
"""

__version__ = "0.1.0"

from .precision import PRECISION_MODES, get_precision_mode, precision_mode, set_precision_mode
from .probe import probe
from .report import precision_report

__all__ = ["PRECISION_MODES", "get_precision_mode", "precision_mode", "precision_report",
           "probe", "set_precision_mode"]
