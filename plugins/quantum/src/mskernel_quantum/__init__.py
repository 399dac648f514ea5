"""mskernel-quantum: quantum circuits with gradients for mskernel.

Users import the public names from ``mskernel.quantum`` (this plugin's namespace, the module
:mod:`mskernel_quantum.api`).
"""

import os

# The native kernels' idle OpenMP threads sleep instead of spinning: spinning threads on shared
# or oversubscribed CPUs stall every parallel region.  Set here, before anything can load
# mskernel_quantum._native (and with it the OpenMP runtime, which reads it once), unless the
# user chose a policy.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

__version__ = "0.1.0"
