"""QBertConfig: the BERT fields plus the Q-BERT options, their validation, saving and loading."""

import json

import pytest
from transformers import AutoConfig, BertConfig

from modeling_qbert import QBertConfig
from modeling_qbert.configuration_qbert import OBJECTIVES, POOLINGS


def test_defaults_are_bert_base_with_query_focused_classification():
    config = QBertConfig()
    assert config.model_type == "qbert"
    assert (config.hidden_size, config.num_hidden_layers, config.vocab_size) == (768, 12, 30522)
    assert (config.pooling, config.objective, config.use_query, config.max_query_levels) == (
        "query_focused", "classification", True, 8)
    assert config.selection_threshold is None and config.default_threshold == 0.5
    assert isinstance(config, BertConfig)
    assert POOLINGS == ("query_focused", "cls", "mean", "max", "attention")
    assert OBJECTIVES == ("classification", "regression")


def test_default_threshold():
    assert QBertConfig(objective="regression").default_threshold == 0.0
    assert QBertConfig(objective="regression", selection_threshold=0.12).default_threshold == 0.12


@pytest.mark.parametrize("pooling", POOLINGS)
def test_every_pooling_is_accepted(pooling):
    assert QBertConfig(pooling=pooling, use_query=pooling != "attention").pooling == pooling


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"pooling": "sum"}, "pooling"),
        ({"objective": "ranking"}, "objective"),
        ({"pooling": "query_focused", "use_query": False}, "needs use_query=True"),
        ({"max_query_levels": 0}, "max_query_levels"),
        ({"attention_scope": "document"}, "attention_scope"),
        ({"query_similarity": True, "use_query": False, "pooling": "mean"}, "query_similarity .*needs use_query=True"),
        ({"encoder_model_type": "no-such-encoder"}, "not an encoder type transformers knows"),
        ({"encoder_model_type": "qbert"}, "not an encoder type transformers knows"),
    ],
)
def test_invalid_settings_are_refused(overrides, message):
    with pytest.raises(Exception, match=message):
        QBertConfig(**overrides)


def test_save_and_load(tmp_path):
    config = QBertConfig(hidden_size=64, num_hidden_layers=2, num_attention_heads=4, intermediate_size=128,
                         pooling="max", use_query=False, objective="regression", max_query_levels=5,
                         selection_threshold=0.3)
    config.save_pretrained(tmp_path)
    saved = json.loads((tmp_path / "config.json").read_text())
    assert saved["model_type"] == "qbert"
    assert {key: saved[key] for key in ("pooling", "use_query", "objective", "max_query_levels")} == {
        "pooling": "max", "use_query": False, "objective": "regression", "max_query_levels": 5}
    for loaded in (QBertConfig.from_pretrained(tmp_path), AutoConfig.from_pretrained(tmp_path)):
        assert type(loaded) is QBertConfig
        assert loaded.to_diff_dict() == config.to_diff_dict()


def test_a_bert_config_loads_into_qbert(tmp_path):
    BertConfig(hidden_size=384, num_hidden_layers=6, num_attention_heads=12, intermediate_size=1536).save_pretrained(
        tmp_path)
    config = QBertConfig.from_pretrained(tmp_path, pooling="mean", objective="regression")
    assert (config.hidden_size, config.num_hidden_layers, config.pooling, config.objective) == (384, 6, "mean",
                                                                                              "regression")
    assert config.model_type == "qbert" and "model_type" not in vars(config)
