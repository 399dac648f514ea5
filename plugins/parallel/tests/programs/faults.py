"""Ten data-parallel-like steps of all-reduces; at step 3 rank ``argv[1]`` fails as
``argv[2]`` says: ``kill`` (SIGKILL itself), ``raise`` (an exception) or ``hang`` (rank 0
raises while the others sleep outside any collective, so only the launcher's grace period
ends them)."""

import os
import signal
import sys
import time

import numpy as np

from mskernel import communication as comm

victim, how = int(sys.argv[1]), sys.argv[2]
comm.init()
rank = comm.get_rank()
x = np.ones(1 << 16, np.float32)
for step in range(10):
    comm.all_reduce(x)
    if step == 3:
        if how == "hang" and rank != victim:
            time.sleep(600)
        if rank == victim:
            if how == "kill":
                os.kill(os.getpid(), signal.SIGKILL)
            raise ValueError("step 3 failed on purpose")
    print(f"step {step} done", flush=True)
