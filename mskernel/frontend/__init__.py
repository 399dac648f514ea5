"""The user-facing frontend: ``Tensor``, eager (PyNative) execution, tracing and ``@jit``
graph mode, functional control flow and devices.  ``mskernel.Tensor``, ``mskernel.jit``,
``mskernel.set_device`` … are these names, re-exported lazily by the top-level package.

Layers, each importing only those before it: :mod:`.device`;
:mod:`.trace_context` (which trace records ops now); :mod:`.tensor` (the data) and
:mod:`.parameter`; :mod:`.pytree` and :mod:`.trace`; :mod:`.dispatch` (applying an op) and
:mod:`.promote`; :mod:`.indexing`; :mod:`.functional` (the ops users call, which install the
tensor's operators and methods); :mod:`.control` and :mod:`.random`; :mod:`.autograph`;
:mod:`.jit`.  Importing any of them imports :mod:`.functional` first, so a tensor always has
its operators.
"""

from . import functional as functional
