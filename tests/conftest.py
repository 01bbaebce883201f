"""Shared test fixtures: where the project's own fixtures and the optional ../shared data live."""

import signal
from pathlib import Path
from typing import Any

import pytest

PROJECT_ROOT = Path(__file__).resolve().parents[1]
SHARED = PROJECT_ROOT.parent / "shared"
FIXTURES = Path(__file__).resolve().parent / "fixtures"


# Work units for pytest-xdist (`make test`: --dist loadscope --no-loadscope-reorder, with the scheduler below): a test
# file is one unit, so its module fixtures are built once, except test_readme.py, whose pages are units of their own
# (each page runs its snippets in a folder of its own, so the pages of the long file share the workers). The units
# listed here, the slowest by `make test`'s durations on a 2-core machine (seconds in the comments), go first,
# longest first: a long unit handed out last keeps one worker busy alone at the end. The others follow in collection
# order; within a unit the order is unchanged (module fixtures and tests that build on each other).
README_TESTS = "tests/test_readme.py"
SLOW_UNITS_FIRST = (  # seconds: `make test --durations` of 2026-11-28 from a fresh clone, the environment byte-compiled
    "tests/wikiref_dataset/test_ray_executor.py",  # 113
    "tests/wikiref_dataset/web/test_commoncrawl.py",  # 111
    "tests/trainer_scripts/test_cli_convention.py",  # 55
    "tests/wikiref_dataset/test_folders.py",  # 51
    "tests/trainer_scripts/test_run_experiments.py",  # 48
    "tests/wikiref_dataset/test_pipeline.py",  # 45
    "tests/wikiref_dataset/test_locks.py",  # 43
    "tests/wikiref_dataset/wiki/test_languages.py",  # 40
    "tests/trainer_scripts/test_training_stack.py",  # 38
    "tests/examples/test_examples.py",  # 38
    "tests/wikiref_dataset/test_text.py",  # 37
    "tests/wikiref_dataset/aquamuse/test_aquamuse_build.py",  # 37
    "tests/wikiref_dataset/test_executors.py",  # 34
    "tests/modeling_qbert/test_trainer.py",  # 33
    "tests/wikiref_dataset/psg2sum/test_psg2sum_pipeline.py",  # 33
    "tests/test_readme.py:docs/training.md",  # 29
    "tests/trainer_scripts/test_demo.py",  # 27
    "tests/modeling_qbert/test_modeling_qbert.py",  # 26
    "tests/trainer_scripts/test_pretrain_wikiref.py",  # 23
    "tests/test_readme.py:docs/building.md",  # 22
    "tests/trainer_scripts/test_finetune_duc.py",  # 22
    "tests/wikiref_dataset/test_task_shares.py",  # 22
    "tests/trainer_scripts/test_push_to_hub.py",  # 21
    "tests/wikiref_dataset/test_lifetime.py",  # 19
    "tests/test_readme.py:docs/aquamuse.md",  # 19
    "tests/wikiref_dataset/psg2sum/test_psg2sum_history.py",  # 18
    "tests/wikiref_dataset/wiki/test_wiki_dump.py",  # 17
    "tests/test_readme.py:docs/experiments.md",  # 17
)


def work_unit(nodeid: str) -> str:
    """The xdist work unit of a test id: its file, or for a test of one page of test_readme.py (an id that starts
    with the page: ``test_snippet_runs[docs/building.md-wikiref build ...]``), that file and the page."""
    path, _, rest = nodeid.partition("::")
    if path == README_TESTS and "[" in rest and ".md" in rest:
        return f"{path}:{rest.split('[', 1)[1].split('.md', 1)[0]}.md"
    return path


def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """xdist's scope scheduling with :func:`work_unit` as the scope (pytest-xdist's ``loadgroup`` marks do not reach
    the scheduler under pytest 9, whose test ids cannot be renamed)."""
    from xdist.scheduler import LoadScopeScheduling

    class WorkUnitScheduling(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return work_unit(nodeid)

    return WorkUnitScheduling(config, log)


def pytest_configure(config: pytest.Config) -> None:
    """A suite started in the background of a non-interactive shell (``make test &``, a CI step) inherits SIGINT
    ignored, and so would every command a test starts: the tests that interrupt a build as Ctrl-C does need it
    delivered. A Python handler here is reset to the default in the commands started (exec), which then take it."""
    if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    rank = {name: position for position, name in enumerate(SLOW_UNITS_FIRST)}
    items.sort(key=lambda item: rank.get(work_unit(item.nodeid), len(rank)))


@pytest.fixture(scope="session")
def rouge_golden() -> Path:
    """``../shared/rouge_golden``: the ROUGE-1.5.5 golden vectors; tests using it skip when it is absent."""
    path = SHARED / "rouge_golden"
    if not (path / "items.jsonl").is_file():
        pytest.skip("../shared/rouge_golden is not present")
    return path


# ---- models and datasets for the training scripts and the examples (built once per session, imports inside) ------

TINY_WORDS = ("the a of and to in is was for on that with by as at from it city council hives bees honey rooftop "
              "garden rules law new old river bridge school students year years water power plant energy wind "
              "solar team game season club player coach museum art history war king queen north south east west . , "
              "' ( )").split()


@pytest.fixture(scope="session")
def tiny_bert_dir(tmp_path_factory) -> Path:
    """A BERT encoder folder (random weights, 2 layers of 32) with a WordPiece tokenizer of a few words."""
    import torch
    from transformers import BertConfig, BertModel, BertTokenizer

    folder = tmp_path_factory.mktemp("tiny-bert")
    torch.manual_seed(0)
    BertModel(BertConfig(vocab_size=len(TINY_WORDS) + 5, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                         intermediate_size=64, max_position_embeddings=256)).save_pretrained(folder)
    vocab = {token: index for index, token in enumerate(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *TINY_WORDS])}
    BertTokenizer(vocab=vocab, do_lower_case=True).save_pretrained(folder)
    return folder


@pytest.fixture(scope="session")
def tiny_qbert_dir(tmp_path_factory, tiny_bert_dir) -> Path:
    """A Q-BERT folder as `pretrain_wikiref.py` leaves it (model, tokenizer, processor, results.json), built
    directly from the tiny encoder without training."""
    import json

    import torch

    from trainer_scripts.common import ModelArguments, load_model_and_processor

    folder = tmp_path_factory.mktemp("tiny-qbert")
    torch.manual_seed(1)
    model, processor, _ = load_model_and_processor(ModelArguments(model_name_or_path=str(tiny_bert_dir),
                                                                  max_length=128))
    model.save_pretrained(folder)
    processor.save_pretrained(folder)
    (folder / "results.json").write_text(json.dumps({
        "script": "pretrain_wikiref", "base_model": "tiny-bert", "objective": "classification",
        "pretraining": {"dataset": "fixture", "examples": {"train": 1, "validation": 1}, "steps": 0,
                        "validation": {"examples": 1, "threshold": 0.5, "rouge_1_f": 0.1, "rouge_2_f": 0.05,
                                       "rouge_l_f": 0.1}}}))
    return folder


@pytest.fixture(scope="session")
def demo_wikiref(tmp_path_factory) -> Path:
    """WikiRef built from the embedded sample (19 examples: 17 train, 1 validation, 1 test)."""
    from wikiref_dataset.wikiref.build import run_demo_build

    folder = tmp_path_factory.mktemp("wikiref") / "wikiref"
    run_demo_build(folder)
    return folder


@pytest.fixture(scope="session")
def duc_years(tmp_path_factory) -> dict[int, str]:
    """The DUC fixture years (tests/fixtures/duc) converted with `wikiref duc convert`'s function."""
    from wikiref_dataset.duc.reader import convert_duc

    out = tmp_path_factory.mktemp("duc")
    for year in (2005, 2006, 2007):
        convert_duc(FIXTURES / "duc" / f"duc{year}", year, out / f"duc{year}")
    return {year: str(out / f"duc{year}") for year in (2005, 2006, 2007)}


@pytest.fixture
def one_thread():
    """Tiny matrices: one torch thread is much faster than two on a busy 2-core machine (the model-side conftests
    make it autouse)."""
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)
