"""mskernel-linalg: matrix factorizations as ops of their own, with derivatives.

Users reach them as members of ``mskernel.ops``: ``ops.inverse``, ``ops.solve``, ``ops.det``,
``ops.slogdet``, ``ops.cholesky``, ``ops.eigh`` and ``ops.lstsq`` (:mod:`mskernel_linalg.api`).
Importing this package loads no op code.
"""

__version__ = "0.1.0"
