"""The main job — LeNet-5 on Fashion-MNIST (``examples/lenet_fashion_mnist.py``) — data
parallel on N ranks::

    mskernel run -n 4 examples/parallel/data_parallel_lenet.py [the main job's options]

Each rank trains a replica of the network on its shard of the data: the datasets shard
themselves (shard ``rank`` of N), every batch of ``--batch-size`` rows is split between the
ranks, and the gradients are averaged over the ranks inside each compiled step
(``set_auto_parallel_context(parallel_mode="data_parallel", gradients_mean=True)``), so the
ranks take the main job's steps on the main job's batches and reach its accuracy.  The
evaluation's counts are summed over the ranks; rank 0 prints and saves.  ``--json FILE``
writes the result.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import sys
from pathlib import Path
from typing import Optional, Sequence

from mskernel import communication
from mskernel.parallel import ParallelMode, set_auto_parallel_context

MAIN_JOB = Path(__file__).resolve().parents[1] / "lenet_fashion_mnist.py"


def main_job():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location("lenet_fashion_mnist", MAIN_JOB)
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


def main(argv: Optional[Sequence[str]] = None) -> dict[str, float]:
    argv = list(sys.argv[1:] if argv is None else argv)
    extra = argparse.ArgumentParser(add_help=False)
    extra.add_argument("--json", type=Path, default=None)
    options, rest = extra.parse_known_args(argv)
    job = main_job()
    args = job.parse_args(rest)
    communication.init()
    rank, size = communication.get_rank(), communication.get_group_size()
    if args.batch_size % size or 1000 % size:
        raise SystemExit(f"--batch-size {args.batch_size} and the test batch of 1000 must "
                         f"divide among {size} ranks")
    set_auto_parallel_context(parallel_mode=ParallelMode.DATA_PARALLEL, gradients_mean=True)
    result = job.run(args, ranks=size, report=rank == 0)
    if rank == 0 and options.json is not None:
        options.json.write_text(json.dumps({**result, "ranks": size}))
    return result


if __name__ == "__main__":
    main()
