"""Subnetwork identification: SubnetworkConfig validation, per-tensor top-magnitude masks, the cubic schedule and
mask monotonicity, the mask file, and the sparse delta round trip."""

import copy
import dataclasses

import pytest
import torch

from modeling_qbert import QBertConfig, QBertForSentenceScoring
from modeling_qbert.sparse import (
    SubnetworkConfig,
    apply_sparse_delta,
    cubic_sparsity,
    identify_subnetwork,
    load_subnetwork_mask,
    mask_density,
    prune_masks,
    save_sparse_delta,
    save_subnetwork_mask,
    sparse_delta,
    top_magnitude_mask,
)


def tiny_model(seed: int = 0) -> QBertForSentenceScoring:
    torch.manual_seed(seed)
    return QBertForSentenceScoring(QBertConfig(vocab_size=100, hidden_size=32, num_hidden_layers=2,
                                               num_attention_heads=2, intermediate_size=64,
                                               max_position_embeddings=64, max_query_levels=3))


# ---- config ----------------------------------------------------------------------------------------------------


def test_config_fields_have_defaults_and_help_mirrored_in_the_docstring():
    for item in dataclasses.fields(SubnetworkConfig):
        assert item.default is not dataclasses.MISSING, item.name
        assert item.metadata.get("help"), item.name
        assert f"{item.name} (`" in SubnetworkConfig.__doc__, item.name
    config = SubnetworkConfig()
    assert (config.fraction, config.method) == (0.1, "one_step")
    assert SubnetworkConfig.from_json(config.to_json()) == config


@pytest.mark.parametrize("overrides, message", [
    ({"fraction": 0.0}, "fraction"),
    ({"fraction": 1.5}, "fraction"),
    ({"method": "random"}, "method"),
    ({"target_parameters": "("}, "regular expression"),
    ({"target_parameters": r"^bert\."}, "always fully trainable"),
    ({"target_parameters": "classifier"}, "always fully trainable"),
    ({"initial_fraction": 0.05}, "initial_fraction"),
    ({"update_frequency": 0}, "update_frequency"),
    ({"method": "iterative", "begin_step": 10, "end_step": 10}, "multiple of update_frequency"),
    ({"method": "iterative", "begin_step": 0, "end_step": 150, "update_frequency": 100}, "multiple"),
])
def test_config_validation_errors(overrides, message):
    with pytest.raises(ValueError, match=message):
        SubnetworkConfig(**overrides)


# ---- identification --------------------------------------------------------------------------------------------


def test_one_step_masks_keep_the_top_fraction_of_each_encoder_tensor():
    model = tiny_model()
    masks = identify_subnetwork(model, SubnetworkConfig(fraction=0.1))
    parameters = dict(model.named_parameters())
    assert set(masks) == {name for name in parameters if name.startswith("bert.encoder.")}
    for name, mask in masks.items():
        weight = parameters[name].detach().abs()
        assert mask.dtype == torch.bool and mask.shape == weight.shape
        assert int(mask.sum()) == max(1, round(0.1 * weight.numel())), name
        if weight.unique().numel() == weight.numel():  # no ties: every kept entry beats every dropped one
            assert weight[mask].min() > weight[~mask].max(), name
    matrices_only = identify_subnetwork(model, SubnetworkConfig(include_vectors=False))
    assert set(matrices_only) == {name for name in masks if parameters[name].dim() == 2}


def test_top_magnitude_mask_within_a_mask():
    tensor = torch.tensor([5.0, -4.0, 3.0, -2.0, 1.0, 0.5])
    assert top_magnitude_mask(tensor, 0.5).tolist() == [True, True, True, False, False, False]
    within = torch.tensor([False, True, True, True, True, True])
    assert top_magnitude_mask(tensor, 0.5, within=within).tolist() == [False, True, True, True, False, False]
    assert top_magnitude_mask(tensor, 1.0, within=within).tolist() == within.tolist()


def test_identification_raises_when_nothing_matches():
    with pytest.raises(ValueError, match="no parameter"):
        identify_subnetwork(tiny_model(), SubnetworkConfig(target_parameters="^nothing"))


# ---- iterative schedule ----------------------------------------------------------------------------------------


def test_cubic_schedule_values():
    # s_t = s_f + (s_i - s_f)(1 - (t - t0)/(nΔt))^3 with s_i = 0, s_f = 0.9, t0 = 100, nΔt = 400
    for step, expected in [(0, 0.0), (100, 0.0), (200, 0.9 - 0.9 * 0.75**3), (300, 0.9 - 0.9 * 0.5**3),
                           (400, 0.9 - 0.9 * 0.25**3), (500, 0.9), (900, 0.9)]:
        assert cubic_sparsity(step, 0.0, 0.9, 100, 500) == pytest.approx(expected, abs=1e-12), step
    config = SubnetworkConfig(fraction=0.1, method="iterative", begin_step=100, end_step=500, update_frequency=100)
    assert config.trainable_fraction_at(300) == pytest.approx(1 - (0.9 - 0.9 * 0.5**3))
    assert [step for step in range(0, 700) if config.is_update_step(step)] == [100, 200, 300, 400, 500]
    assert SubnetworkConfig().trainable_fraction_at(12345) == 0.1 and not SubnetworkConfig().is_update_step(0)


def test_iterative_masks_shrink_monotonically():
    model = tiny_model()
    config = SubnetworkConfig(fraction=0.1, method="iterative", begin_step=0, end_step=40, update_frequency=10)
    masks = identify_subnetwork(model, config)
    assert mask_density(masks) == 1.0
    densities = []
    for step in range(0, 41, 10):
        with torch.no_grad():  # the weights move between updates, so magnitudes reorder
            for parameter in model.parameters():
                parameter.add_(0.05 * torch.randn_like(parameter))
        new = prune_masks(model, masks, config.trainable_fraction_at(step))
        for name, mask in new.items():
            assert not bool((mask & ~masks[name]).any()), name
        masks = new
        densities.append(mask_density(masks))
    assert densities == sorted(densities, reverse=True)
    assert densities[-1] == pytest.approx(0.1, abs=0.01)


# ---- files -----------------------------------------------------------------------------------------------------


def test_mask_file_round_trip(tmp_path):
    model = tiny_model()
    config = SubnetworkConfig(fraction=0.25)
    masks = identify_subnetwork(model, config)
    save_subnetwork_mask(masks, tmp_path / "mask.safetensors", config, step=3)
    loaded, loaded_config = load_subnetwork_mask(tmp_path / "mask.safetensors")
    assert loaded_config == config and set(loaded) == set(masks)
    assert all(torch.equal(loaded[name], mask) for name, mask in masks.items())
    with pytest.raises(FileNotFoundError):
        load_subnetwork_mask(tmp_path / "absent.safetensors")
    save_sparse_delta(model, model, masks, tmp_path / "delta.safetensors")
    with pytest.raises(ValueError, match="not a subnetwork mask"):
        load_subnetwork_mask(tmp_path / "delta.safetensors")


def trained_copy(model: QBertForSentenceScoring, masks) -> QBertForSentenceScoring:
    """`model` with random changes inside the masks and to every unmasked parameter, as training would make."""
    trained = copy.deepcopy(model)
    with torch.no_grad():
        for name, parameter in trained.named_parameters():
            noise = 0.01 * torch.randn_like(parameter)
            parameter.add_(noise * masks[name] if name in masks else noise)
    return trained


def test_sparse_delta_round_trip_is_exact(tmp_path):
    base = tiny_model()
    masks = identify_subnetwork(base, SubnetworkConfig(fraction=0.1))
    trained = trained_copy(base, masks)
    name = next(iter(masks))
    position = int(torch.nonzero(masks[name].flatten())[0])
    with torch.no_grad():  # a trainable entry going from 0.0 to -0.0 changes bits, not value: the delta keeps it
        dict(base.named_parameters())[name].view(-1)[position] = 0.0
        dict(trained.named_parameters())[name].view(-1)[position] = -0.0
    info = save_sparse_delta(trained, base, masks, tmp_path)
    assert info.path.endswith("subnetwork_delta.safetensors")
    assert 0 < info.num_bytes < info.dense_num_bytes and "MiB" in str(info)
    masked_entries = sum(mask.numel() for mask in masks.values())
    assert info.sparse_values <= round(0.1 * masked_entries) + len(masks)

    rebuilt = tiny_model()  # the same base, rebuilt
    rebuilt.load_state_dict(base.state_dict())
    restored = apply_sparse_delta(rebuilt, tmp_path)
    for name, parameter in trained.named_parameters():
        bits = dict(restored.named_parameters())[name].detach().view(torch.int32)
        assert torch.equal(bits, parameter.detach().view(torch.int32)), name


def test_sparse_delta_refuses_changed_frozen_entries():
    base = tiny_model()
    masks = identify_subnetwork(base, SubnetworkConfig(fraction=0.1))
    trained = trained_copy(base, masks)
    name = next(iter(masks))
    frozen_position = int(torch.nonzero(~masks[name].flatten())[0])
    with torch.no_grad():
        dict(trained.named_parameters())[name].view(-1)[frozen_position] += 1.0
    with pytest.raises(ValueError, match="frozen entries"):
        sparse_delta(trained, base, masks)


def test_apply_sparse_delta_refuses_a_delta_that_does_not_fit():
    base = tiny_model()
    masks = identify_subnetwork(base, SubnetworkConfig())
    delta = sparse_delta(base, base, masks)
    delta.pop("classifier.bias.__dense__")
    with pytest.raises(ValueError, match="does not cover"):
        apply_sparse_delta(tiny_model(), delta)
    with pytest.raises(KeyError, match="lacks"):
        apply_sparse_delta(tiny_model(), {"nothing.__dense__": torch.zeros(1)})
