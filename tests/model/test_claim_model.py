"""The Promela model of the claim / heartbeat / reclaim / fenced-settle protocol
(docs/model/claim.pml), checked by Spin: the protocol verifies, and the variant without a fence
on settle is rejected with a counterexample. Spin is a Debian package (`spin`); .ci/run installs
it when it is missing, and these tests fail (never skip) without it."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

MODEL = Path(__file__).resolve().parents[2] / "docs" / "model" / "claim.pml"

pytestmark = pytest.mark.model

# Safety (assertions, invalid end states) on the model's full size: 3 workers, 2 reapers,
# 2 crashes. Liveness (the LTL property, weak fairness) on a smaller one that checks in
# seconds; docs/reliability.md has the full-size liveness run.
SMALL = ("-DWORKERS=2", "-DREAPERS=1", "-DMAX_CRASHES=1")


def spin_binary() -> str:
    found = shutil.which("spin")
    assert found is not None, "Spin is not installed: apt-get install -y spin (see .ci/run)"
    return found


def verify(directory: Path, *defines: str, liveness: bool) -> subprocess.CompletedProcess[str]:
    """spin -a, gcc, ./pan in `directory`; returns pan's run."""
    directory.mkdir(parents=True, exist_ok=True)
    model = directory / MODEL.name
    shutil.copyfile(MODEL, model)
    subprocess.run(
        [spin_binary(), *defines, "-a", model.name],
        cwd=directory,
        check=True,
        capture_output=True,
        text=True,
    )
    flags = ["-DNFAIR=3"] if liveness else ["-DSAFETY", "-DNOCLAIM"]
    subprocess.run(
        ["gcc", "-O2", *flags, "-o", "pan", "pan.c"], cwd=directory, check=True, capture_output=True
    )
    arguments = ["./pan", "-m100000"] + (["-a", "-f"] if liveness else [])
    return subprocess.run(
        arguments, cwd=directory, capture_output=True, text=True, timeout=600, check=False
    )


def errors(run: subprocess.CompletedProcess[str]) -> int:
    for line in run.stdout.splitlines():
        if "errors:" in line:
            return int(line.rsplit("errors:", 1)[1].split()[0])
    raise AssertionError(f"no result in pan's output:\n{run.stdout}\n{run.stderr}")


def test_the_protocol_keeps_its_safety_properties(tmp_path: Path) -> None:
    run = verify(tmp_path, liveness=False)
    assert errors(run) == 0, run.stdout
    assert "Full statespace search" in run.stdout
    assert "assertion violations\t+" in run.stdout


def test_no_job_is_lost(tmp_path: Path) -> None:
    run = verify(tmp_path, *SMALL, liveness=True)
    assert errors(run) == 0, run.stdout
    assert "never claim         \t+ (no_lost_job)" in run.stdout
    assert "acceptance   cycles \t+ (fairness enabled)" in run.stdout


def test_without_reapers_a_crashed_workers_job_is_lost(tmp_path: Path) -> None:
    """The liveness check is not vacuous: take the reapers away and it fails."""
    run = verify(tmp_path, "-DWORKERS=2", "-DREAPERS=0", "-DMAX_CRASHES=1", liveness=True)
    assert errors(run) >= 1
    assert "acceptance cycle" in run.stdout


def test_settle_without_a_fence_is_rejected_with_a_counterexample(tmp_path: Path) -> None:
    run = verify(tmp_path, "-DBROKEN", liveness=False)
    assert errors(run) >= 1
    assert "assertion violated" in run.stdout
    trail = tmp_path / f"{MODEL.name}.trail"
    assert trail.exists()
    replay = subprocess.run(
        [spin_binary(), "-DBROKEN", "-t", "-p", MODEL.name],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert "assertion violated" in replay.stdout
