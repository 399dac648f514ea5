"""``mskernel run``: the mpirun command line it builds, per-rank prefixes on stdout and
stderr, script arguments after ``--``, exit codes, signal forwarding — and a plain ``mpirun``
running the same programs."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

from conftest import PROGRAMS, TIMEOUT, _environment, launch, ok

from mskernel_parallel import launcher


def test_command_line_for_one_host():
    command = launcher.mpirun_command(4, ["python", "x.py"])
    assert command[0].endswith("mpirun") and command[1:3] == ["-n", "4"]
    assert "--oversubscribe" in command
    assert command[command.index("btl_tcp_if_include") + 1] == "lo"
    assert command[command.index("--with-ft") + 1] == "ulfm"
    assert ("--allow-run-as-root" in command) == (os.geteuid() == 0)
    assert command[-2:] == ["python", "x.py"]
    several = launcher.mpirun_command(2, ["p"], hosts="a,b", fault_tolerant=False)
    assert "btl_tcp_if_include" not in several and "--with-ft" not in several
    assert several[several.index("--host") + 1] == "a,b"


def test_output_prefixes_arguments_and_environment():
    output = ok(launch(2, "launcher_probe.py", "ok", "--flag", "value"))
    for rank in (0, 1):
        assert (f"[rank {rank}] args=['ok', '--flag', 'value'] rank={rank} size=2"
                in output), output
        assert f"[rank {rank}] to stderr from {rank}" in output
    assert "threads=1" in output  # from the test's environment, kept by the launcher


def test_double_dash_and_default_threads():
    env = _environment()
    env.pop("MSKERNEL_NUM_THREADS")
    result = subprocess.run([sys.executable, "-m", "mskernel.cli", "run", "-n", "2", "--",
                             str(PROGRAMS / "launcher_probe.py"), "ok"], capture_output=True,
                            text=True, timeout=TIMEOUT, env=env)
    output = ok(result)
    assert f"threads={max(1, (os.cpu_count() or 1) // 2)}" in output


def test_a_rank_exiting_non_zero_fails_the_job():
    result = launch(2, "launcher_probe.py", "exit3")
    assert result.returncode != 0
    assert "rank 1: exit 3" in result.stderr


def test_sigint_reaches_the_ranks():
    command = [sys.executable, "-m", "mskernel.cli", "run", "-n", "2",
               str(PROGRAMS / "launcher_probe.py"), "wait"]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               text=True, env=_environment())
    try:
        seen = 0
        deadline = time.monotonic() + TIMEOUT
        while seen < 2 and time.monotonic() < deadline:
            line = process.stdout.readline()
            seen += "waiting" in line
        process.send_signal(signal.SIGINT)
        process.wait(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode != 0


def test_plain_mpirun_works_the_same():
    command = [launcher.mpirun_path(), "-n", "2", "--oversubscribe", "--mca",
               "btl_tcp_if_include", "lo"]
    if os.geteuid() == 0:
        command.append("--allow-run-as-root")
    result = subprocess.run([*command, sys.executable, str(PROGRAMS / "collectives.py")],
                            capture_output=True, text=True, timeout=TIMEOUT, env=_environment())
    output = ok(result)
    assert output.count("every check passed") == 2
