"""The frozen encoder prefix cache: the model scores as without it (every pooling, k from 1 to L), the frozen prefix
stays bit-identical while the layers above train, keys follow exactly what the states depend on, shards written by
one process are read by another, two processes warming one folder compute each part once, and bad uses are refused."""

import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
import torch
from test_encoders import tiny_qbert
from test_modeling_qbert import example_batch, tiny_model_and_processor
from test_trainer import tiny_windows, training_arguments

from modeling_qbert import QBertExample
from modeling_qbert.prefix_cache import PrefixCache, window_parts
from modeling_qbert.trainer import QBertTrainer

PROJECT_ROOT = Path(__file__).resolve().parents[2]
SCOPED = dict(attention_scope="sentence", query_similarity=True, num_hidden_layers=3)


def windows_of(processor, examples):
    return [window.to_features() for window in processor.encode_examples(examples)]


@pytest.mark.parametrize("pooling", ["query_focused", "cls", "mean", "max", "attention"])
@pytest.mark.parametrize("layers", [1, 3])
def test_scores_with_the_cache_equal_the_full_forward(tmp_path, pooling, layers):
    model, processor = tiny_model_and_processor(**SCOPED, pooling=pooling, sentence_position_buckets=4)
    batch = example_batch(processor)
    expected = model(**batch)
    cache = PrefixCache(model, layers, cache_dir=tmp_path)
    model.set_frozen_prefix(cache)
    got = model(**batch)
    assert torch.equal(got.sentence_mask, expected.sentence_mask)
    torch.testing.assert_close(got.scores, expected.scores, atol=2e-3, rtol=2e-3)  # float16 states
    torch.testing.assert_close(got.loss, expected.loss, atol=2e-3, rtol=2e-3)
    assert cache.computed_in_forward == 7  # two queries and five sentences, each once
    model(**batch)
    assert cache.computed_in_forward == 7  # the second pass reads them all


def test_an_mpnet_encoder_scores_as_without_the_cache_and_keeps_its_position_bias_frozen(tmp_path):
    """MPNet: its layers take the relative position bias its encoder computes once (`encoder_layers` computes it
    too); that bias, shared by every layer, is part of the frozen prefix and of the folder's name."""
    model, processor = tiny_qbert("mpnet", attention_scope="sentence", query_similarity=True, num_hidden_layers=3)
    batch = example_batch(processor)
    expected = model(**batch)
    cache = PrefixCache(model, 2, cache_dir=tmp_path / "cache")
    assert [name for name, _ in model.prefix_modules(2)] == ["embeddings", "layer.0", "layer.1",
                                                            "encoder.relative_attention_bias"]
    model.set_frozen_prefix(cache)
    got = model(**batch)
    torch.testing.assert_close(got.scores, expected.scores, atol=2e-3, rtol=2e-3)  # float16 states
    assert cache.computed_in_forward == 7

    model.train()
    before = {name: parameter.detach().clone() for name, parameter in model.named_parameters()}
    trainer = QBertTrainer(model=model, args=training_arguments(tmp_path / "run", max_steps=3),
                           train_dataset=tiny_windows(processor), data_collator=processor.collator())
    trainer.train()
    frozen = ("bert.embeddings.", "bert.encoder.layer.0.", "bert.encoder.layer.1.", "bert.encoder.relative_attention")
    for name, parameter in model.named_parameters():
        if name.startswith(frozen):
            assert torch.equal(parameter, before[name]) and not parameter.requires_grad, name
    assert any(name.startswith("bert.encoder.layer.2.") and not torch.equal(parameter, before[name])
               for name, parameter in model.named_parameters())
    model.set_frozen_prefix(None)
    with torch.no_grad():
        model.bert.encoder.relative_attention_bias.weight += 1.0
    assert PrefixCache(model, 2, cache_dir=tmp_path / "cache").folder != cache.folder


def test_window_parts_follow_the_sentence_scope():
    ids = [2, 9, 10, 3, 11, 12, 13, 14, 3, 0]
    types = [0, 0, 0, 0, 1, 1, 1, 1, 1, 0]
    sentence_ids = [-1, -1, -1, -1, 0, 0, 1, 1, -1, -1]
    parts = window_parts(ids, types, sentence_ids)
    assert [(start, end, part.kind, part.input_ids, part.first_position) for start, end, part in parts] == [
        (0, 4, 0, (2, 9, 10, 3), 0), (4, 6, 1, (11, 12), 1), (6, 8, 1, (13, 14), 1)]
    with pytest.raises(ValueError, match="sentence 0 of a window is split"):
        window_parts([2, 5, 6, 7], [0, 1, 1, 1], [-1, 0, 1, 0])


def test_training_keeps_the_prefix_bit_identical_and_trains_what_is_above(tmp_path):
    model, processor = tiny_model_and_processor(**SCOPED)
    model.train()
    windows = tiny_windows(processor)
    before = {name: parameter.detach().clone() for name, parameter in model.named_parameters()}
    cache = PrefixCache(model, 2, cache_dir=tmp_path / "cache")
    assert cache.warm(model, windows.select_columns(["input_ids", "token_type_ids", "sentence_ids"])) > 0
    model.set_frozen_prefix(cache)
    trainer = QBertTrainer(model=model, args=training_arguments(tmp_path / "run", max_steps=3), train_dataset=windows,
                           data_collator=processor.collator())
    trainer.train()
    assert cache.computed_in_forward == 0  # warmed: the training windows read every part from disk
    for name, parameter in model.named_parameters():
        frozen = name.startswith("bert.embeddings.") or name.startswith(("bert.encoder.layer.0.",
                                                                        "bert.encoder.layer.1."))
        if frozen:
            assert torch.equal(parameter, before[name]), name
            assert not parameter.requires_grad
    changed = [name for name, parameter in model.named_parameters() if not torch.equal(parameter, before[name])]
    assert any(name.startswith("bert.encoder.layer.2.") for name in changed)
    assert any(name.startswith("classifier.") for name in changed)
    model.set_frozen_prefix(None)
    assert all(parameter.requires_grad for parameter in model.parameters())


def test_keys_change_with_what_the_states_depend_on(tmp_path):
    model, processor = tiny_model_and_processor(**SCOPED)
    example = QBertExample(["city", "early life"], ["the king was born", "a river runs"])
    (window,) = windows_of(processor, [example])
    parts = [part for _, _, part in window_parts(window["input_ids"], window["token_type_ids"],
                                                 window["sentence_ids"])]
    cache = PrefixCache(model, 1, cache_dir=tmp_path)
    keys = [cache.key(part) for part in parts]
    # a level marker's embedding row (drawn at random for each seed) changes the query's key, not the sentences'
    with torch.no_grad():
        model.bert.embeddings.word_embeddings.weight[processor.level_token_ids[0]] += 1.0
    redrawn = PrefixCache(model, 1, cache_dir=tmp_path)
    assert redrawn.folder == cache.folder
    assert [redrawn.key(part) for part in parts] != keys
    assert [redrawn.key(part) for part in parts][1:] == keys[1:]
    # a weight of the first layer changes the folder for k = 1, not a weight of the second
    with torch.no_grad():
        model.bert.encoder.layer[1].output.dense.bias += 1.0
    assert PrefixCache(model, 1, cache_dir=tmp_path).folder == cache.folder
    assert PrefixCache(model, 2, cache_dir=tmp_path).folder != cache.folder
    with torch.no_grad():
        model.bert.encoder.layer[0].output.dense.bias += 1.0
    assert PrefixCache(model, 1, cache_dir=tmp_path).folder != cache.folder


def test_bad_uses_are_refused(tmp_path):
    model, _ = tiny_model_and_processor(num_hidden_layers=2)  # window attention
    with pytest.raises(ValueError, match="layers must be 1 … 2"):
        PrefixCache(model, 3, cache_dir=tmp_path)
    with pytest.raises(ValueError, match="needs attention_scope='sentence'"):
        model.set_frozen_prefix(PrefixCache(model, 1, cache_dir=tmp_path))
    scoped, processor = tiny_model_and_processor(**SCOPED)
    scoped.set_frozen_prefix(PrefixCache(scoped, 1, cache_dir=tmp_path))
    with pytest.raises(ValueError, match="returns no hidden states"):
        scoped(**example_batch(processor), output_hidden_states=True)


WARM = textwrap.dedent("""
    import sys, torch
    sys.path.insert(0, {tests!r})
    from modeling_qbert import QBertExample
    from modeling_qbert.prefix_cache import PrefixCache
    from test_modeling_qbert import tiny_model_and_processor
    model, processor = tiny_model_and_processor(attention_scope="sentence", query_similarity=True, num_hidden_layers=3)
    words = "the a of cat dog sat on mat fish runs red blue house tree river city war king early life".split()
    examples = [QBertExample([words[i % 20]], [" ".join(words[(i + j) % 20: (i + j) % 20 + 3]) for j in range(6)])
                for i in range(40)]
    windows = [w.to_features() for w in processor.encode_examples(examples)]
    cache = PrefixCache(model, 2, cache_dir=sys.argv[1], batch_tokens=64)
    print(cache.warm(model, windows), len(cache))
""")


def test_two_processes_warming_one_folder_compute_each_part_once_and_a_third_reads_them(tmp_path):
    script = tmp_path / "warm.py"
    script.write_text(WARM.format(tests=str(PROJECT_ROOT / "tests" / "modeling_qbert")))
    folder = tmp_path / "cache"
    runs = [subprocess.Popen([sys.executable, str(script), str(folder)], stdout=subprocess.PIPE, text=True,
                             cwd=PROJECT_ROOT) for _ in range(2)]
    outputs = [run.communicate(timeout=300)[0].split() for run in runs]
    assert all(run.returncode == 0 for run in runs)
    computed = sorted(int(output[0]) for output in outputs)
    parts = int(outputs[0][1])
    assert computed == [0, parts] and int(outputs[1][1]) == parts  # one computed them all, the other none
    (cache_folder,) = folder.iterdir()
    keys = np.concatenate([np.load(path) for path in cache_folder.glob("shard-*.keys.npy")])
    assert len(keys) == parts == len({bytes(key) for key in keys["key"]})
    third = subprocess.run([sys.executable, str(script), str(folder)], capture_output=True, text=True,
                           cwd=PROJECT_ROOT, timeout=300)
    assert third.returncode == 0 and third.stdout.split() == ["0", str(parts)]
