"""Training recipes: named, documented sets of training settings, kept as data (one YAML file per recipe beside this
module, the way alignment-handbook keeps its recipes).

A recipe file holds a ``description``, the kind of encoder it is for (``encoders``: ``masked-lm`` or
``sentence-transformers``) and one mapping of options per training script (``pretrain`` for ``pretrain_wikiref.py``,
``finetune`` for ``finetune_duc.py``), named as the scripts' command-line options are. ``--recipe NAME`` (or a path to
a ``.yaml`` file of one's own) makes those the defaults of the run; an option given on the command line overrides
that one setting. Without ``--recipe`` the recipe is chosen from the encoder training starts from
(:func:`default_recipe`): a sentence-transformers model gets ``sentence-encoder`` (a query-sentence similarity model:
encoding the query and each sentence alone keeps what it knows), anything else ``paper`` (the paper's settings, for
the masked-LM encoder it used); a saved Q-BERT folder keeps the recipe it was trained with.

Why these two: on NIST's DUC 2006 (5 cluster folds) the paper's settings with the shipped MiniLM encoder score below
the TF-IDF baseline QUERY-SIM, and the ``sentence-encoder`` settings above it (benchmarks/README.md).

The chosen recipe, why it was chosen and every setting the command line overrode are recorded (:class:`RecipeChoice`)
in the run's ``results.json``, its model card and the experiments table. What a recipe says is not always what a run
does: a saved Q-BERT folder keeps its own architecture (its attention scope, its query similarity), a CPU without
native bf16 trains in fp32, ``--finetuning_objective`` names the objective in another option. So the record is written
from what the run used, once the model is loaded (:meth:`RecipeChoice.settle`): ``settings`` holds the value each
setting of the recipe had in the run, ``departures`` every one that is not the recipe's nor the command line's, with
why. The log, ``results.json`` and the model card all read that one record.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

RECIPES_DIR = Path(__file__).resolve().parent
STAGES = ("pretrain", "finetune")
ENCODER_KINDS = ("masked-lm", "sentence-transformers")
DEFAULT_BY_KIND = {"masked-lm": "paper", "sentence-transformers": "sentence-encoder"}
"""The recipe a run gets by default for each kind of encoder."""

SENTENCE_TRANSFORMERS_FILES = ("modules.json", "config_sentence_transformers.json", "sentence_bert_config.json")
"""Files a sentence-transformers model folder holds beside the BERT weights (any one of them marks one)."""


class RecipeError(ValueError):
    """An unknown recipe, or a recipe file that cannot be used (one line naming the file and the problem)."""


@dataclass(frozen=True)
class Recipe:
    """One recipe: ``name``, ``description``, the ``encoders`` it is for and ``stages[stage]``: ``{option: value}``
    for each training script."""

    name: str
    description: str
    encoders: str
    stages: Mapping[str, Mapping[str, Any]]
    path: Path

    def settings(self, stage: str) -> dict[str, Any]:
        """The options this recipe sets for ``stage`` (``pretrain`` or ``finetune``)."""
        if stage not in STAGES:
            raise ValueError(f"stage must be one of {', '.join(STAGES)}, got {stage!r}")
        return dict(self.stages.get(stage) or {})


def available_recipes() -> list[str]:
    """The names of the recipes shipped with the package."""
    return sorted(path.stem for path in RECIPES_DIR.glob("*.yaml"))


def load_recipe(name_or_path: str | os.PathLike) -> Recipe:
    """A shipped recipe by name (``paper``), or a recipe file by path (``my-recipe.yaml``).

    Raises:
        RecipeError: no such recipe, or the file is not a valid recipe (naming the file and what is wrong).
    """
    text = str(name_or_path)
    path = Path(text) if text.endswith((".yaml", ".yml")) else RECIPES_DIR / f"{text}.yaml"
    if not path.is_file():
        if text.endswith((".yaml", ".yml")):
            raise RecipeError(f"--recipe {text}: no such file")
        raise RecipeError(f"--recipe {text}: no such recipe (shipped: {', '.join(available_recipes())}; or give a "
                          ".yaml file)")
    import yaml

    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as error:
        raise RecipeError(f"{path}: cannot read the recipe ({' '.join(str(error).split())})") from None
    if not isinstance(data, dict):
        raise RecipeError(f"{path}: a recipe is a mapping with description, encoders, pretrain and finetune")
    unknown = sorted(set(data) - {"description", "encoders", *STAGES})
    if unknown:
        raise RecipeError(f"{path}: unknown key(s) {unknown} (a recipe has description, encoders, pretrain, finetune)")
    encoders = data.get("encoders", "masked-lm")
    if encoders not in ENCODER_KINDS:
        raise RecipeError(f"{path}: encoders must be one of {', '.join(ENCODER_KINDS)}, got {encoders!r}")
    stages = {}
    for stage in STAGES:
        settings = data.get(stage) or {}
        if not isinstance(settings, dict) or not all(isinstance(key, str) for key in settings):
            raise RecipeError(f"{path}: {stage} must map option names to values")
        bad = [key for key, value in settings.items() if isinstance(value, (dict, list))]
        if bad:
            raise RecipeError(f"{path}: {stage}: {bad[0]} must be a single value")
        stages[stage] = dict(settings)
    return Recipe(name=path.stem, description=" ".join(str(data.get("description", "")).split()), encoders=encoders,
                  stages=stages, path=path)


def encoder_kind(path: str | os.PathLike) -> str:
    """``sentence-transformers`` when the folder holds a sentence-transformers model (``modules.json``, …), else
    ``masked-lm``."""
    folder = Path(path)
    return ("sentence-transformers" if any((folder / name).is_file() for name in SENTENCE_TRANSFORMERS_FILES)
            else "masked-lm")


def default_recipe(model_path: str | os.PathLike, label: str | None = None) -> tuple[str, str]:
    """``(recipe name, why)`` for a run that starts from ``model_path`` (called ``label`` in ``why`` when given) and
    names no recipe.

    A saved Q-BERT folder: the recipe its ``results.json`` records (else ``sentence-encoder`` when its encoder
    attends within sentences, ``paper`` otherwise). An encoder folder: by :func:`encoder_kind`."""
    folder = Path(model_path)
    config = _read_json(folder / "config.json")
    if config.get("model_type") == "qbert":
        recorded = (_read_json(folder / "results.json").get("recipe") or {}).get("name")
        if recorded in available_recipes():
            return recorded, f"the recipe {folder} was trained with"
        scope = config.get("attention_scope", "window")
        name = "sentence-encoder" if scope == "sentence" else "paper"
        return name, f"{folder} is a Q-BERT model with attention_scope={scope}"
    kind = encoder_kind(folder)
    why = ("a sentence-transformers model" if kind == "sentence-transformers"
           else "a masked-LM encoder (no sentence-transformers files)")
    return DEFAULT_BY_KIND[kind], f"{label or folder} is {why}"


def choose_recipe(name: str | os.PathLike | None, model_path: str | os.PathLike,
                  label: str | None = None) -> tuple[Recipe, str]:
    """``(recipe, why)`` of a run: the recipe ``name`` (``--recipe``) when given, else :func:`default_recipe` for the
    model training starts from.

    Raises:
        RecipeError: no such recipe, or a recipe file that cannot be used.
    """
    if name:
        return load_recipe(name), "--recipe"
    chosen, why = default_recipe(model_path, label)
    return load_recipe(chosen), f"the default for the encoder: {why}"


def _read_json(path: Path) -> dict[str, Any]:
    try:
        value = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return value if isinstance(value, dict) else {}


@dataclass
class RecipeChoice:
    """The recipe a run used: ``recipe``, ``chosen`` (``--recipe`` or why it was the default), ``stage``,
    ``overrides`` (``{option: value}`` the command line set to another value than the recipe's), ``notes`` (what
    the machine changed: the recipe's bf16 turned off on a CPU without native bf16) and ``reasons`` (``{option: why}``
    for a setting the parsing itself changed: bf16).

    Once the run knows what it uses (the model and processor loaded, the objective chosen), :meth:`settle` records
    ``used`` (``{option: value}`` for every setting of the recipe: what the run used) and ``departures``; only then
    does :meth:`to_dict` give the record ``results.json`` keeps."""

    recipe: Recipe
    chosen: str
    stage: str
    overrides: dict[str, Any] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    reasons: dict[str, str] = field(default_factory=dict)
    used: dict[str, Any] | None = None
    departures: dict[str, dict[str, Any]] = field(default_factory=dict)

    @property
    def name(self) -> str:
        return self.recipe.name

    def asked(self) -> dict[str, Any]:
        """``{option: value}`` this run asked for, for every setting of the recipe: the command line's where it
        overrode the recipe, else the recipe's."""
        return {**self.recipe.settings(self.stage), **self.overrides}

    def settle(self, used: Mapping[str, Any], reasons: Mapping[str, str] | None = None) -> None:
        """Record what the run used for every setting of the recipe (``used``: ``{option: value}`` of the run, at
        least every option the recipe sets) and, as ``departures``, each setting whose value is neither the recipe's
        nor the command line's: ``{option: {"asked": value, "why": reason}}``, the reason from ``reasons`` (or
        :attr:`reasons`).

        Raises:
            RecipeError: ``used`` lacks a setting of the recipe (naming the recipe file and the option).
        """
        missing = [name for name in self.recipe.settings(self.stage) if name not in used]
        if missing:
            raise RecipeError(f"{self.recipe.path}: {self.stage} sets --{missing[0]}, but the run does not say which "
                              "value it used")
        why = {**self.reasons, **(reasons or {})}
        self.used = {name: plain(used[name]) for name in self.recipe.settings(self.stage)}
        self.departures = {
            name: {"asked": value, "why": why.get(name, "the run decided another value (see its log)")}
            for name, value in self.asked().items() if not same_setting(self.used[name], value)}

    def describe(self) -> str:
        """One line for the log: the recipe, why, its settings and the overrides."""
        settings = " ".join(f"--{key} {format_setting(value)}"
                            for key, value in self.recipe.settings(self.stage).items())
        line = f"recipe {self.name} ({self.chosen}): {settings or 'no settings'}"
        if self.overrides:
            line += "; overridden on the command line: " + " ".join(
                f"--{key} {format_setting(value)}" for key, value in self.overrides.items())
        if self.notes:
            line += "; " + "; ".join(self.notes)
        return line

    def describe_departures(self) -> list[str]:
        """One log line per setting the run used another value for than it asked (:meth:`settle`'s departures)."""
        return [f"recipe {self.name}: --{name} {format_setting((self.used or {}).get(name))}, not "
                f"{format_setting(departure['asked'])}: {departure['why']}"
                for name, departure in self.departures.items()]

    def to_dict(self) -> dict[str, Any]:
        """``results["recipe"]``: name, chosen, description, settings (this stage's, each with the value the run
        used), overrides, departures and notes.

        Raises:
            RecipeError: :meth:`settle` has not recorded what the run used (a record of the recipe's own values
                would say what the recipe asked for, not what ran).
        """
        if self.used is None:
            raise RecipeError(f"recipe {self.name}: the settings the run used are not known yet (settle() first)")
        return {"name": self.name, "chosen": self.chosen, "description": self.recipe.description,
                "settings": dict(self.used), "overrides": dict(self.overrides),
                "departures": {name: dict(value) for name, value in self.departures.items()},
                "notes": list(self.notes)}


def same_setting(used: Any, asked: Any) -> bool:
    """Whether a setting's value in the run is the one asked for (``3`` epochs are ``3.0``; enums by value)."""
    used, asked = plain(used), plain(asked)
    if isinstance(used, bool) or isinstance(asked, bool):
        return isinstance(used, bool) and isinstance(asked, bool) and used == asked
    if isinstance(used, (int, float)) and isinstance(asked, (int, float)):
        return float(used) == float(asked)
    return used == asked


def format_setting(value: Any) -> str:
    """A setting's value as the command line writes it (``true``, ``3e-05``): for the log and the model card."""
    return str(value).lower() if isinstance(value, bool) else str(value)


def plain(value: Any) -> Any:
    """A parsed option's value as a recipe writes it (enums by their value), for comparing the two."""
    return getattr(value, "value", value)


__all__ = ["DEFAULT_BY_KIND", "Recipe", "RecipeChoice", "RecipeError", "available_recipes", "choose_recipe",
           "default_recipe", "encoder_kind", "format_setting", "load_recipe", "plain", "same_setting"]
