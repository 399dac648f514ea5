"""mskernel-parallel: distributed training for mskernel on MPI.

User namespaces: ``mskernel.communication`` (process groups and collectives) and
``mskernel.parallel`` (the parallel context, data parallelism, the parameter server).  The
``mskernel run`` command launches a script on several processes.  Importing this package
loads neither MPI nor any other module of it.
"""

__version__ = "0.1.0"
