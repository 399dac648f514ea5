"""The derivative rules of every differentiable core op, checked through the public API
(:func:`mskernel_autodiff.api.vjp`, ``jvp``, ``grad``) against central finite differences.

The table reuses :mod:`mskernel.testing`'s op samples — broadcasting, scalars, size-1 and
size-0 dims, every attribute variant — with floating inputs promoted to float64 (complex to
complex128), and adds cases where samples cannot serve: ties or NaNs (where the derivative is
a convention, tested separately below), zeros for the products.

Each case is checked for: the JVP along random directions against differences of the op; the
VJP of a random cotangent entry by entry (pairing it with differences along each input
coordinate; along random directions for inputs of more than 64 real coordinates); the two
being transposes; the same derivatives under ``jit`` (rules read no values); derivatives in
float32, float16 and bfloat16 keeping the primals' dtypes; and, for one real case per op,
second and third derivatives by reverse-over-reverse and forward-over-reverse.

Numerics.  Central differences with step ``h = 1e-6`` on inputs of magnitude up to ~5 have a
truncation error ``h**2 * |f'''| / 6 ~ 1e-13`` and a rounding error ``eps * |f| / h ~ 1e-10``
(relative to the values), so a correct rule agrees to ~1e-9 while a wrong one is off by O(1):
the bound ``rtol = atol / scale = 1e-6`` (``scale``: the largest expected magnitude, at least 1)
sits three orders of magnitude from each.  The JVP/VJP consistency ``<u, J v> = <J^T u, v>``
involves no differences and is checked to 1e-10.  Second and third derivatives are finite
differences of the first and second derivative functions, with ``h = 1e-5``.

Complex inputs and outputs follow JAX's convention: the VJP is the transpose of the JVP under
``<a, b> = Re(sum(a * b))``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Callable

import numpy as np
import pytest

from mskernel import jit
from mskernel_sdk import Tensor, apply, dtype as to_dtype, op_registry, rule_registry, samples_for
from mskernel_autodiff import api, rules

H = 1e-6
H_HIGHER = 1e-5
RTOL = 1e-6
SAMPLES_PER_OP = 6

# -- the case table ---------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class Case:
    """One application of an op: NumPy arguments (float64/complex128 where differentiable)."""

    op: str
    args: tuple[np.ndarray, ...]
    attrs: dict[str, Any] = field(default_factory=dict)
    label: str = ""
    #: whether the op's higher derivatives are exact at these inputs (not so for scatter's
    #: ``reduce="mul"`` at zero updates: only its first derivative is exact there)
    exact_higher: bool = True

    def __str__(self) -> str:
        types = ",".join(f"{a.dtype.name}{list(a.shape)}" for a in self.args)
        return f"{self.op}({types}){'-' + self.label if self.label else ''}"

    @cached_property
    def inputs(self) -> tuple[int, ...]:
        """Positions of the differentiable arguments."""
        return tuple(i for i, a in enumerate(self.args) if a.dtype.kind in "fc")

    def evaluate(self, args: tuple[np.ndarray, ...]) -> tuple[np.ndarray, ...]:
        """The op's reference result, always a tuple."""
        opdef = op_registry().get(self.op)
        with np.errstate(all="ignore"):
            out = opdef.reference(*args, **opdef.bind_attrs(self.attrs))
        return tuple(np.asarray(o) for o in out) if isinstance(out, tuple) else (np.asarray(out),)

    @cached_property
    def outputs(self) -> tuple[int, ...]:
        """Positions of the differentiable outputs."""
        return tuple(i for i, o in enumerate(self.evaluate(self.args)) if o.dtype.kind in "fc")


_WIDE = {"f": np.float64, "c": np.complex128}


def _widened(a: Any) -> Any:
    a = np.asarray(a)
    return a.astype(_WIDE[a.dtype.kind]) if a.dtype.kind in _WIDE else a


def _widened_attrs(attrs: dict[str, Any]) -> dict[str, Any]:
    """Attributes naming an inexact dtype (``cast``'s) widened like the arguments."""
    out = dict(attrs)
    if "dtype" in out:
        kind = to_dtype(out["dtype"]).kind
        out["dtype"] = {"f": "float64", "c": "complex128"}.get(kind, out["dtype"])
    return out


def _usable(case: Case) -> bool:
    """A case the finite-difference check can use: something to differentiate, finite values."""
    if not case.inputs or not case.outputs:
        return False
    arrays = case.args + case.evaluate(case.args)
    return all(np.all(np.isfinite(a)) for a in arrays if a.dtype.kind in "fc")


def _from_samples(op: str) -> list[Case]:
    """Distinct (shapes, dtype kinds, attributes) of the op's samples, float and complex cases
    interleaved, at most :data:`SAMPLES_PER_OP`."""
    seen: set[str] = set()
    by_kind: dict[str, list[Case]] = {}
    for sample in samples_for(op):
        if not all(isinstance(a, np.ndarray) or np.isscalar(a) for a in sample.args):
            continue
        case = Case(op, tuple(_widened(a) for a in sample.args), _widened_attrs(sample.attrs),
                    sample.label)
        key = f"{case}{sorted(case.attrs.items(), key=str)}"
        if key in seen or not _usable(case):
            continue
        seen.add(key)
        kinds = "".join(a.dtype.kind for a in case.args)
        by_kind.setdefault(kinds, []).append(case)
    ranked = sorted(((rank, case) for cases in by_kind.values()
                     for rank, case in enumerate(cases)), key=lambda pair: pair[0])
    return [case for _, case in ranked[:SAMPLES_PER_OP]]


def _distinct(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    """Random values in [-2, 2] that are pairwise at least 1e-3 apart (no ties)."""
    n = math.prod(shape)
    values = np.linspace(-2, 2, max(n, 1))[:n] + rng.uniform(-1e-4, 1e-4, n)
    return rng.permutation(values).reshape(shape)


def _custom_cases() -> list[Case]:
    """Cases the samples cannot give: tie-free inputs for the ops that pick elements, zeros
    for the products, the reflection branch of lgamma's derivative."""
    rng = np.random.default_rng(7)
    d = lambda *shape: _distinct(rng, shape)  # noqa: E731
    zeros = np.array([[1.5, 0.0, 2.0, 0.5, 0.0, -1.2], [0.0, 0.7, -0.4, 1.1, 0.9, 1.3],
                      [0.0, 0.0, 1.2, -0.8, 0.6, 1.0]])
    scatter_x, rows = rng.uniform(-2, 2, (3, 4)), np.array([[0, 1, 2, 0], [0, 1, 1, 2]])
    updates = np.array([[0.0, 1.5, -0.7, 2.0], [0.9, 0.0, 0.0, -1.1]])
    return [
        Case("sort", (d(4, 5),), {}),
        Case("sort", (d(3, 4),), {"axis": 0, "descending": True}),
        Case("sort", (d(2, 0, 3),), {"axis": 1}, "empty"),
        Case("topk", (d(4, 6),), {"k": 3}),
        Case("topk", (d(3, 5),), {"k": 2, "axis": 0, "largest": False, "sorted": False}),
        Case("cummax", (d(3, 6),), {"axis": 1}),
        Case("cummax", (d(4, 2),), {"axis": 0}),
        Case("cummin", (d(3, 6),), {"axis": -1}),
        Case("cummin", (d(1,),), {"axis": 0}),
        Case("max", (d(3, 4),), {"axes": (1,)}),
        Case("min", (d(2, 3, 2),), {"axes": None, "keepdims": True}),
        Case("prod", (zeros,), {"axes": (1,)}, "zeros"),
        Case("prod", (zeros,), {"axes": None}, "zeros"),
        Case("cumprod", (zeros,), {"axis": 1}, "zeros"),
        Case("cumprod", (zeros,), {"axis": 1, "reverse": True, "exclusive": True}, "zeros"),
        Case("cumprod", (zeros.T.copy(),), {"axis": 0, "exclusive": True}, "zeros"),
        Case("cumprod", (zeros + 0.5j * zeros[::-1],), {"axis": 1}, "complex-zeros"),
        Case("scatter", (scatter_x, rows, updates), {"axis": 0, "reduce": "mul"}, "zeros",
             exact_higher=False),
        Case("scatter_nd", (scatter_x, np.array([[0], [2], [0], [0]]),
                            np.array([[0.0, 1.0, 2.0, 0.5], [1.0, -1.0, 0.0, 2.0],
                                      [0.0, 0.3, 0.0, -0.5], [1.2, 0.0, 1.0, 1.0]])),
             {"reduce": "mul"}, "zeros", exact_higher=False),
        Case("lgamma", (np.array([-2.6, -0.4, -1.3, 0.3, 2.5]),), {}, "negative"),
        Case("pow", (np.array([0.5, 1.5, 2.0]), np.array([[0.0], [1.0], [-1.5], [2.5]])), {},
             "integer-exponents"),
        Case("pow", (np.array([0.5 + 1j, -1.5 + 0.5j]), np.array([2.0 - 0.5j, 0.5j])), {},
             "complex"),
        Case("max_pool", (d(1, 2, 5, 6),),
             {"kernel": (3, 2), "stride": (2, 3), "padding": (1, 0, 0, 1), "dilation": (1, 2),
              "ceil_mode": True}, "ceil-dilation"),
        Case("max_pool_grad", (d(1, 2, 5, 6), rng.uniform(-2, 2, (1, 2, 3, 2))),
             {"kernel": (3, 2), "stride": (2, 3), "padding": (1, 0, 0, 1), "dilation": (1, 2),
              "ceil_mode": True}, "ceil-dilation"),
        Case("max_pool_grad", (d(2, 3, 8), rng.uniform(-2, 2, (2, 3, 5))),
             {"kernel": (3,), "stride": (2,), "padding": (1, 1), "ceil_mode": True}),
        Case("adaptive_max_pool", (d(2, 1, 7),), {"output_size": (3,)}),
        Case("adaptive_max_pool", (d(1, 2, 3, 5),), {"output_size": (4, 2)}, "growing"),
    ]


#: Ops whose every sample has ties or NaNs, or whose derivative jumps where samples put
#: ties on purpose (the custom cases cover them).
_SAMPLES_UNSUITABLE = {"sort", "topk", "cummax", "cummin", "max_pool_grad"}


def _table() -> list[Case]:
    cases = [case for op in sorted(rules.VJP) if op not in _SAMPLES_UNSUITABLE
             for case in _from_samples(op)]
    return cases + _custom_cases()


CASES = _table()


def _first_cases(accept: Callable[[Case], bool]) -> list[Case]:
    """The first case of each op that ``accept`` takes."""
    first: dict[str, Case] = {}
    for case in CASES:
        if case.op not in first and accept(case):
            first[case.op] = case
    return [first[op] for op in sorted(first)]


def _smooth_real(case: Case) -> bool:
    """A case for higher derivatives: real, no empty input, a nonzero derivative."""
    zero_derivative = {"floor", "ceil", "round", "trunc", "floor_divide"}
    real = all(case.args[i].dtype.kind == "f" for i in case.inputs)
    real_out = all(case.evaluate(case.args)[k].dtype.kind == "f" for k in case.outputs)
    empty = any(case.args[i].size == 0 for i in case.inputs)
    return case.op not in zero_derivative and real and real_out and not empty \
        and case.exact_higher

# -- tensors and finite differences -----------------------------------------------------------


def _random_like(rng: np.random.Generator, a: np.ndarray) -> np.ndarray:
    v = rng.standard_normal(a.shape)
    if a.dtype.kind == "c":
        v = v + 1j * rng.standard_normal(a.shape)
    return v.astype(a.dtype)


def _pair(a: np.ndarray, b: np.ndarray) -> float:
    """``<a, b> = Re(sum(a * b))``: the pairing under which a VJP transposes a JVP."""
    return float(np.real(np.sum(np.asarray(a) * np.asarray(b))))


def _pair_all(xs, ys) -> float:
    return sum(_pair(x, y) for x, y in zip(xs, ys))


def _tensor(a: np.ndarray, dtype: str | None) -> Tensor:
    """``a`` as a tensor, of ``dtype`` if given and ``a`` is floating."""
    return Tensor(a, dtype if dtype is not None and a.dtype.kind == "f" else None)


def _function(case: Case, dtype: str | None = None) -> Callable[..., Any]:
    """The op as a function of its differentiable arguments (the others fixed); ``dtype``
    narrows the floating arguments."""
    fixed = [_tensor(a, dtype) for a in case.args]

    def fn(*xs: Tensor) -> Any:
        args = list(fixed)
        for i, x in zip(case.inputs, xs):
            args[i] = x
        return apply(case.op, *args, **case.attrs)

    return fn


def _leaves(out: Any) -> tuple[Any, ...]:
    return out if isinstance(out, tuple) else (out,)


def _difference(case: Case, direction: tuple[np.ndarray, ...], h: float = H) -> list[np.ndarray]:
    """Central difference of the differentiable outputs along ``direction`` (one array per
    differentiable input)."""
    plus, minus = list(case.args), list(case.args)
    for i, v in zip(case.inputs, direction):
        plus[i] = case.args[i] + h * v
        minus[i] = case.args[i] - h * v
    hi, lo = case.evaluate(tuple(plus)), case.evaluate(tuple(minus))
    return [(hi[k] - lo[k]) / (2 * h) for k in case.outputs]


def _assert_close(actual: Any, expected: Any, what: str) -> None:
    expected = np.asarray(expected)
    scale = max(1.0, float(np.max(np.abs(expected), initial=0.0)))
    np.testing.assert_allclose(np.asarray(actual), expected, rtol=RTOL, atol=RTOL * scale,
                               err_msg=what)


def _primals(case: Case, dtype: str | None = None) -> tuple[Tensor, ...]:
    return tuple(_tensor(case.args[i], dtype) for i in case.inputs)


def _cotangent(case: Case, out: Any, rng: np.random.Generator) -> tuple[Any, list[np.ndarray]]:
    """A random cotangent shaped like ``out`` (zeros for integer outputs) and its arrays for
    the differentiable outputs."""
    leaves, arrays = [], []
    for k, o in enumerate(_leaves(out)):
        ref = np.zeros(o.shape, o.dtype.storage)
        u = _random_like(rng, ref) if k in case.outputs else ref
        leaves.append(Tensor(u, o.dtype))
        if k in case.outputs:
            arrays.append(u)
    return (tuple(leaves) if isinstance(out, tuple) else leaves[0]), arrays


# -- first derivatives ------------------------------------------------------------------------


@pytest.mark.parametrize("case", CASES, ids=str)
def test_jvp_matches_finite_differences(case: Case) -> None:
    rng = np.random.default_rng(1)
    for _ in range(2):
        direction = tuple(_random_like(rng, case.args[i]) for i in case.inputs)
        _, tangent = api.jvp(_function(case), _primals(case),
                             tuple(Tensor(v) for v in direction))
        leaves = _leaves(tangent)
        for k, expected in zip(case.outputs, _difference(case, direction)):
            _assert_close(leaves[k].numpy(), expected, f"{case}: tangent of output {k}")


@pytest.mark.parametrize("case", CASES, ids=str)
def test_vjp_matches_finite_differences(case: Case) -> None:
    """Each entry of the VJP is ``<u, J e_j>`` (and ``-<u, J i e_j>`` for the imaginary part
    of a complex input); large inputs are checked along random directions instead."""
    rng = np.random.default_rng(2)
    out, vjp_fn = api.vjp(_function(case), *_primals(case))
    seed, u = _cotangent(case, out, rng)
    grads = vjp_fn(seed)
    inputs = [case.args[i] for i in case.inputs]
    for g, x in zip(grads, inputs):
        assert g.type.shape == x.shape and g.dtype.storage == x.dtype
    size = sum(x.size * (2 if x.dtype.kind == "c" else 1) for x in inputs)
    if size > 64:
        for _ in range(4):
            direction = tuple(_random_like(rng, x) for x in inputs)
            expected = _pair_all(u, _difference(case, direction))
            _assert_close(_pair_all([g.numpy() for g in grads], direction), expected,
                          f"{case}: VJP along a random direction")
        return
    for n, x in enumerate(inputs):
        expected = np.zeros(x.shape, x.dtype)
        for j in np.ndindex(x.shape):
            basis = [np.zeros_like(y) for y in inputs]
            basis[n][j] = 1
            expected[j] = _pair_all(u, _difference(case, tuple(basis)))
            if x.dtype.kind == "c":
                basis[n][j] = 1j
                expected[j] -= 1j * _pair_all(u, _difference(case, tuple(basis)))
        _assert_close(grads[n].numpy(), expected, f"{case}: cotangent of input {n}")


@pytest.mark.parametrize("case", CASES, ids=str)
def test_jvp_and_vjp_are_transposes(case: Case) -> None:
    rng = np.random.default_rng(3)
    direction = tuple(_random_like(rng, case.args[i]) for i in case.inputs)
    out, tangent = api.jvp(_function(case), _primals(case), tuple(Tensor(v) for v in direction))
    _, vjp_fn = api.vjp(_function(case), *_primals(case))
    seed, u = _cotangent(case, out, rng)
    grads = vjp_fn(seed)
    forward = _pair_all(u, [_leaves(tangent)[k].numpy() for k in case.outputs])
    backward = _pair_all([g.numpy() for g in grads], direction)
    bound = sum(float(np.sum(np.abs(a) * np.abs(b))) for a, b in
                zip(u, [_leaves(tangent)[k].numpy() for k in case.outputs]))
    assert abs(forward - backward) <= 1e-10 * max(bound, 1.0), (case, forward, backward)


@pytest.mark.parametrize("case", _first_cases(lambda case: True), ids=str)
def test_rules_trace_under_jit(case: Case) -> None:
    """Rules read no tensor values: under ``jit`` they trace into the graph and give the eager
    results."""
    rng = np.random.default_rng(5)
    fn, primals = _function(case), _primals(case)
    seed, _ = _cotangent(case, fn(*primals), rng)
    direction = tuple(Tensor(_random_like(rng, case.args[i])) for i in case.inputs)

    def derivatives(*xs: Tensor) -> tuple[Any, ...]:
        _, vjp_fn = api.vjp(fn, *xs)
        _, tangent = api.jvp(fn, xs, direction)
        return tuple(vjp_fn(seed)) + _leaves(tangent)

    for traced, eager in zip(jit(derivatives)(*primals), derivatives(*primals)):
        np.testing.assert_allclose(traced.numpy(), eager.numpy(), rtol=1e-12, atol=1e-300)


def _real(case: Case) -> bool:
    return all(case.args[i].dtype.kind == "f" for i in case.inputs)


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
@pytest.mark.parametrize("case", _first_cases(_real), ids=str)
def test_rules_compute_in_the_primal_dtype(case: Case, dtype: str) -> None:
    """Rules make their constants in the dtype of the tensors they meet: in narrower dtypes
    they run and give derivatives of the primals' types, in float32 close to float64's."""
    results = {}
    for dt in ("float64", dtype):
        rng = np.random.default_rng(6)
        fn, primals = _function(case, dt), _primals(case, dt)
        out, vjp_fn = api.vjp(fn, *primals)
        grads = vjp_fn(_cotangent(case, out, rng)[0])
        direction = tuple(Tensor(_random_like(rng, case.args[i]), p.dtype)
                          for i, p in zip(case.inputs, primals))
        _, tangent = api.jvp(fn, primals, direction)
        tangents = [_leaves(tangent)[k] for k in case.outputs]
        assert [g.dtype for g in grads] == [p.dtype for p in primals]
        assert [t.dtype for t in tangents] == [_leaves(out)[k].dtype for k in case.outputs]
        results[dt] = [t.numpy() for t in (*grads, *tangents)]
    if dtype == "float32":
        for narrow, wide in zip(results[dtype], results["float64"]):
            scale = max(1.0, float(np.max(np.abs(wide), initial=0.0)))
            np.testing.assert_allclose(narrow, wide, rtol=1e-4, atol=1e-4 * scale,
                                       err_msg=str(case))


# -- higher derivatives -----------------------------------------------------------------------


def _scalarized(case: Case, weights: list[np.ndarray]) -> Callable[..., Tensor]:
    """``sum_k sum(w_k * sin(out_k))``: a smooth scalar of the op's outputs whose higher
    derivatives exercise the derivatives of the rules' own ops."""
    fn = _function(case)

    def scalar(*xs: Tensor) -> Tensor:
        outs = _leaves(fn(*xs))
        total = None
        for k, w in zip(case.outputs, weights):
            term = apply("sum", apply("mul", apply("sin", outs[k]), Tensor(w)))
            total = term if total is None else apply("add", total, term)
        return total

    return scalar


def _along(derivative: Callable[..., Any], direction: tuple[np.ndarray, ...]) -> Callable:
    """``x -> <derivative(x), direction>``, a scalar function (for differentiating again)."""

    def scalar(*xs: Tensor) -> Tensor:
        total = None
        for g, v in zip(derivative(*xs), direction):
            term = apply("sum", apply("mul", g, Tensor(v)))
            total = term if total is None else apply("add", total, term)
        return total

    return scalar


def _numeric(fn: Callable[..., Any], xs: list[np.ndarray],
             direction: tuple[np.ndarray, ...]) -> list[np.ndarray]:
    """Central difference of a tuple-valued function of arrays along ``direction``."""
    plus = fn(*(Tensor(x + H_HIGHER * v) for x, v in zip(xs, direction)))
    minus = fn(*(Tensor(x - H_HIGHER * v) for x, v in zip(xs, direction)))
    return [(p.numpy() - m.numpy()) / (2 * H_HIGHER) for p, m in zip(plus, minus)]


@pytest.mark.parametrize("case", _first_cases(_smooth_real), ids=str)
def test_second_and_third_derivatives(case: Case) -> None:
    """Hessian-vector products by reverse-over-reverse and forward-over-reverse match finite
    differences of the gradient; third derivatives match finite differences of the HVP."""
    rng = np.random.default_rng(4)
    outputs = case.evaluate(case.args)
    scalar = _scalarized(case, [rng.standard_normal(outputs[k].shape) for k in case.outputs])
    xs = [case.args[i] for i in case.inputs]
    direction = tuple(rng.standard_normal(x.shape) for x in xs)
    argnums = tuple(range(len(xs)))
    gradient = api.grad(scalar, argnums=argnums)
    hvp = api.grad(_along(gradient, direction), argnums=argnums)
    third = api.grad(_along(hvp, direction), argnums=argnums)
    primals = tuple(Tensor(x) for x in xs)

    expected_hvp = _numeric(gradient, xs, direction)
    _, forward_hvp = api.jvp(gradient, primals, tuple(Tensor(v) for v in direction))
    for got, fwd, want in zip(hvp(*primals), forward_hvp, expected_hvp):
        _assert_close(got.numpy(), want, f"{case}: reverse-over-reverse HVP")
        _assert_close(fwd.numpy(), want, f"{case}: forward-over-reverse HVP")
    for got, want in zip(third(*primals), _numeric(hvp, xs, direction)):
        _assert_close(got.numpy(), want, f"{case}: third derivative")


# -- coverage ---------------------------------------------------------------------------------


def test_every_core_op_has_both_rules_or_none() -> None:
    """A new core op without rules fails here: each needs a VJP and a JVP rule, or to be
    declared nondifferentiable."""
    table = rule_registry()
    core = sorted(op.name for op in op_registry() if op.owner == "mskernel")
    missing = [op for op in core if not table.has("nondifferentiable", op)
               and not (table.has("vjp", op) and table.has("jvp", op))]
    assert not missing, f"core ops without derivative rules: {missing}"
    assert set(rules.VJP) == set(rules.JVP)
    assert not set(rules.VJP) & rules.NONDIFFERENTIABLE


def test_every_differentiable_op_is_in_the_table() -> None:
    assert set(rules.VJP) <= {case.op for case in CASES}


# -- conventions at the points where a derivative is a choice ---------------------------------


def _grad(fn: Callable[..., Tensor], *xs: Any, argnums: Any = 0) -> Any:
    return api.grad(fn, argnums=argnums)(*(Tensor(np.asarray(x, np.float64)) for x in xs))


def _total(op: str, **attrs: Any) -> Callable[..., Tensor]:
    return lambda *xs: apply("sum", apply(op, *xs, **attrs))


def test_max_and_min_split_ties_evenly() -> None:
    x = [[1.0, 3.0, 3.0], [2.0, 0.0, 2.0]]
    expected = [[0, 0.5, 0.5], [0.5, 0, 0.5]]
    np.testing.assert_array_equal(_grad(_total("max", axes=(1,)), x).numpy(), expected)
    np.testing.assert_array_equal(_grad(_total("min", axes=None), [[1.0, 1.0]]).numpy(),
                                  [[0.5, 0.5]])
    gx, gy = _grad(_total("maximum"), [1.0, 2.0], [1.0, 0.0], argnums=(0, 1))
    np.testing.assert_array_equal(gx.numpy(), [0.5, 1.0])
    np.testing.assert_array_equal(gy.numpy(), [0.5, 0.0])


def test_max_pools_route_ties_to_the_first_maximum() -> None:
    x = np.array([[[[1.0, 2.0, 2.0], [2.0, 0.0, 1.0]]]])  # one 2x2 window, then a 2x1 one
    g = _grad(_total("max_pool", kernel=(2, 2), stride=(2, 2), ceil_mode=True), x).numpy()
    np.testing.assert_array_equal(g, [[[[0, 1, 1], [0, 0, 0]]]])
    g = _grad(_total("adaptive_max_pool", output_size=(1, 1)), x).numpy()
    np.testing.assert_array_equal(g, [[[[0, 1, 0], [0, 0, 0]]]])


def test_clip_passes_the_gradient_at_its_bounds() -> None:
    g = _grad(_total("clip", min=-1.0, max=2.0), [-2.0, -1.0, 0.5, 2.0, 3.0]).numpy()
    np.testing.assert_array_equal(g, [0, 1, 1, 1, 0])


def test_kinks_have_derivative_zero() -> None:
    for op in ("abs", "sign", "relu"):
        np.testing.assert_array_equal(_grad(_total(op), [0.0, -0.0]).numpy(), [0, 0], op)
    z = Tensor(np.array([0j, 1 + 1j]))
    _, vjp_fn = api.vjp(lambda z: apply("abs", z), z)
    np.testing.assert_allclose(vjp_fn(Tensor(np.ones(2)))[0].numpy(), [0, (1 - 1j) / 2**0.5])


def test_prod_with_zeros_is_exact_at_every_order() -> None:
    prod = _total("prod")
    np.testing.assert_array_equal(_grad(prod, [2.0, 0.0, 3.0]).numpy(), [0, 6, 0])
    np.testing.assert_array_equal(_grad(prod, [0.0, 0.0, 3.0]).numpy(), [0, 0, 0])
    hessian = api.hessian(prod)(Tensor(np.array([2.0, 0.0, 3.0]))).numpy()
    np.testing.assert_array_equal(hessian, [[0, 3, 0], [3, 0, 2], [0, 2, 0]])


def test_cumprod_with_zeros_is_exact_at_every_order() -> None:
    x = np.array([2.0, 0.0, 3.0, 0.0, 5.0])
    jacobian = api.jacrev(lambda t: apply("cumprod", t, axis=0))(Tensor(x)).numpy()
    expected = np.array([[np.prod(np.delete(x[:i + 1], k)) if k <= i else 0.0
                          for k in range(5)] for i in range(5)])
    np.testing.assert_array_equal(jacobian, expected)
    # d2/dx0 dx1 of sum(cumprod(x)) is 1 + x2 + x2 x3 + x2 x3 x4 = 4; exact at the zeros.
    hessian = api.hessian(_total("cumprod", axis=0))(Tensor(x)).numpy()
    assert hessian[0, 1] == hessian[1, 0] == 4.0 and hessian[1, 3] == 2.0 * 3.0 * (1 + 5.0)


def test_pow_at_zero() -> None:
    dx = lambda x, y: _grad(_total("pow"), [x], [y]).numpy()[0]  # noqa: E731
    dy = lambda x, y: _grad(_total("pow"), [x], [y], argnums=1).numpy()[0]  # noqa: E731
    assert dx(0.0, 2.0) == 0 and dx(0.0, 1.0) == 1 and dx(0.0, 0.0) == 0
    assert dx(0.0, 0.5) == np.inf
    assert dy(0.0, 2.0) == 0 and dy(0.0, 0.0) == 0 and dx(3.0, 0.0) == 0


def test_complex_gradients_follow_jax() -> None:
    """grad of a real function of z is conj(df/dz*) * 2 convention of JAX: |z|**2 -> 2 conj z;
    holomorphic products transpose without conjugation."""
    z = np.array([1 + 2j, -0.5 + 1j])
    norm2 = lambda t: apply("real", apply("mul", t, apply("conj", t)))  # noqa: E731
    _, vjp_fn = api.vjp(norm2, Tensor(z))
    np.testing.assert_allclose(vjp_fn(Tensor(np.ones(2)))[0].numpy(), 2 * np.conj(z))
    w = np.array([3 - 1j, 2j])
    _, vjp_fn = api.vjp(lambda a: apply("mul", a, Tensor(w)), Tensor(z))
    np.testing.assert_allclose(vjp_fn(Tensor(np.ones(2, complex)))[0].numpy(), w)


def test_cast_passes_gradients_between_floats_only() -> None:
    g = api.grad(lambda x: apply("sum", apply("cast", x, dtype="float64")))(
        Tensor(np.ones(3, np.float32)))
    assert g.dtype.name == "float32" and np.all(g.numpy() == 1)
    _, vjp_fn = api.vjp(lambda x: apply("cast", x, dtype="int32"), Tensor(np.ones(3)))
    np.testing.assert_array_equal(vjp_fn(Tensor(np.ones(3, np.int32)))[0].numpy(), 0)
    _, tangent = api.jvp(lambda x: apply("cast", x, dtype="int32"), (Tensor(np.ones(3)),),
                         (Tensor(np.ones(3)),))
    np.testing.assert_array_equal(tangent.numpy(), 0)


def test_scatter_without_reduce_differentiates_the_winning_update() -> None:
    x, updates = np.zeros((2,)), np.array([1.0, 2.0, 3.0])
    indices = Tensor(np.array([1, 0, 1]))
    weights = Tensor(np.array([10.0, 100.0]))

    def fn(a: Tensor, u: Tensor) -> Tensor:
        return apply("sum", apply("mul", apply("scatter", a, indices, u, axis=0), weights))

    gx, gu = _grad(fn, x, updates, argnums=(0, 1))
    np.testing.assert_array_equal(gx.numpy(), [0, 0])
    np.testing.assert_array_equal(gu.numpy(), [0, 10, 100])


def test_size_zero_inputs_get_size_zero_gradients() -> None:
    for shape in ((0,), (2, 0, 3)):
        g = _grad(_total("exp"), np.zeros(shape))
        assert g.shape == shape
