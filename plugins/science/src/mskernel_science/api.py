"""``mskernel.science``: the public names of mskernel-science."""

from __future__ import annotations

from . import fno, md
from .geometry import Disk, Geometry, Interval, Polygon, Rectangle, SpaceTime
from .pinn import (
    PINN, Condition, Dirichlet, Fields, History, Initial, Neumann, Periodic, Problem, Robin, mlp,
    relative_l2,
)
from .problems import burgers, burgers_grid, burgers_reference, poisson, square_grid
from .sampling import METHODS, unit_samples

__all__ = [
    "METHODS", "PINN", "fno", "md", "Condition", "Dirichlet", "Disk", "Fields", "Geometry", "History",
    "Initial", "Interval", "Neumann", "Periodic", "Polygon", "Problem", "Rectangle", "Robin",
    "SpaceTime", "burgers", "burgers_grid", "burgers_reference", "mlp", "poisson",
    "relative_l2", "square_grid", "unit_samples",
]
