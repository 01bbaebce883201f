"""Every example in examples/ runs as a user would run it (a subprocess from the project root) on real outputs of the
project: a built WikiRef folder, a saved Q-BERT folder, the DUC metric, and `accelerate launch` of finetune_duc.py
with two CPU processes through examples/finetune_duc.sh and examples/accelerate_cpu.yaml."""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from safetensors.torch import load_file

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"


def run(*command: str, timeout: float = 120, **env: str) -> subprocess.CompletedProcess:
    environment = {**os.environ, "OMP_NUM_THREADS": "1", "HF_HUB_OFFLINE": "1", **env}
    return subprocess.run(command, cwd=ROOT, env=environment, capture_output=True, text=True, timeout=timeout)


def test_load_wikiref(demo_wikiref, tmp_path):
    result = run(sys.executable, str(EXAMPLES / "load_wikiref.py"), str(demo_wikiref),
                 HF_DATASETS_CACHE=str(tmp_path))
    assert result.returncode == 0, result.stderr[-2000:]
    assert "DatasetDict" in result.stdout and "num_rows: 17" in result.stdout
    assert "query:" in result.stdout and "oracle sentences:" in result.stdout
    usage = run(sys.executable, str(EXAMPLES / "load_wikiref.py"))
    assert usage.returncode != 0 and "usage:" in usage.stderr


@pytest.mark.parametrize("rule", ["duc", "ilp"])
def test_summarize(tiny_qbert_dir, tmp_path, rule):
    """The example on a model fine-tuned with the paper's rule and on one fine-tuned with the `sentence-encoder`
    recipe's (ILP): several documents are summarized with the model's own rule, as its docstring says."""
    model = tmp_path / "model"
    shutil.copytree(tiny_qbert_dir, model)
    config = json.loads((model / "config.json").read_text())
    (model / "config.json").write_text(json.dumps({**config, "cluster_selection": rule}))
    result = run(sys.executable, str(EXAMPLES / "summarize.py"), str(model))
    assert result.returncode == 0, result.stderr[-2000:]
    assert "1 document(s), wikiref rule:" in result.stdout
    assert f"2 document(s), {rule} rule:" in result.stdout
    assert result.stdout.count("] ") >= 2  # selected sentences with their scores
    docstring = (EXAMPLES / "summarize.py").read_text().split('"""')[1]
    assert "the model's cluster rule" in docstring and f"`{rule}`" in docstring


def test_duc_metric():
    result = run(sys.executable, str(EXAMPLES / "duc_metric.py"))
    assert result.returncode == 0, result.stderr[-2000:]
    lines = result.stdout.splitlines()
    assert [line.split(":")[0] for line in lines] == ["rouge_1", "rouge_2", "rouge_su4"]

    from wikiref_dataset.rouge import rouge

    namespace: dict = {}
    exec(compile((EXAMPLES / "duc_metric.py").read_text().split("metric = ")[0], "duc_metric", "exec"), namespace)
    expected = rouge(namespace["predictions"], namespace["references"])
    assert f"recall {expected.averages['rouge_2'].recall:.5f}" in lines[1]


def test_finetune_duc_under_accelerate_launch_with_two_cpu_processes(tiny_qbert_dir, duc_years, tmp_path):
    import torch.distributed as dist

    if not dist.is_available() or not dist.is_gloo_available():
        pytest.skip("this torch build has no gloo backend: two CPU processes cannot form a process group")
    assert shutil.which("accelerate", path=str(Path(sys.executable).parent)), \
        "the accelerate command is not installed next to this Python (accelerate is a dependency of the project)"
    out = tmp_path / "finetuned"
    environment = {"PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
                   "HF_DATASETS_CACHE": str(tmp_path / "cache")}
    try:
        result = run("bash", str(EXAMPLES / "finetune_duc.sh"), str(tiny_qbert_dir), duc_years[2005],
                     duc_years[2006], duc_years[2007], str(out), "--max_steps", "2", "--per_device_train_batch_size",
                     "2", "--disable_tqdm", "true", "--learning_rate", "1e-2", "--baselines", "lead",
                     timeout=300, **environment)
    except subprocess.TimeoutExpired as error:  # a broken data-parallel setup must not read as a skip
        output = [(value.decode(errors="replace") if isinstance(value, bytes) else value or "")[-2500:]
                  for value in (error.stdout, error.stderr)]
        pytest.fail("accelerate launch with 2 CPU processes did not finish in 300 s:\n" + "\n---\n".join(output))
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-3000:]
    results = json.loads((out / "results.json").read_text())
    assert results["finetuning"]["hyperparameters"]["world_size"] == 2  # two data-parallel processes trained
    assert results["finetuning"]["steps"] == 2
    assert list(results["evaluation"]["systems"]) == ["Q-BERT", "LEAD"]
    from modeling_qbert.sparse import SUBNETWORK_MASK_NAME, load_subnetwork_mask

    masks, _ = load_subnetwork_mask(out / SUBNETWORK_MASK_NAME)
    before, after = load_file(tiny_qbert_dir / "model.safetensors"), load_file(out / "model.safetensors")
    for name, mask in masks.items():
        assert torch.equal(after[name][~mask], before[name][~mask]), name


def test_finetune_launch_script_usage():
    result = run("bash", str(EXAMPLES / "finetune_duc.sh"))
    assert result.returncode == 2 and "MODEL_DIR DUC2005_DIR" in result.stdout
