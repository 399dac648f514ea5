"""Optimizers step by step against torch.optim (Lamb and AdamWeightDecay, which torch lacks,
against NumPy transcriptions of their published updates), eagerly and as one compiled step;
parameter groups, weight decay, learning-rate tables and schedules; errors."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

import mskernel
from mskernel import Parameter, Tensor, jit
from mskernel_sdk import assert_close
from mskernel_nn.optim import (
    SGD, Adam, AdamW, AdamWeightDecay, Lamb, Momentum, OptimizerError, RMSProp,
)
from mskernel_nn.schedules import (
    CosineDecayLR, ExponentialDecayLR, PiecewiseConstantLR, PolynomialDecayLR, WarmUpLR,
)

F32 = mskernel.float32
STEPS = 10
SHAPES = ((3, 4), (5,))


@pytest.fixture(params=["eager", "jit"])
def mode(request):
    return request.param


@pytest.fixture
def problem():
    """Initial values and STEPS gradients per parameter."""
    rng = np.random.default_rng(3)
    init = [rng.standard_normal(s).astype(np.float32) for s in SHAPES]
    grads = [[rng.standard_normal(s).astype(np.float32) for s in SHAPES] for _ in range(STEPS)]
    return init, grads


def stepper(optimizer, mode):
    """A function applying one step from a list of gradient arrays."""
    if mode == "eager":
        return lambda grads: optimizer([Tensor(g) for g in grads])
    compiled = jit(lambda g0, g1: optimizer((g0, g1)))
    return lambda grads: compiled(*(Tensor(g) for g in grads))


def run_ours(make, problem, mode, groups=None):
    """Parameter values after each step."""
    init, grads = problem
    params = [Parameter(v.copy(), name=f"p{i}") for i, v in enumerate(init)]
    opt = make(params if groups is None else groups(params))
    step = stepper(opt, mode)
    history = []
    for g in grads:
        step(g)
        history.append([p.numpy() for p in params])
    return history


def run_torch(make, problem, groups=None, schedule=None):
    init, grads = problem
    params = [torch.nn.Parameter(torch.tensor(v)) for v in init]
    opt = make(params if groups is None else groups(params))
    history = []
    for k, g in enumerate(grads):
        if schedule is not None:
            for group in opt.param_groups:
                group["lr"] = schedule(k)
        for p, gk in zip(params, g):
            p.grad = torch.tensor(gk)
        opt.step()
        history.append([p.detach().numpy().copy() for p in params])
    return history


def assert_histories(ours, expected):
    for step, (a, b) in enumerate(zip(ours, expected)):
        for i, (x, y) in enumerate(zip(a, b)):
            assert_close(x, y, F32, rtol=2e-5, atol=2e-6, what=f"step {step + 1}, param {i}")


TORCH_CASES = {
    "sgd": (lambda p: SGD(p, 0.1),
            lambda p: torch.optim.SGD(p, lr=0.1)),
    "sgd-momentum-dampening-decay": (
        lambda p: SGD(p, 0.05, momentum=0.9, dampening=0.2, weight_decay=0.01),
        lambda p: torch.optim.SGD(p, lr=0.05, momentum=0.9, dampening=0.2, weight_decay=0.01)),
    "sgd-nesterov": (
        lambda p: SGD(p, 0.05, momentum=0.8, nesterov=True, weight_decay=0.02),
        lambda p: torch.optim.SGD(p, lr=0.05, momentum=0.8, nesterov=True, weight_decay=0.02)),
    "momentum": (lambda p: Momentum(p, 0.05, 0.9, weight_decay=1e-3),
                 lambda p: torch.optim.SGD(p, lr=0.05, momentum=0.9, weight_decay=1e-3)),
    "momentum-nesterov": (
        lambda p: Momentum(p, 0.05, 0.9, use_nesterov=True),
        lambda p: torch.optim.SGD(p, lr=0.05, momentum=0.9, nesterov=True)),
    "adam": (lambda p: Adam(p, 0.01, weight_decay=0.05),
             lambda p: torch.optim.Adam(p, lr=0.01, weight_decay=0.05)),
    "adam-amsgrad": (lambda p: Adam(p, 0.01, beta1=0.8, beta2=0.99, eps=1e-6, use_amsgrad=True),
                     lambda p: torch.optim.Adam(p, lr=0.01, betas=(0.8, 0.99), eps=1e-6,
                                                amsgrad=True)),
    "adamw": (lambda p: AdamW(p, 0.01, weight_decay=0.1),
              lambda p: torch.optim.AdamW(p, lr=0.01, weight_decay=0.1)),
    "rmsprop": (lambda p: RMSProp(p, 0.01, decay=0.95, epsilon=1e-8),
                lambda p: torch.optim.RMSprop(p, lr=0.01, alpha=0.95, eps=1e-8)),
    "rmsprop-centered-momentum-decay": (
        lambda p: RMSProp(p, 0.01, decay=0.9, momentum=0.7, epsilon=1e-6, centered=True,
                          weight_decay=0.01),
        lambda p: torch.optim.RMSprop(p, lr=0.01, alpha=0.9, momentum=0.7, eps=1e-6,
                                      centered=True, weight_decay=0.01)),
}


@pytest.mark.parametrize("case", sorted(TORCH_CASES))
def test_matches_torch_step_by_step(case, problem, mode):
    ours, theirs = TORCH_CASES[case]
    assert_histories(run_ours(ours, problem, mode), run_torch(theirs, problem))


def test_parameter_groups_match_torch(problem, mode):
    def ours(params):
        return Momentum([{"params": [params[0]], "weight_decay": 0.05},
                         {"params": [params[1]], "lr": 0.2}], learning_rate=0.1, momentum=0.9)

    def theirs(params):
        return torch.optim.SGD([{"params": [params[0]], "weight_decay": 0.05},
                                {"params": [params[1]], "lr": 0.2}], lr=0.1, momentum=0.9)

    assert_histories(run_ours(ours, problem, mode), run_torch(theirs, problem))


def numpy_adam_family(problem, lr, beta1, beta2, eps, weight_decay, bias_correction,
                      trust_ratio):
    """The published updates: AdamWeightDecay (MindSpore: AdamW without bias correction) and
    LAMB (You et al., 2020, with MindSpore's trust ratio of 1 for zero norms)."""
    init, grads = problem
    params = [v.astype(np.float64) for v in init]
    m = [np.zeros_like(p) for p in params]
    v = [np.zeros_like(p) for p in params]
    history = []
    for t, g in enumerate(grads, start=1):
        for i, gi in enumerate(g):
            m[i] = beta1 * m[i] + (1 - beta1) * gi
            v[i] = beta2 * v[i] + (1 - beta2) * gi * gi
            mh, vh = m[i], v[i]
            if bias_correction:
                mh, vh = mh / (1 - beta1 ** t), vh / (1 - beta2 ** t)
            r = mh / (np.sqrt(vh) + eps) + weight_decay * params[i]
            ratio = 1.0
            if trust_ratio:
                wn, rn = np.linalg.norm(params[i]), np.linalg.norm(r)
                ratio = wn / rn if wn > 0 and rn > 0 else 1.0
            params[i] = params[i] - lr * ratio * r
        history.append([p.copy() for p in params])
    return history


def test_adam_weight_decay_follows_mindspore(problem, mode):
    ours = run_ours(lambda p: AdamWeightDecay(p, 0.01, eps=1e-6, weight_decay=0.1), problem, mode)
    assert_histories(ours, numpy_adam_family(problem, 0.01, 0.9, 0.999, 1e-6, 0.1,
                                             bias_correction=False, trust_ratio=False))


def test_lamb_follows_the_paper(problem, mode):
    ours = run_ours(lambda p: Lamb(p, 0.01, weight_decay=0.01), problem, mode)
    assert_histories(ours, numpy_adam_family(problem, 0.01, 0.9, 0.999, 1e-6, 0.01,
                                             bias_correction=True, trust_ratio=True))


def test_lamb_trust_ratio_is_one_for_a_zero_weight():
    w = Parameter(np.zeros(3, np.float32), name="w")
    opt = Lamb([w], 0.1)
    opt([Tensor(np.array([1.0, -2.0, 0.5], np.float32))])
    # Adam's first direction is sign(g) (up to eps); the trust ratio of a zero weight is 1
    assert_close(w.numpy(), -0.1 * np.sign([1.0, -2.0, 0.5]), F32, rtol=1e-5)


# -- learning rates ---------------------------------------------------------------------------


SCHEDULES = {
    "exponential": (ExponentialDecayLR(0.1, 0.5, 3),
                    lambda s: 0.1 * 0.5 ** (s / 3)),
    "step": (ExponentialDecayLR(0.1, 0.5, 3, is_stair=True),
             lambda s: 0.1 * 0.5 ** (s // 3)),
    "piecewise": (PiecewiseConstantLR([2, 5], [0.3, 0.2, 0.1]),
                  lambda s: 0.3 if s < 2 else 0.2 if s < 5 else 0.1),
    "cosine": (CosineDecayLR(0.01, 0.1, 6),
               lambda s: 0.01 + 0.045 * (1 + math.cos(math.pi * min(s, 6) / 6))),
    "polynomial": (PolynomialDecayLR(0.1, 0.01, 5, power=2.0),
                   lambda s: 0.09 * (1 - min(s, 5) / 5) ** 2 + 0.01),
    "polynomial-restarting": (
        PolynomialDecayLR(0.1, 0.01, 4, power=1.0, update_decay_steps=True),
        lambda s: 0.09 * (1 - s / (4 * max(math.ceil(s / 4), 1))) + 0.01),
    "warmup": (WarmUpLR(0.1, 4), lambda s: 0.1 * min(s, 4) / 4),
}


@pytest.mark.parametrize("name", sorted(SCHEDULES))
def test_schedules_follow_their_formulas_eagerly_and_compiled(name):
    schedule, formula = SCHEDULES[name]
    compiled = jit(lambda step: schedule(step))
    for step in range(STEPS):
        expected = formula(step)
        for run in (schedule, compiled):
            value = run(Tensor(np.int32(step)))
            assert value.dtype is F32 and value.shape == ()
            assert_close(value.numpy(), expected, F32, rtol=1e-6, atol=1e-8,
                         what=f"{name} at step {step}")


def test_optimizer_uses_the_schedule_at_each_step(problem, mode):
    schedule, formula = SCHEDULES["cosine"]
    ours = run_ours(lambda p: Adam(p, learning_rate=schedule), problem, mode)
    expected = run_torch(lambda p: torch.optim.Adam(p, lr=formula(0)), problem,
                         schedule=formula)
    assert_histories(ours, expected)


def test_a_list_of_rates_gives_one_per_step_then_keeps_the_last(problem, mode):
    rates = [0.3, 0.2, 0.1]
    ours = run_ours(lambda p: SGD(p, learning_rate=rates, momentum=0.5), problem, mode)
    expected = run_torch(lambda p: torch.optim.SGD(p, lr=0.3, momentum=0.5), problem,
                         schedule=lambda k: rates[min(k, 2)])
    assert_histories(ours, expected)


def test_changing_the_rate_parameter_needs_no_recompilation(problem):
    init, grads = problem
    params = [Parameter(v.copy(), name=f"p{i}") for i, v in enumerate(init)]
    opt = SGD(params, 0.1)
    compiled = jit(lambda g0, g1: opt((g0, g1)))
    compiled(*(Tensor(g) for g in grads[0]))
    opt.learning_rate.assign_value(0.0)
    before = [p.numpy() for p in params]
    compiled(*(Tensor(g) for g in grads[1]))
    for p, b in zip(params, before):
        assert_close(p.numpy(), b, F32)
    assert compiled.cache_info().misses == 1
    assert_close(opt.get_lr().numpy(), 0.0, F32)
    assert int(opt.global_step.numpy()) == 2


# -- state and errors -------------------------------------------------------------------------


def test_state_is_named_after_the_weights_and_not_trainable():
    w = Parameter(np.ones((2, 2), np.float32), name="fc.weight")
    b = Parameter(np.zeros(2, np.float32), name="fc.bias")
    opt = Adam([w, b], use_amsgrad=True)
    names = [p.name for p in opt.get_parameters()]
    assert names == ["learning_rate", "global_step", "moment1.fc.weight", "moment1.fc.bias",
                     "moment2.fc.weight", "moment2.fc.bias", "vhat.fc.weight", "vhat.fc.bias"]
    assert opt.trainable_params() == []
    assert [g["weight_decay"] for g in opt.param_groups] == [0.0]


def test_bad_arguments_say_what_is_wrong():
    w = Parameter(np.ones(3, np.float32), name="w")
    with pytest.raises(OptimizerError, match="got no parameters"):
        SGD([], 0.1)
    with pytest.raises(OptimizerError, match="parameter w is given twice"):
        SGD([w, w], 0.1)
    with pytest.raises(OptimizerError, match="only floating-point parameters"):
        SGD([Parameter(np.ones(2, np.int32), name="count")], 0.1)
    with pytest.raises(OptimizerError, match="entry 0 is a Tensor, not a Parameter"):
        SGD([Tensor(np.ones(2, np.float32))], 0.1)
    with pytest.raises(OptimizerError, match=r"group 0 must have 'params'.*\['momentum', "):
        SGD([{"params": [w], "momentum": 0.9}], 0.1)
    with pytest.raises(OptimizerError, match="learning rates must be finite and >= 0"):
        SGD([w], -0.1)
    with pytest.raises(OptimizerError, match="nesterov needs momentum > 0"):
        SGD([w], 0.1, nesterov=True)
    with pytest.raises(OptimizerError, match=r"beta2 must lie in \[0, 1\)"):
        Adam([w], beta2=1.0)
    with pytest.raises(OptimizerError, match="weight_decay must be a number >= 0"):
        Adam([w], weight_decay=-1)
    opt = SGD([w], 0.1)
    with pytest.raises(OptimizerError, match="updates 1 parameters but got 2 gradients"):
        opt([Tensor(np.ones(3, np.float32))] * 2)
    with pytest.raises(OptimizerError, match=r"gradient of w has shape \[2\], the parameter \[3\]"):
        opt([Tensor(np.ones(2, np.float32))])
