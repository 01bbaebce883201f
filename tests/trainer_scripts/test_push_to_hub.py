"""push_to_hub.py against a Hub-compatible server on 127.0.0.1 (tests/hub_server.py): push a tiny Q-BERT, a WikiRef
folder and the DUC ROUGE metric, then load all three back in a fresh process that knows only the endpoint — the model
through trust_remote_code (modeling_qbert made unimportable there), the dataset with load_dataset, the metric with
evaluate.load — and compare with the local objects."""

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest
import torch
from transformers import BertTokenizer

from trainer_scripts import push_to_hub
from trainer_scripts.push_to_hub import PushError, check_dataset_folder, check_model_folder

ROOT = Path(__file__).resolve().parents[2]


def _load_hub_server():
    """tests/hub_server.py by path (putting tests/ on sys.path would shadow the packages with the test folders)."""
    spec = importlib.util.spec_from_file_location("hub_server", ROOT / "tests" / "hub_server.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("hub_server", module)
    spec.loader.exec_module(module)
    return module


HubServer = _load_hub_server().HubServer

WORDS = "the a of was in on cat dog sat mat king queen born city river runs . ,".split()
QUERY = ["cat", "mat"]
SENTENCES = ["the cat sat on the mat .", "a dog runs .", "the king was born in the city ."]
PREDICTIONS = ["the cat sat on the mat\nthe dog ran", "a king was born"]
REFERENCES = [["a cat sat on a mat", "the cat was on the mat"], ["the queen was born in a city"]]
RESULTS = {"script": "pretrain_wikiref", "run": {"kind": "demo", "date": "2026-11-20", "command": "test"},
           "base_model": "tiny random BERT", "objective": "classification",
           "pretraining": {"dataset": "org/wikiref", "examples": {"train": 17, "validation": 1}, "steps": 0,
                           "validation": {"examples": 1, "threshold": 0.5, "rouge_1_f": 0.25, "rouge_2_f": 0.125,
                                          "rouge_l_f": 0.2}},
           "finetuning": None, "evaluation": None}

# Runs in a fresh interpreter with HF_ENDPOINT set to the test Hub; prints one JSON line.
LOAD_BACK = r'''
import json, sys
sys.modules["modeling_qbert"] = None  # the trust_remote_code path must not fall back on the installed package
import torch
from transformers import AutoModel, AutoProcessor

query, sentences = json.loads(sys.argv[1]), json.loads(sys.argv[2])
model = AutoModel.from_pretrained("org/qbert-wikiref", trust_remote_code=True).eval()
processor = AutoProcessor.from_pretrained("org/qbert-wikiref", trust_remote_code=True)
inputs = processor(query, sentences, return_tensors="pt")
mapping = [inputs.pop("example_index"), inputs.pop("sentence_index")]
with torch.no_grad():
    scores = processor.gather_sentence_scores(model(**inputs).scores, *mapping, [len(sentences)])[0]
out = {"model_module": type(model).__module__, "processor_module": type(processor).__module__, "scores": scores}

card = open(__import__("huggingface_hub").hf_hub_download("org/qbert-wikiref", "README.md")).read()
snippets = card.split("```python\n")
namespace = {}
exec(snippets[1].split("```")[0], namespace)  # the card's AutoModel snippet, as written
out["card_example"] = [namespace["query"], namespace["sentences"], namespace["scores"]]

import datasets
wikiref = datasets.load_dataset("org/wikiref")
out["dataset"] = {split: wikiref[split].to_list() for split in wikiref}
pushed = datasets.DatasetDict({"train": datasets.Dataset.from_dict({"x": [1, 2, 3]}),
                               "test": datasets.Dataset.from_dict({"x": [4]})})
pushed.push_to_hub("org/pushed")
reloaded = datasets.load_dataset("org/pushed")
out["pushed"] = {split: list(reloaded[split]["x"]) for split in reloaded}

import evaluate
metric = evaluate.load("org/duc_rouge")
out["metric"] = metric.compute(predictions=json.loads(sys.argv[3]), references=json.loads(sys.argv[4]),
                               resamples=100)

del sys.modules["modeling_qbert"]  # now the card's pipeline snippet, which needs the installed package
namespace = {"sentences": sentences}
exec(snippets[2].split("```")[0], namespace)
out["pipeline_summary"] = namespace["result"]["summary"]
out["pipeline_selection"] = [namespace["result"]["selection"], namespace["cluster"]["selection"]]
print("RESULT " + json.dumps(out))
'''


def tiny_qbert(folder: Path):
    from modeling_qbert import QBertConfig, QBertForSentenceScoring, QBertProcessor

    torch.manual_seed(0)
    tokenizer = BertTokenizer(vocab={t: i for i, t in enumerate(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]",
                                                                 *WORDS])})
    config = QBertConfig(vocab_size=len(WORDS) + 5, hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
                         intermediate_size=32, max_position_embeddings=48, max_query_levels=3)
    processor = QBertProcessor.from_config(tokenizer, config, stride=8)
    model = QBertForSentenceScoring(config)
    model.resize_token_embeddings(len(processor.tokenizer))
    model.eval()
    model.save_pretrained(folder)
    processor.save_pretrained(folder)
    (folder / "results.json").write_text(json.dumps(RESULTS), encoding="utf-8")
    # training leftovers that must not be published
    (folder / "checkpoint-2").mkdir()
    (folder / "checkpoint-2" / "optimizer.pt").write_bytes(b"state")
    (folder / "training_args.bin").write_bytes(b"args")
    return model, processor


def tiny_wikiref(folder: Path) -> Path:
    """A WikiRef folder written by the builder (``write_dataset_folder``) from three hand-made examples, with a
    ``work/`` folder of build state beside it as ``wikiref build`` leaves one."""
    from wikiref_dataset.builder import write_dataset_folder
    from wikiref_dataset.curation import Example

    def example(number: int, title: str, sentences: list[str]) -> Example:
        return Example(id=f"{number}-0", query=[title, "History"], document_title=sentences[0], document=sentences,
                       summary=sentences[1], summary_sentences=[sentences[1]], oracle_label=[0, 1, 0],
                       oracle_score=[0.0, 1.0, 0.25], oracle_rouge2_recall=1.0, url=f"https://example.org/{number}",
                       archive_url="", citation_type="cite web", wiki_page_id=number, wiki_revision_id=100 + number,
                       wiki_title=title, section_path=["History"], document_tokens=20, document_sentences=3,
                       summary_tokens=6, summary_sentences_count=1, query_tokens=2)

    splits = {"train": [example(1, "Marina Beach", ["Marina Beach", "The beach was renovated in 1884.", "It is long."]),
                        example(2, "River Thames", ["Thames", "The river runs through London.", "It floods."])],
              "validation": [example(3, "Big Ben", ["Big Ben", "The clock tower was finished in 1859.", "Bells."])]}
    write_dataset_folder(splits, folder, build={"dumps": ["test"], "counts": {"raw statements": 3}})
    (folder / "work").mkdir()
    (folder / "work" / "state.json").write_text("{}", encoding="utf-8")
    return folder


def local_scores(model, processor, query=QUERY, sentences=SENTENCES) -> list[float]:
    inputs = processor(query, sentences, return_tensors="pt")
    mapping = [inputs.pop("example_index"), inputs.pop("sentence_index")]
    with torch.no_grad():
        return processor.gather_sentence_scores(model(**inputs).scores, *mapping, [len(sentences)])[0]


@pytest.fixture(scope="module")
def published(tmp_path_factory):
    """Push the three parts with push_to_hub.main(), then load them back in a fresh process."""
    import huggingface_hub.constants as hub_constants

    root = tmp_path_factory.mktemp("hub")
    model_dir = root / "qbert"
    model_dir.mkdir()
    model, processor = tiny_qbert(model_dir)
    dataset_dir = tiny_wikiref(root / "wikiref")
    with HubServer(root / "store") as hub:
        saved = {name: getattr(hub_constants, name) for name in ("ENDPOINT", "HF_HUB_DISABLE_XET", "HF_HUB_OFFLINE")}
        hub_constants.ENDPOINT, hub_constants.HF_HUB_DISABLE_XET, hub_constants.HF_HUB_OFFLINE = hub.url, True, False
        try:
            status = push_to_hub.main(["--model_dir", str(model_dir), "--model_repo", "org/qbert-wikiref",
                                       "--dataset_dir", str(dataset_dir), "--dataset_repo", "org/wikiref",
                                       "--metric_repo", "org/duc_rouge", "--token", "test-token"])
        finally:
            for name, value in saved.items():
                setattr(hub_constants, name, value)
        assert status == 0, hub.requests
        env = {key: value for key, value in os.environ.items()
               if not key.startswith(("HF_", "TRANSFORMERS_", "HUGGINGFACE_"))}
        env.update(HF_ENDPOINT=hub.url, HF_HUB_DISABLE_XET="1", HF_HOME=str(root / "home"),
                   HF_DATASETS_CACHE=str(root / "datasets-cache"), HF_TOKEN="test-token")
        process = subprocess.run(
            [sys.executable, "-c", LOAD_BACK, json.dumps(QUERY), json.dumps(SENTENCES), json.dumps(PREDICTIONS),
             json.dumps(REFERENCES)], env=env, cwd=root, capture_output=True, text=True, timeout=300)
        assert process.returncode == 0, process.stderr[-4000:] + "\n" + "\n".join(hub.requests[-30:])
        assert not hub.errors, hub.errors
        loaded = json.loads(next(line for line in process.stdout.splitlines() if line.startswith("RESULT "))[7:])
        files = {repo: hub.files(repo, kind) for repo, kind in (("org/qbert-wikiref", "model"),
                                                               ("org/wikiref", "dataset"), ("org/duc_rouge", "space"))}
        lfs = {repo: hub.lfs_files(repo, kind) for repo, kind in (("org/qbert-wikiref", "model"),
                                                                 ("org/wikiref", "dataset"))}
    return {"loaded": loaded, "files": files, "lfs": lfs, "model": model, "processor": processor,
            "dataset_dir": dataset_dir}


def test_model_loads_from_the_hub_with_remote_code_and_scores_the_same(published):
    loaded = published["loaded"]
    assert loaded["model_module"].startswith("transformers_modules.")
    assert loaded["processor_module"].startswith("transformers_modules.")
    expected = local_scores(published["model"], published["processor"])
    assert loaded["scores"] == pytest.approx(expected, abs=1e-6)
    # the card's AutoModel snippet runs as written and gives the local model's scores for its example
    query, sentences, scores = loaded["card_example"]
    assert len(scores) == len(sentences) == 2
    assert scores == pytest.approx(local_scores(published["model"], published["processor"], query, sentences),
                                   abs=1e-6)


def test_model_repo_contents(published):
    files = published["files"]["org/qbert-wikiref"]
    for name in ("config.json", "configuration_qbert.py", "modeling_qbert.py", "processing_qbert.py",
                 "model.safetensors", "tokenizer.json", "tokenizer_config.json", "processor_config.json",
                 "results.json", "README.md"):
        assert name in files, sorted(files)
    assert not any(name.startswith("checkpoint-") or name == "training_args.bin" for name in files)
    assert json.loads(files["results.json"]) == RESULTS
    assert json.loads(files["config.json"])["auto_map"]["AutoModel"] == "modeling_qbert.QBertForSentenceScoring"
    assert "model.safetensors" in published["lfs"]["org/qbert-wikiref"]
    card = files["README.md"].decode()
    assert "Demo model" in card and "**25.00** | **12.50** | **20.00**" in card and "DUC: not evaluated." in card


def test_pipeline_snippet_of_the_card_runs(published):
    loaded = published["loaded"]
    assert loaded["pipeline_selection"] == ["wikiref", "duc"]
    assert isinstance(loaded["pipeline_summary"], str)


def test_dataset_loads_from_the_hub_with_the_same_rows(published):
    folder = published["dataset_dir"]
    loaded = published["loaded"]["dataset"]
    local = {path.name.split("-")[0]: pq.read_table(path).to_pylist() for path in sorted((folder / "data").iterdir())}
    assert set(loaded) == set(local) and loaded == local
    files = published["files"]["org/wikiref"]
    assert not any(name.startswith("work/") for name in files)
    assert any(name.startswith("figures/") and name.endswith(".png") for name in files)
    assert all(name in published["lfs"]["org/wikiref"] for name in files if name.endswith((".parquet", ".png")))
    assert files["README.md"] == (folder / "README.md").read_bytes()


def test_datasets_push_to_hub_round_trip(published):
    assert published["loaded"]["pushed"] == {"train": [1, 2, 3], "test": [4]}


def test_metric_loads_from_the_hub_space_and_scores_the_same(published):
    import evaluate

    from wikiref_dataset.metrics import DUC_ROUGE_PATH

    local = evaluate.load(DUC_ROUGE_PATH).compute(predictions=PREDICTIONS, references=REFERENCES, resamples=100)
    assert published["loaded"]["metric"] == local
    files = published["files"]["org/duc_rouge"]
    assert files["duc_rouge.py"] == (Path(DUC_ROUGE_PATH) / "duc_rouge.py").read_bytes()
    assert "pip install wikiref" in files["README.md"].decode()


# ---- errors (no server needed) --------------------------------------------------------------------------------------


@pytest.fixture
def model_folder(tmp_path):
    folder = tmp_path / "model"
    folder.mkdir()
    tiny_qbert(folder)
    return folder


def test_not_a_model_folder(tmp_path):
    with pytest.raises(PushError, match="not a model folder"):
        check_model_folder(tmp_path)
    with pytest.raises(PushError, match="no such model folder"):
        check_model_folder(tmp_path / "missing")


def test_model_folder_without_custom_code_or_processor(model_folder):
    (model_folder / "configuration_qbert.py").unlink()
    with pytest.raises(PushError, match="configuration_qbert.py is missing"):
        check_model_folder(model_folder)
    (model_folder / "processor_config.json").unlink()
    with pytest.raises(PushError, match="no processor_config.json"):
        check_model_folder(model_folder)
    config = json.loads((model_folder / "config.json").read_text())
    del config["auto_map"]
    (model_folder / "config.json").write_text(json.dumps(config))
    with pytest.raises(PushError, match="no auto_map"):
        check_model_folder(model_folder)


def test_model_folder_without_results(model_folder, capsys):
    (model_folder / "results.json").unlink()
    status = push_to_hub.main(["--model_dir", str(model_folder), "--model_repo", "org/m", "--token", "x"])
    assert status == 2
    assert f"{model_folder}: no results.json" in capsys.readouterr().err


def test_dataset_folder_checks(tmp_path):
    with pytest.raises(PushError, match="no README.md"):
        check_dataset_folder(tmp_path)
    (tmp_path / "README.md").write_text("---\nlicense: mit\n---\n# data\n")
    with pytest.raises(PushError, match="no configs: block"):
        check_dataset_folder(tmp_path)
    (tmp_path / "README.md").write_text("---\nconfigs:\n- config_name: default\n  data_files:\n"
                                        "  - split: train\n    path: data/train-*.parquet\n---\n")
    with pytest.raises(PushError, match="no file matches 'data/train-\\*.parquet'"):
        check_dataset_folder(tmp_path)
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "train-00000-of-00001.parquet").write_bytes(b"x")
    assert check_dataset_folder(tmp_path) == ["data/train-*.parquet"]


@pytest.mark.parametrize("argv, message", [
    (["--model_dir", "m"], "--model_dir and --model_repo go together"),
    (["--dataset_repo", "org/d"], "--dataset_dir and --dataset_repo go together"),
    ([], "nothing to push"),
    (["--metric_repo", "duc_rouge"], "a Hub repo id is 'namespace/name'"),
])
def test_argument_errors(argv, message, capsys):
    assert push_to_hub.main(argv) == 2
    assert message in capsys.readouterr().err
