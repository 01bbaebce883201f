"""The data side's subcommands of the ``wikiref`` command, and ``python -m wikiref_dataset.cli`` to run them alone.

The ``wikiref`` command itself is ``trainer_scripts/cli.py``, at the top of the import graph: it composes these
subcommands (:func:`add_data_commands`) with the model side's (``demo``, ``summarize``, ``duc evaluate``). This
package imports neither ``modeling_qbert`` nor ``trainer_scripts`` (data flows one way).

Every subcommand follows one convention (:mod:`wikiref_dataset.command`): inputs positional, ``--out`` for what it
writes, ``--tasks``/``--workers``/``--executor`` for how a build runs (:mod:`wikiref_dataset.process.executors`), ``--quiet``,
``-v``, ``--debug``; errors are one line ``wikiref <command>: error: ...`` with exit status 2 (bad command line or
input), 1 (a failed run) or 130 (interrupted).

Subcommands:
    build       the whole WikiRef build: statements, documents, curation, splits, Parquet + card (``build_cli.py``);
    rouge       score summaries with ROUGE-1.5.5 semantics from a JSON-lines file or a ROUGE file list;
    statements  WikiRef stage 1: statements with their first citation from Wikipedia dumps (``wiki/cli.py``);
    documents   WikiRef stage 2: the cited pages from WARC archives or HTTP (``web/cli.py``);
    duc         DUC 2005-2007: ``convert`` the NIST folders (``duc_cli.py``);
    qfs         QMSum, SQuALITY, Debatepedia: ``convert`` the releases (``qfs/cli.py``);
    psg2sum     passage-summary pairs mined from revision histories (``psg2sum/cli.py``);
    aquamuse    query-based multi-document examples mined from Natural Questions + a web corpus (``aquamuse/cli.py``).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from .command import ArgumentParser, CliError, add_subcommand, dispatch, warn
from .utils.jsonl import JsonLinesError, iter_json_objects

if TYPE_CHECKING:
    from .rouge import RougeResult

# The ROUGE engine (numpy) and tqdm are imported by `run_rouge`, not here: every `wikiref` command builds this
# parser, and the two were 0.35 s of the 0.44 s a `wikiref --help` or a refused command line took to start.

__all__ = ["CliError", "add_data_commands", "build_parser", "dispatch", "main"]


# ----------------------------------------------------------------------------------------------------------------
# Input reading
# ----------------------------------------------------------------------------------------------------------------


def read_jsonl_items(path: Path) -> tuple[list[str], list[list[str]], list[str]]:
    """Items ``{"prediction"|"system": str, "references": [str, ...], "id"?: str}``, one JSON object per line."""
    systems, references, ids = [], [], []
    try:
        for line_number, record in iter_json_objects(path):
            system = record.get("prediction", record.get("system"))
            refs = record.get("references")
            if not isinstance(system, str):
                raise CliError(f"{path}:{line_number}: needs a string field 'prediction' (or 'system')")
            if isinstance(refs, str):
                refs = [refs]
            if not isinstance(refs, list) or not refs or not all(isinstance(ref, str) for ref in refs):
                raise CliError(f"{path}:{line_number}: needs 'references': a non-empty list of strings")
            systems.append(system)
            references.append(refs)
            ids.append(str(record.get("id", line_number)))
    except JsonLinesError as error:
        raise CliError(str(error)) from None
    if not systems:
        raise CliError(f"{path}: no items")
    return systems, references, ids


def read_filelist(path: Path) -> tuple[list[str], list[list[str]], list[str]]:
    """ROUGE-1.5.5's ``-z SPL`` file list: each line ``system_file ref_file_1 … ref_file_k``; blank lines and lines
    starting with ``#`` are skipped, and each item's id is its place among the pairs (ROUGE's evaluation id). The paths
    are used as given, so relative ones are read from the working directory, as ROUGE-1.5.5 opens them (``-z`` takes
    each path from the list, with no root before it). Texts are read byte for byte as UTF-8 (no normalisation), as
    ROUGE reads them."""
    systems, references, ids = [], [], []

    def load(name: str, line_number: int) -> str:
        file = Path(name)
        try:
            return file.read_bytes().decode("utf-8", errors="replace")
        except OSError as err:
            beside = not file.is_absolute() and (path.parent / file).is_file() and path.parent.resolve() != Path.cwd()
            hint = (f"; paths are read from the working directory, as ROUGE-1.5.5 reads them, and {name} is beside "
                    f"the list: run from {path.parent}" if beside else "")
            raise CliError(f"{path}:{line_number}: cannot read {file} ({err.strerror}){hint}") from None

    with open(path, encoding="utf-8") as handle:
        for line_number, line in enumerate(handle, start=1):
            names = line.split()
            if not names or line.startswith("#"):
                continue
            if len(names) < 2:
                raise CliError(f"{path}:{line_number}: expected 'system_file reference_file...', got {line.strip()!r}")
            systems.append(load(names[0], line_number))
            references.append([load(name, line_number) for name in names[1:]])
            ids.append(str(len(systems)))
    if not systems:
        raise CliError(f"{path}: no items")
    return systems, references, ids


# ----------------------------------------------------------------------------------------------------------------
# Output
# ----------------------------------------------------------------------------------------------------------------


def format_table(rows: Sequence[tuple[str, RougeResult]], value: str = "recall") -> str:
    """A plain-text table: one row per system, ``value`` (recall/precision/f) of each measure with its 95% CI."""
    metrics = rows[0][1].metrics
    headers = ["system"] + [f"{metric.replace('rouge_', 'R-').upper()} {value[0].upper()}" for metric in metrics]
    body = []
    for name, result in rows:
        cells = [name]
        for metric in metrics:
            average = result.averages[metric]
            low, high = getattr(average, f"{value}_ci")
            cells.append(f"{getattr(average, value):.5f} ({low:.5f}-{high:.5f})")
        body.append(cells)
    widths = [max(len(row[i]) for row in [headers] + body) for i in range(len(headers))]
    lines = ["  ".join(cell.ljust(width) for cell, width in zip(headers, widths))]
    lines.append("  ".join("-" * width for width in widths))
    lines += ["  ".join(cell.ljust(width) for cell, width in zip(row, widths)) for row in body]
    return "\n".join(lines)


# ----------------------------------------------------------------------------------------------------------------
# Subcommands
# ----------------------------------------------------------------------------------------------------------------


def run_rouge(args: argparse.Namespace) -> int:
    from tqdm.auto import tqdm

    from .rouge import RougeConfig, RougeScorer, display_name, load_stopwords

    if args.rouge_args is not None:
        config = RougeConfig.from_args(args.rouge_args)
        if args.stopwords:
            config = RougeConfig(**{**config.__dict__, "stopwords": load_stopwords(args.stopwords)})
    else:
        config = RougeConfig(stopwords=load_stopwords(args.stopwords) if args.stopwords else None)
    path = Path(args.input)
    if path.is_dir():
        raise CliError(f"{path}: is a folder; give a JSON-lines file of {{prediction, references}} items, or a ROUGE "
                       "file list with --filelist")
    if not path.is_file():
        raise CliError(f"{path}: no such file")
    systems, references, ids = read_filelist(path) if args.filelist else read_jsonl_items(path)
    warn_unscorable(args, systems, references, ids)
    scorer = RougeScorer(config)
    per_item = []
    for position, (system, refs) in enumerate(tqdm(list(zip(systems, references)), desc="scoring", unit="item",
                                                   disable=len(systems) < 200 or args.quiet, file=sys.stderr)):
        try:
            per_item.append(scorer.score(system, refs))
        except (TypeError, ValueError) as err:
            raise CliError(f"{path}: item {ids[position]}: {err}") from None
    result = scorer.average(per_item)
    if args.json:
        output = {"config": config.to_args(), "averages": result.to_dict()}
        if args.per_item:
            output["per_item"] = {item_id: {metric: score.__dict__ for metric, score in scores.items()}
                                  for item_id, scores in zip(ids, per_item)}
        print(json.dumps(output, indent=1))
    else:
        if args.per_item:
            for item_id, scores in zip(ids, per_item):
                for metric, score in scores.items():
                    print(f"{args.system_id} {display_name(metric)} Eval {item_id} "
                          f"R:{score.recall:7.5f} P:{score.precision:7.5f} F:{score.f:7.5f}")
        print(result.report(args.system_id))
        print(f"{len(per_item)} items scored with {' '.join(config.to_args())}", file=sys.stderr)
    return 0


def _no_tokens(text: str) -> bool:
    from .rouge import rouge_tokenize

    return not any(rouge_tokenize(line) for line in text.splitlines())


def _some(ids: list[str]) -> str:
    return ", ".join(ids[:5]) + (f" and {len(ids) - 5} more" if len(ids) > 5 else "")


def warn_unscorable(args: argparse.Namespace, systems: list[str], references: list[list[str]],
                    ids: list[str]) -> None:
    """Warn (and go on: ROUGE-1.5.5 scores them 0) about empty predictions and texts with no ASCII letter or digit,
    which ROUGE's tokenizer, keeping only [a-z0-9], reads as empty."""
    empty = [item for item, system in zip(ids, systems) if not system.strip()]
    if empty:
        warn(args, f"{len(empty)} empty prediction(s) score 0 (items {_some(empty)})")
    foreign = [item for item, system in zip(ids, systems) if system.strip() and _no_tokens(system)]
    if foreign:
        warn(args, f"{len(foreign)} prediction(s) have no ASCII letter or digit and score 0: ROUGE-1.5.5 keeps only "
                   f"[a-z0-9] tokens, as this engine does (items {_some(foreign)})")
    tokenless = [item for item, refs in zip(ids, references) if all(_no_tokens(ref) for ref in refs)]
    if tokenless:
        warn(args, f"{len(tokenless)} item(s) whose references have no ASCII letter or digit score 0 (items "
                   f"{_some(tokenless)})")


def add_rouge_parser(commands: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """Register ``rouge`` on the ``wikiref`` subcommands."""
    rouge = add_subcommand(
        commands, "rouge", help="ROUGE-1.5.5-exact scoring (official DUC settings by default)",
        description="Score system summaries against references with ROUGE-1.5.5's semantics, without Perl: the "
                    "official DUC settings (-n 2 -x -m -2 4 -u -c 95 -r 1000 -f A -p 0.5 -t 0 -l 250) unless "
                    "--rouge-args says otherwise, and ROUGE's own report (or JSON). Items are JSON lines "
                    "{\"prediction\": str, \"references\": [str, ...], \"id\"?: str} (a summary's lines are its "
                    "sentences), or ROUGE's -z SPL file list. Like ROUGE-1.5.5, the tokenizer keeps only ASCII "
                    "letters and digits: an empty prediction, or one written only in other scripts, scores 0 (with "
                    "a warning).",
        example=["wikiref rouge items.jsonl",
                 "wikiref rouge filelist.txt --filelist --rouge-args \"-n 2 -m -2 4 -u -c 95 -r 1000 -f A -p 0.5 -t 0\" "
                 "--per-item"],
        func=run_rouge,
        quiet_help="no progress bar on stderr (shown when 200 items or more are scored); the scores, warnings and "
                   "errors are still printed")
    rouge.add_argument("input", help="JSON lines {prediction, references} or, with --filelist, a ROUGE -z SPL list")
    rouge.add_argument("--filelist", action="store_true",
                       help="input is 'system_file ref_file...' per line (ROUGE's -z SPL list; relative paths from the "
                            "working directory, as ROUGE-1.5.5 reads them)")
    rouge.add_argument("--rouge-args", help='ROUGE-1.5.5 options, e.g. "-n 2 -m -2 4 -u -c 95 -r 1000 -f A -p 0.5 -t 0"')
    rouge.add_argument("--stopwords", help="stop-word list for -s (one word per line)")
    rouge.add_argument("--per-item", action="store_true", help="also print every item's scores")
    rouge.add_argument("--json", action="store_true", help="print JSON instead of ROUGE's text report")
    rouge.add_argument("--system-id", default="X", help="system name in the report (default X)")
    return rouge


def add_data_commands(commands: argparse._SubParsersAction) -> dict[str, argparse._SubParsersAction]:
    """Register the data side's subcommands on ``commands``; returns the nested subcommand sets other packages extend
    (``{"duc": …, "qfs": …}``: the top-level command adds ``duc evaluate`` and ``qfs evaluate`` there)."""
    # Each part's parser module imports only the standard library: `wikiref --help` stays light.
    from .aquamuse.cli import add_aquamuse_parser
    from .duc.cli import add_duc_parser
    from .psg2sum.cli import add_psg2sum_parser
    from .qfs.cli import add_qfs_parser
    from .web.cli import add_documents_parser
    from .wiki.cli import add_statements_parser
    from .wikiref.cli import add_build_parser

    add_rouge_parser(commands)
    add_statements_parser(commands)
    add_documents_parser(commands)
    duc = add_duc_parser(commands)
    add_build_parser(commands)
    add_psg2sum_parser(commands)
    add_aquamuse_parser(commands)
    qfs = add_qfs_parser(commands)
    return {"duc": duc, "qfs": qfs}


def build_parser() -> argparse.ArgumentParser:
    """The data subcommands alone (``python -m wikiref_dataset.cli``); ``wikiref`` adds the model side's."""
    parser = ArgumentParser(prog="wikiref", description="Query-focused summarization toolkit: the data side.")
    add_data_commands(parser.add_subparsers(dest="command", required=True, metavar="COMMAND"))
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    return dispatch(build_parser(), argv)


if __name__ == "__main__":
    sys.exit(main())
