"""Builds the package with its gRPC stubs, generated from the repository's
proto/ folder (never checked in) by protoc and grpc_python_plugin, the
protobuf-compiler and protobuf-compiler-grpc packages of Debian.

PROTOC and GRPC_PYTHON_PLUGIN name the programs when they are not on PATH;
TUNEFLEET_PROTO_DIR names the proto folder when building outside the
repository.
"""

import os
import shutil
import subprocess
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = Path(__file__).resolve().parent


def find_program(env: str, name: str) -> str:
    program = os.environ.get(env) or shutil.which(name)
    if not program:
        raise SystemExit(
            f"building tunefleet needs {name} (Debian: apt-get install "
            f"protobuf-compiler protobuf-compiler-grpc), or {env}=PATH"
        )
    return program


def generate_stubs(out: Path) -> None:
    proto_dir = Path(os.environ.get("TUNEFLEET_PROTO_DIR", HERE.parent.parent / "proto"))
    protos = sorted(proto_dir.glob("tunefleet/v1/*.proto"))
    if not protos:
        raise SystemExit(f"no tunefleet/v1/*.proto under {proto_dir}; set TUNEFLEET_PROTO_DIR")
    subprocess.run(
        [
            find_program("PROTOC", "protoc"),
            f"--proto_path={proto_dir}",
            f"--python_out={out}",
            f"--grpc_python_out={out}",
            "--plugin=protoc-gen-grpc_python="
            + find_program("GRPC_PYTHON_PLUGIN", "grpc_python_plugin"),
            *(str(p) for p in protos),
        ],
        check=True,
    )
    (out / "tunefleet" / "v1" / "__init__.py").touch()


class BuildPyWithStubs(build_py):
    def run(self) -> None:
        super().run()
        generate_stubs(Path(self.build_lib))


setup(packages=["tunefleet"], cmdclass={"build_py": BuildPyWithStubs})
