"""A training run on MPI ranks, for test_rl_mpi.py: ``mpirun -n 3 python rl_mpi_run.py MODE
MARKER`` — rank 0 learns, ranks 1 and 2 run the actors; with MODE ``raise`` or ``kill`` an
actor fails once (see rl_test_envs.py) and is replaced by a process started beside the
learner, which imports this file again: the run is under ``__main__``, as multiprocessing
requires.  Every rank prints its result as one JSON line, with whether it will call
``MPI_Finalize`` at exit."""

import json
import sys

import rl_test_envs  # noqa: F401  (registers FailingCartPole-v0)


def main() -> None:
    import mpi4py
    from mpi4py import MPI

    from mskernel_reinforcement.trainer import Trainer

    mode, marker = sys.argv[1], sys.argv[2]
    config = {
        "env": {"id": "FailingCartPole-v0", "num_envs": 2,
                "kwargs": {"mode": mode, "marker": marker, "at_step": 12}},
        "algorithm": {"name": "ppo", "n_steps": 8, "batch_size": 16, "n_epochs": 1,
                      "hidden_sizes": [8]},
        "evaluation": {"episodes": 2, "num_envs": 2},
        "execution": {"actors": 3, "processes": 2, "launcher": "mpi", "actor_timeout": 60,
                      "startup_timeout": 120},
        "total_steps": 144, "seed": 0,
    }
    result = Trainer(config).train()
    print(json.dumps({"rank": MPI.COMM_WORLD.Get_rank(), "env_steps": result.env_steps,
                      "updates": result.updates, "finalize": mpi4py.rc.finalize is not False,
                      "failures": [[f.worker, f.reason, f.replaced] for f in result.failures]}),
          flush=True)


if __name__ == "__main__":
    main()
