"""What a user sees when Q-BERT is built from a BERT checkpoint (the head is new by design): one line saying which
weights are new and why, not transformers' load report, its "model of type bert" warning or its note on new embedding
rows; and a load that really is wrong (encoder weights missing) still warns. Each in a fresh process, as the training
scripts and `make demo` run."""

from __future__ import annotations

import subprocess
import sys

BUILD = r'''
import logging, sys
logging.basicConfig(level=logging.INFO, stream=sys.stderr, format="%(levelname)s %(name)s: %(message)s")
from transformers.utils import logging as hf_logging
hf_logging.set_verbosity_warning()
from modeling_qbert import QBertForSentenceScoring
model = QBertForSentenceScoring.from_bert(sys.argv[1], vocab_size=int(sys.argv[2]) or None)
print("built", model.config.vocab_size)
'''

NOISE = ("LOAD REPORT", "You are using a model of type", "multivariate normal", "not sharded", "UNEXPECTED", "MISSING")


def run(folder, vocab_size: int) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", BUILD, str(folder), str(vocab_size)], capture_output=True, text=True,
                          timeout=300, env={"HF_HUB_OFFLINE": "1", "PATH": "/usr/bin:/bin"})


def test_a_new_head_is_one_line_not_transformers_load_report(tiny_bert_dir):
    from transformers import BertConfig

    vocab = BertConfig.from_pretrained(tiny_bert_dir).vocab_size + 3  # the [L#] level tokens' rows are new
    done = run(tiny_bert_dir, vocab)
    assert done.returncode == 0, done.stderr[-3000:]
    assert f"built {vocab}" in done.stdout
    for noise in NOISE:
        assert noise not in done.stderr, done.stderr
    [line] = [line for line in done.stderr.splitlines() if "new by design" in line]
    assert line.startswith("INFO modeling_qbert") and "classifier.weight" in line and "pooler" not in line.split(
        "not used")[0], line


def test_missing_encoder_weights_still_warn(tiny_bert_dir, tmp_path):
    from safetensors.torch import load_file, save_file

    broken = tmp_path / "broken-bert"
    broken.mkdir()
    for item in tiny_bert_dir.iterdir():
        (broken / item.name).write_bytes(item.read_bytes())
    weights = load_file(broken / "model.safetensors")
    dropped = [name for name in weights if "layer.1.output.dense" in name]
    assert dropped
    save_file({name: value for name, value in weights.items() if name not in dropped}, broken / "model.safetensors",
              metadata={"format": "pt"})
    done = run(broken, 0)
    assert done.returncode == 0, done.stderr[-3000:]
    warning = [line for line in done.stderr.splitlines() if line.startswith("WARNING modeling_qbert")]
    assert warning and "is incomplete" in warning[0] and "encoder weights missing" in warning[0], done.stderr


def test_the_notes_are_held_back_only_while_building(tiny_bert_dir):
    """After from_bert, transformers' loggers are as they were (no filter left behind)."""
    import logging

    from modeling_qbert import QBertForSentenceScoring
    from modeling_qbert.modeling_qbert import _EXPECTED_NOTES

    before = {name: list(logging.getLogger(name).filters) for name in _EXPECTED_NOTES}
    QBertForSentenceScoring.from_bert(str(tiny_bert_dir))
    assert {name: list(logging.getLogger(name).filters) for name in _EXPECTED_NOTES} == before


LOAD = r'''
import sys
from transformers.utils import logging as hf_logging
from huggingface_hub.utils import are_progress_bars_disabled
import modeling_qbert
modeling_qbert.load_pipeline(sys.argv[1], progress=False)
print("bars after:", hf_logging.is_progress_bar_enabled(), not are_progress_bars_disabled(), flush=True)
print("--- plain load ---", file=sys.stderr, flush=True)
modeling_qbert.load_pipeline(sys.argv[1])
'''


def test_a_quiet_load_shows_no_loading_bar_and_puts_the_bars_back(tiny_qbert_dir):
    """load_pipeline(progress=False), what `-q` passes, loads without transformers' "Loading weights" bar; afterwards
    transformers' and huggingface_hub's bars are on again, so the next plain load shows it (a fresh process: the
    switches are process-wide)."""
    done = subprocess.run([sys.executable, "-c", LOAD, str(tiny_qbert_dir)], capture_output=True, text=True,
                          timeout=300, env={"HF_HUB_OFFLINE": "1", "PATH": "/usr/bin:/bin"})
    assert done.returncode == 0, done.stderr[-3000:]
    assert "bars after: True True" in done.stdout
    quiet, plain = done.stderr.split("--- plain load ---")
    assert "Loading weights" not in quiet and "Loading weights" in plain, done.stderr


def test_no_progress_bars_nests_and_shares_the_switch_across_threads():
    """Blocks in several threads: the bars stay off until the last one ends, then are as the first found them; a
    caller that had turned them off keeps them off."""
    import threading

    from transformers.utils import logging as hf_logging

    from modeling_qbert import no_progress_bars

    assert hf_logging.is_progress_bar_enabled()
    entered, release = threading.Barrier(3), threading.Event()

    def hold() -> None:
        with no_progress_bars():
            entered.wait()
            release.wait()

    threads = [threading.Thread(target=hold) for _ in range(2)]
    for thread in threads:
        thread.start()
    entered.wait()
    with no_progress_bars():
        assert not hf_logging.is_progress_bar_enabled()
    assert not hf_logging.is_progress_bar_enabled()  # the threads' blocks still run
    release.set()
    for thread in threads:
        thread.join()
    assert hf_logging.is_progress_bar_enabled()
    with no_progress_bars(False):
        assert hf_logging.is_progress_bar_enabled()
    hf_logging.disable_progress_bar()
    try:
        with no_progress_bars():
            pass
        assert not hf_logging.is_progress_bar_enabled()
    finally:
        hf_logging.enable_progress_bar()
