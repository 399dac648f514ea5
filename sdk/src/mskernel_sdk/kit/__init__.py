"""The backend conformance kit: ``pytest --mskernel-backend NAME``.

It checks a backend, in four stages, against the ops' reference semantics:

- ``interface`` — transfers keep values, shapes and storage dtypes, and every claimed op
  is defined;
- ``op`` — every op the backend claims, and every composite it runs as its decomposition, on
  the op's samples (those its owner attached under ``SAMPLES_RULE``, the core's included)
  re-drawn with the run's seed, and on random broadcast shapes for elementwise ops;
- ``grad`` — gradients of every claimed op with a ``"vjp"`` rule, through the installed
  autodiff plugin (its ``mskernel.vjp``, or the builder a pytest plugin gives through
  ``pytest_mskernel_vjp_builder``), against finite differences (not run when no autodiff
  plugin is installed);
- ``graph`` — end-to-end graphs (an MLP, a CNN, control flow with state) compiled with the
  backend preferred and fallback allowed.

:mod:`.session` turns these checks into pytest items and writes the JSON report; the pytest
entry point is the top-level module :mod:`mskernel_sdk_pytest`.
"""
