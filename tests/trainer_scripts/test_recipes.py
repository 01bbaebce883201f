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
from trainer_scripts.recipes import available_recipes, default_recipe, encoder_kind, load_recipe

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
    model_args, _, training_args = _parse("finetune", "--model_name_or_path", str(sentence_encoder_dir),
                                          "--learning_rate", "5e-5", "--per_device_train_batch_size", "16",
                                          "--use_cpu", "true")
    choice = model_args.recipe_choice
    assert training_args.learning_rate == 5e-5 and training_args.num_train_epochs == 1
    assert choice.overrides == {"learning_rate": 5e-5}  # the batch size equals the recipe's: not an override
    assert "overridden on the command line: --learning_rate 5e-05" in choice.describe()
    record = choice.to_dict()
    assert record["name"] == "sentence-encoder" and record["settings"]["learning_rate"] == 2e-5

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
        assert model_args.recipe_choice.to_dict()["notes"] == notes
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
