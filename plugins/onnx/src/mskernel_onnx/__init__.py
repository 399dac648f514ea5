"""mskernel-onnx: model export and ONNX for mskernel.

Users reach it through the core's namespaces: ``mskernel.export`` and ``mskernel.load``
(MindSpore's model export: the core's model file or ONNX), and the ``mskernel convert``
command.  Importing this package loads neither ``onnx`` nor any model code.
"""

__version__ = "0.1.0"
