"""The anchor workloads of ``benchmarks/run.py``, once per framework.

- :mod:`.spec` — shapes, the shared batch, the optimizer settings and FLOP counts (no
  framework imported);
- :mod:`.torch_models`, :mod:`.mskernel_models` — the same models, written the way a user of
  each framework writes them, and one step (training or inference) of each;
- :mod:`.measure` — one measurement in its own process: a timed step, the check of an
  mskernel workload against PyTorch, or the machine's SGEMM rate.
"""
