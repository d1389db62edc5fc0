"""A kernel that fails to build for some configurations: the compiler's own
message reaches `tunefleet compile`, the job's results (Python and CLI), once
per distinct error in the human output and in full in --json."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import tunefleet
from conftest import Fleet, program
from test_client import GEMM, small_gemm

# BM=16 trips a static_assert; U=2 declares an array of negative size.
# BM=32,U=1 builds and runs.
BROKEN = (GEMM / "gemm.cpp").read_text().replace(
    "  std::fill(C, C + M * N, 0.0f);",
    "  std::fill(C, C + M * N, 0.0f);\n"
    '  static_assert(BM != 16, "BM=16 is too small");\n'
    "  [[maybe_unused]] char too_small[U == 2 ? -1 : 1];",
    1,
)
ASSERTION = 'error: static assertion failed: BM=16 is too small'
NEGATIVE = "-1"  # in GCC's first error, whatever its wording and quotes


def broken_spec() -> dict:
    spec = small_gemm()
    spec["kernel"] = "gemm_f32_broken"
    return spec


def test_compile_shows_the_compilers_message(tmp_path: Path) -> None:
    (tmp_path / "gemm.cpp").write_text(BROKEN)
    (tmp_path / "gemm.yaml").write_text(json.dumps(broken_spec()))
    cli = [program("TUNEFLEET_CLI"), "compile", str(tmp_path / "gemm.yaml"), "--out", str(tmp_path / "art")]
    human = subprocess.run(cli, capture_output=True, text=True, timeout=300)
    assert human.returncode == 1, human.stderr
    assert "6 configurations failed to build, 2 distinct errors" in human.stdout, human.stdout
    assert human.stdout.count(ASSERTION) >= 1 and NEGATIVE in human.stdout
    assert "[4: " in human.stdout and "[2: " in human.stdout  # BM=16 (4 configs), BM=32,U=2 (2)

    machine = subprocess.run([*cli, "--json"], capture_output=True, text=True, timeout=300)
    report = json.loads(machine.stdout)
    assert report["failed_configs"] == 6
    failures = {json.dumps(f["config"], sort_keys=True): f["diagnostics"] for f in report["failures"]}
    assert len(failures) == 6
    for config_text, text in failures.items():
        config = json.loads(config_text)
        first_line = text.splitlines()[0]
        assert first_line.startswith("compilation failed: ")
        assert (ASSERTION if config["BM"] == 16 else NEGATIVE) in first_line
        assert "error:" in first_line
        assert "In file included from" in text or "In instantiation of" in text  # full text


def test_results_show_the_compilers_message(fleet: Fleet) -> None:
    with tunefleet.Client(fleet.address, token_file=fleet.token_file("submitter")) as client:
        job = client.submit(broken_spec(), sources={"gemm.cpp": BROKEN})
        final = list(client.watch(job.job_id))[-1]
        assert final.state == "succeeded", fleet.logs()
        assert final.candidates_failed == 6 and final.candidates_done == 8
        rows = client.results(job.job_id, as_frame=False)
    failed = [r for r in rows if r["status"] == "compile_failed"]
    assert len(failed) == 6
    for row in failed:
        first_line = row["error"].splitlines()[0]
        assert (ASSERTION if row["config"]["BM"] == 16 else NEGATIVE) in first_line, row["error"]
        assert "error:" in first_line
        assert len(row["error"].splitlines()) > 3  # the compiler's whole text

    human = fleet.cli("results", str(job.job_id)).stdout
    assert "6 configurations failed to build, 2 distinct errors" in human, human
    assert ASSERTION in human and NEGATIVE in human
    assert [line for line in human.splitlines() if line.startswith("compile_failed")], human
    as_json = json.loads(fleet.cli("results", str(job.job_id), "--json").stdout)
    assert sorted(r["error"] for r in as_json if r["status"] == "compile_failed") == sorted(
        r["error"] for r in failed
    )


def test_a_job_nothing_of_which_builds_shows_why_where_it_is_followed(
    fleet: Fleet, tmp_path: Path
) -> None:
    """`submit --wait` and `status` of a job that failed because nothing built print the
    compiler's message, not only a pointer to `tunefleet results`."""
    spec = broken_spec()
    spec["kernel"] = "gemm_f32_never_builds"
    spec["params"] = {"BM": [16, 32], "BN": [16], "BK": [16], "U": [1]}
    (tmp_path / "gemm.yaml").write_text(json.dumps(spec))
    (tmp_path / "gemm.cpp").write_text(
        BROKEN.replace('static_assert(BM != 16, "BM=16 is too small");', 'static_assert(BM < 0, "never");')
    )
    waited = fleet.cli("submit", str(tmp_path / "gemm.yaml"), "--wait", check=False)
    assert waited.returncode == 1, waited.stderr
    assert "2 configurations failed to build, 1 distinct error" in waited.stdout, waited.stdout
    assert 'error: static assertion failed: never' in waited.stdout, waited.stdout
    job_id = waited.stderr.split("submitted job ")[1].split()[0]
    status = fleet.cli("status", job_id).stdout
    assert "job " + job_id + " failed" in status and 'static assertion failed: never' in status, status
