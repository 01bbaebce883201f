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
    ({"method": "iterative", "begin_step": 20, "end_step": 10}, "positive multiple"),
])
def test_config_validation_errors(overrides, message):
    with pytest.raises(ValueError, match=message):
        SubnetworkConfig(**overrides)


# ---- identification --------------------------------------------------------------------------------------------


def test_one_step_masks_keep_the_top_fraction_of_each_encoder_tensor():
    model = tiny_model()
    masks = identify_subnetwork(model, SubnetworkConfig(fraction=0.1, include_vectors=True))
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


def test_default_masks_only_encoder_matrices():
    """The paper selects within parameter matrices: by default biases and LayerNorm are not masked, so they are as
    fully trainable as the embeddings and the head (`trainable_share` counts them as such)."""
    from modeling_qbert.sparse import trainable_share

    model = tiny_model()
    assert SubnetworkConfig().include_vectors is False
    masks = identify_subnetwork(model, SubnetworkConfig())
    parameters = dict(model.named_parameters())
    matrices = {name for name, p in parameters.items() if name.startswith("bert.encoder.") and p.dim() >= 2}
    assert set(masks) == matrices
    vectors = [name for name, p in parameters.items() if name.startswith("bert.encoder.") and p.dim() == 1]
    assert vectors and not set(vectors) & set(masks)
    share = trainable_share(model, masks)
    assert share["masked_vectors"] == 0
    assert share["fully_trainable"]["encoder"] == sum(parameters[name].numel() for name in vectors)


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


@pytest.mark.parametrize("total, expected", [
    (4, (3, 1)),  # Δt = 1, end at 75% of the run
    (10, (7, 1)),
    (1000, (750, 10)),
    (1234, (924, 12)),  # Δt = 12, end = 12 * floor(925.5 / 12)
    (1, (1, 1)),  # too short to reach any target: at least one update after t0
])
def test_schedule_is_scaled_to_the_run(total, expected):
    config = SubnetworkConfig(fraction=0.1, method="iterative").scaled_to(total)
    assert (config.end_step, config.update_frequency) == expected
    assert config.reaches_target(total) == (total > 1)
    assert config.end_step <= 0.75 * total or total == 1
    if total > 1:
        assert config.final_fraction(total) == pytest.approx(0.1)
        assert config.trainable_fraction_at(config.end_step) == pytest.approx(0.1)
    updates = [step for step in range(total) if config.is_update_step(step)]
    assert updates == list(range(0, config.end_step + 1, config.update_frequency)) if total > 1 else updates == [0]


def test_schedule_scaling_keeps_what_is_given():
    given = SubnetworkConfig(method="iterative", begin_step=5, end_step=25, update_frequency=5)
    assert given.scaled_to(10) is given
    assert SubnetworkConfig(method="iterative", end_step=700).scaled_to(10).update_frequency == 7
    assert SubnetworkConfig(method="iterative", end_step=13).scaled_to(10).update_frequency == 1
    assert SubnetworkConfig(method="iterative", update_frequency=3).scaled_to(20).end_step == 15
    started = SubnetworkConfig(method="iterative", begin_step=10).scaled_to(20)
    assert (started.begin_step, started.end_step, started.update_frequency) == (10, 15, 1)
    one_step = SubnetworkConfig()
    assert one_step.scaled_to(10) is one_step and one_step.reaches_target(1)
    with pytest.raises(ValueError, match="scaled_to"):
        SubnetworkConfig(method="iterative").is_update_step(0)


def test_a_short_run_ends_before_the_target():
    config = SubnetworkConfig(fraction=0.1, method="iterative", end_step=8, update_frequency=2)
    assert not config.reaches_target(5) and config.reaches_target(9)
    # updates at steps 0, 2, 4 in a 5-step run: the share after the one at step 4
    assert config.final_fraction(5) == pytest.approx(config.trainable_fraction_at(4))
    assert 0.1 < config.final_fraction(5) < 1.0
    assert config.final_fraction(9) == pytest.approx(0.1)


def test_a_fixed_mask_is_never_pruned_nor_identified():
    config = SubnetworkConfig(fraction=0.1, method="iterative", end_step=4, update_frequency=2, fixed_mask=True)
    assert not config.prunes and not any(config.is_update_step(step) for step in range(10))
    assert config.reaches_target(1) and SubnetworkConfig.from_json(config.to_json()) == config
    with pytest.raises(ValueError, match="fixed_mask"):
        identify_subnetwork(tiny_model(), config)


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
    assert info.path.endswith("sparse_delta.safetensors")
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
