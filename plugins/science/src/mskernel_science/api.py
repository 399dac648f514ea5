"""``mskernel.science``: the public names of mskernel-science."""

from __future__ import annotations

from . import fno, md
from .geometry import Disk, Geometry, Interval, Polygon, Rectangle, SpaceTime
from .pinn import (
    PINN, Condition, Dirichlet, Fields, History, Initial, Neumann, Periodic, Problem, Robin, mlp,
    relative_l2,
)
from .problems import (
    PerfectConductor, box_grid, burgers, burgers_grid, burgers_reference, kovasznay,
    kovasznay_exact, kovasznay_grid, maxwell_te, maxwell_te_exact, maxwell_te_grid, poisson,
    square_grid,
)
from .sampling import METHODS, unit_samples

__all__ = [
    "METHODS", "PINN", "fno", "md", "Condition", "Dirichlet", "Disk", "Fields", "Geometry", "History",
    "Initial", "Interval", "Neumann", "Periodic", "PerfectConductor", "Polygon", "Problem",
    "Rectangle", "Robin", "SpaceTime", "box_grid", "burgers", "burgers_grid", "burgers_reference",
    "kovasznay", "kovasznay_exact", "kovasznay_grid", "maxwell_te", "maxwell_te_exact",
    "maxwell_te_grid", "mlp", "poisson", "relative_l2", "square_grid", "unit_samples",
]
