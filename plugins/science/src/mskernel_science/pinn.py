"""Physics-informed networks: PDE residuals from a network's derivatives, boundary and initial
conditions, and a trainer (Adam, then L-BFGS).

A problem is a PDE residual — a function of :class:`Fields`, the network's output and its
derivatives at a batch of collocation points — and a list of :class:`Condition` objects, each
with its own points and residual.  :class:`PINN` trains a network on the mean squared
residuals, weighted (fixed weights, or adaptive by learning-rate annealing).

Derivatives.  The network maps ``[N, d]`` points to ``[N, k]`` outputs point by point, so the
gradient of ``sum(u[:, c])`` with respect to the points is the per-point gradient of component
``c`` (one reverse pass for all points), and a Hessian column ``d/dx_j grad u_c`` is the JVP
of that gradient along the ``j``-th unit direction (forward-over-reverse).  :class:`Fields`
computes each gradient and each Hessian column at most once per batch; the whole loss and its
parameter gradient are compiled by ``mskernel.jit`` once and rerun on each new batch.

L-BFGS is SciPy's L-BFGS-B on the flattened parameters with the compiled loss and gradient:
a well-kept line-search implementation with the same stopping rules as the PINN literature's
(``ftol``, ``gtol``), instead of a second copy of the algorithm as an optimizer cell; its cost
beyond the compiled gradient is vector arithmetic on the host.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Optional, Sequence

import numpy as np

import mskernel
from mskernel import Tensor, nn, ops

#: Points -> target values, ``[n, dim]`` -> ``[n, 1]`` (or ``[n]``).
Target = Callable[[np.ndarray], np.ndarray]
#: ``(n, method, seed)`` -> points ``[n, dim]``.
Sampler = Callable[[int, str, Any], np.ndarray]


class Fields:
    """The network's outputs at points ``x`` (``[N, d]``) and their derivatives, each computed
    once: ``fields[c]`` is component ``c`` (``[N, 1]``), ``d(c, i)`` its derivative along
    coordinate ``i``, ``dd(c, i, j)`` the second derivative, ``laplacian(c, dims)``."""

    def __init__(self, net: Callable[[Tensor], Tensor], x: Tensor) -> None:
        self.net, self.x = net, x
        self.u = net(x)
        self._grads: dict[int, Callable[[Tensor], Tensor]] = {}
        self._first: dict[int, Tensor] = {}
        self._columns: dict[tuple[int, int], Tensor] = {}

    def __getitem__(self, c: int) -> Tensor:
        return self.u[:, c:c + 1]

    def _grad_fn(self, c: int) -> Callable[[Tensor], Tensor]:
        if c not in self._grads:
            self._grads[c] = mskernel.grad(lambda x: ops.sum(self.net(x)[:, c]))
        return self._grads[c]

    def gradient(self, c: int = 0) -> Tensor:
        """``[N, d]``: the gradient of component ``c`` at each point (one reverse pass)."""
        if c not in self._first:
            self._first[c] = self._grad_fn(c)(self.x)
        return self._first[c]

    def d(self, c: int, i: int) -> Tensor:
        return self.gradient(c)[:, i:i + 1]

    def hessian_column(self, c: int, j: int) -> Tensor:
        """``[N, d]``: ``d/dx_j`` of the gradient of component ``c`` (forward over reverse)."""
        if (c, j) not in self._columns:
            direction = np.zeros(self.x.shape, np.float32)
            direction[:, j] = 1.0
            _, column = mskernel.jvp(self._grad_fn(c), (self.x,),
                                     (Tensor(direction, self.x.dtype),))
            self._columns[c, j] = column
        return self._columns[c, j]

    def dd(self, c: int, i: int, j: int) -> Tensor:
        return self.hessian_column(c, j)[:, i:i + 1]

    def laplacian(self, c: int = 0, dims: Optional[Sequence[int]] = None) -> Tensor:
        dims = range(self.x.shape[1]) if dims is None else dims
        terms = [self.dd(c, i, i) for i in dims]
        return terms[0] if len(terms) == 1 else ops.sum(ops.concat(terms, axis=1), axis=1,
                                                         keepdims=True)


def _column(values: np.ndarray) -> np.ndarray:
    values = np.asarray(values, np.float64)
    return values[:, None] if values.ndim == 1 else values


@dataclass
class Condition:
    """A constraint on a part of the domain: where its points come from (``on``), host data
    computed once per draw (:meth:`data`), and its residual at those points.  Subclasses
    implement :meth:`residual`."""

    on: Sampler
    component: int = 0

    def data(self, x: np.ndarray) -> list[np.ndarray]:
        """Arrays the residual needs beside the points (targets, normals)."""
        return []

    def residual(self, net: Callable[[Tensor], Tensor], x: Tensor, *data: Tensor) -> Tensor:
        raise NotImplementedError


@dataclass
class Dirichlet(Condition):
    """``u_c = value(x)``."""

    value: Target = lambda x: np.zeros(len(x))

    def data(self, x: np.ndarray) -> list[np.ndarray]:
        return [_column(self.value(x))]

    def residual(self, net, x, *data):
        return net(x)[:, self.component:self.component + 1] - data[0]


Initial = Dirichlet
"""``u_c(x, t0) = value(x)``: a Dirichlet condition on the initial slice."""


@dataclass
class Robin(Condition):
    """``a * u_c + b * du_c/dn = value(x)`` with the outward normal ``normal(x)``; ``a = 0``,
    ``b = 1`` is a Neumann condition (:func:`Neumann`)."""

    normal: Callable[[np.ndarray], np.ndarray] = lambda x: np.zeros_like(x)
    value: Target = lambda x: np.zeros(len(x))
    a: float = 0.0
    b: float = 1.0

    def data(self, x: np.ndarray) -> list[np.ndarray]:
        return [np.asarray(self.normal(x), np.float64), _column(self.value(x))]

    def residual(self, net, x, *data):
        normal, target = data
        fields = Fields(net, x)
        flux = ops.sum(fields.gradient(self.component) * normal, axis=1, keepdims=True)
        return self.a * fields[self.component] + self.b * flux - target


def Neumann(on: Sampler, normal: Callable[[np.ndarray], np.ndarray], value: Target,
            component: int = 0) -> Robin:
    """``du_c/dn = value(x)``."""
    return Robin(on, component, normal, value, 0.0, 1.0)


@dataclass
class Periodic(Condition):
    """``u_c`` (and, with ``derivative``, ``du_c/dx_dim``) equal at ``x_dim = low`` and
    ``x_dim = high``: ``on`` draws points whose coordinate ``dim`` is replaced by each end."""

    dim: int = 0
    low: float = 0.0
    high: float = 1.0
    derivative: bool = False

    def data(self, x: np.ndarray) -> list[np.ndarray]:
        other = x.copy()
        other[:, self.dim] = self.high
        return [other]

    def residual(self, net, x, *data):
        lo = x * Tensor(_mask(x.shape[1], self.dim), x.dtype) + Tensor(
            _mask(x.shape[1], self.dim, self.low, 0.0), x.dtype)
        a, b = Fields(net, lo), Fields(net, data[0])
        gap = a[self.component] - b[self.component]
        if self.derivative:
            gap = ops.concat([gap, a.d(self.component, self.dim) - b.d(self.component, self.dim)],
                             axis=1)
        return gap


def _mask(dim: int, axis: int, at: float = 0.0, elsewhere: float = 1.0) -> np.ndarray:
    out = np.full((1, dim), elsewhere, np.float32)
    out[0, axis] = at
    return out


@dataclass
class Problem:
    """A PDE on a domain: ``pde(fields)`` gives the residual(s) at collocation points drawn by
    ``domain(n, method, seed)``; ``conditions`` constrain the boundary and the initial slice;
    ``reference(x)``, when known, is the exact solution the error is measured against."""

    pde: Callable[[Fields], Tensor | Sequence[Tensor]]
    domain: Sampler
    conditions: Sequence[Condition]
    reference: Optional[Callable[[np.ndarray], np.ndarray]] = None


def mlp(sizes: Sequence[int], activation: str = "tanh") -> nn.SequentialCell:
    """A fully connected network ``sizes[0] -> ... -> sizes[-1]`` (Xavier-normal weights, as
    the PINN papers use), the activation between layers."""
    layers = [nn.Dense(a, b, weight_init="xavier_normal",
                       activation=activation if i < len(sizes) - 2 else None)
              for i, (a, b) in enumerate(zip(sizes[:-1], sizes[1:]))]
    return nn.SequentialCell(*layers)


def relative_l2(predicted: np.ndarray, exact: np.ndarray) -> float:
    """``||predicted - exact|| / ||exact||`` over all points."""
    predicted, exact = np.asarray(predicted, np.float64), np.asarray(exact, np.float64)
    return float(np.linalg.norm(predicted.ravel() - exact.ravel()) / np.linalg.norm(exact.ravel()))


@dataclass
class History:
    """What training recorded: ``(step, total loss, per-term losses)`` rows and the seconds
    each phase took."""

    rows: list[tuple[int, float, list[float]]] = field(default_factory=list)
    seconds: dict[str, float] = field(default_factory=dict)


class PINN:
    """Trains ``net`` on ``problem``: ``n_domain`` collocation points and ``n_condition``
    points per condition (an int or one per condition), drawn by ``method`` (see
    :mod:`.sampling`).  ``weights`` is one weight per loss term (the PDE residual(s) first,
    then each condition), or ``"adaptive"``: the conditions' weights follow learning-rate
    annealing (Wang, Teng and Perdikaris 2021), ``max|grad L_pde| / mean|grad L_i|``,
    smoothed with factor ``0.9`` and updated every ``adapt_every`` Adam steps."""

    def __init__(self, net: nn.Cell, problem: Problem, n_domain: int,
                 n_condition: int | Sequence[int], *, method: str = "sobol",
                 weights: Sequence[float] | str | None = None, adapt_every: int = 100,
                 seed: int = 0) -> None:
        self.net, self.problem, self.method = net, problem, method
        self.n_domain = n_domain
        counts = [n_condition] * len(problem.conditions) if isinstance(n_condition, int) \
            else list(n_condition)
        if len(counts) != len(problem.conditions):
            raise ValueError(f"n_condition gives {len(counts)} counts for "
                             f"{len(problem.conditions)} conditions")
        self.counts = counts
        self.rng = np.random.default_rng(seed)
        self.params = list(net.trainable_params())
        self.history = History()
        self.batch = self.sample()
        self.num_terms = len(self._terms(*self.batch))
        self.adaptive = weights == "adaptive"
        if weights is None or self.adaptive:
            weights = [1.0] * self.num_terms
        if len(weights) != self.num_terms:
            raise ValueError(f"{len(weights)} weights for {self.num_terms} loss terms")
        self.weights = np.asarray(weights, np.float32)
        self.adapt_every = adapt_every
        self._value_and_grad = mskernel.value_and_grad(self._loss, None, self.params,
                                                       has_aux=True)

    # -- batches and losses -------------------------------------------------------------------

    def sample(self) -> list[Tensor]:
        """A fresh batch: the collocation points, then each condition's points and data."""
        arrays = [self.problem.domain(self.n_domain, self.method, self.rng)]
        for cond, n in zip(self.problem.conditions, self.counts):
            x = cond.on(n, self.method, self.rng)
            arrays += [x, *cond.data(x)]
        return [Tensor(np.asarray(a, np.float32)) for a in arrays]

    def _terms(self, *batch: Tensor) -> list[Tensor]:
        """The mean squared residual of the PDE's equation(s) and of each condition."""
        residuals = self.problem.pde(Fields(self.net, batch[0]))
        if isinstance(residuals, Tensor):
            residuals = [residuals]
        terms = [ops.mean(r * r) for r in residuals]
        at = 1
        for cond in self.problem.conditions:
            width = 1 + len(cond.data(np.zeros((1, batch[0].shape[1]))))
            r = cond.residual(self.net, *batch[at:at + width])
            terms.append(ops.mean(r * r))
            at += width
        return terms

    def _loss(self, weights: Tensor, *batch: Tensor) -> tuple[Tensor, Tensor]:
        terms = ops.stack(self._terms(*batch))
        return ops.sum(terms * weights), terms

    # -- training -----------------------------------------------------------------------------

    def train_adam(self, steps: int, learning_rate: float = 1e-3, resample_every: int = 0,
                   log_every: int = 1000, verbose: bool = False) -> History:
        """``steps`` Adam steps, the batch redrawn every ``resample_every`` steps (0: never)."""
        optimizer = nn.Adam(self.params, learning_rate)

        @mskernel.jit
        def step(weights: Tensor, *batch: Tensor) -> tuple[Tensor, Tensor]:
            (loss, terms), grads = self._value_and_grad(weights, *batch)
            optimizer(grads)
            return loss, terms

        adapt = self._adapt_fn() if self.adaptive else None
        start = time.perf_counter()
        for i in range(steps):
            if resample_every and i and i % resample_every == 0:
                self.batch = self.sample()
            if adapt is not None and i % self.adapt_every == 0:
                self._adapt(adapt)
            loss, terms = step(Tensor(self.weights), *self.batch)
            if i % log_every == 0 or i == steps - 1:
                self._log(i, loss, terms, verbose)
        self.history.seconds["adam"] = self.history.seconds.get("adam", 0.0) + \
            time.perf_counter() - start
        return self.history

    def _adapt_fn(self) -> Callable[..., Any]:
        per_term = [mskernel.grad(lambda *b, k=k: self._terms(*b)[k], None, self.params)
                    for k in range(self.num_terms)]

        @mskernel.jit
        def stats(*batch: Tensor) -> tuple[Tensor, ...]:
            out = []
            for k, fn in enumerate(per_term):
                flat = ops.concat([ops.reshape(ops.abs(g), (-1,)) for g in fn(*batch)])
                out.append(ops.amax(flat) if k == 0 else ops.mean(flat))
            return tuple(out)

        return stats

    def _adapt(self, stats: Callable[..., Any]) -> None:
        values = [float(v.numpy()) for v in stats(*self.batch)]
        for k in range(1, self.num_terms):
            target = values[0] / max(values[k], 1e-12)
            self.weights[k] = 0.9 * self.weights[k] + 0.1 * target

    def train_lbfgs(self, max_iter: int = 5000, log_every: int = 1000,
                    verbose: bool = False) -> History:
        """SciPy's L-BFGS-B from the current parameters on the current batch."""
        from scipy.optimize import minimize

        value_and_grad = mskernel.jit(self._value_and_grad)
        shapes = [p.shape for p in self.params]
        sizes = [math.prod(s) for s in shapes]
        weights = Tensor(self.weights)
        calls = [0]

        def assign(theta: np.ndarray) -> None:
            for p, chunk, shape in zip(self.params, np.split(theta, np.cumsum(sizes)[:-1]),
                                       shapes):
                p.assign_value(Tensor(chunk.reshape(shape).astype(np.float32)))

        def fun(theta: np.ndarray) -> tuple[float, np.ndarray]:
            assign(theta)
            (loss, terms), grads = value_and_grad(weights, *self.batch)
            if calls[0] % log_every == 0:
                self._log(calls[0], loss, terms, verbose, phase="lbfgs")
            calls[0] += 1
            return float(loss.numpy()), np.concatenate(
                [np.asarray(g.numpy(), np.float64).ravel() for g in grads])

        start = time.perf_counter()
        theta0 = np.concatenate([np.asarray(p.numpy(), np.float64).ravel() for p in self.params])
        result = minimize(fun, theta0, jac=True, method="L-BFGS-B",
                          options={"maxiter": max_iter, "maxfun": max_iter * 5 // 4,
                                   "ftol": 1.0 * np.finfo(float).eps, "gtol": 1e-9,
                                   "maxcor": 50, "maxls": 50})
        assign(result.x)
        self.history.seconds["lbfgs"] = self.history.seconds.get("lbfgs", 0.0) + \
            time.perf_counter() - start
        return self.history

    def _log(self, i: int, loss: Tensor, terms: Tensor, verbose: bool,
             phase: str = "adam") -> None:
        row = (i, float(loss.numpy()), [float(v) for v in terms.numpy()])
        self.history.rows.append(row)
        if verbose:
            print(f"{phase} {i:6d}  loss {row[1]:.3e}  terms "
                  + " ".join(f"{v:.2e}" for v in row[2]), flush=True)

    # -- evaluation ---------------------------------------------------------------------------

    def predict(self, x: np.ndarray) -> np.ndarray:
        """The network at points ``x`` (float64 ``[n, k]``), in chunks of 8192 points."""
        x = np.asarray(x, np.float32)
        return np.concatenate([np.asarray(self.net(Tensor(x[i:i + 8192])).numpy(), np.float64)
                               for i in range(0, len(x), 8192)])

    def error(self, x: np.ndarray) -> float:
        """Relative L2 error against the problem's reference at points ``x``."""
        if self.problem.reference is None:
            raise ValueError("this problem has no reference solution")
        return relative_l2(self.predict(x), _column(self.problem.reference(x)))
