"""best_config: the launch parameters a Python application picks at run time.

    from tunefleet import best_config
    cfg = best_config("gemm_f16", M=4096, N=4096, K=4096,
                      fallback={"BM": 128, "BN": 128, "BK": 32})

The coordinator and token come from the environment, as for the CLI
(TUNEFLEET_COORDINATOR, TUNEFLEET_TOKEN_FILE or TUNEFLEET_TOKEN,
TUNEFLEET_TLS_CA). Answers are cached in the process (Client.best).
"""

from __future__ import annotations

import threading
import warnings
from typing import Any, Optional, Union

from tunefleet.client import Client
from tunefleet.errors import NotFoundError, UnavailableError
from tunefleet.exported import ExportedConfigs

_NO_FALLBACK = object()
_lock = threading.Lock()
_default: Optional[Client] = None
# (kernel, variable names, device class) of the queries that warned: a query
# that can never find anything warns once per process, not once per call.
_warned: set[tuple[str, tuple[str, ...], str]] = set()


def default_client() -> Client:
    """The Client best_config uses when none is given, made from the environment."""
    global _default
    with _lock:
        if _default is None:
            _default = Client(timeout_s=2.0)
        return _default


def best_config(
    kernel: str,
    /,
    *,
    fallback: Any = _NO_FALLBACK,
    device_class: Optional[str] = None,
    client: Optional[Union[Client, ExportedConfigs]] = None,
    **problem: int,
) -> Any:
    """The tuned configuration ({"BM": 128, ...}) of kernel for the problem
    given as keywords; the nearest tuned problem's when this one was never
    tuned. When nothing answers, or the coordinator cannot be reached and
    never answered this query, `fallback` is returned; without a fallback
    NotFoundError or UnavailableError is raised. A kernel not tuned (yet)
    returns the fallback quietly; an outage warns; so does, once per
    (kernel, variable names, device class) in the process, a query that
    finds nothing as asked while the kernel is tuned, for other variables (a
    misspelt one: m=4096 for M) or on other device classes
    (NotFoundError.reason), with the sentence saying what it is tuned for.
    An outage costs one timeout per few seconds, not one per call
    (Client.best). Other errors (a refused token) are always raised.
    client: a Client (default: default_client()), or ExportedConfigs to
    answer from a file `tunefleet export` wrote, with no coordinator."""
    client = client or default_client()
    try:
        return dict(client.best(kernel, problem, device_class).config)
    except NotFoundError as not_found:
        if fallback is _NO_FALLBACK:
            raise
        if not_found.reason in (NotFoundError.OTHER_VARIABLES, NotFoundError.OTHER_DEVICE_CLASS):
            asked = (kernel, tuple(sorted(problem)), device_class or "")
            with _lock:
                first = asked not in _warned
                _warned.add(asked)
            if first:
                warnings.warn(
                    f"tunefleet: {not_found.message}; using the fallback configuration",
                    stacklevel=2,
                )
        return fallback
    except UnavailableError as unreachable:
        if fallback is _NO_FALLBACK:
            raise
        warnings.warn(f"tunefleet: {unreachable}; using the fallback configuration", stacklevel=2)
        return fallback
