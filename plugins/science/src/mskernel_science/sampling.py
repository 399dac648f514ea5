"""Points in the unit hypercube ``[0, 1)^d``: pseudo-random, Latin hypercube, Sobol and Halton
(the last three from :mod:`scipy.stats.qmc`).  Geometries map them onto their domains."""

from __future__ import annotations

import warnings
from typing import Optional

import numpy as np

METHODS = ("uniform", "lhs", "sobol", "halton")


def unit_samples(n: int, dim: int, method: str = "uniform",
                 seed: Optional[int | np.random.Generator] = None) -> np.ndarray:
    """``n`` points of ``[0, 1)^dim`` as a float64 ``[n, dim]`` array.  ``method`` is one of
    :data:`METHODS`; the quasi-random sequences are scrambled with ``seed``, so successive
    draws (resampling) differ."""
    if method not in METHODS:
        raise ValueError(f"unknown sampling method {method!r}; choose one of {', '.join(METHODS)}")
    if n < 0 or dim < 1:
        raise ValueError(f"need n >= 0 points of dimension >= 1, got n={n}, dim={dim}")
    rng = np.random.default_rng(seed)
    if method == "uniform":
        return rng.random((n, dim))
    from scipy.stats import qmc

    engine = {"lhs": qmc.LatinHypercube, "sobol": qmc.Sobol, "halton": qmc.Halton}[method](
        d=dim, seed=rng)
    with warnings.catch_warnings():  # Sobol's balance wants n a power of two; any n is valid
        warnings.simplefilter("ignore", UserWarning)
        return np.asarray(engine.random(n), np.float64)
