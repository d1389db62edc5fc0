"""Client: the Python API of a TuneFleet coordinator, over its gRPC service.

Every call raises a TuneFleetError subclass carrying the gRPC code and the
coordinator's message. One Client may be shared by threads.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional, Union

import grpc

from tunefleet.errors import (
    InvalidArgumentError,
    NotFoundError,
    TuneFleetError,
    UnavailableError,
    from_rpc_error,
)
from tunefleet.messages import (
    Best,
    Job,
    Kernel,
    Worker,
    best_request,
    not_found_reason_word,
    require,
    result_row,
)
from tunefleet.spec import SpecInput, Sources, load_spec
from tunefleet.v1 import results_pb2, results_pb2_grpc, tunefleet_pb2, tunefleet_pb2_grpc

DEFAULT_ADDRESS = "127.0.0.1:50051"
# Results of a large job and the sources of a kernel exceed gRPC's 4 MiB default.
_MAX_MESSAGE_BYTES = 256 << 20
# Best-config answers are reused this long, so that newly tuned results are
# picked up; "not tuned" answers expire sooner (as in the C++ client).
BEST_TTL_S = 60.0
BEST_NOT_FOUND_TTL_S = 5.0
# After a query found the coordinator unreachable, best() asks again only
# after this long (an outage costs one timeout per retry, not one per call).
BEST_UNREACHABLE_RETRY_S = 5.0


@dataclass(frozen=True)
class _NotFound:
    """A best() query that found nothing, kept: its NotFoundError's message and reason."""

    message: str
    reason: str


def _read_file(path: Union[str, os.PathLike[str]], what: str) -> bytes:
    try:
        return Path(path).read_bytes()
    except OSError as e:
        raise InvalidArgumentError(
            grpc.StatusCode.INVALID_ARGUMENT, f"{what} {path}: {e.strerror or e}"
        ) from e


def _read_token_file(path: Union[str, os.PathLike[str]]) -> str:
    token = _read_file(path, "token file").decode(errors="replace").strip()
    if not token:
        raise InvalidArgumentError(grpc.StatusCode.INVALID_ARGUMENT, f"token file {path} is empty")
    return _checked_token(token, f"token file {path}")


def _checked_token(token: str, source: str) -> str:
    """token, if it is one line of visible ASCII (gRPC refuses other metadata,
    printing it); the error names the source and the position, never the secret."""
    for i, c in enumerate(token):
        if "!" <= c <= "~":
            continue
        what = (
            "a line break" if c in "\r\n"
            else "a space" if c in " \t"
            else "a character that is not visible ASCII"
        )
        raise InvalidArgumentError(
            grpc.StatusCode.INVALID_ARGUMENT,
            f"{source}: the token has {what} at character {i + 1}: "
            "a token is one line of visible ASCII (tf_<id>_<secret>)",
        )
    return token


def _split_addresses(addresses: str) -> list[str]:
    """The comma-separated addresses, each without the blanks around it
    ("a, b" is two: gRPC would look " b" up as a host name); refused as the
    C++ client refuses them (client/coordinator_channels.cc)."""
    split = [address.strip() for address in addresses.split(",")]
    for address in split:
        if not address:
            what = (
                f"coordinator addresses '{addresses}' have an empty item" if len(split) > 1
                else "coordinator address is empty"
            )
            raise InvalidArgumentError(
                grpc.StatusCode.INVALID_ARGUMENT, f"{what}; use HOST:PORT[,HOST:PORT...]"
            )
        if address.startswith(("unix:", "unix-abstract:")):
            continue
        port = address.rsplit(":", 1)[1] if ":" in address else ""
        if not port.isdigit():
            raise InvalidArgumentError(
                grpc.StatusCode.INVALID_ARGUMENT,
                f"coordinator address '{address}': expected HOST:PORT, e.g. 127.0.0.1:50051",
            )
        # gRPC would dial a port over 65535 modulo 65536 (99999: 34463).
        if int(port) > 65535:
            raise InvalidArgumentError(
                grpc.StatusCode.INVALID_ARGUMENT,
                f"coordinator address '{address}': port {port} is out of range (0-65535)",
            )
    return split


# How long a call waits for one of several coordinator addresses to connect:
# a standby takes over within a few seconds.
_TAKEOVER_WAIT_S = 5.0


class Client:
    """A connection to a coordinator.

    address: HOST:PORT; default $TUNEFLEET_COORDINATOR, else 127.0.0.1:50051.
      Several, separated by commas (a coordinator and its standbys on one
      PostgreSQL database): each call goes to the one whose connection is up.
    token / token_file: the bearer token; default $TUNEFLEET_TOKEN_FILE (a
      file holding it), else $TUNEFLEET_TOKEN (the token itself).
    tls_ca: the CA (PEM file) of the coordinator's certificate; default
      $TUNEFLEET_TLS_CA; without one, plaintext. tls_cert and tls_key: this
      client's certificate, for a coordinator that requires one.
    timeout_s: deadline of every call but watch, which lasts as long as the job.
    cli: the `tunefleet` program that reads spec files (default: on PATH).
    """

    def __init__(
        self,
        address: Optional[str] = None,
        *,
        token: Optional[str] = None,
        token_file: Optional[Union[str, os.PathLike[str]]] = None,
        tls_ca: Optional[Union[str, os.PathLike[str]]] = None,
        tls_cert: Optional[Union[str, os.PathLike[str]]] = None,
        tls_key: Optional[Union[str, os.PathLike[str]]] = None,
        timeout_s: float = 30.0,
        cli: Optional[str] = None,
    ) -> None:
        if address is None:
            address = os.environ.get("TUNEFLEET_COORDINATOR") or DEFAULT_ADDRESS
        addresses = _split_addresses(address)
        self.address = ",".join(addresses)
        require(timeout_s, (int, float), "timeout_s")
        if timeout_s <= 0:
            raise InvalidArgumentError(
                grpc.StatusCode.INVALID_ARGUMENT, f"timeout_s must be positive, got {timeout_s}"
            )
        self.timeout_s = timeout_s
        self._cli = cli
        if token is None:
            token_file = token_file or os.environ.get("TUNEFLEET_TOKEN_FILE")
            if token_file:
                token = _read_token_file(token_file)
            elif os.environ.get("TUNEFLEET_TOKEN"):
                token = _checked_token(os.environ["TUNEFLEET_TOKEN"], "TUNEFLEET_TOKEN")
        elif token:
            token = _checked_token(token, "token")
        self._metadata = (("authorization", f"Bearer {token}"),) if token else ()
        tls_ca = tls_ca or os.environ.get("TUNEFLEET_TLS_CA")
        options = [
            ("grpc.max_receive_message_length", _MAX_MESSAGE_BYTES),
            ("grpc.max_send_message_length", _MAX_MESSAGE_BYTES),
            # A restarted coordinator is tried at most a second apart (gRPC's
            # own back-off grows to two minutes), as from C++.
            ("grpc.initial_reconnect_backoff_ms", 100),
            ("grpc.max_reconnect_backoff_ms", 1000),
            # A coordinator that holds the connection but answers nothing
            # (stopped, a half-open connection) fails the calls in flight
            # within 5 s, a quiet watch among them (client/channel_setup.cc).
            ("grpc.keepalive_time_ms", 2000),
            ("grpc.keepalive_timeout_ms", 3000),
            ("grpc.http2.max_pings_without_data", 0),
        ]
        if tls_ca:
            credentials = grpc.ssl_channel_credentials(
                root_certificates=_read_file(tls_ca, "tls_ca"),
                private_key=_read_file(tls_key, "tls_key") if tls_key else None,
                certificate_chain=_read_file(tls_cert, "tls_cert") if tls_cert else None,
            )
            self._channels = [grpc.secure_channel(a, credentials, options) for a in addresses]
        else:
            self._channels = [grpc.insecure_channel(a, options) for a in addresses]
        self._stubs = [tunefleet_pb2_grpc.TuneFleetStub(c) for c in self._channels]
        self._results_stubs = [results_pb2_grpc.TuningResultsStub(c) for c in self._channels]
        self._current = 0
        self._ready = [False] * len(self._channels)
        # gRPC notices that a connection attempt ended only while a thread
        # polls the channel, else every 5 s (grpc/grpc#28866): a call that
        # fails fast polls none, so a subscription's thread polls each.
        for i, channel in enumerate(self._channels):
            channel.subscribe(
                lambda state, i=i: self._ready.__setitem__(
                    i, state == grpc.ChannelConnectivity.READY
                ),
                try_to_connect=True,
            )
        self._best_lock = threading.Lock()
        # key: (expiry, a Best or what a NotFoundError says)
        self._best_cache: dict[tuple[Any, ...], tuple[float, Union[Best, _NotFound]]] = {}
        # When best() may ask again after the coordinator was unreachable, and why.
        self._best_retry_at = 0.0
        self._best_unreachable = ""

    def _serving(self) -> int:
        """The index of the coordinator that serves now: with several
        addresses, the first connected one from the one used last, waiting a
        few seconds for one (a standby taking over)."""
        count = len(self._channels)
        deadline = time.monotonic() + min(_TAKEOVER_WAIT_S, self.timeout_s)
        while count > 1:
            for k in range(count):
                i = (self._current + k) % count
                if self._ready[i]:
                    self._current = i
                    return i
            if time.monotonic() >= deadline:
                break
            time.sleep(0.02)
        return self._current

    @property
    def _stub(self) -> tunefleet_pb2_grpc.TuneFleetStub:
        return self._stubs[self._serving()]

    @property
    def _results_stub(self) -> results_pb2_grpc.TuningResultsStub:
        return self._results_stubs[self._serving()]

    def close(self) -> None:
        for channel in self._channels:
            channel.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _call(self, method: Any, request: Any) -> Any:
        try:
            return method(request, timeout=self.timeout_s, metadata=self._metadata)
        except grpc.RpcError as rpc_error:
            raise from_rpc_error(rpc_error, self.address) from None

    def submit(
        self, spec: SpecInput, sources: Optional[Sources] = None, priority: int = 0
    ) -> Job:
        """Submits a tuning job. spec is a YAML file or a dict of its keys;
        sources is {relative path: content} (see load_spec). Higher priority
        runs first."""
        require(spec, (str, os.PathLike, Mapping), "spec")
        if sources is not None:
            require(sources, Mapping, "sources ({relative path: content})")
        require(priority, int, "priority")
        if not -(2**31) <= priority < 2**31:
            raise InvalidArgumentError(
                grpc.StatusCode.INVALID_ARGUMENT, f"priority {priority} is out of the int32 range"
            )
        request = load_spec(spec, sources, cli=self._cli)
        request.priority = priority
        try:
            return Job.from_proto(self._call(self._stub.SubmitJob, request))
        except InvalidArgumentError as refused:
            if isinstance(spec, Mapping):
                raise
            # As the loader's own errors do, name the file the coordinator refused.
            raise InvalidArgumentError(refused.code, f"{os.fspath(spec)}: {refused.message}") from None

    def job(self, job_id: int) -> Job:
        require(job_id, int, "job_id")
        return Job.from_proto(self._call(self._stub.GetJob, tunefleet_pb2.GetJobRequest(job_id=job_id)))

    def jobs(self, limit: int = 0) -> list[Job]:
        """Most recent first; limit 0 lets the coordinator choose."""
        require(limit, int, "limit")
        response = self._call(self._stub.ListJobs, tunefleet_pb2.ListJobsRequest(limit=limit))
        return [Job.from_proto(j) for j in response.jobs]

    def watch(self, job_id: int, *, reconnect_s: float = 600.0) -> Iterator[Job]:
        """The job's state on every change, ending with its final one.

        When the coordinator goes away (restarted, network lost, stopped
        answering: keepalive pings find that within 5 s) the watch
        reconnects and carries on, for up to reconnect_s seconds without an
        answer; then UnavailableError."""
        require(job_id, int, "job_id")
        require(reconnect_s, (int, float), "reconnect_s")
        request = tunefleet_pb2.GetJobRequest(job_id=job_id)
        delay_s = 0.1
        lost_since: Optional[float] = None
        lost: TuneFleetError = UnavailableError(grpc.StatusCode.UNAVAILABLE, "")
        last_state = "unknown"
        while True:
            if lost_since is not None:
                # Waits for an answer until reconnect_s is over: connected, a
                # coordinator that answers nothing (stopped) would take the
                # watch's stream and keep it until keepalive gave up on it.
                try:
                    self._stub.GetJob(
                        request,
                        timeout=max(lost_since + reconnect_s - time.monotonic(), 0.0),
                        metadata=self._metadata,
                        wait_for_ready=True,
                    )
                except grpc.RpcError as rpc_error:
                    if rpc_error.code() == grpc.StatusCode.DEADLINE_EXCEEDED:
                        raise UnavailableError(
                            grpc.StatusCode.UNAVAILABLE,
                            f"coordinator at {self.address} did not answer the watch of job "
                            f"{job_id} for {reconnect_s:g} s ({lost.message})",
                        ) from None
                    refused = from_rpc_error(rpc_error, self.address)
                    if not isinstance(refused, UnavailableError):
                        raise refused from None
                    time.sleep(delay_s)
                    delay_s = min(delay_s * 2, 5.0)
                    continue
            call = self._stub.WatchJob(request, metadata=self._metadata)
            try:
                for event in call:
                    lost_since, delay_s = None, 0.1
                    job = Job.from_proto(event.job)
                    last_state = job.state
                    yield job
                    if job.done:
                        return
                lost = UnavailableError(
                    grpc.StatusCode.UNAVAILABLE,
                    f"coordinator at {self.address} ended the watch of job {job_id} "
                    f"while it was {last_state}",
                )
            except grpc.RpcError as rpc_error:
                lost = from_rpc_error(rpc_error, self.address)
                if not isinstance(lost, UnavailableError):
                    raise lost from None
            finally:
                call.cancel()
            lost_since = lost_since or time.monotonic()
            time.sleep(delay_s)
            delay_s = min(delay_s * 2, 5.0)

    def results(self, job_id: int, *, as_frame: Optional[bool] = None) -> Any:
        """Every candidate's result, best first: a pandas DataFrame (config.*
        and problem.* columns) when pandas is installed, else rows (dicts
        with the keys of `tunefleet results --json`). as_frame forces one."""
        require(job_id, int, "job_id")
        response = self._call(
            self._stub.ListResults, tunefleet_pb2.GetJobRequest(job_id=job_id)
        )
        rows = [result_row(r) for r in response.results]
        if as_frame is False:
            return rows
        try:
            import pandas
        except ImportError:
            if as_frame:
                raise
            return rows
        return pandas.json_normalize(rows) if rows else pandas.DataFrame()

    def cancel(self, job_id: int) -> Job:
        require(job_id, int, "job_id")
        return Job.from_proto(
            self._call(self._stub.CancelJob, tunefleet_pb2.GetJobRequest(job_id=job_id))
        )

    def best(
        self, kernel: str, problem: Mapping[str, int], device_class: Optional[str] = None
    ) -> Best:
        """The best tuned configuration of kernel for problem ({"M": 4096, ...}),
        or the nearest tuned problem's (exact False). Answers are cached in
        this process for BEST_TTL_S seconds. NotFoundError when nothing of
        the kernel was tuned on a matching device (any, when device_class is
        None), in the coordinator's words, which name what the kernel is
        tuned for: the variables of its problems (a misspelt or missing
        variable), or its device classes; its `reason` says which
        (NotFoundError.NOT_TUNED, OTHER_VARIABLES, OTHER_DEVICE_CLASS). While
        the coordinator cannot be reached, an answer given before is given
        again, however old, and UnavailableError raised for the others, the
        coordinator asked again only every BEST_UNREACHABLE_RETRY_S (as the
        C++ BestConfigCache)."""
        request = best_request(kernel, problem, device_class)
        key = (kernel, tuple(sorted(problem.items())), device_class or "")
        now = time.monotonic()
        with self._best_lock:
            cached = self._best_cache.get(key)
            retry_at, unreachable = self._best_retry_at, self._best_unreachable
        if not cached or cached[0] <= now:
            if now < retry_at:
                # Unreachable a moment ago: not asked again before retry_at.
                if not cached:
                    raise UnavailableError(
                        grpc.StatusCode.UNAVAILABLE,
                        f"{unreachable} (asked again in {retry_at - now:.1f} s)",
                    )
                cached = (now + BEST_UNREACHABLE_RETRY_S, cached[1])
            else:
                cached = self._ask_best(request, cached, now)
            with self._best_lock:
                self._best_cache[key] = cached
        if isinstance(cached[1], _NotFound):
            # A new exception each time: one raised again keeps every caller's frames.
            raise NotFoundError(grpc.StatusCode.NOT_FOUND, cached[1].message, cached[1].reason)
        return cached[1]

    def _ask_best(
        self,
        request: tunefleet_pb2.QueryBestRequest,
        cached: Optional[tuple[float, Union[Best, _NotFound]]],
        now: float,
    ) -> tuple[float, Union[Best, _NotFound]]:
        """The coordinator's answer to request as best() keeps it: (expiry,
        answer); when the coordinator cannot be reached, the one cached
        before, kept BEST_UNREACHABLE_RETRY_S more, else UnavailableError."""
        try:
            response = self._call(self._stub.QueryBest, request)
        except UnavailableError as error:
            with self._best_lock:
                if now >= self._best_retry_at:
                    self._best_retry_at = now + BEST_UNREACHABLE_RETRY_S
                    self._best_unreachable = error.message
            if not cached:
                raise
            return (now + BEST_UNREACHABLE_RETRY_S, cached[1])
        if response.found:
            return (now + BEST_TTL_S, Best.from_proto(response))
        reason = not_found_reason_word(response.not_found_reason)
        return (now + BEST_NOT_FOUND_TTL_S, _NotFound(response.not_found, reason))

    def kernels(self, device_class: Optional[str] = None) -> list[Kernel]:
        """The kernels best() answers for, by name, as `tunefleet kernels`
        lists them: each with the token name its kernel name belongs to ("":
        none yet), its tuned (problem, device class) pairs, their device
        classes and when it was last tuned; of device_class only, when given.
        Empty when nothing is tuned."""
        if device_class is not None:
            require(device_class, str, "device_class")
        request = results_pb2.ListKernelsRequest(device_class=device_class or "")
        response = self._call(self._results_stub.ListKernels, request)
        return [Kernel.from_proto(k) for k in response.kernels]

    def set_kernel_owner(self, kernel: str, team: Optional[str] = None) -> str:
        """Hands the kernel name to team, the name of submitter tokens in
        force, or when team is None to no one, until the next submitter
        token to submit under it takes it; whoever its jobs say it belongs
        to. Needs an admin token (PermissionDeniedError otherwise), as
        `tunefleet kernels set-owner`. Returns the owner it had ("": none).
        NotFoundError when no job or import is under the kernel name, or no
        submitter token in force has team's name; InvalidArgumentError for
        team "" (None hands it to no one)."""
        require(kernel, str, "kernel")
        if team is not None:
            require(team, str, "team")
            if not team:
                raise InvalidArgumentError(
                    grpc.StatusCode.INVALID_ARGUMENT,
                    "team must be a token name; None hands the kernel to no one",
                )
        request = tunefleet_pb2.SetKernelOwnerRequest(kernel=kernel, team=team or "")
        return self._call(self._stub.SetKernelOwner, request).previous_owner

    def workers(self) -> list[Worker]:
        response = self._call(self._stub.ListWorkers, tunefleet_pb2.ListWorkersRequest())
        return [Worker.from_proto(w) for w in response.workers]
