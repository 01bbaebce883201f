"""One executor configuration (``wikiref_dataset/process/executors.py``): the base the three build configs extend, its checks,
its command-line options, and datatrove's console logs switched off by ``--quiet`` (also in the tasks' processes)
while its log files keep everything."""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import subprocess
import sys
import textwrap

import pytest

from wikiref_dataset.aquamuse.build import AQuaMuSeBuildConfig
from wikiref_dataset.process.executors import EXECUTORS, ExecutorConfig, add_executor_arguments, executor_settings
from wikiref_dataset.psg2sum.pipeline import Psg2SumBuildConfig
from wikiref_dataset.wikiref.build import BuildConfig

SHARED = ["output_dir", "work_dir", "overwrite", "tasks", "workers", "executor", "executor_options"]
CONFIGS = [(BuildConfig, {"dumps": ["d.xml"]}, 4), (Psg2SumBuildConfig, {"dumps": ["h.xml"]}, 1),
           (AQuaMuSeBuildConfig, {"nq": ["n.jsonl"], "corpus": ["c.jsonl"]}, None)]


def test_every_field_has_help_mirrored_in_the_docstring():
    for item in dataclasses.fields(ExecutorConfig):
        assert item.metadata["help"] and item.metadata["flag"].startswith("--")
        assert f"{item.name} (`" in ExecutorConfig.__doc__


@pytest.mark.parametrize(("config_class", "inputs", "tasks"), CONFIGS)
def test_the_three_builds_share_one_base(tmp_path, config_class, inputs, tasks):
    assert issubclass(config_class, ExecutorConfig)
    assert [item.name for item in dataclasses.fields(config_class)][:len(SHARED)] == SHARED
    config = config_class(**inputs, output_dir=tmp_path / "out")
    assert config.tasks == tasks and config.workers == 1 and config.executor == "local"
    assert config.output_dir == str(tmp_path / "out") and config.work == tmp_path / "out.work"
    assert config_class(**inputs, output_dir="o", work_dir=tmp_path / "w").work == tmp_path / "w"
    for bad in ({"workers": 0}, {"tasks": 0}, {"executor": "kubernetes"}, {"executor_options": "[]"},
                {"output_dir": ""}):
        with pytest.raises(ValueError):
            config_class(**inputs, **{"output_dir": "o", **bad})
    with pytest.raises(TypeError):  # only the inputs are positional: a second positional is a mistake, not `mining`
        config_class(*inputs.values(), "out")


def test_shards_is_the_old_name_of_wikiref_tasks():
    config = BuildConfig(["d.xml"], output_dir="o", tasks=3)
    assert config.shards == 3
    with pytest.raises(ValueError, match="no dump file"):
        BuildConfig([], output_dir="o")


def test_options_come_from_the_fields_and_make_the_config():
    parser = argparse.ArgumentParser()
    groups = add_executor_arguments(parser, tasks_help="what the tasks share out")
    assert set(groups) == {"output", "execution"}
    helps = {option: action.help for action in parser._actions for option in action.option_strings}
    fields = {item.name: item for item in dataclasses.fields(ExecutorConfig)}
    assert helps["--out"] == fields["output_dir"].metadata["help"] and helps["--tasks"] == "what the tasks share out"
    assert helps["--executor-options"] == fields["executor_options"].metadata["help"]
    args = parser.parse_args(["--out", "o", "--workers", "3", "--executor", "ray", "--executor-options",
                              '{"address": "ray://head:10001"}'])
    settings = executor_settings(args)
    assert settings == {"output_dir": "o", "work_dir": None, "overwrite": False, "workers": 3, "executor": "ray",
                        "executor_options": {"address": "ray://head:10001"}}  # an unset --tasks: the build's default
    assert BuildConfig(["d.xml"], **settings).tasks == 4
    assert Psg2SumBuildConfig(["h.xml"], **executor_settings(parser.parse_args(["--out", "o", "--tasks", "5"]))).tasks == 5
    for bad in (["--out", "o", "--tasks", "0"], ["--out", "o", "--executor-options", "[]"], ["--executor", "local"],
                ["--out", "o", "--executor", "k8s"]):
        with pytest.raises(SystemExit):
            parser.parse_args(bad)
    assert EXECUTORS == ("local", "slurm", "ray")


QUIET_RUN = textwrap.dedent("""
    import sys
    from datatrove.data import Document
    from datatrove.pipeline.writers import JsonlWriter
    from wikiref_dataset.process.console import datatrove_console
    from wikiref_dataset.process.executors import local_executor

    def main(logs, workers, folder):
        with datatrove_console(logs=logs):
            documents = [Document(text=f"text {n}", id=str(n)) for n in range(4)]
            local_executor([documents, JsonlWriter(folder + "/out")], tasks=2, workers=workers,
                           logging_dir=folder + "/logs").run()
        print("done")

    if __name__ == "__main__":
        main(sys.argv[1] == "logs", int(sys.argv[2]), sys.argv[3])
""")


@pytest.mark.parametrize("workers", [1, 2])
def test_quiet_console_keeps_the_log_files(tmp_path, workers):
    """datatrove's console lines (its INFO and its statistics) go away in the tasks' processes too; the task log
    files keep them."""
    script = tmp_path / "run.py"
    script.write_text(QUIET_RUN, encoding="utf-8")
    runs = {}
    for mode in ("logs", "quiet"):
        folder = tmp_path / mode
        runs[mode] = subprocess.run([sys.executable, str(script), mode, str(workers), str(folder)],
                                    capture_output=True, text=True, timeout=120)
        assert runs[mode].returncode == 0, runs[mode].stderr[-2000:]
        assert runs[mode].stdout.strip() == "done"
        logs = sorted((folder / "logs" / "logs").glob("task_*.log"))
        assert len(logs) == 2 and all("Launching pipeline for rank" in path.read_text() for path in logs)
    assert "INFO" in runs["logs"].stderr and "Launching pipeline" in runs["logs"].stderr
    assert runs["quiet"].stderr.strip() == ""


FAILING_RUN = textwrap.dedent("""
    import sys
    from datatrove.pipeline.base import PipelineStep
    from wikiref_dataset.process.console import datatrove_console
    from wikiref_dataset.process.executors import local_executor

    class Fails(PipelineStep):
        name = "fails"

        def run(self, data=None, rank=0, world_size=1):
            raise RuntimeError(f"server gone in task {rank}")
            yield

    def main(workers, folder):
        with datatrove_console(logs=False):
            try:
                local_executor([Fails()], tasks=2, workers=workers, logging_dir=folder + "/logs").run()
            except Exception as error:
                print("raised:", type(error).__name__)

    if __name__ == "__main__":
        main(int(sys.argv[1]), sys.argv[2])
""")


@pytest.mark.parametrize("workers", [1, 2])
def test_quiet_console_shows_a_failed_task_in_one_line(tmp_path, workers):
    """Quiet, a task that raises prints one line (its message) on the console, not datatrove's traceback with
    variable values; the task's log file keeps the traceback."""
    script = tmp_path / "fail.py"
    script.write_text(FAILING_RUN, encoding="utf-8")
    run = subprocess.run([sys.executable, str(script), str(workers), str(tmp_path)], capture_output=True, text=True,
                         timeout=120)
    assert "raised:" in run.stdout, run.stderr[-2000:]
    assert "Traceback" not in run.stderr, run.stderr[-2000:]
    failed = [line for line in run.stderr.splitlines() if "server gone in task" in line]
    assert failed and all(line.startswith("datatrove: server gone in task") for line in failed)
    logs = sorted((tmp_path / "logs" / "logs").glob("task_*.log"))
    assert logs and any("Traceback" in path.read_text() for path in logs)


# ---- how the workers start -----------------------------------------------------------------------------------------

START_METHOD = textwrap.dedent("""
    import json, sys, threading
    from wikiref_dataset.process.executors import worker_start_method
    import wikiref_dataset.wikiref.build, wikiref_dataset.wiki.steps, wikiref_dataset.web.documents  # a build's imports
    seen = {"build": worker_start_method()}
    import fsspec.asyn
    fsspec.asyn.get_loop()  # fsspec's IO thread, which datatrove's folders start
    seen["fsspec thread"] = worker_start_method()
    other = []
    caller = threading.Thread(target=lambda: other.append(worker_start_method()))
    caller.start()
    caller.join()
    seen["from another thread"] = other[0]
    stop = threading.Event()
    threading.Thread(target=stop.wait, name="some-library").start()
    seen["another thread running"] = worker_start_method()
    stop.set()
    import torch
    seen["torch imported"] = worker_start_method()
    print(json.dumps(seen))
""")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="fork is used on Linux only")
def test_workers_are_forked_only_where_forking_is_safe():
    """A fresh process, as a command: a build's modules allow fork (fsspec's own thread too); any other running
    thread, a call from another thread, or torch imported means the fork server."""
    result = subprocess.run([sys.executable, "-c", START_METHOD], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr[-2000:]
    assert json.loads(result.stdout) == {"build": "fork", "fsspec thread": "fork", "from another thread": "forkserver",
                                         "another thread running": "forkserver", "torch imported": "forkserver"}


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="fork is used on Linux only")
def test_a_build_command_forks_its_workers_and_gives_the_same_dataset(tmp_path):
    """`wikiref build --workers 2` forks its workers (datatrove records the start method in each stage's
    executor.json) and writes the same Parquet and card as one worker, which runs the tasks in its own process."""
    from wikiref_dataset.wikiref.build import dataset_hashes, sample_inputs

    dumps, warcs = sample_inputs()
    for workers in ("1", "2"):
        result = subprocess.run([sys.executable, "-m", "wikiref_dataset.cli", "build", *dumps, "--warc", *warcs,
                                 "--out", str(tmp_path / workers), "--tasks", "2", "--workers", workers, "--quiet"],
                                capture_output=True, text=True, timeout=300, env={**os.environ, "HF_HUB_OFFLINE": "1"})
        assert result.returncode == 0, result.stderr[-2000:]
    for stage in ("statements", "documents", "statistics", "curation"):
        executor = json.loads((tmp_path / "2.work" / "logs" / stage / "executor.json").read_text())
        assert executor["start_method"] == "fork", stage
    assert dataset_hashes(tmp_path / "2") == dataset_hashes(tmp_path / "1")
    assert (tmp_path / "2" / "README.md").read_bytes() == (tmp_path / "1" / "README.md").read_bytes()


WARMED_RUN = textwrap.dedent("""
    import json, os, sys
    from datatrove.pipeline.base import PipelineStep
    from wikiref_dataset import text
    from wikiref_dataset.process.console import datatrove_console
    from wikiref_dataset.process.executors import local_executor

    built = sys.argv[2] + "/built"
    real_build = text._build_pipeline

    def counting_build(*key):
        with open(built, "a") as handle:
            handle.write(json.dumps([os.getpid(), list(key)]) + "\\n")
        return real_build(*key)

    text._build_pipeline = counting_build

    class Tokenizes(PipelineStep):
        name = "tokenizes"

        def __init__(self):
            super().__init__()
            self.settings = {"texts": [text.TextPipeline(text.TextConfig(model="blank", max_length=123_456))]}
            self.text = text.TextPipeline(text.TextConfig(model="blank", newline_breaks="line"))

        def run(self, data=None, rank=0, world_size=1):
            tokens = self.settings["texts"][0].tokenize("Bees make honey. Hives sit on roofs.")
            tokens += self.text.tokenize("One line.\\nAnother line.")
            with open(f"{sys.argv[2]}/task_{rank}", "w") as handle:
                handle.write(json.dumps([os.getpid(), len(tokens)]))
            yield from ()

    if __name__ == "__main__":
        with datatrove_console(logs=False):
            local_executor([Tokenizes()], tasks=4, workers=2, start_method=sys.argv[1],
                           logging_dir=sys.argv[2] + "/logs").run()
        print(os.getpid())
""")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="fork is used on Linux only")
def test_forked_workers_inherit_the_steps_pipelines(tmp_path):
    """With forked workers, the spaCy pipelines of a stage's steps (found in their attributes, also inside dicts and
    lists) are built once, in the command's process, before the fork: no worker builds one. The fork server's workers
    build their own (they do not come from the command's process)."""
    script = tmp_path / "run.py"
    script.write_text(WARMED_RUN, encoding="utf-8")
    for method in ("fork", "forkserver"):
        folder = tmp_path / method
        folder.mkdir()
        result = subprocess.run([sys.executable, str(script), method, str(folder)], capture_output=True, text=True,
                                timeout=120)
        assert result.returncode == 0, result.stderr[-2000:]
        main = int(result.stdout.split()[-1])
        tasks = [json.loads((folder / f"task_{rank}").read_text()) for rank in range(4)]
        assert len({tokens for _, tokens in tasks}) == 1 and tasks[0][1] > 10 and main not in {pid for pid, _ in tasks}
        builds = [json.loads(line) for line in (folder / "built").read_text().splitlines()]
        if method == "fork":
            assert sorted(pid for pid, _ in builds) == [main, main]  # the two configurations, here, once each
        else:
            assert main not in {pid for pid, _ in builds} and len(builds) >= 2


@pytest.mark.parametrize("executor", ["local", "ray"])
def test_quiet_console_reaches_the_task_logger_each_executor_calls(monkeypatch, tmp_path, executor):
    """--quiet swaps datatrove's task logger for the quiet one in the module whose `_run_for_rank` runs the task: the
    Ray executor calls its own module's copy (`datatrove.executor.ray.add_task_logger`), which a patch of
    `datatrove.executor.base` alone left as it was, so Ray tasks kept datatrove's console format and the disk-full
    filter. Both names are back afterwards."""
    import datatrove.executor.base as base_module

    from wikiref_dataset.process import datatrove_executors as executors

    if executor == "ray":
        import datatrove.executor.ray as module

        parent, cls = module.RayPipelineExecutor, executors.RayExecutor
    else:
        module, parent, cls = base_module, base_module.PipelineExecutor, executors.LocalExecutor
    seen = {}

    def run_for_rank(self, rank, local_rank=0, node_rank=-1):
        seen["logger"] = module.add_task_logger
        return "stats"

    monkeypatch.setattr(parent, "_run_for_rank", run_for_rank)
    original = module.add_task_logger
    runner = cls(pipeline=[], logging_dir=str(tmp_path / "logs"), tasks=1)
    runner.console_logs = False
    assert runner._run_for_rank(0) == "stats"
    assert seen["logger"] is executors._quiet_task_logger
    assert module.add_task_logger is original and base_module.add_task_logger is not executors._quiet_task_logger
