"""SubnetworkTrainer: frozen entries bit-identical (weight decay and clipping on, also for -0.0, inf and NaN), no Adam
state for frozen entries (the optimizer holds compact trainable values only, updated bit for bit as dense AdamW updates
those entries), clipping and the logged norm over trainable entries only (frozen entries' gradients, huge or NaN,
change nothing), checkpoint/resume equality with the mask read from the checkpoint, iterative pruning during training, and a 2-process
CPU run under `accelerate launch`."""

import json
import math
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import torch
from transformers import BertTokenizer, TrainerCallback, TrainingArguments

from modeling_qbert import QBertConfig, QBertForSentenceScoring, QBertProcessor
from modeling_qbert.sparse import (
    SUBNETWORK_MASK_NAME,
    SubnetworkConfig,
    apply_sparse_delta,
    identify_subnetwork,
    load_subnetwork_mask,
)
from modeling_qbert.trainer import (
    SUBNETWORK_NAMES_KEY,
    QBertTrainer,
    SubnetworkTrainer,
    is_head_parameter,
    listwise_ranking_loss,
)

datasets = pytest.importorskip("datasets")

PROJECT_ROOT = Path(__file__).resolve().parents[2]
WORDS = ("the a of cat dog sat on mat fish runs red blue house tree river city war king early life born was "
         "north south river bank old new town great small").split()


def tiny_model(seed: int = 0) -> tuple[QBertForSentenceScoring, QBertProcessor]:
    torch.manual_seed(seed)
    config = QBertConfig(vocab_size=len(WORDS) + 5, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                         intermediate_size=64, max_position_embeddings=64, hidden_dropout_prob=0.0,
                         attention_probs_dropout_prob=0.0, max_query_levels=3)
    vocab = {t: i for i, t in enumerate(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *WORDS])}
    processor = QBertProcessor.from_config(BertTokenizer(vocab=vocab), config)
    model = QBertForSentenceScoring(config)
    model.resize_token_embeddings(len(processor.tokenizer))
    return model, processor


def tiny_windows(processor: QBertProcessor, rows: int = 16):
    generator = torch.Generator().manual_seed(1)
    data = []
    for _ in range(rows):
        words = [WORDS[int(i)] for i in torch.randint(len(WORDS), (12,), generator=generator)]
        sentences = [" ".join(words[k:k + 4]) for k in range(0, 12, 4)]
        labels = [int(v) for v in torch.randint(2, (3,), generator=generator)]
        data.append({"query": [words[0], words[5]], "document": sentences, "oracle_label": labels,
                     "oracle_score": [float(v) for v in labels]})
    return processor.prepare_dataset(datasets.Dataset.from_list(data))


def training_arguments(output_dir, **overrides) -> TrainingArguments:
    settings = dict(output_dir=str(output_dir), per_device_train_batch_size=4, max_steps=4, use_cpu=True,
                    report_to=[], save_strategy="no", logging_steps=1, learning_rate=1e-2, weight_decay=0.1,
                    max_grad_norm=1e-3, seed=7, data_seed=7, disable_tqdm=True)
    return TrainingArguments(**{**settings, **overrides})


def compact_values(optimizer, name: str) -> torch.Tensor:
    """The optimizer's tensor of the trainable values of masked parameter `name`."""
    for group in optimizer.param_groups:
        if name in group.get(SUBNETWORK_NAMES_KEY, ()):
            return group["params"][group[SUBNETWORK_NAMES_KEY].index(name)]
    raise KeyError(name)


def assert_no_optimizer_state_for_frozen_entries(optimizer, model, masks) -> None:
    """Masked parameters are not in the optimizer; their compact values (and Adam moments) cover the trainable
    entries only and hold exactly the parameter's trainable values."""
    optimized = {id(p) for group in optimizer.param_groups for p in group["params"]}
    parameters = dict(model.named_parameters())
    for name, mask in masks.items():
        assert id(parameters[name]) not in optimized and parameters[name] not in optimizer.state, name
        values = compact_values(optimizer, name)
        assert values.shape == (int(mask.sum()),), name
        assert torch.equal(values.view(torch.int32), parameters[name].detach()[mask].view(torch.int32)), name
        state = optimizer.state[values]
        for key in ("exp_avg", "exp_avg_sq"):
            assert state[key].shape == values.shape, (name, key)
        assert torch.count_nonzero(state["exp_avg_sq"]) > 0, name


def masked_snapshot(model, masks) -> dict[str, torch.Tensor]:
    parameters = dict(model.named_parameters())
    return {name: parameters[name].detach().clone() for name in masks}


@pytest.mark.parametrize("optim, extra", [
    ("adamw_torch_fused", {}),
    ("adamw_torch", {}),
    ("adamw_torch_fused", {"bf16": True}),
    ("adamw_torch_fused", {"gradient_accumulation_steps": 2}),
], ids=["fused", "foreach", "fused-bf16", "fused-accumulation"])
def test_frozen_entries_bit_identical_and_adam_state_zero(tmp_path, optim, extra):
    model, processor = tiny_model()
    windows = tiny_windows(processor)
    before_all = {name: p.detach().clone() for name, p in model.named_parameters()}
    arguments = training_arguments(tmp_path, optim=optim, **extra)
    trainer = SubnetworkTrainer(model=model, args=arguments, train_dataset=windows,
                                data_collator=processor.collator(), subnetwork_config=SubnetworkConfig(fraction=0.1))
    masks = trainer.identify_subnetwork()
    assert any(name.endswith("attention.self.query.weight") for name in masks)
    with torch.no_grad():  # a negative zero at a frozen position must keep its sign bit
        name = next(iter(masks))
        frozen_position = int(torch.nonzero(~masks[name].flatten())[0])
        dict(model.named_parameters())[name].view(-1)[frozen_position] = -0.0
        before_all[name] = dict(model.named_parameters())[name].detach().clone()
    assert not any("embeddings" in name or name.startswith(("classifier", "sentence_pooling")) for name in masks)
    before = masked_snapshot(model, masks)
    trainer.train()

    # clipping was active: the gradient norm of every step is far above max_grad_norm
    norms = [entry["grad_norm"] for entry in trainer.state.log_history if "grad_norm" in entry]
    assert norms and min(norms) > 100 * trainer.args.max_grad_norm
    optimizer = trainer.optimizer.optimizer if hasattr(trainer.optimizer, "optimizer") else trainer.optimizer
    if optim == "adamw_torch_fused":
        assert optimizer.defaults.get("fused") is True
    parameters = dict(model.named_parameters())
    for name, mask in masks.items():
        after = parameters[name].detach()
        # bit patterns, not values: torch.equal would accept -0.0 == 0.0
        assert torch.equal(after[~mask].view(torch.int32), before[name][~mask].view(torch.int32)), name
        changed = (after[mask] != before[name][mask]).float().mean().item()
        assert changed > 0.95, f"{name}: only {changed:.0%} of trainable entries changed"
    assert_no_optimizer_state_for_frozen_entries(optimizer, model, masks)
    # embeddings and the head are fully trainable and decayed
    for name in ("bert.embeddings.word_embeddings.weight", "classifier.weight"):
        assert not torch.equal(parameters[name].detach(), before_all[name]), name
    logged = [entry for entry in trainer.state.log_history if "subnetwork/changed_fraction" in entry]
    assert logged and 0.05 < logged[-1]["subnetwork/changed_fraction"] <= 0.1 + 1e-6
    assert logged[-1]["subnetwork/trainable_fraction"] == pytest.approx(0.1, abs=0.01)

    info = trainer.save_sparse_delta(tmp_path / "delta.safetensors", before_all)
    assert info.num_bytes < info.dense_num_bytes
    restored, _ = tiny_model(seed=5)
    restored.load_state_dict({**restored.state_dict(), **before_all})
    apply_sparse_delta(restored, tmp_path / "delta.safetensors")
    for name, parameter in restored.named_parameters():
        assert torch.equal(parameter, parameters[name]), name


@pytest.mark.parametrize("implementation", ["fused", "foreach", "for-loop"])
def test_adamw_keeps_exact_zero_updates_for_zero_gradients(implementation):
    """Zero gradient → zero moments → update 0/(sqrt(0)+eps) = 0 exactly, in every AdamW implementation."""
    torch.manual_seed(0)
    parameter = torch.nn.Parameter(torch.randn(64, 48))
    mask = torch.rand(64, 48) < 0.1
    start = parameter.detach().clone()
    flags = {"fused": dict(fused=True), "foreach": dict(foreach=True), "for-loop": dict(foreach=False)}[implementation]
    optimizer = torch.optim.AdamW([parameter], lr=1e-2, weight_decay=0.0, eps=1e-8, **flags)
    for _ in range(20):
        parameter.grad = torch.randn(64, 48) * mask
        optimizer.step()
    assert torch.equal(parameter.detach()[~mask], start[~mask])
    assert not torch.equal(parameter.detach()[mask], start[mask])
    assert torch.count_nonzero(optimizer.state[parameter]["exp_avg"][~mask]) == 0


@pytest.mark.parametrize("optim", ["adamw_torch_fused", "adamw_torch"])
def test_masked_step_is_dense_adamw_on_trainable_entries_and_never_writes_frozen_ones(tmp_path, optim):
    """Weight decay > 0, a changing lr and weights written between steps: trainable entries get exactly what dense
    AdamW (with the decay) gives them; frozen entries holding -0.0, inf, NaN, a subnormal and ordinary values keep their
    bit patterns."""
    model, _ = tiny_model()
    arguments = training_arguments(tmp_path, optim=optim, weight_decay=0.3, learning_rate=0.05)
    trainer = SubnetworkTrainer(model=model, args=arguments, subnetwork_config=SubnetworkConfig(fraction=0.25))
    masks = trainer.identify_subnetwork()
    parameters = dict(model.named_parameters())
    special = torch.tensor([-0.0, float("inf"), float("-inf"), float("nan"), 1e-40, -3.5])
    with torch.no_grad():
        for name, mask in masks.items():
            frozen_positions = torch.nonzero(~mask.flatten()).flatten()[:len(special)]
            parameters[name].view(-1)[frozen_positions] = special[:len(frozen_positions)]
    before = {name: parameters[name].detach().clone() for name in masks}
    reference = {name: torch.nn.Parameter(before[name].clone()) for name in masks}
    decayed = set(trainer.get_decay_parameter_names(model))  # Trainer's rule: no decay for biases and LayerNorm
    dense = torch.optim.AdamW([{"params": [p for n, p in reference.items() if n in decayed], "weight_decay": 0.3},
                               {"params": [p for n, p in reference.items() if n not in decayed], "weight_decay": 0.0}],
                              lr=0.05, **({"fused": True} if optim == "adamw_torch_fused" else {"foreach": True}))
    optimizer = trainer.create_optimizer()
    generator = torch.Generator().manual_seed(3)
    for step in range(4):
        for group in (*optimizer.param_groups, *dense.param_groups):
            group["lr"] = 0.05 / (step + 1)
        if step == 2:  # weights written between steps (as load_state_dict would) are what the next step starts from
            with torch.no_grad():
                for name, mask in masks.items():
                    for tensor in (parameters[name], reference[name]):
                        tensor.copy_(torch.where(mask, tensor * 0.5, tensor))
        for name, mask in masks.items():
            gradient = torch.randn(mask.shape, generator=generator) * mask
            parameters[name].grad = gradient.clone()
            reference[name].grad = gradient.clone()
        optimizer.step()
        dense.step()
    for name, mask in masks.items():
        after = parameters[name].detach()
        assert torch.equal(after[~mask].view(torch.int32), before[name][~mask].view(torch.int32)), name
        assert torch.equal(after[mask].view(torch.int32), reference[name].detach()[mask].view(torch.int32)), name
        assert not torch.equal(after[mask], before[name][mask]), name
    # the dense reference did decay frozen entries: the decay was on, and the subnetwork escaped it
    assert any(not torch.equal(reference[name].detach()[~mask].view(torch.int32), before[name][~mask].view(torch.int32))
               for name, mask in masks.items())
    assert_no_optimizer_state_for_frozen_entries(optimizer, model, masks)


def masked_gradient_norm(model, masks) -> float:
    """The norm (float64) of the model's gradient with frozen entries zeroed: what clipping must see."""
    total = 0.0
    for name, parameter in model.named_parameters():
        if parameter.grad is not None:
            gradient = parameter.grad.double()
            if name in masks:
                gradient = gradient * masks[name]
            total += float(gradient.pow(2).sum())
    return math.sqrt(total)


@pytest.mark.parametrize("max_grad_norm", [1e-3, 0.0], ids=["clipped", "no-clipping"])
def test_clipping_norm_is_the_norm_of_the_masked_gradient(tmp_path, max_grad_norm):
    """The Trainer's clipping / norm hooks measure (and clip) trainable entries only: frozen entries' gradients are
    huge here and count for nothing; the compact gradients are clipped, the parameters' `.grad` left as they were."""
    from transformers import Trainer

    model, _ = tiny_model()
    trainer = SubnetworkTrainer(model=model, args=training_arguments(tmp_path, max_grad_norm=max_grad_norm),
                                subnetwork_config=SubnetworkConfig(fraction=0.25))
    masks = trainer.identify_subnetwork()
    optimizer = trainer.create_optimizer()
    generator = torch.Generator().manual_seed(11)
    for name, parameter in model.named_parameters():
        parameter.grad = torch.randn(parameter.shape, generator=generator)
        if name in masks:
            parameter.grad.masked_fill_(~masks[name], 1e4)
    gradients = {name: parameter.grad.clone() for name, parameter in model.named_parameters()}
    expected = masked_gradient_norm(model, masks)
    dense_norm = float(Trainer._get_grad_norm(trainer, model))  # the plain Trainer's norm counts frozen entries
    assert dense_norm > 100 * expected

    if max_grad_norm > 0:
        norm = trainer._clip_grad_norm(model)
        assert trainer._get_grad_norm(model, grad_norm=norm) is norm
    else:
        norm = trainer._get_grad_norm(model)
    assert float(norm) == pytest.approx(expected, rel=1e-6)
    coefficient = min(1.0, max_grad_norm / (expected + 1e-6)) if max_grad_norm > 0 else 1.0
    for name, parameter in model.named_parameters():
        assert torch.equal(parameter.grad, gradients[name]) if name in masks else True, name
        clipped = compact_values(optimizer, name).grad if name in masks else parameter.grad
        trainable = gradients[name][masks[name]] if name in masks else gradients[name]
        torch.testing.assert_close(clipped.view(-1), trainable.view(-1) * coefficient, rtol=1e-5, atol=0)


@pytest.mark.parametrize("max_grad_norm, extra", [
    (1e-3, {}),
    (0.0, {}),
    (1e-3, {"gradient_accumulation_steps": 2}),
], ids=["clipped", "no-clipping", "clipped-accumulation"])
@pytest.mark.parametrize("frozen_gradient", [1e30, float("nan")], ids=["huge", "nan"])
def test_frozen_entry_gradients_do_not_influence_training(tmp_path, max_grad_norm, extra, frozen_gradient):
    """Training with huge (or NaN) gradients at frozen positions gives bit for bit the run with zero ones: same
    weights, same logged gradient norms (iterative pruning included)."""
    results = []
    for fill in (0.0, frozen_gradient):
        model, processor = tiny_model()
        config = SubnetworkConfig(fraction=0.2, method="iterative", begin_step=0, end_step=4, update_frequency=2)
        trainer = SubnetworkTrainer(model=model, args=training_arguments(tmp_path, max_grad_norm=max_grad_norm,
                                                                         max_steps=5, **extra),
                                    train_dataset=tiny_windows(processor), data_collator=processor.collator(),
                                    subnetwork_config=config)
        masks = trainer.identify_subnetwork()
        parameters = dict(model.named_parameters())

        def fill_frozen(mask, value):
            def hook(parameter):
                parameter.grad.masked_fill_(~mask, value)

            return hook

        for name, mask in masks.items():  # masks change in place when pruned: the hooks follow
            parameters[name].register_post_accumulate_grad_hook(fill_frozen(mask, fill))
        trainer.train()
        norms = [entry["grad_norm"] for entry in trainer.state.log_history if "grad_norm" in entry]
        assert len(norms) == 5 and all(math.isfinite(norm) for norm in norms)
        results.append((norms, {name: p.detach().clone() for name, p in model.named_parameters()}))
    assert results[0][0] == results[1][0]
    for name, tensor in results[0][1].items():
        assert torch.equal(tensor, results[1][1][name]), name


def test_missing_trainer_hooks_are_reported(tmp_path, monkeypatch):
    from transformers import Trainer

    monkeypatch.delattr(Trainer, "_clip_grad_norm")
    with pytest.raises(RuntimeError, match="_clip_grad_norm"):
        SubnetworkTrainer(model=tiny_model()[0], args=training_arguments(tmp_path))


def test_full_mask_matches_plain_adamw(tmp_path):
    """With every entry trainable, the pre-hook decay + AdamW(wd=0) is AdamW with weight decay, bit for bit."""
    from transformers import Trainer

    results = []
    for trainer_class in (Trainer, SubnetworkTrainer):
        model, processor = tiny_model()
        extra = {"subnetwork_config": SubnetworkConfig(fraction=1.0)} if trainer_class is SubnetworkTrainer else {}
        trainer = trainer_class(model=model, args=training_arguments(tmp_path, max_steps=3), **extra,
                                train_dataset=tiny_windows(processor), data_collator=processor.collator())
        trainer.train()
        results.append({name: p.detach().clone() for name, p in model.named_parameters()})
    for name, tensor in results[0].items():
        assert torch.equal(tensor, results[1][name]), name


@pytest.mark.parametrize("config", [
    SubnetworkConfig(),
    SubnetworkConfig(fraction=0.2, method="iterative", begin_step=0, end_step=4, update_frequency=2),
], ids=["one_step", "iterative"])
def test_resume_equals_uninterrupted_run_and_reads_the_mask_from_the_checkpoint(tmp_path, config):
    model, processor = tiny_model()
    windows = tiny_windows(processor)
    arguments = training_arguments(tmp_path / "run", save_strategy="steps", save_steps=3, max_steps=6)
    straight = SubnetworkTrainer(model=model, args=arguments, train_dataset=windows,
                                 data_collator=processor.collator(), subnetwork_config=config)
    straight.train()
    final = {name: p.detach().clone() for name, p in model.named_parameters()}
    checkpoint = tmp_path / "run" / "checkpoint-3"
    saved_masks, saved_config = load_subnetwork_mask(checkpoint / SUBNETWORK_MASK_NAME)
    assert saved_config == config
    assert (tmp_path / "run" / "checkpoint-6" / SUBNETWORK_MASK_NAME).is_file()

    # A fresh model whose weights are perturbed: a recomputed mask would differ from the saved one.
    resumed_model, _ = tiny_model(seed=123)
    with torch.no_grad():
        for parameter in resumed_model.parameters():
            parameter.add_(torch.randn_like(parameter))
    recomputed = identify_subnetwork(resumed_model, SubnetworkConfig())  # one-step top 10%
    assert any(not torch.equal(recomputed[name], saved_masks[name]) for name in saved_masks)

    resumed = SubnetworkTrainer(model=resumed_model, args=arguments, train_dataset=windows,
                                data_collator=processor.collator(), subnetwork_config=config)
    loaded = {}
    original_create = resumed.create_optimizer

    def create_optimizer(model=None):  # the mask the optimizer is built with is the checkpoint's
        loaded.update({name: mask.clone() for name, mask in resumed.subnetwork_mask.items()})
        return original_create(model)

    resumed.create_optimizer = create_optimizer
    resumed.train(resume_from_checkpoint=str(checkpoint))
    for name, mask in saved_masks.items():
        assert torch.equal(loaded[name], mask), name
    final_masks, _ = load_subnetwork_mask(tmp_path / "run" / "checkpoint-6" / SUBNETWORK_MASK_NAME)
    for name, mask in final_masks.items():
        assert torch.equal(resumed.subnetwork_mask[name].cpu(), mask), name
    for name, parameter in resumed_model.named_parameters():
        assert torch.equal(parameter.detach(), final[name]), name


def test_resume_without_a_mask_file_fails(tmp_path):
    model, processor = tiny_model()
    windows = tiny_windows(processor, rows=8)
    arguments = training_arguments(tmp_path / "run", save_strategy="steps", save_steps=1, max_steps=1)
    SubnetworkTrainer(model=model, args=arguments, train_dataset=windows, data_collator=processor.collator()).train()
    os.remove(tmp_path / "run" / "checkpoint-1" / SUBNETWORK_MASK_NAME)
    trainer = SubnetworkTrainer(model=tiny_model()[0], args=training_arguments(tmp_path / "run", max_steps=2),
                                train_dataset=windows, data_collator=processor.collator())
    with pytest.raises(FileNotFoundError, match="cannot be recomputed"):
        trainer.train(resume_from_checkpoint=str(tmp_path / "run" / "checkpoint-1"))


def test_iterative_pruning_shrinks_masks_and_freezes_what_leaves(tmp_path):
    model, processor = tiny_model()
    config = SubnetworkConfig(fraction=0.2, method="iterative", begin_step=0, end_step=4, update_frequency=2)

    class Snapshots(TrainerCallback):
        def __init__(self):
            self.history = []

        def on_step_end(self, args, state, control, **kwargs):
            self.history.append(({k: m.clone() for k, m in trainer.subnetwork_mask.items()},
                                 masked_snapshot(model, trainer.subnetwork_mask)))

    snapshots = Snapshots()
    trainer = SubnetworkTrainer(model=model, args=training_arguments(tmp_path, max_steps=6),
                                train_dataset=tiny_windows(processor), data_collator=processor.collator(),
                                subnetwork_config=config, callbacks=[snapshots])
    trainer.train()
    densities = [sum(int(m.sum()) for m in masks.values()) / sum(m.numel() for m in masks.values())
                 for masks, _ in snapshots.history]
    expected = [config.trainable_fraction_at(step) for step in (0, 0, 2, 2, 4, 4)]
    assert densities == pytest.approx(expected, abs=0.02)
    assert densities[-1] == pytest.approx(0.2, abs=0.01)
    for (masks_i, values_i), (masks_j, values_j) in zip(snapshots.history, snapshots.history[1:]):
        for name, mask in masks_i.items():
            assert not bool((masks_j[name] & ~mask).any()), "a mask grew"
            frozen = ~mask
            assert torch.equal(values_j[name][frozen], values_i[name][frozen]), name
    optimizer = trainer.optimizer.optimizer if hasattr(trainer.optimizer, "optimizer") else trainer.optimizer
    assert_no_optimizer_state_for_frozen_entries(optimizer, model, trainer.subnetwork_mask)


def test_passing_an_optimizer_is_refused(tmp_path):
    model, processor = tiny_model()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    with pytest.raises(ValueError, match="builds its own optimizer"):
        SubnetworkTrainer(model=model, args=training_arguments(tmp_path), optimizers=(optimizer, None))


LAUNCHED_SCRIPT = """
import json, os, sys
import torch
sys.path.insert(0, {tests!r})
from test_trainer import tiny_model, tiny_windows, training_arguments
from modeling_qbert.sparse import SubnetworkConfig, save_subnetwork_mask
from modeling_qbert.trainer import SubnetworkTrainer

out = {out!r}
model, processor = tiny_model()
base = {{name: p.detach().clone() for name, p in model.named_parameters()}}
arguments = training_arguments(out, max_steps=3, per_device_train_batch_size=2, ddp_find_unused_parameters=False,
                               ddp_backend="gloo")
trainer = SubnetworkTrainer(model=model, args=arguments, train_dataset=tiny_windows(processor),
                            data_collator=processor.collator(), subnetwork_config=SubnetworkConfig(fraction=0.1))
rank = trainer.args.process_index
with open(os.path.join(out, f"started-{{rank}}"), "w") as handle:
    handle.write(str(trainer.args.world_size))
trainer.train()
trainer.save_model(out)
if trainer.args.should_save:
    torch.save(base, os.path.join(out, "base.pt"))
    torch.save({{name: p.detach() for name, p in model.named_parameters()}}, os.path.join(out, "trained.pt"))
torch.save({{name: p.detach() for name, p in model.named_parameters()}}, os.path.join(out, f"rank-{{rank}}.pt"))
"""


def free_port() -> int:
    """A TCP port free on 127.0.0.1 now (the rendezvous port of a launch; a fixed one collides with other runs)."""
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def launcher_output(error: subprocess.TimeoutExpired | subprocess.CompletedProcess) -> str:
    def text(value) -> str:
        return value.decode(errors="replace") if isinstance(value, bytes) else (value or "")

    return f"--- stdout ---\n{text(error.stdout)[-2000:]}\n--- stderr ---\n{text(error.stderr)[-3000:]}"


def require_two_process_platform() -> None:
    """The only reason to skip a 2-process test: this torch cannot run gloo process groups at all."""
    import torch.distributed as dist

    if not dist.is_available() or not dist.is_gloo_available():
        pytest.skip("this torch build has no gloo backend: two CPU processes cannot form a process group")


def test_two_cpu_processes_under_accelerate_launch(tmp_path):
    require_two_process_platform()
    script = tmp_path / "train_two_processes.py"
    script.write_text(textwrap.dedent(LAUNCHED_SCRIPT.format(tests=str(Path(__file__).parent), out=str(tmp_path))))
    env = {**os.environ, "ACCELERATE_USE_CPU": "1", "OMP_NUM_THREADS": "1",
           "PYTHONPATH": os.pathsep.join([str(PROJECT_ROOT), os.environ.get("PYTHONPATH", "")])}
    command = [sys.executable, "-m", "accelerate.commands.launch", "--multi_gpu", "--num_processes", "2",
               "--num_machines", "1", "--mixed_precision", "no", "--dynamo_backend", "no",
               "--main_process_port", str(free_port()), str(script)]
    try:
        result = subprocess.run(command, env=env, cwd=tmp_path, capture_output=True, text=True, timeout=300)
    except subprocess.TimeoutExpired as error:  # a broken data-parallel setup must not read as a skip
        pytest.fail(f"accelerate launch with 2 CPU processes did not finish in 300 s:\n{launcher_output(error)}")
    started = sorted(path.name for path in tmp_path.glob("started-*"))
    if started != ["started-0", "started-1"]:
        pytest.fail(f"accelerate launch did not start 2 processes (rc={result.returncode}, started {started}):\n"
                    f"{launcher_output(result)}")
    assert result.returncode == 0, result.stderr[-3000:]
    assert {(tmp_path / name).read_text() for name in started} == {"2"}

    masks, _ = load_subnetwork_mask(tmp_path / SUBNETWORK_MASK_NAME)
    base, trained = torch.load(tmp_path / "base.pt"), torch.load(tmp_path / "trained.pt")
    other_rank = torch.load(tmp_path / "rank-1.pt")
    for name, mask in masks.items():
        assert torch.equal(trained[name][~mask], base[name][~mask]), name
        assert not torch.equal(trained[name][mask], base[name][mask]), name
    for name, tensor in trained.items():  # DDP keeps the replicas equal
        assert torch.equal(tensor, other_rank[name]), name
    state = json.loads((tmp_path / "trainer_state.json").read_text()) if (tmp_path / "trainer_state.json").exists() \
        else None
    assert state is None or state["global_step"] == 3
    assert math.isfinite(float(trained["classifier.weight"].sum()))


OVERRIDDEN_PRIVATE_METHODS = {  # Trainer method -> the parameters SubnetworkTrainer's override takes, in order
    "_clip_grad_norm": ["self", "model"],
    "_get_grad_norm": ["self", "model", "grad_norm"],
    "_save": ["self", "output_dir", "state_dict"],
    "_load_from_checkpoint": ["self", "resume_from_checkpoint", "model"],
    "create_optimizer": ["self", "model"],
}


def test_overridden_trainer_methods_keep_their_signatures():
    """SubnetworkTrainer overrides private Trainer methods (pyproject bounds transformers to the major version these
    tests cover): a transformers release that renames or re-shapes one must fail here, by name, not silently skip the
    subnetwork's clipping, saving or resuming."""
    import inspect

    import transformers
    from transformers import Trainer

    from modeling_qbert.trainer import SubnetworkTrainer

    for name, expected in OVERRIDDEN_PRIVATE_METHODS.items():
        assert hasattr(Trainer, name), (f"transformers {transformers.__version__} has no Trainer.{name}, which "
                                        "SubnetworkTrainer overrides: its subnetwork logic would no longer run")
        found = list(inspect.signature(getattr(Trainer, name)).parameters)
        assert found == expected, (f"transformers {transformers.__version__} changed Trainer.{name}{found} (expected "
                                   f"{expected}); SubnetworkTrainer's override must follow")
        assert list(inspect.signature(getattr(SubnetworkTrainer, name)).parameters) == expected, name
    assert int(transformers.__version__.split(".")[0]) == 5, "pyproject.toml pins transformers to 5.x"


@pytest.mark.parametrize("subnetwork", [False, True])
def test_head_learning_rate_applies_to_the_head_only_and_follows_the_schedule(tmp_path, subnetwork):
    model, processor = tiny_model()
    windows = tiny_windows(processor)
    common = dict(model=model, args=training_arguments(tmp_path, lr_scheduler_type="linear", max_steps=4),
                  train_dataset=windows, data_collator=processor.collator(), head_learning_rate=0.5)
    trainer = SubnetworkTrainer(**common) if subnetwork else QBertTrainer(**common)
    seen = []

    class Rates(TrainerCallback):
        def on_step_begin(self, args, state, control, optimizer=None, **kwargs):
            seen.append(sorted({group["lr"] for group in trainer.optimizer.param_groups}))

    trainer.add_callback(Rates())
    trainer.train()
    names = {id(p): n for n, p in model.named_parameters()}
    for group in trainer.optimizer.param_groups:
        if SUBNETWORK_NAMES_KEY in group:
            assert not any(is_head_parameter(n) for n in group[SUBNETWORK_NAMES_KEY])
            continue
        heads = {is_head_parameter(names[id(p)]) for p in group["params"]}
        assert len(heads) == 1 and group["params"]  # no group mixes head and encoder, none is empty
        assert group["initial_lr"] == (0.5 if heads == {True} else 1e-2)
    assert seen[0] == [1e-2, 0.5] and seen[-1][1] / seen[-1][0] == pytest.approx(50)  # both decay alike
    with pytest.raises(ValueError, match="head_learning_rate must be positive"):
        QBertTrainer(**{**common, "head_learning_rate": 0.0})


def test_listwise_ranking_loss_orders_sentences_within_a_window():
    labels = torch.tensor([[0.02, 0.0, 0.01, -100.0], [0.0, 0.0, -100.0, -100.0]])
    mask = torch.tensor([[True, True, True, False], [True, True, False, False]])
    good = torch.tensor([[3.0, -3.0, 2.0, 9.0], [5.0, 1.0, 0.0, 0.0]], requires_grad=True)
    bad = torch.tensor([[-3.0, 3.0, 2.0, 9.0], [5.0, 1.0, 0.0, 0.0]])
    loss = listwise_ranking_loss(good, labels, mask)  # .item(), not float(): the loss keeps its graph for backward
    assert loss.item() < listwise_ranking_loss(bad, labels, mask).item()
    # scale-free: the same order at 100x smaller targets gives the same loss; padding and label-free windows ignored
    scaled = listwise_ranking_loss(good, labels * 0.01 + (labels < 0) * -99.0, mask)
    assert scaled.item() == pytest.approx(loss.item())
    q = torch.tensor([2 / 3, 0.0, 1 / 3])
    expected = -(q * torch.log_softmax(good[0, :3], -1)).sum()
    assert loss.item() == pytest.approx(expected.item(), rel=1e-6)
    loss.backward()
    assert good.grad[0, 3] == 0 and torch.all(good.grad[1] == 0)
    zero = listwise_ranking_loss(good, torch.zeros_like(labels), mask)
    assert zero.item() == 0.0 and zero.requires_grad


def test_ranking_loss_weight_adds_the_ranking_term(tmp_path):
    model, processor = tiny_model()
    windows = tiny_windows(processor)
    batch = processor.collator()([windows[i] for i in range(4)])
    plain = QBertTrainer(model=model, args=training_arguments(tmp_path), data_collator=processor.collator())
    ranked = QBertTrainer(model=model, args=training_arguments(tmp_path), data_collator=processor.collator(),
                          ranking_loss_weight=2.0)
    model.eval()
    with torch.no_grad():
        outputs = model(**batch)
        expected = outputs.loss + 2.0 * listwise_ranking_loss(outputs.logits, batch["labels"], outputs.sentence_mask)
        assert float(ranked.compute_loss(model, dict(batch))) == pytest.approx(float(expected), rel=1e-5)
        assert float(plain.compute_loss(model, dict(batch))) == pytest.approx(float(outputs.loss), rel=1e-5)


END_PROCESS_GROUP = r'''
import atexit, gc, sys, tempfile, weakref
import torch, torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel
from modeling_qbert.trainer import ENDED_GROUPS, end_process_group, exit_process

dist.init_process_group("gloo", init_method="file://" + tempfile.mktemp(), rank=0, world_size=1)


class Holder:  # a reference cycle holding the DDP wrapper, as a Trainer's do
    pass


holder = Holder()
holder.cycle = holder
holder.model = DistributedDataParallel(torch.nn.Linear(4, 4))
holder.model(torch.randn(2, 4)).sum().backward()  # the reducer's allreduce ran on the group
group = weakref.ref(dist.group.WORLD)
del holder
end_process_group(together=True)
gc.collect()  # the wrapper goes; the group stays, held until the process ends
atexit.register(print, "finalized")  # os._exit skips the interpreter's finalization
print("ended" if not dist.is_initialized() else "still initialized", "kept" if group() is ENDED_GROUPS[0] else "freed",
      end=" ")
exit_process(3)
'''


def test_an_ended_process_group_is_kept_and_the_script_exits_without_freeing_it():
    """end_process_group takes the group out of torch's registry but never frees it (freeing a gloo group from
    Python can deadlock against its worker threads, or abort during finalization); exit_process then ends the
    process with the script's status, its output flushed, without the interpreter's finalization."""
    import torch.distributed as dist

    if not dist.is_available() or not dist.is_gloo_available():
        pytest.skip("this torch build has no gloo backend")
    done = subprocess.run([sys.executable, "-c", END_PROCESS_GROUP], capture_output=True, text=True, timeout=120,
                          cwd=Path(__file__).resolve().parents[2])
    assert done.returncode == 3, done.stderr[-2000:]
    assert done.stdout.split() == ["ended", "kept"], done.stdout + done.stderr[-2000:]


def test_exit_process_without_a_process_group_is_sys_exit():
    from modeling_qbert.trainer import ENDED_GROUPS, exit_process

    assert not ENDED_GROUPS
    with pytest.raises(SystemExit) as exited:
        exit_process(2)
    assert exited.value.code == 2
