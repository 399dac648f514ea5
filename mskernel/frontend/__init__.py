"""The user-facing frontend: ``Tensor``, eager (PyNative) execution, tracing and ``@jit``
graph mode, functional control flow and devices.  ``mskernel.Tensor``, ``mskernel.jit``,
``mskernel.set_device`` … are these names, re-exported lazily by the top-level package."""
