"""Every collective on N ranks, eager and under ``@jit`` at O3, against NumPy computed from all
ranks' inputs; derivative rules against finite differences and each other; process groups;
mismatches between ranks.  Run by ``tests/test_collectives.py`` under ``mskernel run -n N``;
any failed check raises, which fails the run."""

from __future__ import annotations

import numpy as np

import mskernel
from mskernel import communication as comm
from mskernel.communication import CollectiveMismatchError

comm.init()
RANK, N = comm.get_rank(), comm.get_group_size()


def inputs(rank: int, dtype: str = "float32", shape: tuple[int, ...] = (N * 2, 3)) -> np.ndarray:
    rng = np.random.default_rng(100 + rank)
    if dtype == "bool":
        return rng.random(shape) < 0.5
    if np.dtype(dtype).kind in "iu":
        return rng.integers(1, 5, shape).astype(dtype)
    values = rng.uniform(0.5, 2.0, shape)
    if np.dtype(dtype).kind == "c":
        values = values + 1j * rng.uniform(-1, 1, shape)
    return values.astype(dtype)


def every(dtype: str = "float32", shape: tuple[int, ...] = (N * 2, 3)) -> list[np.ndarray]:
    return [inputs(r, dtype, shape) for r in range(N)]


REDUCE = {"sum": lambda xs: np.sum(xs, axis=0), "mean": lambda xs: np.mean(xs, axis=0),
          "max": lambda xs: np.max(xs, axis=0), "min": lambda xs: np.min(xs, axis=0),
          "prod": lambda xs: np.prod(xs, axis=0)}
BOOL_REDUCE = {"max": lambda xs: np.any(xs, axis=0), "min": lambda xs: np.all(xs, axis=0)}


def close(actual: object, expected: np.ndarray, what: str) -> None:
    actual = np.asarray(actual)
    assert actual.shape == expected.shape, f"{what}: shape {actual.shape} != {expected.shape}"
    if expected.dtype.kind in "biu":
        np.testing.assert_array_equal(actual, expected, err_msg=what)
    else:
        tol = 1e-2 if expected.dtype == np.float16 else 1e-5
        np.testing.assert_allclose(actual, expected, rtol=tol, atol=tol, err_msg=what)


def check_values() -> None:
    for dtype, reductions in (("float32", REDUCE), ("float64", REDUCE),
                              ("int32", {k: REDUCE[k] for k in ("sum", "max", "min", "prod")}),
                              ("float16", {"sum": REDUCE["sum"]}),
                              ("complex64", {"sum": REDUCE["sum"], "prod": REDUCE["prod"]}),
                              ("bool", BOOL_REDUCE)):
        xs, x = every(dtype), mskernel.Tensor(inputs(RANK, dtype))
        for name, reduce in reductions.items():
            expected = reduce(np.stack(xs)).astype(xs[0].dtype)
            close(comm.all_reduce(x, name).numpy(), expected, f"all_reduce {name} {dtype}")
            if dtype != "bool" and name != "mean" or dtype.startswith("float"):
                blocks = np.split(expected, N)
                close(comm.reduce_scatter(x, name).numpy(), blocks[RANK],
                      f"reduce_scatter {name} {dtype}")
        close(comm.all_gather(x).numpy(), np.concatenate(xs), f"all_gather {dtype}")
        close(comm.broadcast(x, N - 1).numpy(), xs[N - 1], f"broadcast {dtype}")
    xs = every(shape=(2, N * 2, 3))
    mine = np.concatenate([np.split(xs[r], N, axis=1)[RANK] for r in range(N)], axis=0)
    close(comm.all_to_all(xs[RANK], split_axis=1, concat_axis=0).numpy(), mine, "all_to_all")
    comm.send(inputs(RANK), (RANK + 1) % N, tag=3)
    close(comm.recv(inputs(RANK), (RANK - 1) % N, tag=3).numpy(), inputs((RANK - 1) % N),
          "send/recv ring")
    comm.barrier()
    before = comm.statistics()
    comm.all_reduce(np.ones(4, np.float32))
    after = comm.statistics()
    assert after["payload_bytes"] - before["payload_bytes"] == 16, (before, after)
    assert after["check_bytes"] - before["check_bytes"] == (16 if N > 1 else 0), (before, after)
    assert after["seconds"] >= before["seconds"]


def graph(x):  # type: ignore[no-untyped-def]
    """Collectives whose results are partly unused, one repeated: none may be dropped, merged
    or reordered by the O3 pipeline."""
    a = comm.all_reduce(x, "max")
    comm.all_reduce(x * 2.0)                 # unused
    b = comm.all_reduce(x * 2.0)             # the same again
    c = comm.reduce_scatter(comm.all_gather(x))
    comm.barrier()
    return a + b, c


def check_jit() -> None:
    group = comm.get_group(None)
    fn = mskernel.jit(graph, opt_level=3)
    xs, x = every(), inputs(RANK)
    before = group.collectives
    a, c = fn(x)
    assert group.collectives - before == 6, f"ran {group.collectives - before} collectives"
    close(a.numpy(), np.max(xs, 0) + 2 * np.sum(xs, 0), "jit all_reduce")
    close(c.numpy(), N * xs[RANK], "jit reduce_scatter(all_gather)")
    text = fn.lower(x).as_text(optimized=True)
    order = [line.split("= ")[1].split("(")[0] for line in text.splitlines()
             if "parallel." in line]
    assert order == ["parallel.all_reduce", "parallel.all_reduce", "parallel.all_reduce",
                     "parallel.all_gather", "parallel.reduce_scatter", "parallel.barrier"], order


def global_dot(a: np.ndarray, b: np.ndarray) -> float:
    """The sum over ranks of <a, b> (the objective's inner product)."""
    local = np.array([np.vdot(a, b).real], np.float64)
    return float(comm.all_reduce(local).numpy()[0])


LINEAR = {
    "all_reduce sum": lambda x: comm.all_reduce(x),
    "all_reduce mean": lambda x: comm.all_reduce(x, "mean"),
    "all_gather": lambda x: comm.all_gather(x),
    "reduce_scatter sum": lambda x: comm.reduce_scatter(x),
    "reduce_scatter mean": lambda x: comm.reduce_scatter(x, "mean"),
    "broadcast": lambda x: comm.broadcast(x, N - 1),
    "all_to_all": lambda x: comm.all_to_all(x, split_axis=0, concat_axis=1),
}
NONLINEAR = {
    "all_reduce max": lambda x: comm.all_reduce(x, "max"),
    "all_reduce min": lambda x: comm.all_reduce(x, "min"),
    "all_reduce prod": lambda x: comm.all_reduce(x, "prod"),
}


def check_derivatives() -> None:
    rng = np.random.default_rng(7 + RANK)
    x = inputs(RANK, "float64")
    for name, fn in {**LINEAR, **NONLINEAR}.items():
        t = rng.normal(size=x.shape)
        y, jt = mskernel.jvp(fn, (mskernel.Tensor(x),), (mskernel.Tensor(t),))
        c = rng.normal(size=y.shape)
        _, pullback = mskernel.vjp(fn, mskernel.Tensor(x))
        (jtc,) = pullback(mskernel.Tensor(c))
        lhs, rhs = global_dot(c, jt.numpy()), global_dot(jtc.numpy(), t)
        assert abs(lhs - rhs) <= 1e-9 * max(1.0, abs(lhs)), \
            f"{name}: <c, Jt> {lhs} != <J'c, t> {rhs}"
        eps = 1e-6
        plus, minus = fn(mskernel.Tensor(x + eps * t)), fn(mskernel.Tensor(x - eps * t))
        numeric = (plus.numpy() - minus.numpy()) / (2 * eps)
        np.testing.assert_allclose(jt.numpy(), numeric, rtol=1e-6, atol=1e-6, err_msg=name)


def check_pipeline() -> None:
    """Two pipeline stages, on ranks 0 and 1 (both on rank 0 alone): the activation goes
    forward by send/recv, its cotangent comes back the same way, and each stage's gradient
    equals the serial program's."""
    first, last = 0, min(1, N - 1)
    rng = np.random.default_rng(11)
    x, w0, w1 = (mskernel.Tensor(rng.normal(size=s)) for s in ((4, 3), (3, 5), (5, 2)))

    def stage0(w):  # type: ignore[no-untyped-def]
        return mskernel.ops.tanh(x @ w)

    def stage1(h, w):  # type: ignore[no-untyped-def]
        return ((h @ w) ** 2).sum()

    _, serial = mskernel.vjp(lambda a, b: stage1(stage0(a), b), w0, w1)
    want0, want1 = (g.numpy() for g in serial(mskernel.Tensor(np.float64(1.0))))
    if RANK == first:
        h, pullback0 = mskernel.vjp(stage0, w0)
        comm.send(h, last, tag=21)
    if RANK == last:
        received = comm.recv(np.zeros((4, 5)), first, tag=21)
        _, pullback1 = mskernel.vjp(stage1, received, w1)
        dh, g1 = pullback1(mskernel.Tensor(np.float64(1.0)))
        comm.send(dh, first, tag=22)
        close(g1.numpy(), want1, "pipeline: the last stage's gradient")
    if RANK == first:
        (g0,) = pullback0(comm.recv(np.zeros((4, 5)), last, tag=22))
        close(g0.numpy(), want0, "pipeline: the first stage's gradient")
    comm.barrier()


def check_groups() -> None:
    evens = list(range(0, N, 2))
    comm.create_group("evens", evens)
    assert comm.get_group_size("evens") == len(evens)
    if RANK in evens:
        x = inputs(RANK)
        close(comm.all_reduce(x, group="evens").numpy(),
              np.sum([inputs(r) for r in evens], 0), "all_reduce on group 'evens'")
        assert comm.get_rank("evens") == evens.index(RANK)
        assert comm.get_world_rank_from_group_rank("evens", 0) == 0
    else:
        try:
            comm.all_reduce(inputs(RANK), group="evens")
        except comm.CommunicationError as exc:
            assert "not a member" in str(exc), exc
        else:
            raise AssertionError("a non-member used group 'evens'")
    comm.destroy_group("evens")
    comm.barrier()


def check_mismatches() -> None:
    shape = (3,) if RANK == 0 else (4,)
    try:
        comm.all_reduce(np.ones(shape, np.float32))
    except CollectiveMismatchError as exc:
        message = str(exc)
        assert "rank 0:" in message and "float32[3]" in message and "float32[4]" in message, message
    else:
        raise AssertionError("a shape mismatch between ranks went unnoticed")
    dtype = np.float64 if RANK == N - 1 else np.float32
    try:
        comm.all_gather(np.ones((2,), dtype))
    except CollectiveMismatchError as exc:
        assert "float64[2]" in str(exc), exc
    else:
        raise AssertionError("a dtype mismatch between ranks went unnoticed")
    if RANK == 0:
        comm.send(np.ones(3, np.float32), 1, tag=9)
    elif RANK == 1:
        try:
            comm.recv(np.ones(4, np.float32), 0, tag=9)
        except CollectiveMismatchError as exc:
            assert "float32[3]" in str(exc), exc
        else:
            raise AssertionError("recv accepted a tensor of another shape")
    comm.barrier()
    close(comm.all_reduce(np.ones(2, np.float32)).numpy(), np.full(2, N, np.float32),
          "all_reduce after the mismatches")


check_values()
check_jit()
check_derivatives()
check_pipeline()
check_groups()
if N > 1:
    check_mismatches()
print(f"rank {RANK} of {N}: every check passed")
