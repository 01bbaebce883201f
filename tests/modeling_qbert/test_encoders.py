"""Q-BERT on encoders beyond BERT (RoBERTa, XLM-RoBERTa, MPNet, loaded with `AutoModel`): the configuration records
the encoder's type, `from_bert` initialises the encoder from the checkpoint (with or without its base model's weight
prefix), the processor gives one token type where the encoder embeds fewer than two, sentence-scope positions follow
the encoder's own count (RoBERTa's and MPNet's start after the padding index), the frozen prefix is exact, training
changes the weights, and a saved folder reloads (in-process and with trust_remote_code) and summarizes."""

import json
from types import SimpleNamespace

import pytest
import torch
from test_modeling_qbert import WORDS, example_batch, remote_code_run
from test_trainer import tiny_windows, training_arguments
from transformers import (
    AutoModel,
    AutoProcessor,
    AutoTokenizer,
    ElectraModel,
    MPNetConfig,
    MPNetModel,
    MPNetTokenizer,
    RobertaConfig,
    RobertaForMaskedLM,
    RobertaModel,
    RobertaTokenizer,
    XLMRobertaConfig,
    XLMRobertaModel,
    XLMRobertaTokenizer,
)

from modeling_qbert import QBertConfig, QBertExample, QBertForSentenceScoring, QBertProcessor, load_pipeline
from modeling_qbert.modeling_qbert import sentence_scope_inputs
from modeling_qbert.prefix_cache import PrefixCache
from modeling_qbert.trainer import QBertTrainer

SPECIAL = ["<s>", "<pad>", "</s>", "<unk>"]
SIZES = dict(hidden_size=16, num_hidden_layers=2, num_attention_heads=2, intermediate_size=32,
             max_position_embeddings=66, hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0)
DOCUMENT = ["the king was born in the city", "a river runs", "the cat sat on the mat", "the war was early"]


def roberta_tokenizer() -> RobertaTokenizer:
    """Byte-level BPE over the test words: their letters, and merges that build each word after `Ġ` (a space)."""
    tokens = [*SPECIAL, "<mask>", "Ġ", *sorted(set("".join(WORDS)))]
    merges = []
    for word in WORDS:
        piece = "Ġ"
        for char in word:
            if piece + char not in tokens:
                merges.append((piece, char))
                tokens.append(piece + char)
            piece += char
    return RobertaTokenizer(vocab={token: index for index, token in enumerate(tokens)}, merges=merges,
                            add_prefix_space=True)


def xlm_roberta_tokenizer() -> XLMRobertaTokenizer:
    """A Unigram (SentencePiece-style) vocabulary of the test words."""
    return XLMRobertaTokenizer(vocab=[(token, 0.0) for token in SPECIAL] + [(f"▁{word}", -1.0) for word in WORDS]
                               + [("<mask>", 0.0)])


def mpnet_tokenizer() -> MPNetTokenizer:
    return MPNetTokenizer(vocab={token: index for index, token in
                                 enumerate(["<s>", "<pad>", "</s>", "[UNK]", "<mask>", *WORDS])})


ENCODERS = {
    "roberta": (roberta_tokenizer, lambda size: RobertaModel(RobertaConfig(vocab_size=size, type_vocab_size=1,
                                                                            **SIZES))),
    "xlm-roberta": (xlm_roberta_tokenizer,
                    lambda size: XLMRobertaModel(XLMRobertaConfig(vocab_size=size, type_vocab_size=1, **SIZES))),
    # MPNet: no token types; its encoder's position bias always uses 32 buckets (MPNetEncoder.compute_position_bias)
    "mpnet": (mpnet_tokenizer, lambda size: MPNetModel(MPNetConfig(vocab_size=size, **SIZES))),
}


@pytest.fixture(scope="module", params=list(ENCODERS))
def encoder_dir(request, tmp_path_factory):
    """`(encoder type, folder)`: a random tiny encoder checkpoint (base model, no weight prefix) and its tokenizer."""
    make_tokenizer, make_model = ENCODERS[request.param]
    folder = tmp_path_factory.mktemp(request.param)
    torch.manual_seed(0)
    tokenizer = make_tokenizer()
    make_model(len(tokenizer)).save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return request.param, folder


def qbert_on(folder, **overrides) -> tuple[QBertForSentenceScoring, QBertProcessor]:
    """A new Q-BERT on the encoder in `folder` and its processor, as `load_model_and_processor` builds them."""
    torch.manual_seed(1)
    model = QBertForSentenceScoring.from_bert(folder, max_query_levels=3, **overrides)
    packing = "sentences" if overrides.get("attention_scope") == "sentence" else "stride"
    processor = QBertProcessor.from_config(AutoTokenizer.from_pretrained(folder), model.config, packing=packing)
    model.resize_token_embeddings(len(processor.tokenizer))
    return model.eval(), processor


def tiny_qbert(encoder: str, **overrides) -> tuple[QBertForSentenceScoring, QBertProcessor]:
    """A random Q-BERT on a tiny encoder of type `encoder` (no checkpoint) and its processor."""
    torch.manual_seed(0)
    tokenizer = ENCODERS[encoder][0]()
    settings = dict(encoder_model_type=encoder, vocab_size=len(tokenizer), max_query_levels=3, pad_token_id=1,
                    type_vocab_size=1, **SIZES)
    config = QBertConfig(**{**settings, **overrides})
    packing = "sentences" if config.attention_scope == "sentence" else "stride"
    processor = QBertProcessor.from_config(tokenizer, config, packing=packing)
    model = QBertForSentenceScoring(config)
    model.resize_token_embeddings(len(processor.tokenizer))
    return model.eval(), processor


def test_config_records_the_encoder_type(encoder_dir):
    encoder, folder = encoder_dir
    config = QBertConfig.from_pretrained(folder)
    assert (config.model_type, config.encoder_model_type) == ("qbert", encoder)
    assert type(config.to_encoder_config()).model_type == encoder
    assert config.encoder_position_offset == 2
    assert config.encoder_segment_types == (0 if encoder == "mpnet" else 1)
    saved = config.to_dict()
    assert saved["model_type"] == "qbert" and saved["encoder_model_type"] == encoder
    assert QBertConfig.from_dict(saved).encoder_model_type == encoder  # a saved Q-BERT keeps its encoder
    bert = QBertConfig()  # a Q-BERT saved before the field: BERT, as it was
    assert (bert.encoder_model_type, bert.encoder_position_offset, bert.encoder_segment_types) == ("bert", 0, 2)


def test_from_bert_initialises_the_encoder_from_the_checkpoint(encoder_dir):
    encoder, folder = encoder_dir
    model, info = QBertForSentenceScoring.from_bert(folder, output_loading_info=True)
    reference = AutoModel.from_pretrained(folder)
    assert type(model.bert) is type(reference)
    assert info["unexpected_keys"] == ["pooler.dense.bias", "pooler.dense.weight"]
    assert info["missing_keys"] == ["classifier.bias", "classifier.weight", "sentence_pooling.query_weight.weight"]
    assert info["mismatched_keys"] == []
    for name, tensor in reference.state_dict().items():
        if not name.startswith("pooler."):
            torch.testing.assert_close(model.state_dict()[f"bert.{name}"], tensor, rtol=0, atol=0, msg=name)
    assert model.position_offset == model.config.encoder_position_offset == 2
    # a loaded encoder initialises it the same way
    loaded = QBertForSentenceScoring.from_bert(reference, pooling="mean")
    assert loaded.config.encoder_model_type == encoder
    for name, tensor in model.bert.state_dict().items():
        torch.testing.assert_close(loaded.bert.state_dict()[name], tensor, rtol=0, atol=0, msg=name)


def test_from_bert_reads_weights_saved_under_the_base_model_prefix(tmp_path):
    torch.manual_seed(0)
    tokenizer = roberta_tokenizer()
    masked_lm = RobertaForMaskedLM(RobertaConfig(vocab_size=len(tokenizer), type_vocab_size=1, **SIZES))
    masked_lm.save_pretrained(tmp_path)  # weights named `roberta.…`, and an LM head
    model, info = QBertForSentenceScoring.from_bert(tmp_path, output_loading_info=True)
    assert not [key for key in info["missing_keys"] if key.startswith("bert.")]
    for name, tensor in masked_lm.roberta.state_dict().items():
        torch.testing.assert_close(model.bert.state_dict()[name], tensor, rtol=0, atol=0, msg=name)


def test_processor_gives_one_token_type_where_the_encoder_embeds_fewer_than_two(encoder_dir):
    encoder, folder = encoder_dir
    model, processor = qbert_on(folder)
    assert processor.segment_types == model.config.encoder_segment_types and processor.document_token_type == 0
    assert processor.max_length == 64  # 66 positions, counted from 2
    batch = example_batch(processor)
    assert int(batch["token_type_ids"].max()) == 0
    assert batch["input_ids"][0, 0] == processor.tokenizer.cls_token_id  # `<s>`
    expected = model(**batch).scores
    # a processor built for BERT's two segments is refused by check_config, and its type ids by the model
    pairs = QBertProcessor(processor.tokenizer, max_length=64, max_query_levels=3, max_query_length=32)
    with pytest.raises(ValueError, match="does not match the model's"):
        pairs.check_config(model.config)
    wrong = example_batch(pairs)
    assert int(wrong["token_type_ids"].max()) == 1
    if encoder == "mpnet":  # no segment embeddings: type ids are ignored
        torch.testing.assert_close(model(**wrong).scores, expected, rtol=0, atol=0)
    else:
        with pytest.raises(ValueError, match="embeds 1 token type"):
            model(**wrong)


def test_sentence_scope_positions_follow_the_encoder(encoder_dir):
    """The prefix of a sentence-scope window gets the positions the encoder gives a sequence of its own (RoBERTa's and
    MPNet's from padding_idx + 1), and a sentence's score depends neither on its neighbours nor on its place."""
    _, folder = encoder_dir
    model, processor = qbert_on(folder, attention_scope="sentence", pooling="mean")
    batch = example_batch(processor)
    with torch.no_grad():
        hidden = model(**batch, output_hidden_states=True).hidden_states[-1]
        prefix = int((batch["sentence_ids"][0] >= 0).long().argmax())
        alone = model.bert(batch["input_ids"][:1, :prefix]).last_hidden_state  # the encoder's own positions
    torch.testing.assert_close(hidden[0, :prefix], alone[0], rtol=1e-5, atol=1e-5)
    _, positions = sentence_scope_inputs(batch["sentence_ids"])
    assert int(positions.min()) + model.position_offset >= 2

    def scores(sentences):
        windows = processor.encode_examples([QBertExample(["cat"], sentences)])
        with torch.no_grad():
            return model(**processor.collator()([w.to_features() for w in windows])).scores[0]

    sentence = "the cat sat on the mat"
    first = scores([sentence, "a dog"])[0]
    torch.testing.assert_close(scores([sentence, "the red house by the river"])[0], first, rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(scores(["a blue fish runs", sentence])[1], first, rtol=1e-5, atol=1e-5)


def test_frozen_prefix_scores_as_the_full_forward(encoder_dir, tmp_path):
    _, folder = encoder_dir
    model, processor = qbert_on(folder, attention_scope="sentence", query_similarity=True)
    batch = example_batch(processor)
    expected = model(**batch)
    model.set_frozen_prefix(PrefixCache(model, 1, cache_dir=tmp_path))
    got = model(**batch)
    torch.testing.assert_close(got.scores, expected.scores, atol=2e-3, rtol=2e-3)  # float16 states
    torch.testing.assert_close(got.loss, expected.loss, atol=2e-3, rtol=2e-3)


def test_trains_saves_and_reloads(encoder_dir, tmp_path):
    encoder, folder = encoder_dir
    model, processor = qbert_on(folder)
    model.train()
    before = {name: parameter.detach().clone() for name, parameter in model.named_parameters()}
    trainer = QBertTrainer(model=model, args=training_arguments(tmp_path / "run", max_steps=3),
                           train_dataset=tiny_windows(processor), data_collator=processor.collator())
    trainer.train()
    changed = {name for name, parameter in model.named_parameters() if not torch.equal(parameter, before[name])}
    assert any(name.startswith("bert.encoder.layer.") for name in changed)
    assert "classifier.weight" in changed
    model.eval()

    saved = tmp_path / "qbert"
    model.save_pretrained(saved)
    processor.save_pretrained(saved)
    config = json.loads((saved / "config.json").read_text())
    assert (config["model_type"], config["encoder_model_type"]) == ("qbert", encoder)
    loaded = AutoModel.from_pretrained(saved).eval()
    assert type(loaded) is QBertForSentenceScoring and type(loaded.bert) is type(model.bert)
    for name, tensor in model.state_dict().items():
        torch.testing.assert_close(loaded.state_dict()[name], tensor, rtol=0, atol=0, msg=name)
    loaded_processor = AutoProcessor.from_pretrained(saved)
    loaded_processor.check_config(loaded.config)
    assert loaded_processor.segment_types == processor.segment_types
    with torch.no_grad():
        torch.testing.assert_close(loaded(**example_batch(loaded_processor)).scores,
                                   model(**example_batch(processor)).scores, rtol=0, atol=0)

    # a fresh interpreter, offline, where the project is not on the path: the folder's own code files
    remote, expected = remote_code_run(model, processor, saved, tmp_path)
    assert remote["model"].startswith("transformers_modules.") and remote["package_imported"] is False
    assert remote["scores"] == pytest.approx(expected, abs=1e-6)


def test_the_pipeline_summarizes(encoder_dir, tmp_path):
    _, folder = encoder_dir
    model, processor = qbert_on(folder)
    model.save_pretrained(tmp_path)
    processor.save_pretrained(tmp_path)
    summarize = load_pipeline(tmp_path)
    result = summarize(query=["city", "early life"], documents=[DOCUMENT])
    assert len(result["sentences"]) == len(DOCUMENT)
    assert result["summary"] and all(0.0 <= item["score"] <= 1.0 for item in result["sentences"])


def test_load_model_and_processor_builds_on_the_encoder(encoder_dir):
    from trainer_scripts.common import ModelArguments, load_model_and_processor

    encoder, folder = encoder_dir
    for random_init in (False, True):
        model, processor, _ = load_model_and_processor(ModelArguments(model_name_or_path=str(folder), max_length=512,
                                                                      random_init=random_init))
        assert model.config.encoder_model_type == encoder and type(model.bert) is type(AutoModel.from_pretrained(
            folder))
        processor.check_config(model.config)
        assert processor.max_length == 64 and processor.document_token_type == 0


def test_another_auto_model_encoder_runs_but_gets_no_frozen_prefix(tmp_path):
    """ELECTRA: built by AutoModel (no pooler to leave out), scored; its layers are not run one by one."""
    model, processor = qbert_on_electra()
    assert type(model.bert) is ElectraModel
    output = model(**example_batch(processor))
    assert output.scores.shape == output.sentence_mask.shape
    with pytest.raises(ValueError, match="'electra'"):
        model.set_frozen_prefix(SimpleNamespace(layers=1))
    with pytest.raises(ValueError, match="'electra'"):
        PrefixCache(model, 1, cache_dir=tmp_path)


def qbert_on_electra() -> tuple[QBertForSentenceScoring, QBertProcessor]:
    from test_modeling_qbert import tiny_tokenizer

    torch.manual_seed(0)
    config = QBertConfig(encoder_model_type="electra", embedding_size=16, vocab_size=len(WORDS) + 5,
                         max_query_levels=3, attention_scope="sentence", **SIZES)
    processor = QBertProcessor.from_config(tiny_tokenizer(), config, packing="sentences")
    model = QBertForSentenceScoring(config)
    model.resize_token_embeddings(len(processor.tokenizer))
    return model.eval(), processor


def test_sentence_scope_mask_takes_the_form_of_the_encoder_attention():
    """Eager attention adds a prepared mask to its scores: the sentence scope's boolean mask becomes additive there
    (MPNet has eager attention only), so eager and sdpa score alike."""
    from test_modeling_qbert import tiny_model_and_processor

    model, processor = tiny_model_and_processor(attention_scope="sentence", num_hidden_layers=1)
    processor.packing = "sentences"
    batch = example_batch(processor)
    with torch.no_grad():
        expected = model(**batch).scores
        model.set_attn_implementation("eager")
        assert model.bert.config._attn_implementation == "eager"
        torch.testing.assert_close(model(**batch).scores, expected, rtol=1e-5, atol=1e-6)


def test_attention_dropout_reaches_every_encoder(encoder_dir):
    from trainer_scripts.common import ModelArguments, load_model_and_processor

    _, folder = encoder_dir
    model, _, _ = load_model_and_processor(ModelArguments(model_name_or_path=str(folder), attention_dropout=0.25))
    rates = [module.dropout.p for name, module in model.named_modules()
             if name.endswith(("attention.self", "attention.attn"))]
    assert len(rates) == 2 and set(rates) == {0.25}
