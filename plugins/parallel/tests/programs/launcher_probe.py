"""Prints what a rank sees (arguments, rank, threads), then behaves as ``argv[1]`` says:
``ok``, ``exit3`` (rank 1 calls ``sys.exit(3)``), ``wait`` (sleeps in a barrier loop until
signalled)."""

import os
import sys
import time

from mskernel import communication as comm

comm.init()
rank = comm.get_rank()
print(f"args={sys.argv[1:]} rank={rank} size={comm.get_group_size()} "
      f"local={comm.get_local_rank()}/{comm.get_local_rank_size()} "
      f"threads={os.environ.get('MSKERNEL_NUM_THREADS')}")
print(f"to stderr from {rank}", file=sys.stderr)
if sys.argv[1] == "exit3" and rank == 1:
    sys.exit(3)
if sys.argv[1] == "wait":
    print("waiting", flush=True)
    while True:
        comm.barrier()
        time.sleep(0.2)
comm.barrier()
