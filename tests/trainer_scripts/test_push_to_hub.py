"""push_to_hub.py against a Hub-compatible server on 127.0.0.1 (tests/hub_server.py): push a tiny Q-BERT, a WikiRef
folder and the DUC ROUGE metric, then load all three back in a fresh process that knows only the endpoint and in which
importing the project's packages fails (a meta-path finder, cwd outside the project) — the model through
trust_remote_code with AutoModel/AutoProcessor and with pipeline("query-focused-summarization"), the dataset with
load_dataset, the metric with evaluate.load — and compare with the local objects. The model repo holds exactly the
allow-listed files; the sparse delta and mask go up only with --push_sparse_delta and a base on the Hub, and
apply_sparse_delta refuses another base."""

import contextlib
import importlib.util
import io
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest
import torch
from transformers import BertTokenizer

from trainer_scripts import push_to_hub
from trainer_scripts.push_to_hub import INSTALL_COMMAND, PushError, check_dataset_folder, check_model_folder
from wikiref_dataset.metrics.standalone import rouge_engine_files

ROOT = Path(__file__).resolve().parents[2]


def _load_test_helper(name):
    """tests/<name>.py by path (putting tests/ on sys.path would shadow the packages with the test folders)."""
    spec = importlib.util.spec_from_file_location(name, ROOT / "tests" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault(name, module)
    spec.loader.exec_module(module)
    return module


HubServer = _load_test_helper("hub_server").HubServer

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

PROJECT_PACKAGES = ("wikiref_dataset", "modeling_qbert", "trainer_scripts")

# Prepended to every fresh-process script: the project's packages cannot be imported there (as for someone who does
# not have this project), whatever sys.path and the installed distributions say (tests/not_installed.py).
BLOCK_PROJECT = _load_test_helper("not_installed").prelude(PROJECT_PACKAGES) + "PROJECT = NOT_INSTALLED\n"

# Runs in a fresh interpreter with HF_ENDPOINT set to the test Hub; prints one JSON line.
LOAD_BACK = BLOCK_PROJECT + r'''
import json
RAW_TEXT = "The cat sat on the mat. Dr. King was born in the city. A dog runs!"
import torch
from transformers import AutoModel, AutoProcessor, pipeline

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

summarize = pipeline("query-focused-summarization", model="org/qbert-wikiref", trust_remote_code=True)
second = json.loads(sys.argv[5])
out["pipeline"] = {"module": type(summarize).__module__,
                   "wikiref": summarize(query=query, documents=[sentences]),
                   "duc": summarize(query=query, documents=[sentences, second], selection="duc", max_words=8),
                   "raw": summarize(query=query, documents=[RAW_TEXT, " ".join(second)], selection="duc",
                                    max_words=8)}
namespace = {"sentences": sentences}
exec(snippets[2].split("```")[0], namespace)  # the card's pipeline snippet, as written
out["pipeline_summary"] = namespace["result"]["summary"]
out["pipeline_selection"] = [namespace["result"]["selection"], namespace["cluster"]["selection"]]

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
out["metric_module"] = type(metric).__module__
out["metric"] = metric.compute(predictions=json.loads(sys.argv[3]), references=json.loads(sys.argv[4]),
                               resamples=100)
out["project_modules"] = sorted(name for name in sys.modules if name.split(".")[0] in PROJECT)
print("RESULT " + json.dumps(out))
'''
SECOND_DOCUMENT = ["a dog runs on the mat .", "the queen was born in a city ."]
RAW_TEXT = "The cat sat on the mat. Dr. King was born in the city. A dog runs!"  # as in LOAD_BACK

# What the model repo must hold for tiny_qbert's folder: nothing else (.gitattributes comes with a new repo).
MODEL_REPO_FILES = {
    "config.json", "model.safetensors", "tokenizer.json", "tokenizer_config.json", "processor_config.json",
    "configuration_qbert.py", "modeling_qbert.py", "processing_qbert.py",  # auto_map
    "pipeline_qfs.py", "inference.py", "selection.py",  # custom_pipelines
    "rouge.py", "_rouge_bootstrap.py", "_rouge_config.py", "_rouge_counts.py", "_rouge_results.py",  # the ROUGE
    "_rouge_scorer.py", "_rouge_stemmer.py", "_rouge_tokens.py", "_rouge_wordnet_exceptions.py",  # engine, made flat
    "text.py", "spacy_components.py", "_spacy_import.py",  # the sentence splitter, for documents given as raw text
    "results.json", "README.md", "figures/duc_rouge2.png", ".gitattributes",
}


def tiny_qbert(folder: Path, seed: int = 0):
    from modeling_qbert import QBertConfig, QBertForSentenceScoring, QBertProcessor

    torch.manual_seed(seed)
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


def finetuned_leftovers(folder: Path, model) -> None:
    """What finetune_duc.py leaves beside the model: the DUC summaries, the subnetwork mask, the sparse delta, an
    old card with its figure; and a stray code file no auto_map names."""
    from modeling_qbert.sparse import SubnetworkConfig, identify_subnetwork, save_sparse_delta, save_subnetwork_mask

    (folder / "summaries.jsonl").write_text(json.dumps({"topic": "D0601", "summary": "DUC sentence ."}) + "\n")
    masks = identify_subnetwork(model, SubnetworkConfig(fraction=0.5))
    save_subnetwork_mask(masks, folder / "subnetwork_mask.safetensors")
    save_sparse_delta(model, model, masks, folder)
    (folder / "README.md").write_text("an old card")
    (folder / "figures").mkdir()
    (folder / "figures" / "duc_rouge2.png").write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(range(256)))
    (folder / "notes.py").write_text("print('not model code')\n")
    (folder / "runs").mkdir()
    (folder / "runs" / "events.out").write_bytes(b"tensorboard")


@contextlib.contextmanager
def hub_endpoint(hub, cache: Path):
    """This process's huggingface_hub talks to the test Hub (and caches under ``cache``) inside the block."""
    import huggingface_hub.constants as hub_constants

    names = ("ENDPOINT", "HUGGINGFACE_CO_URL_TEMPLATE", "HF_HUB_DISABLE_XET", "HF_HUB_OFFLINE", "HF_HUB_CACHE")
    saved = {name: getattr(hub_constants, name) for name in names}
    values = (hub.url, hub.url + "/{repo_id}/resolve/{revision}/{filename}", True, False, str(cache))
    for name, value in zip(names, values):
        setattr(hub_constants, name, value)
    try:
        yield
    finally:
        for name, value in saved.items():
            setattr(hub_constants, name, value)


def fresh_env(hub, root: Path) -> dict[str, str]:
    env = {key: value for key, value in os.environ.items()
           if not key.startswith(("HF_", "TRANSFORMERS_", "HUGGINGFACE_"))}
    env.update(HF_ENDPOINT=hub.url, HF_HUB_DISABLE_XET="1", HF_HOME=str(root / "home"),
               HF_DATASETS_CACHE=str(root / "datasets-cache"), HF_TOKEN="test-token")
    return env


def tiny_wikiref(folder: Path) -> Path:
    """A WikiRef folder written by the builder (``write_dataset_folder``) from three hand-made examples, with a
    ``work/`` folder of build state beside it as ``wikiref build`` leaves one."""
    from wikiref_dataset.wikiref.curation import Example
    from wikiref_dataset.wikiref.dataset import write_dataset_folder

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


def push_parts(hub, root: Path, model_dir: Path, dataset_dir: Path, *more: str) -> str:
    """``push_to_hub.main`` on the test Hub: the model as org/qbert-wikiref, the dataset as org/wikiref and ``more``
    (another part); returns what it wrote on stderr."""
    with hub_endpoint(hub, root / "cache"), contextlib.redirect_stderr(io.StringIO()) as stderr:
        status = push_to_hub.main(["--model_dir", str(model_dir), "--model_repo", "org/qbert-wikiref", "--dataset_dir",
                                   str(dataset_dir), "--dataset_repo", "org/wikiref", *more, "--token", "test-token"])
    assert status == 0, stderr.getvalue() + "\n".join(hub.requests[-30:])
    return stderr.getvalue()


@pytest.fixture(scope="module")
def published(tmp_path_factory):
    """Push the three parts with push_to_hub.main(), then load them back in a fresh process."""
    root = tmp_path_factory.mktemp("hub")
    model_dir = root / "qbert"
    model_dir.mkdir()
    model, processor = tiny_qbert(model_dir)
    finetuned_leftovers(model_dir, model)
    dataset_dir = tiny_wikiref(root / "wikiref")
    with HubServer(root / "store") as hub:
        stderr = push_parts(hub, root, model_dir, dataset_dir, "--metric_repo", "org/duc_rouge")
        process = subprocess.run(
            [sys.executable, "-c", LOAD_BACK, json.dumps(QUERY), json.dumps(SENTENCES), json.dumps(PREDICTIONS),
             json.dumps(REFERENCES), json.dumps(SECOND_DOCUMENT)], env=fresh_env(hub, root), cwd=root,
            capture_output=True, text=True, timeout=300)
        assert process.returncode == 0, process.stderr[-4000:] + "\n" + "\n".join(hub.requests[-30:])
        assert not hub.errors, hub.errors
        loaded = json.loads(next(line for line in process.stdout.splitlines() if line.startswith("RESULT "))[7:])
        files = {repo: hub.files(repo, kind) for repo, kind in (("org/qbert-wikiref", "model"),
                                                               ("org/wikiref", "dataset"), ("org/duc_rouge", "space"))}
        lfs = {repo: hub.lfs_files(repo, kind) for repo, kind in (("org/qbert-wikiref", "model"),
                                                                 ("org/wikiref", "dataset"))}
    return {"loaded": loaded, "files": files, "lfs": lfs, "model": model, "processor": processor,
            "model_dir": model_dir, "dataset_dir": dataset_dir, "stderr": stderr}


def test_model_loads_from_the_hub_with_remote_code_and_scores_the_same(published):
    loaded = published["loaded"]
    assert loaded["project_modules"] == []  # nothing of the project was imported: everything came from the Hub
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
    assert set(files) == MODEL_REPO_FILES  # no summaries.jsonl, delta, mask, old card, stray code, checkpoint, run log
    assert json.loads(files["results.json"]) == RESULTS
    config = json.loads(files["config.json"])
    assert config["auto_map"]["AutoModel"] == "modeling_qbert.QBertForSentenceScoring"
    assert config["custom_pipelines"] == {"query-focused-summarization": {
        "impl": "pipeline_qfs.QueryFocusedSummarizationPipeline", "pt": ["AutoModel"], "type": "text"}}
    assert "from .rouge import" in files["selection.py"].decode() and b"wikiref_dataset" not in files["inference.py"]
    assert files["rouge.py"] == rouge_engine_files()["rouge.py"].encode()  # the engine's __init__.py made flat
    assert files["_rouge_stemmer.py"] == (ROOT / "wikiref_dataset" / "rouge" / "stemmer.py").read_bytes()
    assert files["modeling_qbert.py"] == (published["model_dir"] / "modeling_qbert.py").read_bytes()
    assert "model.safetensors" in published["lfs"]["org/qbert-wikiref"]
    card = files["README.md"].decode()
    assert "Demo model" in card and "**25.00** | **12.50** | **20.00**" in card and "DUC: not evaluated." in card
    assert "pip install wikiref" not in card and "import modeling_qbert" not in card
    left_out = next(line for line in published["stderr"].splitlines() if line.startswith("push_to_hub: left out"))
    assert left_out.split(": ", 2)[2].split(", ") == [
        "checkpoint-2/optimizer.pt", "notes.py", "runs/events.out", "sparse_delta.safetensors",
        "subnetwork_mask.safetensors", "summaries.jsonl", "training_args.bin"]  # the old card is replaced, not listed


def test_pipeline_loads_from_the_hub_with_remote_code_and_summarizes_the_same(published):
    from transformers import pipeline

    from modeling_qbert import TASK

    loaded = published["loaded"]["pipeline"]
    assert loaded["module"].startswith("transformers_modules.") and loaded["module"].endswith(".pipeline_qfs")
    local = pipeline(TASK, model=str(published["model_dir"]))
    expected = {"wikiref": local(query=QUERY, documents=[SENTENCES]),
                "duc": local(query=QUERY, documents=[SENTENCES, SECOND_DOCUMENT], selection="duc", max_words=8),
                "raw": local(query=QUERY, documents=[RAW_TEXT, " ".join(SECOND_DOCUMENT)], selection="duc",
                             max_words=8)}
    assert [s["text"] for s in loaded["raw"]["sentences"]][:3] == [
        "The cat sat on the mat.", "Dr. King was born in the city.", "A dog runs!"]  # split by the repo's text.py
    for name in ("wikiref", "duc", "raw"):
        got, want = loaded[name], expected[name]
        assert got["selection"] == want["selection"] and got["summary"] and got["summary"] == want["summary"]
        assert [s["score"] for s in got["sentences"]] == pytest.approx([s["score"] for s in want["sentences"]],
                                                                        abs=1e-6)
        assert [s["text"] for s in got["selected"]] == [s["text"] for s in want["selected"]]


def test_pipeline_snippet_of_the_card_runs(published):
    loaded = published["loaded"]
    assert loaded["pipeline_selection"] == ["wikiref", "duc"]
    assert isinstance(loaded["pipeline_summary"], str) and loaded["pipeline_summary"]


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
    assert published["loaded"]["metric_module"].startswith("evaluate_modules.")
    files = published["files"]["org/duc_rouge"]
    assert set(files) == {"duc_rouge.py", *rouge_engine_files(), "README.md", "app.py", "requirements.txt",
                          ".gitattributes"}
    assert files["_rouge_stemmer.py"] == (ROOT / "wikiref_dataset" / "rouge" / "stemmer.py").read_bytes()
    module = files["duc_rouge.py"].decode()
    assert "from .rouge import RougeScorer" in module and "wikiref_dataset.rouge import" not in module
    readme = files["README.md"].decode()
    assert INSTALL_COMMAND in readme and "pip install wikiref\n" not in readme
    assert b"wikiref" not in files["requirements.txt"]


def test_install_command_names_the_project_repository():
    urls = (ROOT / "pyproject.toml").read_text().split("[project.urls]")[1].split("\n[")[0]
    repository = re.search(r'^Repository = "(.+)"$', urls, flags=re.MULTILINE).group(1)
    assert INSTALL_COMMAND == f'pip install "wikiref @ git+{repository}"'
    card_template = (ROOT / "trainer_scripts" / "model_card.md").read_text()
    assert f"git+{repository}" in card_template and "pip install wikiref`" not in card_template


# ---- the sparse delta --------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def delta_hub(tmp_path_factory):
    """A base model and another one of the same shapes on the test Hub; a model fine-tuned from the base (its folder
    holds the mask and the sparse delta, which records the base's local folder) pushed without and with
    --push_sparse_delta, and with a base that is not on the Hub or not its base."""
    from modeling_qbert import QBertForSentenceScoring, QBertProcessor
    from modeling_qbert.sparse import (
        SPARSE_DELTA_NAME,
        SUBNETWORK_MASK_NAME,
        SubnetworkConfig,
        identify_subnetwork,
        save_sparse_delta,
        save_subnetwork_mask,
    )

    root = tmp_path_factory.mktemp("delta")
    base_dir, other_dir, tuned_dir = root / "base", root / "other", root / "tuned"
    for folder in (base_dir, other_dir, tuned_dir):
        folder.mkdir()
    tiny_qbert(base_dir)
    tiny_qbert(other_dir, seed=1)
    base = QBertForSentenceScoring.from_pretrained(base_dir)
    tuned = QBertForSentenceScoring.from_pretrained(base_dir)
    masks = identify_subnetwork(tuned, SubnetworkConfig(fraction=0.2))
    with torch.no_grad():
        for name, parameter in tuned.named_parameters():
            parameter.add_(0.01 * (masks[name] if name in masks else 1))
    tuned.save_pretrained(tuned_dir)
    QBertProcessor.from_pretrained(base_dir).save_pretrained(tuned_dir)
    (tuned_dir / "results.json").write_text(json.dumps(RESULTS), encoding="utf-8")
    save_subnetwork_mask(masks, tuned_dir / SUBNETWORK_MASK_NAME)
    save_sparse_delta(tuned, base, masks, tuned_dir)
    local_delta = (tuned_dir / SPARSE_DELTA_NAME).read_bytes()

    def push(folder: Path, repo: str, *extra: str) -> tuple[int, str]:
        with contextlib.redirect_stderr(io.StringIO()) as stderr:
            status = push_to_hub.main(["--model_dir", str(folder), "--model_repo", repo, "--token", "x", *extra])
        return status, stderr.getvalue()

    with HubServer(root / "store") as hub, hub_endpoint(hub, root / "cache"):
        from huggingface_hub import HfApi

        assert push(base_dir, "org/qbert-base")[0] == 0
        assert push(other_dir, "org/qbert-other")[0] == 0
        runs = {"plain": push(tuned_dir, "org/qbert-tuned"),
                "local_base": push(tuned_dir, "org/qbert-tuned-x", "--push_sparse_delta"),
                "wrong_base": push(tuned_dir, "org/qbert-tuned-y", "--push_sparse_delta", "--sparse_delta_base_repo",
                                   "org/qbert-other"),
                "delta": push(tuned_dir, "org/qbert-tuned-delta", "--push_sparse_delta", "--sparse_delta_base_repo",
                              "org/qbert-base")}
        yield {"runs": runs, "hub": hub, "root": root, "base_dir": base_dir, "other_dir": other_dir,
               "tuned": tuned, "masks": masks, "local_delta": local_delta,
               "base_head": HfApi().model_info("org/qbert-base").sha,
               "files": {repo: hub.files(repo) for repo in ("org/qbert-tuned", "org/qbert-tuned-delta")},
               "repos": {repo for (kind, repo) in hub.store.repos}}


def _delta_file(delta_hub, tmp_path) -> Path:
    path = tmp_path / "sparse_delta.safetensors"
    path.write_bytes(delta_hub["files"]["org/qbert-tuned-delta"]["sparse_delta.safetensors"])
    return path


def test_sparse_delta_and_mask_are_left_out_unless_requested(delta_hub):
    status, stderr = delta_hub["runs"]["plain"]
    assert status == 0
    assert set(delta_hub["files"]["org/qbert-tuned"]) == MODEL_REPO_FILES - {"figures/duc_rouge2.png"}
    assert "sparse_delta.safetensors" in stderr and "subnetwork_mask.safetensors" in stderr


def test_sparse_delta_needs_its_base_on_the_hub(delta_hub):
    status, stderr = delta_hub["runs"]["local_base"]
    assert status == 2 and "not a Hub repo at a revision" in stderr and str(delta_hub["base_dir"]) in stderr
    status, stderr = delta_hub["runs"]["wrong_base"]
    assert status == 2 and "org/qbert-other@" in stderr and "is not the delta's base" in stderr
    assert not {"org/qbert-tuned-x", "org/qbert-tuned-y"} & delta_hub["repos"]  # nothing was sent


def test_sparse_delta_goes_up_with_its_mask_and_base(delta_hub, tmp_path):
    from modeling_qbert.sparse import load_sparse_delta

    assert delta_hub["runs"]["delta"][0] == 0, delta_hub["runs"]["delta"][1]
    files = delta_hub["files"]["org/qbert-tuned-delta"]
    assert set(files) == MODEL_REPO_FILES - {"figures/duc_rouge2.png"} | {"sparse_delta.safetensors",
                                                                          "subnetwork_mask.safetensors"}
    _, record = load_sparse_delta(_delta_file(delta_hub, tmp_path))
    assert (record.model_id, record.revision) == ("org/qbert-base", delta_hub["base_head"])
    assert (delta_hub["root"] / "tuned" / "sparse_delta.safetensors").read_bytes() == delta_hub["local_delta"]


def test_uploaded_delta_rebuilds_the_model_on_its_hub_base(delta_hub, tmp_path):
    from transformers import AutoModel

    from modeling_qbert.sparse import apply_sparse_delta, load_sparse_delta

    path = _delta_file(delta_hub, tmp_path)
    _, record = load_sparse_delta(path)
    with hub_endpoint(delta_hub["hub"], delta_hub["root"] / "cache"):
        base = AutoModel.from_pretrained(record.model_id, revision=record.revision)
    assert base.name_or_path == "org/qbert-base"
    rebuilt = apply_sparse_delta(base, path)
    for name, parameter in delta_hub["tuned"].named_parameters():
        assert torch.equal(dict(rebuilt.named_parameters())[name], parameter), name


def test_apply_sparse_delta_refuses_another_base(delta_hub, tmp_path):
    from modeling_qbert import QBertConfig, QBertForSentenceScoring
    from modeling_qbert.sparse import BaseModelMismatchError, apply_sparse_delta

    path = _delta_file(delta_hub, tmp_path)
    other = QBertForSentenceScoring.from_pretrained(delta_hub["other_dir"])  # same shapes, other weights
    before = {name: parameter.clone() for name, parameter in other.named_parameters()}
    with pytest.raises(BaseModelMismatchError, match=r"made over org/qbert-base@\w+; this model has its shapes but "
                                                     "other weights"):
        apply_sparse_delta(other, path)
    config = QBertConfig.from_pretrained(delta_hub["base_dir"])
    config.intermediate_size = 24
    wider = QBertForSentenceScoring(config)
    with pytest.raises(BaseModelMismatchError, match=r"parameters differ \(3\): .*'bert\.encoder\.layer\.0\."
                                                     r"intermediate\.dense\.weight' is torch\.float32 \(24, 16\), "
                                                     r"the base's torch\.float32 \(32, 16\)"):
        apply_sparse_delta(wider, path)
    renamed = QBertForSentenceScoring.from_pretrained(delta_hub["base_dir"])
    renamed.name_or_path = "org/someone-else"
    with pytest.raises(BaseModelMismatchError, match="this model was loaded from org/someone-else"):
        apply_sparse_delta(renamed, path)
    assert all(torch.equal(before[name], parameter) for name, parameter in other.named_parameters())  # untouched
    # the local base (loaded from its folder, so no Hub id to compare) is accepted
    apply_sparse_delta(QBertForSentenceScoring.from_pretrained(delta_hub["base_dir"]), path)


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
    (["--metric_repo", "org/m", "--push_sparse_delta"], "--push_sparse_delta needs --model_dir"),
    (["--model_dir", "m", "--model_repo", "org/m", "--sparse_delta_base_repo", "org/b"],
     "go with --push_sparse_delta"),
])
def test_argument_errors(argv, message, capsys):
    assert push_to_hub.main(argv) == 2
    assert message in capsys.readouterr().err


# ---- the app's Space ------------------------------------------------------------------------------------------------

# Runs the Space's app.py from a folder holding the Space's files, as the Space does, with this project not
# installed: the editable install's finder is taken off sys.meta_path and the checkout off sys.path, so the project's
# packages can only come from the Space's own copies. Prints where they came from, then serves.
SPACE_LAUNCHER = r'''
import runpy, sys
space = sys.argv[1]
sys.meta_path[:] = [finder for finder in sys.meta_path if "editable" not in type(finder).__module__.lower()
                    and "editable" not in getattr(finder, "__name__", "").lower()]
sys.path[:] = [space] + [entry for entry in sys.path if entry not in ("", ".", sys.argv[2])]
import modeling_qbert, trainer_scripts, wikiref_dataset
print("CODE " + " ".join(module.__file__ for module in (modeling_qbert, trainer_scripts, wikiref_dataset)), flush=True)
sys.argv = ["app.py"]
runpy.run_path(space + "/app.py", run_name="__main__")
'''


@pytest.fixture(scope="module")
def space(tmp_path_factory):
    """Push a tiny model, a WikiRef folder and the app's Space to the test Hub, download the Space as a Space runner
    would, and run its app.py in a fresh process without the project installed; yields its URL and what it loaded."""
    pytest.importorskip("gradio")
    import signal
    import socket
    import time

    from huggingface_hub import snapshot_download

    root = tmp_path_factory.mktemp("space")
    model_dir = root / "qbert"
    model_dir.mkdir()
    tiny_qbert(model_dir)
    dataset_dir = tiny_wikiref(root / "wikiref")
    with HubServer(root / "store") as hub:
        push_parts(hub, root, model_dir, dataset_dir, "--space_repo", "org/qbert-app")
        with hub_endpoint(hub, root / "cache"):
            folder = Path(snapshot_download("org/qbert-app", repo_type="space", local_dir=root / "checkout"))
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
        env = {**fresh_env(hub, root), "GRADIO_SERVER_NAME": "127.0.0.1", "GRADIO_SERVER_PORT": str(port),
               "GRADIO_ANALYTICS_ENABLED": "False", "NO_PROXY": "127.0.0.1,localhost"}
        log = root / "space.log"
        with open(log, "w") as handle:
            process = subprocess.Popen([sys.executable, "-c", SPACE_LAUNCHER, str(folder), str(ROOT)], cwd=folder,
                                       env=env, stdout=handle, stderr=subprocess.STDOUT, start_new_session=True)
        try:
            started = time.perf_counter()
            while "serving on " not in log.read_text() and time.perf_counter() - started < 240:
                if process.poll() is not None:
                    pytest.fail(f"the Space's app stopped (exit {process.returncode}):\n{log.read_text()[-4000:]}")
                time.sleep(0.3)
            text = log.read_text()
            assert "serving on " in text, text[-4000:]
            code = next(line for line in text.splitlines() if line.startswith("CODE ")).split()[1:]
            yield {"url": f"http://127.0.0.1:{port}/", "folder": folder, "code": code, "model_dir": model_dir,
                   "files": hub.files("org/qbert-app", "space")}
        finally:
            os.killpg(process.pid, signal.SIGTERM)
            process.wait(timeout=30)


def test_space_holds_the_app_its_requirements_and_card(space):
    files = space["files"]
    assert {"app.py", "requirements.txt", "README.md", "trainer_scripts/app/ui.py", "wikiref_dataset/rouge/__init__.py",
            "modeling_qbert/pipeline_qfs.py", "wikiref_dataset/data/spacy-en-stop-words.txt"} <= set(files)
    readme = files["README.md"].decode()
    assert readme.startswith("---\n") and "sdk: gradio" in readme and "app_file: app.py" in readme
    assert "- org/qbert-wikiref" in readme and "- org/wikiref" in readme
    assert "'org/qbert-wikiref'" in files["app.py"].decode() and "'org/wikiref'" in files["app.py"].decode()
    requirements = files["requirements.txt"].decode().split()
    assert "gradio>=5.0" in requirements and not any(line.startswith("wikiref") for line in requirements)
    assert not any(name.startswith("wikiref_dataset/data/sample/") for name in files)


def test_space_runs_from_its_own_copy_of_the_code_and_summarizes_like_the_model(space):
    from gradio_client import Client
    from transformers import pipeline

    import modeling_qbert

    assert all(path.startswith(str(space["folder"])) for path in space["code"]), space["code"]
    client = Client(space["url"], verbose=False)
    documents = "\n".join(SENTENCES[:2]) + "\n---\n" + SENTENCES[2]
    summary, _, download, status = client.predict("cat > mat", documents, None, True, 250, "duc", 0.7, 300, None,
                                                  api_name="/summarize")
    expected = pipeline(modeling_qbert.TASK, model=str(space["model_dir"]))(
        query=["cat", "mat"], documents=[SENTENCES[:2], SENTENCES[2:]], selection="duc", max_words=250)
    assert summary == expected["summary"], status
    rows, page, _ = client.predict("train", "", 1, api_name="/search")  # the dataset came from the Hub
    assert rows["data"] and page == "page 1 of 1"
    for value in ("/etc", "org/another-dataset"):  # a Space is served to others whatever its address
        status = client.predict(value, api_name="/load_dataset")[-1]
        assert status.startswith(f"**Problem:** {value}: not offered by this app") and "org/wikiref" in status, status


def _closed_port() -> int:
    """A port on 127.0.0.1 that nothing listens on (bound, then released)."""
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.mark.parametrize("where", ["offline", "closed port"])
def test_an_unreachable_hub_is_one_line_naming_the_repo(tmp_path, where):
    """Offline (HF_HUB_OFFLINE=1) or with the Hub unreachable (HF_ENDPOINT at a closed port), the script ran into a
    36- to 73-line traceback: now one line naming the repo, the endpoint and what to do, exit 1. Run as a user runs
    it, in a fresh process (HF_ENDPOINT is read at import)."""
    environment = {key: value for key, value in os.environ.items() if not key.startswith("HF_")}
    if where == "offline":
        environment["HF_HUB_OFFLINE"] = "1"
    else:
        environment["HF_ENDPOINT"] = f"http://127.0.0.1:{_closed_port()}"
    done = subprocess.run([sys.executable, str(ROOT / "trainer_scripts" / "push_to_hub.py"), "--metric_repo",
                           "org/duc_rouge", "--token", "x"], capture_output=True, text=True, timeout=300,
                          cwd=tmp_path, env={**environment, "HF_HOME": str(tmp_path / "hf")})
    assert done.returncode == 1, done.stderr[-3000:]
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in done.stderr, done.stderr
    assert lines[0].startswith("push_to_hub: error: org/duc_rouge: cannot reach the Hub (")
    expected = "HF_HUB_OFFLINE is set" if where == "offline" else environment["HF_ENDPOINT"]
    assert expected in lines[0] and ("unset it" in lines[0] or "check the network" in lines[0]), lines[0]
