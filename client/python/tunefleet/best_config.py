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
import time
import warnings
import weakref
from typing import Any, Optional

from tunefleet.client import BEST_NOT_FOUND_TTL_S, Client
from tunefleet.errors import NotFoundError, UnavailableError
from tunefleet.messages import problem_message

_NO_FALLBACK = object()
_lock = threading.Lock()
_default: Optional[Client] = None
# While the coordinator cannot be reached the fallback is answered without
# trying again for a while: an application must not wait a timeout per call.
_unreachable_until: weakref.WeakKeyDictionary[Client, float] = weakref.WeakKeyDictionary()


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
    client: Optional[Client] = None,
    **problem: int,
) -> Any:
    """The tuned configuration ({"BM": 128, ...}) of kernel for the problem
    given as keywords; the nearest tuned problem's when this one was never
    tuned. When nothing of the kernel is tuned, or the coordinator cannot be
    reached (a warning says so), `fallback` is returned; without a fallback
    NotFoundError or UnavailableError is raised. Other errors (a refused
    token) are always raised."""
    client = client or default_client()
    if fallback is not _NO_FALLBACK and time.monotonic() < _unreachable_until.get(client, 0.0):
        problem_message(problem)  # a wrong argument is the caller's bug, outage or not
        return fallback
    try:
        return dict(client.best(kernel, problem, device_class).config)
    except NotFoundError:
        if fallback is _NO_FALLBACK:
            raise
        return fallback
    except UnavailableError as unreachable:
        if fallback is _NO_FALLBACK:
            raise
        _unreachable_until[client] = time.monotonic() + BEST_NOT_FOUND_TTL_S
        warnings.warn(f"tunefleet: {unreachable}; using the fallback configuration", stacklevel=2)
        return fallback
