"""A long-lived Client across a coordinator restarted on its port, a watch of
a coordinator that stops answering (SIGSTOP), and address lists."""

from __future__ import annotations

import os
import signal
import threading
import time
from pathlib import Path

import pytest

import tunefleet
import tunefleet.client as client_module
from conftest import REPO, Fleet, start_fleet


def seconds_until_answered(client: tunefleet.Client) -> float:
    """Calls every 100 ms, as an application would, until one is answered."""
    start = time.monotonic()
    while time.monotonic() - start < 60:
        try:
            client.jobs(limit=1)
            break
        except tunefleet.UnavailableError:
            time.sleep(0.1)
    return time.monotonic() - start


def test_a_long_lived_client_reaches_a_restarted_coordinator_within_seconds(
    tmp_path: Path,
) -> None:
    # gRPC notices a connection attempt's end only while a thread polls the
    # channel: with one address nothing did but gRPC's 5 s backup poller, and
    # the restarted coordinator answered 9-10 s after it served.
    fleet = start_fleet(tmp_path)
    try:
        nothing = "127.0.0.1:1"
        for addresses in (fleet.address, f"{nothing}, {fleet.address}"):
            with tunefleet.Client(
                addresses, token_file=fleet.token_file("reader"), timeout_s=5
            ) as client:
                assert seconds_until_answered(client) < 10
                for restart in range(2):
                    assert fleet.coordinator
                    fleet.coordinator.stop()  # SIGKILL
                    # Long enough for gRPC's back-off to grow to its most.
                    killed = time.monotonic()
                    while time.monotonic() - killed < 4:
                        with pytest.raises(tunefleet.UnavailableError):
                            client.jobs(limit=1)
                        time.sleep(0.1)
                    fleet.start_coordinator()  # same database, same port
                    waited = seconds_until_answered(client)
                    print(f"{addresses}, restart {restart}: answered {waited:.2f} s after it served")
                    assert waited < 3, f"{addresses}, restart {restart}"
    finally:
        fleet.stop()


def test_a_watch_of_a_frozen_coordinator_raises_after_reconnect_s(tmp_path: Path) -> None:
    # Keepalive pings find a coordinator that holds the connection but
    # answers nothing; before, the watch waited for it without end. The watch
    # is quiet for 7 s first, longer than gRPC pings without data by default,
    # and the coordinator lets its pings be.
    fleet = start_fleet(tmp_path)
    try:
        for worker in fleet.workers:
            worker.stop()  # the job stays queued
        with tunefleet.Client(fleet.address, token_file=fleet.token_file("submitter")) as client:
            job = client.submit(REPO / "tests/integration/data/slow/slow.yaml")
            assert fleet.coordinator
            pid = fleet.coordinator.popen.pid
            stopped: list[float] = []

            def freeze() -> None:
                time.sleep(7)
                stopped.append(time.monotonic())
                os.kill(pid, signal.SIGSTOP)

            freezer = threading.Thread(target=freeze)
            try:
                with pytest.raises(tunefleet.UnavailableError) as raised:
                    for _ in client.watch(job.job_id, reconnect_s=8):
                        if not freezer.ident:
                            freezer.start()
                assert stopped, f"raised before the coordinator stopped: {raised.value}"
                waited = time.monotonic() - stopped[0]
            finally:
                if freezer.ident:
                    freezer.join()
                os.kill(pid, signal.SIGCONT)
            print(f"the watch raised {waited:.2f} s after the coordinator stopped")
            assert f"did not answer the watch of job {job.job_id} for 8 s" in raised.value.message
            # Keepalive's 5 s at most, then the 8 s to reconnect.
            assert waited < 8 + 5 + 3
    finally:
        fleet.stop()


def test_addresses_are_read_as_the_cpp_client_reads_them(fleet: Fleet) -> None:
    token = fleet.token_file("reader")
    # Blanks around an address are no part of it (" 127.0.0.1" was looked up
    # as a host name, and failed).
    for addresses in (f" {fleet.address} ", f"127.0.0.1:1, {fleet.address}"):
        with tunefleet.Client(addresses, token_file=token) as client:
            client.jobs()
            assert client.address == addresses.replace(" ", "")
    # The messages are the C++ client's, word for word (CliTest).
    refusals = {
        "": "coordinator address is empty; use HOST:PORT[,HOST:PORT...]",
        f"{fleet.address},": f"coordinator addresses '{fleet.address},' have an empty item; "
        "use HOST:PORT[,HOST:PORT...]",
        "localhost": "coordinator address 'localhost': expected HOST:PORT, e.g. 127.0.0.1:50051",
    }
    for addresses, message in refusals.items():
        with pytest.raises(tunefleet.InvalidArgumentError) as raised:
            tunefleet.Client(addresses, token_file=token)
        assert raised.value.message == message


def test_best_config_keeps_its_answers_while_the_coordinator_is_down(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # An answer given before is given through an outage, however old (as the
    # C++ BestConfigCache does); before, one new key that failed to be asked
    # made best_config answer every key with its fallback for 5 s.
    monkeypatch.setattr(client_module, "BEST_TTL_S", 0.5)
    fleet = start_fleet(tmp_path)
    try:
        fleet.cli(
            "import", "results", str(REPO / "tests/data/spaces/convolution/A100_T4.json.gz"),
            "--kernel", "conv", "--device-class", "a100",
            "--problem", "problem_size_x=4096,problem_size_y=4096", token="admin",
        )
        tuned_problem = {"problem_size_x": 4096, "problem_size_y": 4096}
        fallback = {"block_size_x": 1}
        with tunefleet.Client(fleet.address, token_file=fleet.token_file("reader")) as client:
            tuned = tunefleet.best_config("conv", client=client, fallback=fallback, **tuned_problem)
            assert "block_size_x" in tuned and tuned != fallback
            assert fleet.coordinator
            fleet.coordinator.stop()  # SIGKILL
            time.sleep(1)  # the answer has expired
            with pytest.warns(UserWarning, match="cannot reach coordinator"):
                never_asked = tunefleet.best_config(
                    "conv", client=client, fallback=fallback, problem_size_x=1, problem_size_y=1
                )
            assert never_asked == fallback
            for _ in range(3):
                assert tunefleet.best_config(
                    "conv", client=client, fallback=fallback, **tuned_problem
                ) == tuned
            with pytest.raises(tunefleet.UnavailableError, match="asked again in"):
                client.best("conv", {"problem_size_x": 2, "problem_size_y": 2})
    finally:
        fleet.stop()
