"""The Python client against a real coordinator and CPU worker."""

from __future__ import annotations

import dataclasses
import json
import warnings
from pathlib import Path
from typing import Any

import grpc
import pytest
import yaml

import tunefleet
from conftest import REPO, Fleet

GEMM = REPO / "examples/cpu/gemm"
PROBLEM = {"M": 64, "N": 64, "K": 64}


def small_gemm() -> dict[str, Any]:
    """The example CPU GEMM, cut to 8 configurations of one problem."""
    spec = yaml.safe_load((GEMM / "gemm.yaml").read_text())
    spec["kernel"] = "gemm_f32_pytest"
    spec["params"] = {"BM": [16, 32], "BN": [16, 32], "BK": [16], "U": [1, 2]}
    spec["problems"] = [PROBLEM]
    return spec


def gemm_sources() -> dict[str, bytes]:
    return {"gemm.cpp": (GEMM / "gemm.cpp").read_bytes()}


def write_spec(folder: Path, spec: dict[str, Any]) -> Path:
    """`spec` as folder/refused.yaml, with the GEMM's source beside it."""
    path = folder / "refused.yaml"
    path.write_text(yaml.safe_dump(spec))
    (folder / "gemm.cpp").write_bytes(gemm_sources()["gemm.cpp"])
    return path


def client(fleet: Fleet, role: str = "submitter") -> tunefleet.Client:
    return tunefleet.Client(fleet.address, token_file=fleet.token_file(role))


@pytest.mark.parametrize(
    "spec_path", sorted(REPO.glob("examples/**/*.yaml")), ids=lambda p: str(p.relative_to(REPO))
)
def test_dict_spec_means_what_its_yaml_file_means(spec_path: Path) -> None:
    from_file = tunefleet.load_spec(spec_path)
    sources = {s.path: s.content for s in from_file.sources}
    from_dict = tunefleet.load_spec(yaml.safe_load(spec_path.read_text()), sources)
    assert from_dict == from_file
    assert from_file.spec.name and from_file.sources


def test_bad_spec_names_the_field() -> None:
    spec = small_gemm()
    spec["benchmark"]["warmup"] = 3  # not a key of the format
    with pytest.raises(tunefleet.InvalidArgumentError) as raised:
        tunefleet.load_spec(spec, gemm_sources())
    assert raised.value.code == grpc.StatusCode.INVALID_ARGUMENT
    assert "warmup" in raised.value.message


def test_a_dict_spec_missing_a_key_names_the_key_only() -> None:
    with pytest.raises(tunefleet.InvalidArgumentError) as raised:
        tunefleet.load_spec({"kernel": "x"})
    assert raised.value.message.startswith("missing required key"), raised.value.message


def test_missing_source_is_named() -> None:
    with pytest.raises(tunefleet.InvalidArgumentError, match="gemm.cpp"):
        tunefleet.load_spec(small_gemm(), {"other.cpp": "int x;"})


def test_missing_command_line_is_a_tunefleet_error(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(tunefleet.TuneFleetError, match="TUNEFLEET_CLI") as raised:
        tunefleet.load_spec(small_gemm(), gemm_sources(), cli="/nonexistent/tunefleet")
    assert raised.value.code == grpc.StatusCode.FAILED_PRECONDITION
    assert "/nonexistent/tunefleet" in raised.value.message
    monkeypatch.delenv("TUNEFLEET_CLI")
    monkeypatch.setenv("PATH", "")
    with pytest.raises(tunefleet.TuneFleetError, match="TUNEFLEET_CLI"):
        tunefleet.load_spec(small_gemm(), gemm_sources())


def test_a_spec_the_coordinator_would_refuse_names_file_line_and_field(tmp_path: Path) -> None:
    spec = small_gemm()
    spec["search"] = {"strategy": "no_such_strategy"}
    path = write_spec(tmp_path, spec)
    line = path.read_text().splitlines().index("  strategy: no_such_strategy") + 1
    located = f"{path}:{line}: search.strategy: 'no_such_strategy' is not one of"
    with pytest.raises(tunefleet.InvalidArgumentError) as raised:
        tunefleet.load_spec(path)
    assert raised.value.message.startswith(located), raised.value.message
    with pytest.raises(tunefleet.InvalidArgumentError) as with_sources:
        tunefleet.load_spec(path, gemm_sources())
    assert with_sources.value.message == raised.value.message
    # A dict has no lines of its own: the field leads.
    with pytest.raises(tunefleet.InvalidArgumentError) as from_dict:
        tunefleet.load_spec(spec, gemm_sources())
    assert from_dict.value.message == raised.value.message.removeprefix(f"{path}:{line}: ")


def test_a_language_or_vendor_the_coordinator_would_refuse_is_refused_here(tmp_path: Path) -> None:
    for edit, refusal in [
        ({"language": "cdua"}, "language: 'cdua' is not one of cpp, cuda"),
        ({"target": {"vendor": "amd"}}, "target.vendor: 'amd' devices do not run cpp"),
    ]:
        path = write_spec(tmp_path, {**small_gemm(), **edit})
        with pytest.raises(tunefleet.InvalidArgumentError, match=refusal):
            tunefleet.load_spec(path)


def test_a_spec_file_the_coordinator_refuses_is_named(fleet: Fleet, tmp_path: Path) -> None:
    spec = small_gemm()
    # Its limits are the coordinator's own: 64 problems at most by default.
    spec["problems"] = [{"M": 16 * (i + 1), "N": 64, "K": 64} for i in range(65)]
    path = write_spec(tmp_path, spec)
    with client(fleet) as fleet_client:
        with pytest.raises(tunefleet.InvalidArgumentError) as raised:
            fleet_client.submit(path)
        assert raised.value.message.startswith(f"{path}: "), raised.value.message
        assert "65" in raised.value.message and "64" in raised.value.message
        with pytest.raises(tunefleet.InvalidArgumentError) as from_dict:
            fleet_client.submit(spec, sources=gemm_sources())
        assert from_dict.value.message == raised.value.message.removeprefix(f"{path}: ")


def test_submit_watch_results_best(fleet: Fleet) -> None:
    with client(fleet) as fleet_client:
        job = fleet_client.submit(small_gemm(), sources=gemm_sources(), priority=3)
        assert job.job_id > 0 and job.kernel == "gemm_f32_pytest" and job.priority == 3

        updates = list(fleet_client.watch(job.job_id))
        final = updates[-1]
        assert final.state == "succeeded", fleet.logs()
        assert final.done and not any(u.done for u in updates[:-1])
        done = [u.candidates_done for u in updates]
        assert done == sorted(done), "progress went backwards"
        assert final.candidates_total == 8 and final.candidates_done == 8
        assert final.configurations == 8 and final.builds_done == 8
        assert fleet_client.job(job.job_id) == final

        rows = fleet_client.results(job.job_id, as_frame=False)
        assert len(rows) == 8
        assert {r["status"] for r in rows} == {"ok"}
        medians = [r["median_ns"] for r in rows]
        # The winner of the finalists' re-timing first, then by the search's times.
        assert rows[0]["retime_winner"] and medians[0] > 0
        assert medians[1:] == sorted(medians[1:])
        assert all(r["problem"] == PROBLEM for r in rows)
        assert {tuple(r["config"]) for r in rows} == {("BM", "BN", "BK", "U")}
        # The keys of `tunefleet results --json`, row by row.
        as_json = json.loads(fleet.cli("results", str(job.job_id), "--json").stdout)
        assert [sorted(r) for r in rows] == [sorted(r) for r in as_json]

        best = fleet_client.best("gemm_f32_pytest", PROBLEM)
        assert best.exact and best.job_id == job.job_id
        assert best.config == rows[0]["config"]
        assert best.confirmed_by_retiming
        assert best.timing.median_ns == rows[0]["retiming"]["median_ns"]
        assert final.best[0].config == best.config and final.best[0].confirmed_by_retiming

        nearest = fleet_client.best("gemm_f32_pytest", {**PROBLEM, "M": 65})
        assert not nearest.exact and nearest.problem == PROBLEM

        # A misspelt variable or device class is not "not tuned": the
        # coordinator's answer names what the kernel is tuned for.
        with pytest.raises(tunefleet.NotFoundError) as misspelt:
            fleet_client.best("gemm_f32_pytest", {"M": 64, "N": 64, "k": 64})
        assert misspelt.value.message == (
            "no tuned configuration of kernel 'gemm_f32_pytest' for M=64,N=64,k=64 on any "
            "device class; its tuned problems have the variables K,M,N"
        )
        with pytest.raises(tunefleet.NotFoundError, match="the variables K,M,N"):
            tunefleet.best_config("gemm_f32_pytest", client=fleet_client, M=64, N=64, k=64)
        with pytest.raises(tunefleet.NotFoundError) as elsewhere:
            fleet_client.best("gemm_f32_pytest", PROBLEM, device_class="cpu/nope")
        assert elsewhere.value.message.endswith(f"; it is tuned on {best.device_class}")

        assert tunefleet.best_config(
            "gemm_f32_pytest", client=fleet_client, fallback={"BM": 8}, **PROBLEM
        ) == best.config
        assert tunefleet.best_config(
            "never_tuned", client=fleet_client, fallback={"BM": 8}, **PROBLEM
        ) == {"BM": 8}
        with pytest.raises(tunefleet.NotFoundError, match="never_tuned"):
            tunefleet.best_config("never_tuned", client=fleet_client, **PROBLEM)

        # Answered from the process's cache: no coordinator needed any more.
        fleet_client.close()
        assert fleet_client.best("gemm_f32_pytest", PROBLEM) == best


def test_kernels_lists_what_best_answers_for_with_its_owner(fleet: Fleet) -> None:
    # One kernel tuned by the submitter token's job (the token is named
    # "submitter"), one imported by an admin, which claims no name.
    spec = small_gemm()
    spec["kernel"] = "gemm_f32_listed"
    spec["params"] = {"BM": [16], "BN": [16], "BK": [16], "U": [1]}
    with client(fleet) as fleet_client:
        job = fleet_client.submit(spec, sources=gemm_sources())
        final = list(fleet_client.watch(job.job_id))[-1]
    assert final.state == "succeeded", fleet.logs()
    fleet.cli(
        "import", "results", str(REPO / "tests/data/spaces/convolution/W6600_T4.json.gz"),
        "--kernel", "conv_listed", "--device-class", "rdna-listed",
        "--problem", "problem_size_x=4096,problem_size_y=4096", token="admin",
    )
    with client(fleet, "reader") as reader:
        kernels = reader.kernels()
        on_rdna = reader.kernels(device_class="rdna-listed")
        assert reader.kernels(device_class="nowhere") == []
        with pytest.raises(TypeError, match="device_class"):
            reader.kernels(device_class=1)  # type: ignore[arg-type]
    names = [k.name for k in kernels]
    assert names == sorted(names)
    listed = {k.name: k for k in kernels}
    assert listed["gemm_f32_listed"] == tunefleet.Kernel(
        name="gemm_f32_listed",
        owner="submitter",
        tuned=1,
        device_classes=[final.device_class],
        last_tuned_unix_ms=final.updated_unix_ms,
    )
    conv = listed["conv_listed"]
    assert (conv.owner, conv.tuned, conv.device_classes) == ("", 1, ["rdna-listed"])
    assert conv.last_tuned_unix_ms >= final.updated_unix_ms
    assert on_rdna == [conv]
    # As `tunefleet kernels --json` prints them.
    as_json = json.loads(fleet.cli("--json", "kernels", token="reader").stdout)
    assert as_json == [dataclasses.asdict(k) for k in kernels]


def test_an_admin_sets_a_kernels_owner(fleet: Fleet) -> None:
    # Jobs that wait for a device no worker has: submitted, never run.
    spec = small_gemm()
    spec["kernel"] = "gemm_f32_handed"
    spec["target"] = {**spec["target"], "label": "nowhere"}
    team_b = fleet.cli(
        "token", "create", "--role", "submitter", "--name", "team-b", token="admin"
    ).stdout.strip()
    submitted: list[tuple[tunefleet.Client, int]] = []

    def submit(submitter: tunefleet.Client) -> None:
        submitted.append((submitter, submitter.submit(spec, sources=gemm_sources()).job_id))

    with client(fleet) as first, tunefleet.Client(fleet.address, token=team_b) as second, client(
        fleet, "admin"
    ) as admin:
        try:
            submit(first)  # the token named "submitter" takes the name
            with pytest.raises(tunefleet.PermissionDeniedError, match="belongs to another"):
                submit(second)
            for role in ("submitter", "worker"):
                with client(fleet, role) as refused, pytest.raises(
                    tunefleet.PermissionDeniedError, match="may not call SetKernelOwner"
                ):
                    refused.set_kernel_owner("gemm_f32_handed", "team-b")
            with pytest.raises(tunefleet.NotFoundError, match="no job or import"):
                admin.set_kernel_owner("gemm_f32_nowhere", "team-b")
            with pytest.raises(tunefleet.NotFoundError, match="named 'team-z'"):
                admin.set_kernel_owner("gemm_f32_handed", "team-z")
            with pytest.raises(tunefleet.InvalidArgumentError, match="None hands"):
                admin.set_kernel_owner("gemm_f32_handed", "")
            with pytest.raises(TypeError, match="team"):
                admin.set_kernel_owner("gemm_f32_handed", 1)  # type: ignore[arg-type]

            assert admin.set_kernel_owner("gemm_f32_handed", "team-b") == "submitter"
            submit(second)
            with pytest.raises(tunefleet.PermissionDeniedError, match="belongs to another"):
                submit(first)
            assert admin.set_kernel_owner("gemm_f32_handed") == "team-b"
            submit(first)  # the next to submit takes it
            with pytest.raises(tunefleet.PermissionDeniedError, match="belongs to another"):
                submit(second)
            # As `tunefleet kernels set-owner` prints it.
            printed = fleet.cli("kernels", "set-owner", "gemm_f32_handed", "team-b", token="admin")
            assert printed.stdout == "gemm_f32_handed: owner submitter -> team-b\n"
        finally:
            for submitter, job_id in submitted:
                submitter.cancel(job_id)


def test_results_frame(fleet: Fleet) -> None:
    pandas = pytest.importorskip("pandas")
    with client(fleet) as fleet_client:
        job = fleet_client.jobs()[-1]
        frame = fleet_client.results(job.job_id)
        assert isinstance(frame, pandas.DataFrame)
        assert {"status", "median_ns", "config.BM", "problem.M"} <= set(frame.columns)


def test_a_queued_job_says_what_it_waits_for(fleet: Fleet) -> None:
    spec = small_gemm()
    spec["target"] = {**spec["target"], "label": "nowhere"}
    with client(fleet) as fleet_client:
        job = fleet_client.submit(spec, sources=gemm_sources())
        try:
            assert job.state == "queued"
            assert job.waiting_for.startswith(
                "waiting for a worker with a device of vendor cpu, arch host, label nowhere "
                "(registered: 1 live worker, with devices cpu/"
            ), job.waiting_for
        finally:
            cancelled = fleet_client.cancel(job.job_id)
        assert cancelled.state == "cancelled" and cancelled.waiting_for == ""


def test_workers(fleet: Fleet) -> None:
    with client(fleet, "reader") as fleet_client:
        workers = fleet_client.workers()
    assert len(workers) == 1 and workers[0].alive
    assert [d.vendor for d in workers[0].devices] == ["cpu", "cpu"]
    assert "l1d_bytes" in workers[0].devices[0].properties
    assert workers[0].devices[0].toolchains["cpp"].startswith("g++")


def test_errors_carry_code_and_message(fleet: Fleet) -> None:
    with client(fleet) as fleet_client:
        with pytest.raises(tunefleet.NotFoundError) as raised:
            fleet_client.job(987654)
        assert raised.value.code == grpc.StatusCode.NOT_FOUND
        assert "987654" in raised.value.message
        with pytest.raises(tunefleet.InvalidArgumentError):
            fleet_client.job(0)
        with pytest.raises(tunefleet.NotFoundError, match="no tuned configuration"):
            fleet_client.best("never_tuned", PROBLEM)
        with pytest.raises(TypeError, match="M"):
            fleet_client.best("never_tuned", {"M": "large"})
        with pytest.raises(TypeError, match="mapping"):
            fleet_client.best("never_tuned", None)  # type: ignore[arg-type]
        with pytest.raises(tunefleet.InvalidArgumentError, match="M = 2361183241434822606848"):
            fleet_client.best("never_tuned", {"M": 2**71})
        with pytest.raises(tunefleet.InvalidArgumentError, match="priority 1099511627776"):
            fleet_client.submit(small_gemm(), sources=gemm_sources(), priority=2**40)
        # A cached "not tuned" is a new exception each time: one raised again
        # would carry every earlier caller's frames.
        raised_twice = []
        for _ in range(2):
            with pytest.raises(tunefleet.NotFoundError) as not_tuned:
                fleet_client.best("never_tuned", PROBLEM)
            raised_twice.append(not_tuned.value)
        assert raised_twice[0] is not raised_twice[1]
        assert raised_twice[0].message == raised_twice[1].message

    with client(fleet, "reader") as reader:
        with pytest.raises(tunefleet.PermissionDeniedError) as denied:
            reader.submit(small_gemm(), sources=gemm_sources())
        assert denied.value.code == grpc.StatusCode.PERMISSION_DENIED

    with tunefleet.Client(fleet.address, token="") as anonymous:
        with pytest.raises(tunefleet.UnauthenticatedError):
            anonymous.jobs()

    with tunefleet.Client(fleet.address, token="tf_999_notatoken") as stranger:
        with pytest.raises(tunefleet.UnauthenticatedError):
            stranger.jobs()


def test_several_addresses_reach_the_one_that_serves(fleet: Fleet) -> None:
    # 127.0.0.1:1: a standby that does not listen (yet), listed first.
    both = f"127.0.0.1:1,{fleet.address}"
    with tunefleet.Client(both, token_file=fleet.token_file("submitter")) as fleet_client:
        assert len(fleet_client.workers()) == 1
        with pytest.raises(tunefleet.NotFoundError, match="987654"):
            fleet_client.job(987654)
    with pytest.raises(tunefleet.InvalidArgumentError, match="'localhost': expected HOST:PORT"):
        tunefleet.Client(f"{fleet.address},localhost")


def test_exported_configs_answer_as_the_coordinator_does(fleet: Fleet, tmp_path: Path) -> None:
    # Three device classes, two problems on two; every query (exact, between
    # and outside the tuned sizes, zero and negative sizes, other variables,
    # each class, any, one not tuned) answers from the exported file as the
    # coordinator answers it, its not-found sentence included.
    kernel = "conv_exported"
    spaces = REPO / "tests/data/spaces/convolution"
    for recording, device_class, size in (
        ("A100_T4.json.gz", "ampere", 4096),
        ("A4000_T4.json.gz", "ampere", 1024),
        ("W6600_T4.json.gz", "rdna", 4096),
        # Sizes under 1 (offsets): -1000 is nearer -4 than 0, where the
        # slower recording answers.
        ("A100_T4.json.gz", "edge", 0),
        ("W6600_T4.json.gz", "edge", -4),
    ):
        fleet.cli(
            "import", "results", str(spaces / recording), "--kernel", kernel,
            "--device-class", device_class,
            "--problem", f"problem_size_x={size},problem_size_y=4096", token="admin",
        )
    path = tmp_path / "conv_best.json"
    fleet.cli("export", kernel, "--format", "json", "-o", str(path), token="reader")
    exported = tunefleet.ExportedConfigs.load(path)
    assert len(exported.entries) == 5
    problems = [
        {"problem_size_x": x, "problem_size_y": y}
        for x, y in ((4096, 4096), (1024, 1024), (2000, 1500), (3000, 3000), (512, 512),
                     (0, 0), (-3, 7), (1 << 40, 1), (-1000, 4096))
    ] + [{"problem_size_x": 4096}, {"image_width": 4096, "image_height": 4096}]
    with tunefleet.Client(fleet.address, token_file=fleet.token_file("reader")) as online:
        for device_class in (None, "ampere", "rdna", "edge", "volta"):
            for problem in problems:
                try:
                    expected = online.best(kernel, problem, device_class)
                except tunefleet.NotFoundError as not_found:
                    with pytest.raises(tunefleet.NotFoundError) as raised:
                        exported.best(kernel, problem, device_class)
                    end = not_found.message.find(";")
                    end = len(not_found.message) if end < 0 else end
                    said = not_found.message[:end] + " in the exported file" + not_found.message[end:]
                    assert raised.value.message == said
                    assert raised.value.reason == not_found.reason, said
                    continue
                answer = exported.best(kernel, problem, device_class)
                assert (answer.config, answer.problem, answer.exact, answer.device_class) == (
                    expected.config, expected.problem, expected.exact, expected.device_class
                ), f"{problem} on {device_class}"
    assert tunefleet.best_config(
        kernel, client=exported, problem_size_x=4096, problem_size_y=4096
    ) == online_config(fleet, kernel)
    with pytest.raises(tunefleet.NotFoundError, match="kernel 'other' .* in the exported file"):
        exported.best("other", {"M": 1})
    # A misspelt kernel name: the tuned kernels near it are named, online and
    # offline alike.
    misspelt = {"problem_size_x": 4096, "problem_size_y": 4096}
    with tunefleet.Client(fleet.address, token_file=fleet.token_file("reader")) as online:
        with pytest.raises(tunefleet.NotFoundError) as online_said:
            online.best("conv_exportd", misspelt)
    with pytest.raises(tunefleet.NotFoundError) as offline_said:
        exported.best("conv_exportd", misspelt)
    assert online_said.value.message.endswith(
        "on any device class; tuned kernels of a similar name: conv_exported"
    ), online_said.value.message
    assert offline_said.value.message == online_said.value.message.replace(
        "any device class;", "any device class in the exported file;"
    )
    (tmp_path / "not_an_export.json").write_text('{"format": "something else"}')
    with pytest.raises(tunefleet.InvalidArgumentError, match='not_an_export.json: format must be'):
        tunefleet.ExportedConfigs.load(tmp_path / "not_an_export.json")


def test_best_config_warns_once_of_a_query_that_cannot_find_anything(
    fleet: Fleet, tmp_path: Path
) -> None:
    kernel = "conv_reasons"
    spaces = REPO / "tests/data/spaces/convolution"
    for device_class in ("ampere", "edge"):
        fleet.cli(
            "import", "results", str(spaces / "A100_T4.json.gz"), "--kernel", kernel,
            "--device-class", device_class, "--problem",
            "problem_size_x=4096,problem_size_y=4096", token="admin",
        )
    fallback = {"block_size_x": 1}
    misspelt = {"problem_size_x": 4096, "problem_size_Y": 4096}
    shape = {"problem_size_x": 4096, "problem_size_y": 4096}
    path = tmp_path / "conv_reasons.json"
    fleet.cli("export", kernel, "--format", "json", "-o", str(path), token="reader")
    exported = tunefleet.ExportedConfigs.load(path)
    with tunefleet.Client(fleet.address, token_file=fleet.token_file("reader")) as online:
        # The reason, online and from the exported file alike.
        for name, problem, device_class, reason in (
            ("never_tuned_reasons", shape, None, tunefleet.NotFoundError.NOT_TUNED),
            (kernel, misspelt, None, tunefleet.NotFoundError.OTHER_VARIABLES),
            (kernel, shape, "volta", tunefleet.NotFoundError.OTHER_DEVICE_CLASS),
            (kernel, {"problem_size_x": 4096}, "ampere", tunefleet.NotFoundError.OTHER_VARIABLES),
            (kernel, misspelt, "volta", tunefleet.NotFoundError.OTHER_VARIABLES),
        ):
            for answering in (online, exported):
                with pytest.raises(tunefleet.NotFoundError) as raised:
                    answering.best(name, problem, device_class)
                assert raised.value.reason == reason, (answering, raised.value.message)
        assert online.best(kernel, shape).config == exported.best(kernel, shape).config

        # Not tuned: the fallback, quietly (a warning would be an error here).
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            for _ in range(2):
                assert tunefleet.best_config(
                    "never_tuned_reasons", client=online, fallback=fallback, **shape
                ) == fallback
                assert tunefleet.best_config(
                    "never_tuned_reasons", client=exported, fallback=fallback, **shape
                ) == fallback

        # A misspelt variable, an unknown device class: the fallback, and a
        # warning saying what the kernel is tuned for, once per (kernel,
        # variables, device class), whatever the sizes.
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            for size in (4096, 1024, 4096):
                assert tunefleet.best_config(
                    kernel, client=online, fallback=fallback,
                    problem_size_x=size, problem_size_Y=size,
                ) == fallback
            for size in (4096, 1024):
                assert tunefleet.best_config(
                    kernel, client=online, fallback=fallback, device_class="volta",
                    problem_size_x=size, problem_size_y=size,
                ) == fallback
            # From the exported file too (another misspelling: each warns once).
            for _ in range(2):
                assert tunefleet.best_config(
                    kernel, client=exported, fallback=fallback,
                    problem_size_X=4096, problem_size_y=4096,
                ) == fallback
        said = [str(w.message) for w in caught]
        assert said == [
            f"tunefleet: no tuned configuration of kernel '{kernel}' for "
            "problem_size_x=4096,problem_size_Y=4096 on any device class; its tuned problems "
            "have the variables problem_size_x,problem_size_y; using the fallback "
            "configuration",
            f"tunefleet: no tuned configuration of kernel '{kernel}' for "
            "problem_size_x=4096,problem_size_y=4096 on device class 'volta'; it is tuned on "
            "ampere, edge; using the fallback configuration",
            f"tunefleet: no tuned configuration of kernel '{kernel}' for "
            "problem_size_X=4096,problem_size_y=4096 on any device class in the exported file; "
            "its tuned problems have the variables problem_size_x,problem_size_y; using the "
            "fallback configuration",
        ], said
        assert all(w.category is UserWarning and w.filename == __file__ for w in caught)
        # Without a fallback, the error, as before.
        with pytest.raises(tunefleet.NotFoundError, match="it is tuned on ampere, edge"):
            tunefleet.best_config(kernel, client=online, device_class="volta", **shape)


def online_config(fleet: Fleet, kernel: str) -> dict[str, object]:
    with tunefleet.Client(fleet.address, token_file=fleet.token_file("reader")) as online:
        return online.best(kernel, {"problem_size_x": 4096, "problem_size_y": 4096}).config


def test_an_argument_of_the_wrong_type_is_a_type_error_naming_it() -> None:
    # Before, protobuf's words ("5 has type int, but expected one of: bytes,
    # unicode"), an AttributeError, or a call sent to the coordinator.
    with pytest.raises(TypeError, match="timeout_s must be int or float, got '5'"):
        tunefleet.Client("127.0.0.1:1", timeout_s="5")  # type: ignore[arg-type]
    with tunefleet.Client("127.0.0.1:1", timeout_s=1) as nobody:
        calls = {
            "kernel must be str, got 5": lambda: nobody.best(5, {"M": 1}),  # type: ignore[arg-type]
            "kernel must be str, got None": lambda: nobody.best(None, {"M": 1}),  # type: ignore[arg-type]
            "device_class must be str, got 3": lambda: nobody.best("k", {"M": 1}, 3),  # type: ignore[arg-type]
            "job_id must be int, got '1'": lambda: nobody.job("1"),  # type: ignore[arg-type]
            "job_id must be int, got True": lambda: nobody.cancel(True),
            "limit must be int, got 2.5": lambda: nobody.jobs(2.5),  # type: ignore[arg-type]
            "spec must be str or PathLike or Mapping, got 42": lambda: nobody.submit(42),  # type: ignore[arg-type]
            r"sources \(\{relative path: content\}\) must be Mapping, got \['gemm.cpp'\]": (
                lambda: nobody.submit({"name": "k"}, sources=["gemm.cpp"])  # type: ignore[arg-type]
            ),
        }
        for message, call in calls.items():
            with pytest.raises(TypeError, match=message):
                call()
        with pytest.raises(TypeError, match="job_id must be int"):
            next(nobody.watch("7"))  # type: ignore[arg-type]


def test_unreachable_coordinator(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with tunefleet.Client("127.0.0.1:1", token="x", timeout_s=2) as nobody:
        with pytest.raises(tunefleet.UnavailableError, match="cannot reach coordinator at 127.0.0.1:1"):
            nobody.jobs()
        with pytest.warns(UserWarning, match="cannot reach"):
            assert tunefleet.best_config("k", client=nobody, fallback={"BM": 1}, M=1) == {"BM": 1}
        # The fallback answers the outage, not a wrong argument.
        with pytest.raises(TypeError, match="N must be an integer"):
            tunefleet.best_config("k", client=nobody, fallback={"BM": 1}, M=1, N="x")
    for address in ("localhost", "127.0.0.1:50051x"):
        with pytest.raises(tunefleet.InvalidArgumentError, match="expected HOST:PORT"):
            tunefleet.Client(address)
    # A token that is not one line of visible ASCII is refused naming where it
    # came from, never printed (gRPC would refuse it, printing it).
    secret = "tf_1_0123456789abcdef"
    for given in ({"token": secret + "\n"}, {"token_file": tmp_path / "two_lines.token"}):
        (tmp_path / "two_lines.token").write_text(secret + "\nsecond line\n")
        with pytest.raises(tunefleet.InvalidArgumentError, match="the token has a line break at "
                           "character 22") as raised:
            tunefleet.Client("127.0.0.1:1", **given)
        assert secret not in str(raised.value)
    monkeypatch.setenv("TUNEFLEET_TOKEN", secret + " x")
    with pytest.raises(tunefleet.InvalidArgumentError, match="TUNEFLEET_TOKEN: the token has a "
                       "space at character 22"):
        tunefleet.Client("127.0.0.1:1")
    monkeypatch.delenv("TUNEFLEET_TOKEN")
    missing = tmp_path / "missing.token"
    with pytest.raises(tunefleet.InvalidArgumentError, match=f"token file {missing}: No such file"):
        tunefleet.Client("127.0.0.1:1", token_file=missing)
    with pytest.raises(tunefleet.InvalidArgumentError, match="tls_ca .*: No such file"):
        tunefleet.Client("127.0.0.1:1", token="x", tls_ca=tmp_path / "missing.pem")
    with pytest.raises(tunefleet.InvalidArgumentError, match="port 99999 is out of range"):
        tunefleet.Client("127.0.0.1:99999")
