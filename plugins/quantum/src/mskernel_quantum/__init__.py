"""mskernel-quantum: quantum circuits with gradients for mskernel.

Users import the public names from ``mskernel.quantum`` (this plugin's namespace, the module
:mod:`mskernel_quantum.api`).
"""

__version__ = "0.1.0"
