"""Exceptions of the TuneFleet client: each carries the gRPC status code and
the coordinator's own message, so that callers can branch on the code and
show the message as is."""

from __future__ import annotations

import grpc


class TuneFleetError(Exception):
    """A call the coordinator refused, or could not be made."""

    def __init__(self, code: grpc.StatusCode, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message

    def __str__(self) -> str:
        return f"{self.message} ({self.code.name})"


class InvalidArgumentError(TuneFleetError):
    """Bad input: a spec, a job id, a problem. The message names what is wrong."""


class NotFoundError(TuneFleetError):
    """No such job, or nothing of the kernel tuned on a matching device. Then
    `reason` says which way (the coordinator's QueryBestResponse.not_found_reason):
    NOT_TUNED, nothing of the kernel is tuned (yet); OTHER_VARIABLES, it is
    tuned, but no tuned problem has the query's variables (a misspelt or
    missing one); OTHER_DEVICE_CLASS, it is tuned for them, but not on the
    device class asked. "unknown" from a coordinator that does not say; ""
    for what is not a best-config query."""

    NOT_TUNED = "not_tuned"
    OTHER_VARIABLES = "other_variables"
    OTHER_DEVICE_CLASS = "other_device_class"

    def __init__(self, code: grpc.StatusCode, message: str, reason: str = "") -> None:
        super().__init__(code, message)
        self.reason = reason


class UnauthenticatedError(TuneFleetError):
    """No token, or an unknown or revoked one."""


class PermissionDeniedError(TuneFleetError):
    """The token's role may not make this call."""


class UnavailableError(TuneFleetError):
    """The coordinator cannot be reached or did not answer in time."""


_BY_CODE: dict[grpc.StatusCode, type[TuneFleetError]] = {
    grpc.StatusCode.INVALID_ARGUMENT: InvalidArgumentError,
    grpc.StatusCode.FAILED_PRECONDITION: InvalidArgumentError,
    grpc.StatusCode.NOT_FOUND: NotFoundError,
    grpc.StatusCode.UNAUTHENTICATED: UnauthenticatedError,
    grpc.StatusCode.PERMISSION_DENIED: PermissionDeniedError,
    grpc.StatusCode.UNAVAILABLE: UnavailableError,
    grpc.StatusCode.DEADLINE_EXCEEDED: UnavailableError,
}


def error(code: grpc.StatusCode, message: str) -> TuneFleetError:
    """The exception class for `code`, TuneFleetError for the others."""
    return _BY_CODE.get(code, TuneFleetError)(code, message)


def from_rpc_error(rpc_error: grpc.RpcError, address: str) -> TuneFleetError:
    code: grpc.StatusCode = rpc_error.code()  # type: ignore[attr-defined]
    details: str = rpc_error.details() or ""  # type: ignore[attr-defined]
    if code == grpc.StatusCode.UNAVAILABLE:
        details = f"cannot reach coordinator at {address}: {details}"
    elif code == grpc.StatusCode.DEADLINE_EXCEEDED:
        details = f"coordinator at {address} did not answer in time: {details}"
    return error(code, details)
