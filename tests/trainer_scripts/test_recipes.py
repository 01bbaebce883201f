"""Training recipes: the shipped files fit the scripts, the default follows the encoder, a command-line option
overrides one setting and is recorded, bad recipes are refused in one line, and bf16 on a CPU is handled."""

import json
import shutil

import pytest
from transformers import TrainingArguments

from trainer_scripts import common, finetune_duc, finetuning_data
from trainer_scripts.common import ModelArguments, parse_arguments
from trainer_scripts.experiments.plan import recipe_overrides
from trainer_scripts.finetuning import DucArguments
from trainer_scripts.pretraining import WikiRefArguments
from trainer_scripts.recipes import RecipeError, available_recipes, default_recipe, encoder_kind, load_recipe

SCRIPT_ARGUMENTS = {"finetune": DucArguments, "pretrain": WikiRefArguments}


def _parse(stage, *argv):
    return parse_arguments((ModelArguments, SCRIPT_ARGUMENTS[stage], TrainingArguments),
                           ["--output_dir", "unused", *argv], stage=stage)


@pytest.fixture
def sentence_encoder_dir(tmp_path, tiny_bert_dir):
    """The tiny encoder as a sentence-transformers model folder (modules.json beside the BERT files)."""
    folder = tmp_path / "tiny-st"
    shutil.copytree(tiny_bert_dir, folder)
    (folder / "modules.json").write_text(json.dumps([{"idx": 0, "name": "0", "path": "",
                                                      "type": "sentence_transformers.models.Transformer"}]))
    return folder


def test_the_shipped_recipes_fit_both_scripts(tiny_bert_dir):
    """Every setting of every shipped recipe is an option of its script with a value the script accepts (a typo in a
    recipe file fails here), and the parsed run has exactly the recipe's values."""
    assert {"paper", "sentence-encoder"} <= set(available_recipes())
    for name in available_recipes():
        recipe = load_recipe(name)
        assert recipe.description and recipe.encoders in ("masked-lm", "sentence-transformers")
        for stage in ("pretrain", "finetune"):
            parsed = _parse(stage, "--model_name_or_path", str(tiny_bert_dir), "--recipe", name, "--use_cpu", "true")
            values = {key: value for arguments in parsed for key, value in vars(arguments).items()}
            for key, value in recipe.settings(stage).items():
                if key == "bf16":
                    continue  # the machine may turn it off (tested below)
                assert getattr(values[key], "value", values[key]) == value, (name, stage, key)
            common.check_model_arguments(parsed[0])  # a recipe never sets an impossible combination


def test_the_default_recipe_follows_the_encoder(tmp_path, tiny_bert_dir, sentence_encoder_dir, tiny_qbert_dir):
    assert encoder_kind(sentence_encoder_dir) == "sentence-transformers" and encoder_kind(tiny_bert_dir) == "masked-lm"
    assert default_recipe(sentence_encoder_dir)[0] == "sentence-encoder"
    assert default_recipe(tiny_bert_dir)[0] == "paper"
    assert default_recipe(tiny_qbert_dir)[0] == "paper"  # window attention, no recipe recorded
    recorded = tmp_path / "qbert"
    shutil.copytree(tiny_qbert_dir, recorded)
    (recorded / "results.json").write_text(json.dumps({"recipe": {"name": "sentence-encoder"}}))
    name, why = default_recipe(recorded)
    assert name == "sentence-encoder" and "trained with" in why

    model_args, duc_args, training_args = _parse("finetune", "--model_name_or_path", str(sentence_encoder_dir),
                                                 "--use_cpu", "true")
    choice = model_args.recipe_choice
    assert model_args.recipe == "sentence-encoder" and "sentence-transformers" in choice.chosen
    assert (model_args.attention_scope, model_args.packing, duc_args.target_scaling) == ("sentence", "sentences",
                                                                                        "per_word")
    assert training_args.num_train_epochs == 1 and duc_args.head_learning_rate == 1e-3
    model_args, duc_args, training_args = _parse("finetune", "--model_name_or_path", str(tiny_bert_dir))
    assert model_args.recipe == "paper" and model_args.attention_scope == "window"
    assert (duc_args.target_scaling, duc_args.head_learning_rate, training_args.num_train_epochs) == ("none", 3e-5, 3)


def test_a_command_line_option_overrides_one_setting_and_is_recorded(tmp_path, sentence_encoder_dir):
    parsed = _parse("finetune", "--model_name_or_path", str(sentence_encoder_dir), "--learning_rate", "5e-5",
                    "--per_device_train_batch_size", "16", "--use_cpu", "true")
    model_args, _, training_args = parsed
    choice = model_args.recipe_choice
    assert training_args.learning_rate == 5e-5 and training_args.num_train_epochs == 1
    assert choice.overrides == {"learning_rate": 5e-5}  # the batch size equals the recipe's: not an override
    assert "overridden on the command line: --learning_rate 5e-05" in choice.describe()
    with pytest.raises(RecipeError, match="the settings the run used are not known yet"):
        choice.to_dict()  # the recipe's own values are not a record of what ran
    choice.settle({name: value for arguments in parsed for name, value in vars(arguments).items()})
    record = choice.to_dict()
    assert record["name"] == "sentence-encoder" and record["settings"]["learning_rate"] == 5e-5
    assert record["overrides"] == {"learning_rate": 5e-5} and record["departures"] == {}

    config = tmp_path / "run.json"  # a JSON config is read with the recipe too
    config.write_text(json.dumps({"model_name_or_path": str(sentence_encoder_dir), "output_dir": "unused",
                                  "recipe": "paper", "num_train_epochs": 4, "use_cpu": True}))
    model_args, duc_args, training_args = parse_arguments((ModelArguments, DucArguments, TrainingArguments),
                                                          [str(config)], stage="finetune")
    assert model_args.recipe == "paper" and model_args.recipe_choice.chosen == "--recipe"
    assert training_args.num_train_epochs == 4 and duc_args.target_scaling == "none"
    assert model_args.recipe_choice.overrides == {"num_train_epochs": 4}


def test_bad_recipes_are_refused_in_one_line(tmp_path, capsys, tiny_bert_dir):
    def refused(*argv):
        with pytest.raises(SystemExit) as exit_info:
            _parse("finetune", "--model_name_or_path", str(tiny_bert_dir), *argv)
        assert exit_info.value.code == 2
        lines = capsys.readouterr().err.strip().splitlines()
        assert len(lines) == 1
        return lines[0]

    assert "no such recipe (shipped: paper, sentence-encoder" in refused("--recipe", "bogus")
    assert "no such file" in refused("--recipe", str(tmp_path / "missing.yaml"))
    for name, text, message in [
            ("typo", "description: x\nfinetune:\n  learning_rat: 1.0e-5\n",
             "finetune sets --learning_rat, which this script does not have"),
            ("unknown", "description: x\ntraining:\n  learning_rate: 1.0e-5\n", "unknown key(s) ['training']"),
            ("nested", "finetune:\n  learning_rate: [1, 2]\n", "learning_rate must be a single value"),
            ("broken", "finetune: [\n", "cannot read the recipe")]:
        path = tmp_path / f"{name}.yaml"
        path.write_text(text)
        assert message in refused("--recipe", str(path)), name
    own = tmp_path / "own.yaml"  # a recipe of one's own works by path
    own.write_text("description: mine\nencoders: masked-lm\nfinetune:\n  num_train_epochs: 2\n")
    model_args, _, training_args = _parse("finetune", "--model_name_or_path", str(tiny_bert_dir), "--recipe", str(own))
    assert model_args.recipe == "own" and training_args.num_train_epochs == 2


@pytest.mark.parametrize("native", [True, False])
def test_bf16_on_a_cpu(monkeypatch, sentence_encoder_dir, tiny_bert_dir, native):
    """Without a GPU: --bf16 runs CPU autocast without --use_cpu (transformers would refuse it); the recipe's bf16 is
    turned off, and said, where the CPU has no native bf16 (emulated bf16 is ~70x slower than fp32 there)."""
    monkeypatch.setattr(common, "accelerator_available", lambda: False)
    monkeypatch.setattr(common, "cpu_has_native_bf16", lambda: native)
    model_args, _, training_args = _parse("finetune", "--model_name_or_path", str(sentence_encoder_dir))
    assert training_args.bf16 is native and training_args.use_cpu is native
    notes = model_args.recipe_choice.notes
    assert bool(notes) is not native
    if not native:
        assert "no native bf16" in model_args.recipe_choice.describe()
        assert model_args.recipe_choice.reasons == {"bf16": notes[0]}  # the reason the record gives for bf16 off
    model_args, _, training_args = _parse("finetune", "--model_name_or_path", str(tiny_bert_dir), "--bf16", "true")
    assert training_args.bf16 and training_args.use_cpu  # asked for on the command line: kept, on the CPU
    assert bool(model_args.recipe_choice.notes) is not native  # with a warning where it is slow


def test_finetune_records_the_recipe_and_writes_sentence_scores(tmp_path, tiny_bert_dir, duc_years):
    out = tmp_path / "run"
    status = finetune_duc.main(["--model_name_or_path", str(tiny_bert_dir), "--duc_dirs", duc_years[2005],
                                duc_years[2006], duc_years[2007], "--test_year", "2007", "--output_dir", str(out),
                                "--use_cpu", "--max_steps", "2", "--per_device_train_batch_size", "4",
                                "--disable_tqdm", "true", "--max_length", "128", "--learning_rate", "1e-3",
                                "--baselines", "none"])
    assert status == 0
    results = json.loads((out / "results.json").read_text())
    recipe = results["recipe"]
    assert recipe["name"] == "paper" and recipe["chosen"].startswith("the default for the encoder")
    assert recipe["overrides"] == {"learning_rate": 1e-3, "per_device_train_batch_size": 4}
    assert results["finetuning"]["recipe"] == recipe
    assert results["finetuning"]["target_scaling"] == "none" and results["objective"] == "regression"
    card = (out / "README.md").read_text()
    assert "Training recipe: `paper`" in card and "`--learning_rate 0.001`" in card
    lines = [json.loads(line) for line in (out / "sentence_scores.jsonl").read_text().splitlines()]
    test_rows = load_duc_rows(duc_years[2007])
    assert [line["topic_id"] for line in lines] == [row["topic_id"] for row in test_rows]
    for line, row in zip(lines, test_rows):
        assert [len(values) for values in line["scores"]] == [len(document["sentences"])
                                                              for document in row["documents"]]


def load_duc_rows(path):
    from trainer_scripts.duc_evaluation import load_years

    return load_years([path])[0].scorable


def test_recipe_overrides_of_a_row():
    settings = {"learning_rate": 2e-5, "query_similarity": True, "packing": "sentences"}
    assert recipe_overrides(["--learning_rate", "2.0e-5", "--pooling", "cls"], settings) == []
    assert recipe_overrides(["--learning_rate=1e-4", "--no_query_similarity", "--packing", "stride"],
                                            settings) == ["--learning_rate 1e-4", "--no_query_similarity",
                                                          "--packing stride"]
    assert recipe_overrides(["--query_similarity", "true"], settings) == []


def test_experiments_pass_the_recipe_and_estimate_the_units(tmp_path, capsys, tiny_bert_dir, duc_years):
    """The units get the recipe (and its settings are in their key); the dry run says the recipe, each training
    unit's estimated time from windows/s measured here and the total; the table's "what differs" names it."""
    common_argv = ["experiments", "--duc_dirs", duc_years[2006], duc_years[2007], "--encoder", str(tiny_bert_dir),
                   "--rows", "qbert", "--seeds", "1", "--out", str(tmp_path / "x"), "--dry_run"]
    from trainer_scripts.cli import main as wikiref

    assert wikiref(common_argv) == 0
    captured = capsys.readouterr()
    assert "recipe paper (the default for the encoder" in captured.err
    units = [line for line in captured.out.splitlines() if line.startswith("to run    finetune")]
    assert len(units) == 2 and all("training windows" in line and "~" in line for line in units)
    assert "--recipe paper" in captured.out
    assert "measured here:" in captured.err and "estimated training and testing time" in captured.err
    keys = {line.split()[2] for line in units}

    assert wikiref([*common_argv, "--recipe", "sentence-encoder", "--estimate", "false"]) == 0
    captured = capsys.readouterr()
    other = {line.split()[2] for line in captured.out.splitlines() if line.startswith("to run    finetune")}
    assert other and not other & keys  # another recipe: other units
    assert "--recipe sentence-encoder" in captured.out and "measured here" not in captured.err

    assert wikiref([*common_argv, "--recipe", "bogus"]) == 2
    assert "no such recipe" in capsys.readouterr().err


def test_the_estimate_deals_the_folds_as_the_script(tmp_path, duc_years):
    """The dry run's estimate trains and tests on the clusters finetune_duc.py --folds K --fold I would: a cluster
    without reference summaries takes part in the dealing, not in training or testing."""
    from types import SimpleNamespace

    import pyarrow as pa
    import pyarrow.parquet as pq

    from trainer_scripts.duc_evaluation import load_years
    from trainer_scripts.estimate import Estimator

    unreferenced = tmp_path / "duc2006"  # the first cluster of the first year loses its references
    shutil.copytree(duc_years[2006], unreferenced)
    (data,) = (unreferenced / "data").glob("*.parquet")
    table = pq.read_table(data).to_pylist()
    table[0]["references"] = []
    pq.write_table(pa.Table.from_pylist(table, schema=pq.read_schema(data)), data)
    dirs = [str(unreferenced), duc_years[2007]]
    years = load_years(dirs)
    assert not years[0].rows[0]["references"]
    counts = {(year.year, row["topic_id"]): 1 for year in years for row in year.scorable}
    estimator = Estimator(years, encoder="unused")
    for fold in range(3):
        train_years, test_years = finetuning_data.split_folds(dirs, 3, fold)
        expected_train = sorted((year.year, row["topic_id"]) for year in train_years for row in year.scorable)
        expected_test = sorted((year.year, row["topic_id"]) for year in test_years for row in year.scorable)
        train, test = estimator._fold_clusters(SimpleNamespace(folds=3, fold=fold, test_year=None), counts)
        assert (train, test) == (expected_train, expected_test), fold


def test_the_estimate_packs_each_row_as_its_unit(tiny_bert_dir, duc_years):
    """Windows are counted per packing: a [CLS] before every sentence (the BERT row's cls pooling) or no query
    changes them, so rows that differ only there get their own counts."""
    from dataclasses import replace

    from trainer_scripts.duc_evaluation import load_years
    from trainer_scripts.estimate import Estimator

    years = load_years([duc_years[2006], duc_years[2007]])
    estimator = Estimator(years, encoder=str(tiny_bert_dir))
    base = ModelArguments(model_name_or_path=str(tiny_bert_dir), objective="regression", max_length=64, stride=16)
    variants = [base, replace(base, pooling="cls"), replace(base, pooling="mean", use_query=False)]
    counted = [estimator.cluster_windows(arguments) for arguments in variants]
    for arguments, counts in zip(variants, counted):
        _, processor, _ = common.load_model_and_processor(arguments)
        assert counts == {(year.year, row["topic_id"]): sum(len(processor.encode_example(example))
                                                            for example in processor.examples_from_row(row, False))
                          for year in years for row in year.scorable}
    assert counted[0] != counted[2]  # without the query, the fixture's documents fit in fewer windows


def test_the_estimate_of_a_frozen_prefix_reads_a_warmed_cache(tmp_path, capsys, tiny_bert_dir, duc_years, monkeypatch):
    """A dry run of units with --frozen_prefix_layers measures their steps with the prefix read from a cache (warmed
    in a temporary folder, not the user's) and says so."""
    monkeypatch.setenv("WIKIREF_PREFIX_CACHE", str(tmp_path / "user-cache"))
    from trainer_scripts.cli import main as wikiref

    assert wikiref(["experiments", "--duc_dirs", duc_years[2006], "--folds", "2", "--encoder", str(tiny_bert_dir),
                    "--recipe", "sentence-encoder", "--rows", "qbert", "--seeds", "1", "--baselines", "false",
                    "--out", str(tmp_path / "x"), "--dry_run", "--frozen_prefix_layers", "2"]) == 0
    captured = capsys.readouterr()
    assert "frozen prefix of 2 layers" in captured.err and "measured here:" in captured.err
    assert "--frozen_prefix_layers 2" in captured.out
    assert not (tmp_path / "user-cache").exists() and not (tmp_path / "x").exists()


# ---- the record says what ran ------------------------------------------------------------------------------------


@pytest.fixture
def watch(monkeypatch):
    """What a training script's run used, seen where it is used rather than in what the script records: the
    `TrainingArguments`, model configuration, attention dropout and head learning rate the trainer trains with (when
    ``train()`` starts), the processor that packs the training windows, and the target scaling the training labels
    get."""
    from transformers import Trainer

    from modeling_qbert.processing_qbert import QBertProcessor

    seen = {}
    train, prepare, label = Trainer.train, QBertProcessor.prepare_dataset, finetuning_data.label_clusters

    def watched_train(self, *args, **kwargs):
        model = self.accelerator.unwrap_model(self.model)
        seen["args"] = dict(vars(self.args))
        seen["config"] = model.config.to_dict()
        seen["attention_dropout"] = {module.dropout.p for name, module in model.named_modules()
                                     if name.endswith("attention.self")}
        seen["head_learning_rate"] = getattr(self, "head_learning_rate", None) or self.args.learning_rate
        return train(self, *args, **kwargs)

    def watched_prepare(self, *args, **kwargs):
        seen.setdefault("processor", {"packing": self.packing, "max_length": self.max_length, "stride": self.stride,
                                      "objective": self.objective})
        return prepare(self, *args, **kwargs)

    def watched_label(rows, label_field, scaling="none"):
        seen.setdefault("target_scaling", scaling)
        return label(rows, label_field, scaling=scaling)

    monkeypatch.setattr(Trainer, "train", watched_train)
    monkeypatch.setattr(QBertProcessor, "prepare_dataset", watched_prepare)
    monkeypatch.setattr(finetuning_data, "label_clusters", watched_label)
    return seen


def _ran(seen, name):
    """The value the run used for the option ``name``, from what `watch` saw (a recipe setting the test cannot see
    fails: teach it here)."""
    config, processor = seen["config"], seen["processor"]
    if name in ("objective", "finetuning_objective"):
        assert config["objective"] == processor["objective"]  # the head's loss and the labels packed for it
        return config["objective"]
    if name == "attention_dropout":
        (value,) = seen["attention_dropout"]  # every attention module's dropout
        return value
    if name in ("packing", "max_length", "stride"):
        return processor[name]
    if name == "selection":
        return config["cluster_selection"]
    if name in ("head_learning_rate", "target_scaling"):
        return seen[name]
    if name in ("pooling", "use_query", "attention_scope", "query_similarity", "sentence_position_buckets"):
        return config[name]
    if name in seen["args"]:
        return getattr(seen["args"][name], "value", seen["args"][name])
    pytest.fail(f"the test does not know where to see the --{name} a run used: add it to _ran")


CONFIG_KEYS = {"objective": "objective", "finetuning_objective": "objective", "attention_scope": "attention_scope",
               "query_similarity": "query_similarity", "pooling": "pooling", "use_query": "use_query",
               "sentence_position_buckets": "sentence_position_buckets", "selection": "cluster_selection",
               "attention_dropout": "attention_probs_dropout_prob"}
"""Recipe settings the saved config.json records too."""


RECORD_CASES = {
    # the starting folder was pre-trained with classification; the paper recipe fine-tunes with regression
    "qbert-classification+paper": ("finetune", "tiny_qbert_dir", ["--recipe", "paper"]),
    # the same, fine-tuned with the objective it was pre-trained with, named by --finetuning_objective
    "qbert-classification+paper+finetuning_objective": (
        "finetune", "tiny_qbert_dir", ["--recipe", "paper", "--finetuning_objective", "classification"]),
    # a window-attention folder keeps its architecture under the sentence-encoder recipe; bf16 off (a CPU without it)
    "qbert-window+sentence-encoder": ("finetune", "tiny_qbert_dir", ["--recipe", "sentence-encoder"]),
    # a new head: the default recipe of a sentence-transformers encoder, every setting as the recipe says
    "encoder+sentence-encoder": ("finetune", "sentence_encoder_dir", []),
    "pretrain+paper": ("pretrain", "tiny_bert_dir", ["--recipe", "paper"]),
    "pretrain+sentence-encoder": ("pretrain", "sentence_encoder_dir", []),
}


@pytest.mark.parametrize("case", sorted(RECORD_CASES))
def test_the_record_says_what_ran_for_every_recipe_setting(case, request, tmp_path, monkeypatch, watch, duc_years,
                                                          tiny_wikiref):
    """For every setting of the run's recipe, results.json's recipe record, the saved config.json and the model card
    give the value the training used, as seen inside the trainer, the processor and the labelling; a setting the run
    used another value for than asked is a departure with its reason, and only such a setting is."""
    from trainer_scripts import pretrain_wikiref
    from trainer_scripts.recipes import format_setting, same_setting

    stage, start, argv = RECORD_CASES[case]
    start = request.getfixturevalue(start)
    out = tmp_path / "run"
    if case == "qbert-window+sentence-encoder":
        monkeypatch.setattr(common, "accelerator_available", lambda: False)
        monkeypatch.setattr(common, "cpu_has_native_bf16", lambda: False)
    fast = ["--model_name_or_path", str(start), "--output_dir", str(out), "--use_cpu", "true", "--max_steps", "2",
            "--max_length", "128", "--disable_tqdm", "true", "--seed", "0", *argv]
    if stage == "finetune":
        status = finetune_duc.main(["--duc_dirs", duc_years[2005], duc_years[2006], duc_years[2007], "--test_year",
                                    "2007", "--baselines", "none", *fast])
    else:
        status = pretrain_wikiref.main(["--dataset", str(tiny_wikiref), "--max_eval_examples", "2", *fast])
    assert status == 0
    results = json.loads((out / "results.json").read_text())
    record = results["recipe"]
    recipe = load_recipe(record["name"])
    assert results["finetuning" if stage == "finetune" else "pretraining"]["recipe"] == record
    config = json.loads((out / "config.json").read_text())
    card = " ".join((out / "README.md").read_text().split())
    asked = {**recipe.settings(stage), **record["overrides"]}
    assert set(record["settings"]) == set(recipe.settings(stage))
    for name in recipe.settings(stage):
        ran, recorded = _ran(watch, name), record["settings"][name]
        assert same_setting(recorded, ran), (case, name, recorded, ran)
        if name in CONFIG_KEYS:
            assert same_setting(config[CONFIG_KEYS[name]], ran), (case, name, config[CONFIG_KEYS[name]], ran)
        assert f"`--{name} {format_setting(recorded)}`" in card, (case, name)
        assert (name in record["departures"]) is not same_setting(ran, asked[name]), (case, name)
    objective = _ran(watch, "objective")
    assert results["objective"] == objective
    if stage == "finetune":
        assert results["finetuning"]["objective"] == objective
        assert f"DUC fine-tuning: {objective}" in card and f"Objective: {objective}:" in card
    else:
        assert results["pretraining"]["objective"] == objective
    if case == "qbert-classification+paper":
        assert objective == "regression" and not record["departures"]
        assert "(switched from classification pre-training, as the paper fine-tunes on DUC after either)" in card
    if case == "qbert-classification+paper+finetuning_objective":
        assert objective == "classification"
        assert record["departures"]["objective"]["why"].startswith("--finetuning_objective classification")
    if case == "qbert-window+sentence-encoder":
        assert set(record["departures"]) == {"attention_scope", "query_similarity", "bf16"}
        assert "saved Q-BERT model, which keeps its own attention_scope" in card


def test_a_switch_of_objective_can_be_refused(tmp_path, tiny_qbert_dir, duc_years, caplog):
    """--switch_objective false keeps a pre-trained head's objective: a recipe that asks for the other one is refused
    in one line that names the recipe, before anything trains."""
    status = finetune_duc.main(["--model_name_or_path", str(tiny_qbert_dir), "--duc_dirs", duc_years[2005],
                                duc_years[2006], "--test_year", "2006", "--output_dir", str(tmp_path / "out"),
                                "--recipe", "paper", "--switch_objective", "false", "--use_cpu", "true"])
    assert status == 2
    assert ("--objective of the recipe paper asks for regression, but " in caplog.text
            and "was pre-trained with classification and --switch_objective false keeps it" in caplog.text)
    assert not (tmp_path / "out" / "results.json").exists()
