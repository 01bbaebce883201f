"""Declare an arguments dataclass's options on a plain argparse parser, the way `HfArgumentParser` declares them,
without importing transformers: the `wikiref` command builds its parser on every call (``wikiref duc evaluate``,
``wikiref qfs evaluate``, ``wikiref experiments``)."""

from __future__ import annotations

import argparse
import typing
from dataclasses import fields

from trainer_scripts.duc_evaluation import EvaluateArguments

FLAGS = ("quiet", "wait")
"""The options that are flags as in every other ``wikiref`` subcommand (``-q``, ``--wait``): no value follows them
(``-q true`` was taken as a value before, and ``-q`` before a positional argument swallowed it)."""


def add_arguments(parser: argparse.ArgumentParser, dataclass_type: type = EvaluateArguments,
                  flags: bool = True) -> argparse.ArgumentParser:
    """The options of :class:`EvaluateArguments` (or another arguments dataclass: ``run_experiments.py``'s) on an
    argparse parser (``wikiref duc evaluate``), declared the way `HfArgumentParser` declares them (``--name`` and
    ``--name-with-hyphens``; lists take one or more values; a bool takes an optional true/false, except the flags of
    :data:`FLAGS`, which take none in a ``wikiref`` subcommand (``flags``; a script's own parser, ``evaluate_qfs.py``,
    takes ``--quiet true`` as `HfArgumentParser` does, and the experiments' units are written so); ints and floats are
    converted). The `wikiref` command builds its parser on every call and does not import transformers for it;
    ``tests/trainer_scripts/test_evaluate_duc.py`` checks that both parse alike. An old spelling (``aliases``:
    ``--output`` for ``--out``) is accepted, hidden from ``--help``, with a one-line note."""
    from wikiref_dataset.command import deprecated_alias

    hints = typing.get_type_hints(dataclass_type)
    for item in fields(dataclass_type):
        options = [f"--{item.name}"] + ([f"--{item.name.replace('_', '-')}"] if "_" in item.name else [])
        if item.name == "quiet":
            options.insert(0, "-q")  # the short form every wikiref subcommand takes (wikiref_dataset.command)
        kwargs = dict(item.metadata)
        for alias in kwargs.pop("aliases", []):
            parser.add_argument(alias, dest=item.name, type=str, metavar=kwargs.get("metavar"),
                                action=deprecated_alias(options[0]), help=argparse.SUPPRESS)
        hint = hints[item.name]
        if hint is bool and flags and item.name in FLAGS:
            kwargs.update(action="store_true", default=False)
        elif hint is bool:
            kwargs.update(type=_to_bool, nargs="?", const=True, default=item.default)
        elif typing.get_origin(hint) is list:
            (inner,) = typing.get_args(hint)
            kwargs.update(type=inner if inner in (int, float) else str, nargs="+", default=item.default_factory())
        else:
            kwargs.update(type=hint if hint in (int, float) else str, default=item.default)
        parser.add_argument(*options, **kwargs)
    return parser


def _to_bool(value: str) -> bool:
    if value.lower() in ("yes", "true", "t", "y", "1"):
        return True
    if value.lower() in ("no", "false", "f", "n", "0"):
        return False
    raise argparse.ArgumentTypeError(f"expected true or false, got {value!r}")
