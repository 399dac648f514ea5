"""mskernel-nn: layers and training for mskernel, in MindSpore's style.

Users reach it through the core's namespaces: ``mskernel.nn`` (:class:`~mskernel_nn.cell.Cell`,
the layers, initialisers, losses, optimizers and training wrappers — :mod:`mskernel_nn.api`),
``mskernel.train`` (``Model``, callbacks, metrics) and the checkpoint functions
``mskernel.save_checkpoint``, ``mskernel.load_checkpoint`` and ``mskernel.load_param_into_net``.
"""

__version__ = "0.1.0"
