"""mskernel-federated: federated learning for mskernel models on Flower.

Horizontal FL trains one mskernel ``Cell`` over many clients' local data with Flower's
deployment runtime (a SuperLink, one SuperNode per client), Flower's strategies (FedAvg,
FedProx, FedAdam), its SecAgg+ workflow and its differential-privacy wrappers; this package
adds the bridge to mskernel models and datasets, update validation, top-k compression with
error feedback, a privacy accountant and the ``mskernel federated`` commands.  Vertical FL
(:mod:`mskernel_federated.vertical`) aligns two parties' samples by private set intersection
and trains a split network.  Users reach it as ``mskernel.federated``.
"""

__version__ = "0.1.0"

from .task import Task  # noqa: E402  (the one name a task module needs; cheap to import)

__all__ = ["Task", "__version__"]
