"""watch() rides out a coordinator killed and restarted on its database."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import tunefleet
from conftest import REPO, start_fleet


def test_watch_carries_on_across_a_coordinator_restart(tmp_path: Path) -> None:
    fleet = start_fleet(tmp_path)
    try:
        with tunefleet.Client(fleet.address, token_file=fleet.token_file("submitter")) as client:
            job = client.submit(REPO / "tests/integration/data/slow/slow.yaml")
            restarted = threading.Event()

            def restart() -> None:
                assert fleet.coordinator
                fleet.coordinator.stop()  # SIGKILL
                time.sleep(2)  # the watch retries meanwhile
                fleet.start_coordinator()  # same database, same port
                restarted.set()

            restarter: threading.Thread | None = None
            after_restart = []
            for update in client.watch(job.job_id):
                if restarter is None and update.candidates_done >= 3:
                    restarter = threading.Thread(target=restart)
                    restarter.start()
                if restarted.is_set():
                    after_restart.append(update)
            assert restarter is not None
            restarter.join()
            final = after_restart[-1]
            assert final.state == "succeeded", fleet.logs()
            assert final.candidates_done == final.candidates_total == 24
            assert client.job(job.job_id).state == "succeeded"
    finally:
        fleet.stop()
