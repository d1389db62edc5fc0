"""ExportedConfigs: best-config answers from the file `tunefleet export KERNEL
--format json` writes, with no coordinator, as an application ships them:

    configs = tunefleet.ExportedConfigs.load("gemm_best.json")
    cfg = tunefleet.best_config("gemm_f16", client=configs, M=4096, N=4096, K=4096,
                                fallback={"BM": 128})

The answer is the coordinator's (coordinator/best_index.h) by the same rule
as the C++ client's BestConfigCache::Offline and the exported C++ header: the
exact problem, else the nearest tuned one of the same variables
(kernelspec/problem_distance.h: the sum over variables of |s(a) - s(b)|, s
log2 from 1 up and v - 1 below), ties to the fastest. Checked against the
coordinator's answers by test_exported_configs_answer_as_the_coordinator_does.
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, Optional, Union

import grpc

from tunefleet.errors import InvalidArgumentError, NotFoundError
from tunefleet.messages import Best, Timing, best_request

FORMAT = "tunefleet-best-configs/1"
# Distances this close are ties: sums of logarithms equal in exact arithmetic
# differ in the last bits.
_TIE = 1e-9


def _scale(value: int) -> float:
    return math.log2(value) if value >= 1 else value - 1.0


def _distance(a: Mapping[str, int], b: Mapping[str, int]) -> float:
    if a.keys() != b.keys():
        return math.inf
    return sum(abs(_scale(a[name]) - _scale(b[name])) for name in sorted(a))


def _edit_distance(a: str, b: str) -> int:
    row = list(range(len(b) + 1))
    for i in range(1, len(a) + 1):
        diagonal, row[0] = row[0], i
        for j in range(1, len(b) + 1):
            above = row[j]
            row[j] = min(row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] != b[j - 1]))
            diagonal = above
    return row[len(b)]


def _similar_kernels(kernel: str, tuned: Iterable[str]) -> str:
    """kernelspec::ExplainNotTuned's hint for a misspelt kernel name: the
    nearest three within a quarter of its length in edits (2 at least), or
    that begin with it or it with them."""
    near = max(2, len(kernel) // 4)
    edits = {name: _edit_distance(kernel, name) for name in tuned}
    similar = sorted(
        (n, name)
        for name, n in edits.items()
        if n <= near or name.startswith(kernel) or kernel.startswith(name)
    )
    if not similar:
        return ""
    return "; tuned kernels of a similar name: " + ", ".join(name for _, name in similar[:3])


def _refused(where: str, what: str) -> InvalidArgumentError:
    return InvalidArgumentError(grpc.StatusCode.INVALID_ARGUMENT, f"{where}: {what}")


class ExportedConfigs:
    """The entries of an exported file; best() answers as Client.best does."""

    def __init__(self, entries: list[Best]) -> None:
        self.entries = entries

    @staticmethod
    def load(path: Union[str, os.PathLike[str]]) -> ExportedConfigs:
        """InvalidArgumentError naming the file and the field for a file
        `tunefleet export` did not write."""
        name = os.fspath(path)
        try:
            document: Any = json.loads(Path(path).read_text())
        except (OSError, ValueError) as error:
            raise _refused(name, f"cannot read an exported file: {error}") from None
        if not isinstance(document, dict) or document.get("format") != FORMAT:
            raise _refused(name, f'format must be "{FORMAT}"')
        kernel, entries = document.get("kernel"), document.get("entries")
        if not isinstance(kernel, str) or not isinstance(entries, list):
            raise _refused(name, "kernel (a string) and entries (a list) are required")
        loaded = []
        for i, e in enumerate(entries):
            try:
                loaded.append(
                    Best(
                        kernel=kernel,
                        problem={str(k): int(v) for k, v in e["problem"].items()},
                        device_class=str(e["device_class"]),
                        config=dict(e["config"]),
                        exact=True,
                        timing=Timing(e["median_ns"], e["p10_ns"], e["p90_ns"], e["gflops"]),
                        job_id=int(e.get("job_id", 0)),
                        fingerprint=str(e.get("fingerprint", "")),
                        confirmed_by_retiming=bool(e.get("confirmed_by_retiming", False)),
                    )
                )
            except (KeyError, TypeError, ValueError, AttributeError) as error:
                raise _refused(name, f"entries[{i}]: {error!r}") from None
        return ExportedConfigs(loaded)

    def best(
        self, kernel: str, problem: Mapping[str, int], device_class: Optional[str] = None
    ) -> Best:
        """The exact or nearest tuned problem's configuration; NotFoundError,
        saying what the kernel is tuned for, with the reason the coordinator
        would give, when nothing answers."""
        best_request(kernel, problem, device_class)  # the types and ranges Client.best checks
        if not kernel:
            raise InvalidArgumentError(grpc.StatusCode.INVALID_ARGUMENT, "kernel must be set")
        if not problem:
            raise InvalidArgumentError(
                grpc.StatusCode.INVALID_ARGUMENT,
                "problem must name at least one variable, e.g. M=4096",
            )
        found: Optional[Best] = None
        found_distance = math.inf
        for entry in self.entries:
            if entry.kernel != kernel or (device_class and entry.device_class != device_class):
                continue
            distance = -1.0 if entry.problem == problem else _distance(problem, entry.problem)
            if distance == math.inf:
                continue
            if found is None or distance < found_distance - _TIE or (
                distance <= found_distance + _TIE
                and entry.timing.median_ns < found.timing.median_ns
            ):
                found, found_distance = entry, distance
        if found is None:
            reason, message = self._not_tuned(kernel, problem, device_class)
            raise NotFoundError(grpc.StatusCode.NOT_FOUND, message, reason)
        return dataclasses.replace(found, exact=found_distance < 0)

    def _not_tuned(
        self, kernel: str, problem: Mapping[str, int], device_class: Optional[str]
    ) -> tuple[str, str]:
        """kernelspec::ExplainNotTuned's reason (NotFoundError.reason) and
        sentence, as BestConfigCache::Offline gives them."""
        shape = ",".join(f"{k}={v}" for k, v in problem.items())
        where = f"device class '{device_class}'" if device_class else "any device class"
        message = (
            f"no tuned configuration of kernel '{kernel}' for {shape} on {where}"
            " in the exported file"
        )
        tuned = [e for e in self.entries if e.kernel == kernel]
        if not tuned:
            similar = _similar_kernels(kernel, {e.kernel for e in self.entries})
            return NotFoundError.NOT_TUNED, message + similar
        names = ",".join(sorted(problem))
        variables = sorted({",".join(sorted(e.problem)) for e in tuned})
        classes = sorted({e.device_class for e in tuned})
        if names not in variables:
            return (
                NotFoundError.OTHER_VARIABLES,
                f"{message}; its tuned problems have the variables {' or '.join(variables)}",
            )
        if device_class and device_class not in classes:
            return (
                NotFoundError.OTHER_DEVICE_CLASS,
                f"{message}; it is tuned on {', '.join(classes)}",
            )
        # The class asked is tuned, for other variables only (other classes
        # have these: any class would have answered).
        on_class = sorted(
            {",".join(sorted(e.problem)) for e in tuned if e.device_class == device_class}
        )
        return (
            NotFoundError.OTHER_VARIABLES,
            f"{message}; its tuned problems on device class '{device_class}' have the variables "
            f"{' or '.join(on_class)}",
        )
