"""mskernel-science: scientific computing for mskernel.

Users import the public names from ``mskernel.science`` (this plugin's namespace, the module
:mod:`mskernel_science.api`): geometries and samplers, PDE residuals and boundary conditions
for physics-informed networks (:mod:`.pinn`), reference solutions (:mod:`.problems`).
"""

__version__ = "0.1.0"
