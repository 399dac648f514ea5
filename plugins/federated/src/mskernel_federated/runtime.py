"""Flower's deployment runtime on this machine: a SuperLink, SuperNodes, and ``flwr run``.

:class:`Federation` starts the processes a real deployment runs — ``flower-superlink``
(``--insecure``, loopback), one ``flower-supernode`` per client, each with its partition in
its node configuration — and submits a run with ``flwr run``, as a Flower App written for
the run: the components from ``config.runtime``, the configuration as the run-config key
``mskernel-config``, and the task's and components' modules when they are single files.  Every process starts
in a session of its own, so closing the federation (or leaving its ``with`` block) ends
each one with all its children (Flower's SuperExec and app processes).

Flower looks its helper processes up on ``PATH`` (``flwr-serverapp``, ``flwr-clientapp``,
``flower-superexec``); the federation puts first on ``PATH`` a folder of launchers running
Flower's console entry points with this interpreter, so the apps import the same mskernel.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import json
import os
import random
import shutil
import signal
import socket
import stat
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Optional

import tomli_w

from .apps import CONFIG_KEY
from .config import FederatedConfig

CONNECTION = "mskernel-loopback"


class FederationError(RuntimeError):
    """A process of the federation failed, or a run did not finish in time."""


def free_port() -> int:
    """A free loopback port below the kernel's ephemeral range: a port the kernel hands out
    (``bind`` to port 0) can be taken by another process's outgoing connection before the
    Flower process it was chosen for binds it."""
    try:
        low = int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        low = 32768
    ports = list(range(max(1024, low - 16384), low))
    random.SystemRandom().shuffle(ports)
    for port in ports[:200]:
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _write_launchers(folder: Path) -> None:
    """One executable per Flower console entry point, run by this interpreter."""
    folder.mkdir(parents=True, exist_ok=True)
    for ep in importlib.metadata.distribution("flwr").entry_points:
        if ep.group != "console_scripts":
            continue
        module, _, attr = ep.value.partition(":")
        path = folder / ep.name
        path.write_text(f"#!{sys.executable}\nimport sys\nfrom {module} import {attr}\n"
                        f"sys.exit({attr}())\n")
        path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)


def _module_file(target: str) -> Optional[Path]:
    """The file of the module of ``"module:attribute"`` when it is a single top-level
    module outside site-packages (it then travels in the Flower App)."""
    module = target.partition(":")[0]
    if "." in module:
        return None
    spec = importlib.util.find_spec(module)
    if spec is None or spec.origin is None or spec.submodule_search_locations is not None:
        return None
    origin = Path(spec.origin)
    return origin if origin.suffix == ".py" and "site-packages" not in origin.parts else None


def write_app(folder: Path, config: FederatedConfig) -> Path:
    """The Flower App of a run: ``pyproject.toml``, and the modules of the task and the
    components when they are single files."""
    folder.mkdir(parents=True, exist_ok=True)
    project = {
        "build-system": {"requires": ["hatchling"], "build-backend": "hatchling.build"},
        "project": {"name": "mskernel-run", "version": "1.0.0", "dependencies": [],
                    "description": "an mskernel federated run", "license": "Apache-2.0"},
        "tool": {
            "hatch": {"build": {"targets": {"wheel": {"packages": ["."]}}}},
            "flwr": {"app": {
                "publisher": "mskernel",
                "components": {"serverapp": config.runtime.server_app,
                               "clientapp": config.runtime.client_app},
                "config": {CONFIG_KEY: config.to_json()},
            }},
        },
    }
    (folder / "pyproject.toml").write_text(tomli_w.dumps(project))
    for target in (config.task, config.runtime.server_app, config.runtime.client_app):
        source = _module_file(target)
        if source is not None:
            shutil.copy(source, folder / source.name)
    return folder


class Federation:
    """A SuperLink and SuperNodes on the loopback interface (a context manager)."""

    def __init__(self, workdir: Optional[str | Path] = None, port: Optional[int] = None,
                 host: str = "127.0.0.1") -> None:
        self._own_workdir = workdir is None
        self.workdir = Path(workdir or tempfile.mkdtemp(prefix="mskernel-federated-"))
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.port = port or free_port()
        self.host = host
        self.home = self.workdir / "flwr-home"
        self.home.mkdir(exist_ok=True)
        bin_dir = self.bin_dir = self.workdir / "bin"
        _write_launchers(bin_dir)
        self.env = {**os.environ, "FLWR_HOME": str(self.home),
                    "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}",
                    "FLWR_TELEMETRY_ENABLED": "0", "FLWR_DISABLE_UPDATE_CHECK": "1",
                    "FLWR_DISABLE_RUNTIME_DEPENDENCY_INSTALLATION": "1",
                    "PYTHONUNBUFFERED": "1"}
        (self.home / "config.toml").write_text(tomli_w.dumps(
            {"superlink": {"default": CONNECTION,
                           CONNECTION: {"address": f"{host}:{self.port}",
                                        "insecure": True}}}))
        self.superlink: Optional[subprocess.Popen[bytes]] = None
        self.clients: dict[int, subprocess.Popen[bytes]] = {}

    # -- processes ----------------------------------------------------------------------------

    def _spawn(self, args: list[str], log_name: str) -> subprocess.Popen[bytes]:
        log = open(self.workdir / log_name, "ab")
        try:
            return subprocess.Popen(args, env=self.env, stdout=log, stderr=subprocess.STDOUT,
                                    stdin=subprocess.DEVNULL, start_new_session=True,
                                    cwd=self.workdir)
        finally:
            log.close()

    def start_server(self) -> None:
        """Start the SuperLink (``--insecure``, on 127.0.0.1) and wait until it listens."""
        self.superlink = self._spawn(
            ["flower-superlink", "--insecure", "--host", "127.0.0.1", "--port", str(self.port),
             "--disable-runtime-dependency-installation"], "superlink.log")
        self._wait_listening(self.superlink, "superlink.log")

    def _wait_listening(self, process: subprocess.Popen[bytes], log_name: str,
                        timeout: float = 60.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if process.poll() is not None:
                raise FederationError(f"flower-superlink exited with code {process.returncode}:"
                                      f"\n{self.log(log_name)[-2000:]}")
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=1):
                    return
            except OSError:
                time.sleep(0.2)
        raise FederationError(f"flower-superlink did not listen on port {self.port} within "
                              f"{timeout:.0f} s")

    def start_client(self, partition_id: int, num_partitions: int,
                     **node_config: int | float) -> subprocess.Popen[bytes]:
        """Start the SuperNode of partition ``partition_id`` of ``num_partitions``;
        ``node_config`` adds numeric entries to its node configuration."""
        entries = {"partition-id": partition_id, "num-partitions": num_partitions,
                   **{k.replace("_", "-"): v for k, v in node_config.items()}}
        process = self._spawn(
            ["flower-supernode", "--insecure", "--superlink", f"{self.host}:{self.port}",
             "--host", "127.0.0.1", "--port", str(free_port()), "--node-config",
             " ".join(f"{k}={v}" for k, v in entries.items())],
            f"client-{partition_id}.log")
        self.clients[partition_id] = process
        return process

    def kill_client(self, partition_id: int) -> None:
        """End a SuperNode and its children at once (SIGKILL): a client that vanished."""
        _signal(self.clients[partition_id], signal.SIGKILL)

    def log(self, name: str) -> str:
        path = self.workdir / name
        return path.read_text(errors="replace") if path.exists() else ""

    # -- runs ---------------------------------------------------------------------------------

    def run(self, config: FederatedConfig, timeout: float = 600.0) -> dict[str, Any]:
        """Submit ``config`` as a run, stream the server's log to ``server.log`` until the
        run ends, and return the history the server wrote."""
        output = Path(config.server.output_dir or self.workdir / "output")
        if config.server.output_dir is None:
            config = config.model_copy(update={"server": config.server.model_copy(
                update={"output_dir": str(output)})})
        app = write_app(self.workdir / "app", config)
        runner = self._spawn(["flwr", "run", str(app), CONNECTION, "--stream"], "server.log")
        try:
            code = runner.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            _end([runner], grace=0)
            raise FederationError(f"the run did not finish within {timeout:.0f} s; the "
                                  f"server's log:\n{self.log('server.log')[-3000:]}") from None
        history_file = output / "history.json"
        if code != 0 or not history_file.exists():
            raise FederationError(f"the run failed (flwr run exited with {code}); the "
                                  f"server's log:\n{self.log('server.log')[-3000:]}")
        history: dict[str, Any] = json.loads(history_file.read_text())
        return history

    def close(self) -> None:
        _end([*self.clients.values(), *([self.superlink] if self.superlink else [])])
        _kill_launched_from(self.bin_dir)
        self.clients.clear()
        self.superlink = None
        if self._own_workdir:
            shutil.rmtree(self.workdir, ignore_errors=True)

    def __enter__(self) -> "Federation":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _signal(process: subprocess.Popen[bytes], sig: signal.Signals) -> None:
    """Signal the process's session: it and every child it started."""
    try:
        os.killpg(process.pid, sig)
    except ProcessLookupError:
        pass


def _kill_launched_from(bin_dir: Path) -> None:
    """SIGKILL what still runs one of this federation's launchers: an app process Flower
    started in a session of its own outlives its parent's (Linux: read from /proc)."""
    marker = str(bin_dir).encode() + b"/"
    for entry in Path("/proc").glob("[0-9]*"):
        try:
            if marker in (entry / "cmdline").read_bytes():
                os.kill(int(entry.name), signal.SIGKILL)
        except (OSError, ValueError):
            continue


def _end(processes: list[subprocess.Popen[bytes]], grace: float = 5.0) -> None:
    """SIGTERM every process's session, wait up to ``grace`` seconds in all, then SIGKILL
    what remains (children whose leader exited included)."""
    for process in processes:
        _signal(process, signal.SIGTERM)
    deadline = time.monotonic() + grace
    for process in processes:
        try:
            process.wait(timeout=max(deadline - time.monotonic(), 0.01))
        except subprocess.TimeoutExpired:
            pass
        _signal(process, signal.SIGKILL)
        process.wait()


def simulate(config: FederatedConfig, clients: int, workdir: Optional[str | Path] = None,
             timeout: float = 3600.0) -> dict[str, Any]:
    """Run ``config`` on this machine with ``clients`` SuperNodes; returns the history."""
    with Federation(workdir) as federation:
        federation.start_server()
        for i in range(clients):
            federation.start_client(i, clients)
        return federation.run(config, timeout=timeout)
