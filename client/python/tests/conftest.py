"""A real fleet for the tests: a coordinator (tokens required) and a CPU
worker, started from the build tree on 127.0.0.1 with free ports.

The programs come from TUNEFLEET_COORDINATOR_BIN, TUNEFLEET_WORKER_BIN and
TUNEFLEET_CLI, which ctest sets (tests/CMakeLists.txt).
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

import pytest

REPO = Path(__file__).resolve().parents[3]


def program(env: str) -> str:
    path = os.environ.get(env)
    if not path:
        pytest.fail(f"{env} is not set; run these tests through ctest (ctest -R python)")
    return path


def wait_for(condition, timeout_s: float, what: str) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout_s
    while not condition():
        if time.monotonic() > deadline:
            raise TimeoutError(f"timed out after {timeout_s} s waiting for {what}")
        time.sleep(0.05)


@dataclass
class Process:
    """A child in its own process group, killed with it on stop()."""

    popen: subprocess.Popen[bytes]
    log: Path

    @staticmethod
    def start(argv: list[str], log: Path) -> Process:
        with open(log, "ab") as out:
            popen = subprocess.Popen(
                argv, stdout=out, stderr=subprocess.STDOUT, start_new_session=True
            )
        return Process(popen, log)

    def stop(self) -> None:
        if self.popen.poll() is None:
            os.killpg(self.popen.pid, signal.SIGKILL)
        self.popen.wait()


@dataclass
class Fleet:
    dir: Path
    coordinator_argv: list[str] = field(default_factory=list)
    coordinator: Optional[Process] = None
    workers: list[Process] = field(default_factory=list)
    port: int = 0
    starts: int = 0

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    def start_coordinator(self) -> None:
        """(Re)starts the coordinator on the same database and port."""
        port_file = self.dir / "coordinator.port"
        port_file.unlink(missing_ok=True)
        argv = [*self.coordinator_argv, "--listen", f"127.0.0.1:{self.port}"]
        self.coordinator = Process.start(argv, self.dir / f"coordinator.{self.starts}.log")
        self.starts += 1
        wait_for(lambda: port_file.exists() and port_file.read_text().strip(), 30, "the coordinator")
        self.port = int(port_file.read_text())

    def cli(self, *args: str, token: str = "submitter", check: bool = True) -> subprocess.CompletedProcess[str]:
        argv = [program("TUNEFLEET_CLI"), "--coordinator", self.address]
        if token:
            argv += ["--token-file", str(self.token_file(token))]
        completed = subprocess.run([*argv, *args], capture_output=True, text=True, timeout=300)
        if check and completed.returncode != 0:
            raise AssertionError(f"tunefleet {' '.join(args)} exited {completed.returncode}:\n{completed.stderr}")
        return completed

    def token_file(self, name: str) -> Path:
        return self.dir / f"{name}.token"

    def create_token(self, role: str) -> Path:
        path = self.token_file(role)
        token = self.cli("token", "create", "--role", role, "--name", role, token="admin").stdout
        path.write_text(token.strip() + "\n")
        path.chmod(0o600)
        return path

    def add_worker(self, devices: str = "cpu:2") -> None:
        n = len(self.workers)
        argv = [
            program("TUNEFLEET_WORKER_BIN"),
            "--coordinator", self.address,
            "--devices", devices,
            "--cache", str(self.dir / f"worker{n}-cache"),
            "--token-file", str(self.token_file("worker")),
            # Its own: workers of one test, or of tests run side by side, share cores.
            "--lock-dir", str(self.dir / f"worker{n}-locks"),
        ]
        self.workers.append(Process.start(argv, self.dir / f"worker{n}.log"))

    def logs(self) -> str:
        return "\n".join(f"== {p.name}\n{p.read_text()[-4000:]}" for p in sorted(self.dir.glob("*.log")))

    def stop(self) -> None:
        for p in self.workers:
            p.stop()
        if self.coordinator:
            self.coordinator.stop()


def start_fleet(dir: Path) -> Fleet:
    fleet = Fleet(dir)
    fleet.coordinator_argv = [
        program("TUNEFLEET_COORDINATOR_BIN"),
        "--db", str(dir / "tunefleet.db"),
        "--artifacts", str(dir / "artifacts"),
        "--port-file", str(dir / "coordinator.port"),
        "--admin-token-file", str(fleet.token_file("admin")),
        "--plaintext",
        "--db-sync", "normal",
        "--lease-ttl-ms", "3000",
        "--heartbeat-ms", "300",
    ]
    fleet.start_coordinator()
    for role in ("worker", "submitter", "reader"):
        fleet.create_token(role)
    fleet.add_worker()
    return fleet


@pytest.fixture(scope="module")
def fleet(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Fleet]:
    f = start_fleet(tmp_path_factory.mktemp("fleet"))
    yield f
    f.stop()


@pytest.fixture(autouse=True, scope="module")
def _cli_env() -> Iterator[None]:
    """The package finds the spec-reading CLI as an installed one would on PATH."""
    os.environ.setdefault("TUNEFLEET_CLI", program("TUNEFLEET_CLI"))
    yield
