"""What the client returns: plain dataclasses in the shapes of the CLI's
`--json` output (states and statuses as lowercase words, configurations and
problems as dicts: a job's in spec order, a best-config answer's by name), made
from the protobuf messages."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Optional, Union

import grpc

from tunefleet.errors import InvalidArgumentError
from tunefleet.v1 import common_pb2, results_pb2, spec_pb2, tunefleet_pb2

Value = Union[int, str]


def _enum_word(enum: Any, number: int, prefix: str) -> str:
    """JOB_STATE_RUNNING -> "running"; the words of the C++ client too."""
    try:
        name: str = enum.Name(number)
    except ValueError:
        return "unknown"
    return name.removeprefix(prefix).lower() if number else "unknown"


def value(v: spec_pb2.Value) -> Value:
    return v.int_value if v.WhichOneof("kind") == "int_value" else v.str_value


def config_dict(config: common_pb2.Config) -> dict[str, Value]:
    return {s.name: value(s.value) for s in config.settings}


def problem_dict(problem: spec_pb2.Problem) -> dict[str, int]:
    return {v.name: v.value for v in problem.vars}


def require(value: Any, kinds: Union[type, tuple[type, ...]], what: str) -> None:
    """TypeError naming the argument unless value is one of kinds (a bool is
    no number): a wrong type is the caller's bug, refused before any call."""
    numeric = kinds in (int, float) or (isinstance(kinds, tuple) and int in kinds)
    if isinstance(value, kinds) and not (numeric and isinstance(value, bool)):
        return
    names = " or ".join(k.__name__ for k in (kinds if isinstance(kinds, tuple) else (kinds,)))
    raise TypeError(f"{what} must be {names}, got {value!r}")


def problem_message(problem: Mapping[str, int]) -> spec_pb2.Problem:
    """The Problem message of {"M": 4096, ...}: TypeError for a value that is
    not an integer, InvalidArgumentError for one past int64."""
    if not isinstance(problem, Mapping):
        raise TypeError(f"a problem is a mapping of variable names to integers, got {problem!r}")
    message = spec_pb2.Problem()
    for name, v in problem.items():
        if not isinstance(name, str):
            raise TypeError(f"problem variable names are strings, got {name!r}")
        if isinstance(v, bool) or not isinstance(v, int):
            raise TypeError(f"problem variable {name} must be an integer, got {v!r}")
        if not -(2**63) <= v < 2**63:
            raise InvalidArgumentError(
                grpc.StatusCode.INVALID_ARGUMENT,
                f"problem variable {name} = {v} is out of the int64 range",
            )
        message.vars.add(name=name, value=v)
    return message


def best_request(
    kernel: str, problem: Mapping[str, int], device_class: Optional[str]
) -> tunefleet_pb2.QueryBestRequest:
    """The QueryBestRequest of Client.best and ExportedConfigs.best: TypeError
    for a kernel or device class that is not a str (device_class None: any)
    and as problem_message says."""
    require(kernel, str, "kernel")
    if device_class is not None:
        require(device_class, str, "device_class")
    return tunefleet_pb2.QueryBestRequest(
        kernel=kernel, problem=problem_message(problem), device_class=device_class or ""
    )


def not_found_reason_word(reason: int) -> str:
    """NOT_FOUND_REASON_OTHER_VARIABLES -> "other_variables" (NotFoundError.reason)."""
    return _enum_word(tunefleet_pb2.NotFoundReason, reason, "NOT_FOUND_REASON_")


def state_word(state: int) -> str:
    return _enum_word(common_pb2.JobState, state, "JOB_STATE_")


def status_word(status: int) -> str:
    return _enum_word(common_pb2.ResultStatus, status, "RESULT_STATUS_")


TERMINAL_STATES = frozenset({"succeeded", "failed", "cancelled"})


@dataclass(frozen=True)
class Timing:
    median_ns: float
    p10_ns: float
    p90_ns: float
    gflops: float

    @staticmethod
    def from_proto(t: common_pb2.TimingStats) -> Timing:
        return Timing(t.median_ns, t.p10_ns, t.p90_ns, t.gflops)


@dataclass(frozen=True)
class BestEntry:
    """The best configuration of one problem of a job."""

    problem: dict[str, int]
    config: dict[str, Value]
    candidate_id: int
    timing: Timing
    # Won the re-timing of the problem's finalists in alternation; `timing`
    # is that re-timing.
    confirmed_by_retiming: bool = False


@dataclass(frozen=True)
class Job:
    job_id: int
    kernel: str
    state: str  # queued, running, succeeded, failed, cancelled
    device_class: str  # empty until the job is bound to one
    fingerprint: str
    priority: int
    candidates_total: int
    candidates_done: int
    candidates_failed: int
    candidates_cached: int
    configurations: int
    builds_done: int
    created_unix_ms: int
    updated_unix_ms: int
    error: str
    best: list[BestEntry] = field(default_factory=list)
    stop_reason: str = ""  # why the search stopped proposing, once it has
    problems_retiming: int = 0  # while its finalists are timed again, after the search
    toolchain: str = ""  # the compiler it is measured with, when its workers compile it
    # Once it ended: the problems where no candidate succeeded (best has none).
    problems_without_success: list[dict[str, int]] = field(default_factory=list)
    # While queued: the device it waits for, and why none serves it yet; while
    # running with no live device of its class left: that.
    waiting_for: str = ""

    @property
    def done(self) -> bool:
        """True once the job succeeded, failed or was cancelled."""
        return self.state in TERMINAL_STATES

    @staticmethod
    def from_proto(j: tunefleet_pb2.Job) -> Job:
        return Job(
            job_id=j.job_id,
            kernel=j.kernel,
            state=state_word(j.state),
            device_class=j.device_class,
            fingerprint=j.fingerprint,
            priority=j.priority,
            candidates_total=j.candidates_total,
            candidates_done=j.candidates_done,
            candidates_failed=j.candidates_failed,
            candidates_cached=j.candidates_cached,
            configurations=j.configurations,
            builds_done=j.builds_done,
            created_unix_ms=j.created_unix_ms,
            updated_unix_ms=j.updated_unix_ms,
            error=j.error,
            stop_reason=j.stop_reason,
            problems_retiming=j.problems_retiming,
            toolchain=j.toolchain,
            problems_without_success=[problem_dict(p) for p in j.problems_without_success],
            waiting_for=j.waiting_for,
            best=[
                BestEntry(
                    problem_dict(b.problem),
                    config_dict(b.config),
                    b.candidate_id,
                    Timing.from_proto(b.timing),
                    b.confirmed_by_retiming,
                )
                for b in j.best
            ],
        )


@dataclass(frozen=True)
class Best:
    """A best-config answer; exact is False when the nearest tuned problem answered."""

    kernel: str
    problem: dict[str, int]  # the tuned problem that answered
    device_class: str
    config: dict[str, Value]
    exact: bool
    timing: Timing
    job_id: int
    fingerprint: str
    # Won the re-timing of its job's finalists in alternation; `timing` is
    # that re-timing.
    confirmed_by_retiming: bool = False

    @staticmethod
    def from_proto(b: tunefleet_pb2.QueryBestResponse) -> Best:
        return Best(
            kernel=b.kernel,
            problem=problem_dict(b.problem),
            device_class=b.device_class,
            config=config_dict(b.config),
            exact=b.exact,
            timing=Timing.from_proto(b.timing),
            job_id=b.job_id,
            fingerprint=b.fingerprint,
            confirmed_by_retiming=b.confirmed_by_retiming,
        )


@dataclass(frozen=True)
class Kernel:
    """A kernel best() answers for, with the keys of `tunefleet kernels --json`."""

    name: str
    owner: str  # the token name its kernel name belongs to; "" while none
    tuned: int  # (problem, device class) pairs tuned: the entries `tunefleet export` writes
    device_classes: list[str]  # of those pairs, sorted
    last_tuned_unix_ms: int  # when its newest completed tuning (a job, or an import) ended

    @staticmethod
    def from_proto(k: results_pb2.TunedKernel) -> Kernel:
        return Kernel(
            name=k.name,
            owner=k.owner,
            tuned=k.tuned,
            device_classes=list(k.device_classes),
            last_tuned_unix_ms=k.last_tuned_unix_ms,
        )


@dataclass(frozen=True)
class Device:
    index: int
    vendor: str
    model: str
    arch: str
    device_class: str
    memory_bytes: int
    compute_units: int
    labels: list[str]
    properties: dict[str, int]
    # The compilers its worker builds its kernels with, by language.
    toolchains: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Worker:
    worker_id: str
    hostname: str
    alive: bool
    last_heartbeat_unix_ms: int
    active_leases: int
    results_reported: int
    devices: list[Device]

    @staticmethod
    def from_proto(w: tunefleet_pb2.WorkerInfo) -> Worker:
        return Worker(
            worker_id=w.worker_id,
            hostname=w.hostname,
            alive=w.alive,
            last_heartbeat_unix_ms=w.last_heartbeat_unix_ms,
            active_leases=w.active_leases,
            results_reported=w.results_reported,
            devices=[
                Device(
                    d.index,
                    d.vendor,
                    d.model,
                    d.arch,
                    d.device_class,
                    d.memory_bytes,
                    d.compute_units,
                    list(d.labels),
                    dict(sorted(d.properties.items())),
                    dict(sorted(d.toolchains.items())),
                )
                for d in w.devices
            ],
        )


def result_row(r: common_pb2.CandidateResult) -> dict[str, Any]:
    """One candidate's result with the keys of `tunefleet results --json`."""
    row = {
        "candidate_id": r.candidate_id,
        "status": status_word(r.status),
        "config": config_dict(r.config),
        "problem": problem_dict(r.problem),
        "device_class": r.device_class,
        "worker": r.worker,
        "median_ns": r.timing.median_ns,
        "p10_ns": r.timing.p10_ns,
        "p90_ns": r.timing.p90_ns,
        "gflops": r.timing.gflops,
        "max_abs_error": r.max_abs_error,
        "error": r.error,
        "performance_warnings": list(r.resources.performance_warnings),
    }
    if r.retiming.repeats > 0:  # a finalist, timed again in alternation
        t = r.retiming
        row["retiming"] = {"samples": t.repeats, "median_ns": t.median_ns, "p10_ns": t.p10_ns,
                           "p90_ns": t.p90_ns, "gflops": t.gflops}
        row["retime_winner"] = r.retime_winner
    return row
