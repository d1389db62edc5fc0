"""Kernel specs to SubmitJobRequests. The YAML is parsed by the `tunefleet`
command line (`tunefleet spec`), the same loader the C++ client submits
with, so a spec means the same whichever client sends it."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import tempfile
from collections.abc import Mapping
from pathlib import Path, PurePosixPath
from typing import Any, Optional, Union

import grpc
from google.protobuf import json_format

from tunefleet.errors import InvalidArgumentError, TuneFleetError
from tunefleet.v1 import tunefleet_pb2

SpecInput = Union[str, "os.PathLike[str]", Mapping[str, Any]]
Sources = Mapping[str, Union[str, bytes]]


_NO_CLI = (
    "reading a kernel spec needs the tunefleet command line (it parses specs exactly as the "
    "C++ client does): put it on PATH or set TUNEFLEET_CLI"
)


def find_cli(cli: Optional[str] = None) -> str:
    """`cli`, else $TUNEFLEET_CLI, else `tunefleet` on PATH."""
    found = cli or os.environ.get("TUNEFLEET_CLI") or shutil.which("tunefleet")
    if not found:
        raise TuneFleetError(grpc.StatusCode.FAILED_PRECONDITION, _NO_CLI)
    return found


def _run_cli(argv: list[str], **kwargs: Any) -> "subprocess.CompletedProcess[str]":
    try:
        return subprocess.run(argv, capture_output=True, text=True, **kwargs)
    except OSError as e:  # not there, or not a program
        raise TuneFleetError(
            grpc.StatusCode.FAILED_PRECONDITION, f"cannot run '{argv[0]}' ({e.strerror}): {_NO_CLI}"
        ) from e


def _write_sources(folder: Path, sources: Sources) -> None:
    for name, content in sources.items():
        relative = PurePosixPath(name)
        if relative.is_absolute() or ".." in relative.parts or not relative.parts:
            raise InvalidArgumentError(
                grpc.StatusCode.INVALID_ARGUMENT,
                f"source file '{name}' must be a relative path without '..'",
            )
        path = folder / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content.encode() if isinstance(content, str) else content)


def load_spec(
    spec: SpecInput, sources: Optional[Sources] = None, *, cli: Optional[str] = None
) -> tunefleet_pb2.SubmitJobRequest:
    """The request `tunefleet submit` would send for `spec`.

    spec: a YAML file, or its content as a dict (the YAML's keys).
    sources: {relative path: content}; when given, the files the spec names
      are taken from it. Otherwise they are read next to the spec file, or,
      for a dict, relative to the current directory.
    Raises InvalidArgumentError with the loader's message (file, line, field)
      for a spec the coordinator would refuse (its size limits aside),
    TuneFleetError (FAILED_PRECONDITION) when the command line cannot be run.
    """
    argv = [find_cli(cli), "spec"]
    text: Optional[str] = None
    if isinstance(spec, Mapping):
        text = json.dumps(spec, indent=1)  # JSON is YAML
    elif sources is not None:
        text = Path(spec).read_text()
    if text is None:
        argv.append(os.fspath(spec))  # type: ignore[arg-type]
        completed = _run_cli(argv)
    else:
        argv.append("-")
        with tempfile.TemporaryDirectory(prefix="tunefleet-spec-") as folder:
            if sources is not None:
                _write_sources(Path(folder), sources)
            completed = _run_cli(argv, input=text, cwd=folder if sources is not None else None)
    if completed.returncode != 0:
        message = completed.stderr.strip().removeprefix("tunefleet: ")
        if isinstance(spec, Mapping):  # its lines would be those of the JSON sent
            message = re.sub(r"^<stdin>:(\d+:)? ?", "", message, flags=re.MULTILINE)
        elif text is not None:
            message = re.sub(r"^<stdin>:", f"{os.fspath(spec)}:", message, flags=re.MULTILINE)
        raise InvalidArgumentError(grpc.StatusCode.INVALID_ARGUMENT, message)
    return json_format.Parse(completed.stdout, tunefleet_pb2.SubmitJobRequest())
