"""TuneFleet's Python client: submit kernel autotuning jobs, follow them, and
query the best tuned configurations.

    import tunefleet
    with tunefleet.Client("127.0.0.1:50051", token_file="me.token") as fleet:
        job = fleet.submit("examples/cpu/gemm/gemm.yaml")
        for update in fleet.watch(job.job_id):
            print(update.state, update.candidates_done, "/", update.candidates_total)
        print(fleet.best("gemm_f32_cpu", {"M": 256, "N": 256, "K": 256}).config)
"""

from tunefleet.best_config import best_config, default_client
from tunefleet.client import Client
from tunefleet.errors import (
    InvalidArgumentError,
    NotFoundError,
    PermissionDeniedError,
    TuneFleetError,
    UnauthenticatedError,
    UnavailableError,
)
from tunefleet.exported import ExportedConfigs
from tunefleet.messages import Best, BestEntry, Device, Job, Kernel, Timing, Worker
from tunefleet.spec import load_spec

__all__ = [
    "Best",
    "BestEntry",
    "Client",
    "Device",
    "ExportedConfigs",
    "InvalidArgumentError",
    "Job",
    "Kernel",
    "NotFoundError",
    "PermissionDeniedError",
    "Timing",
    "TuneFleetError",
    "UnauthenticatedError",
    "UnavailableError",
    "Worker",
    "best_config",
    "default_client",
    "load_spec",
]
