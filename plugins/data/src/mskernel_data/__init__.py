"""mskernel-data: input pipelines for mskernel.

Users import the public names from ``mskernel.dataset`` (this plugin's namespace, the module
:mod:`mskernel_data.api`), with transforms under ``mskernel.dataset.vision`` and
``mskernel.dataset.transforms``, and settings under ``mskernel.dataset.config``.
"""

__version__ = "0.1.0"
