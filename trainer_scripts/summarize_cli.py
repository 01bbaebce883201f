"""``wikiref summarize``: an extractive query-focused summary of text files with a saved Q-BERT model.

    wikiref summarize --model runs/qbert --query "Barack Obama" --query "Early life" page1.txt page2.txt

Each FILE is one document (UTF-8 text, split into sentences with the project's splitter, which needs spaCy, the
``build`` extra; ``--sentences-per-line`` takes every non-empty line as a sentence; ``-`` reads standard input). One
document is summarized with the WikiRef rule, several with the model's cluster rule (its ``config.cluster_selection``:
the rule it was fine-tuned with, the paper's DUC rule unless its recipe or ``--selection`` chose another, as the
shipped encoder's ``sentence-encoder`` recipe chooses ILP; ``--selection`` overrides). The summary goes to standard output (``--json``: the
scored sentences too); progress and a closing line go to standard error.

This module imports only the standard library at import time: the ``wikiref`` command builds its parser on every
call, and transformers takes seconds to import.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

from wikiref_dataset.command import CliError, add_subcommand

SELECTIONS = ("auto", "wikiref", "duc", "mmr", "ilp")
"""The pipeline's rules (``modeling_qbert.pipeline_qfs.SELECTIONS``, which imports transformers: written here for a fast
parser; tests/trainer_scripts/test_summarize_cli.py checks they are the same)."""


class SummarizeError(CliError):
    """A user-facing error: printed as one line, exit status 2."""


SPLITTER_MODULES = ("spacy", "thinc")
SPLITTER_MISSING = ('raw text needs the sentence splitter, spaCy, which is the build extra: pip install "wikiref[build]" '
                    "(or pass --sentences-per-line, one sentence per line)")
"""Why a raw-text FILE cannot be summarized without spaCy. spaCy stays in the ``build`` extra rather than the core: it
brings a dozen packages of its own (thinc, blis, srsly, cymem, preshed, weasel, typer, ...) for this one job of the
core, splitting raw text, which sentences already split (``--sentences-per-line``), the training scripts and the DUC
evaluation do without."""


def check_sentence_splitter() -> None:
    """Refuse raw text at once, before the model loads, where the sentence splitter cannot be imported.

    Raises:
        SummarizeError: spaCy is not installed (one line naming the extra and ``--sentences-per-line``).
    """
    import importlib.util

    if any(importlib.util.find_spec(name) is None for name in SPLITTER_MODULES):
        raise SummarizeError(SPLITTER_MISSING)


def add_summarize_parser(commands: Any) -> argparse.ArgumentParser:
    """Add the ``summarize`` subcommand to ``commands`` (the object ``add_subparsers`` returns)."""
    parser = add_subcommand(
        commands, "summarize", help="extractive query-focused summary of text files with a Q-BERT model",
        description="Summarize text files for a query with a saved Q-BERT model: every sentence is scored with the "
                    "query and its document, and the summary chosen with the WikiRef rule (one file: tuned threshold, "
                    "trigram blocking) or the model's cluster rule (several files, 250 words: the DUC rule's bigram "
                    "redundancy, MMR or ILP concept coverage). The summary "
                    "goes to standard output (--json: every scored sentence too); progress to standard error.",
        example='wikiref summarize --model runs/qbert --query "Barack Obama" --query "Early life" page1.txt page2.txt',
        func=run_summarize,
        quiet_help="no 'loading' and 'scoring' lines or transformers' \"Loading weights\" bar on stderr; the "
                   "summary, the closing line and errors are still printed")
    parser.add_argument("files", nargs="+", metavar="FILE", help="documents: UTF-8 text files ('-' reads stdin)")
    parser.add_argument("--model", required=True, metavar="DIR",
                        help="folder written by save_pretrained (model, tokenizer and processor)")
    parser.add_argument("--query", required=True, action="append", metavar="LEVEL",
                        help="the query; repeat for its levels: title, section, subsection …")
    parser.add_argument("--sentences-per-line", action="store_true",
                        help="every non-empty line is one sentence (no sentence splitting, so no spaCy needed)")
    parser.add_argument("--selection", choices=SELECTIONS, default="auto",
                        help="selection rule: wikiref (threshold + trigram blocking), duc (250 words, bigram "
                             "redundancy), mmr (maximal marginal relevance), ilp (bigram concept coverage, integer "
                             "linear programming) or auto (wikiref for one file, the model's cluster rule for "
                             "several; default)")
    parser.add_argument("--threshold", type=float,
                        help="wikiref rule's score threshold (default: the model's tuned one, else 0.5 / 0.0)")
    parser.add_argument("--max-sentences", type=int, help="wikiref rule's sentence limit")
    parser.add_argument("--max-words", type=int, default=250,
                        help="the duc, mmr and ilp rules' word budget (250); see --budget")
    parser.add_argument("--budget", choices=("strict", "rouge"), default="strict",
                        help="strict: whole sentences, never more words than --max-words (default); rouge: the "
                             "rule's own choice, whose last sentence crosses the budget for ROUGE's -l to cut (as "
                             "DUC systems submit summaries)")
    parser.add_argument("--redundancy", type=float,
                        help="duc rule: skip sentences with more than this share of bigrams in the summary (0.5)")
    parser.add_argument("--tradeoff", type=float, help="mmr rule: weight of the score against redundancy (0.7)")
    parser.add_argument("--candidates", type=int,
                        help="ilp rule: how many of the best-scored sentences it chooses from (300)")
    parser.add_argument("--batch-size", type=int, default=8, help="windows per forward pass (8)")
    parser.add_argument("--threads", type=int, help="torch CPU threads (default: torch's choice)")
    parser.add_argument("--json", action="store_true", help="print the summary and every scored sentence as JSON")
    return parser


def read_documents(files: list[str], sentences_per_line: bool) -> list[str | list[str]]:
    """Each file's text (or its non-empty lines); '-' is standard input."""
    documents: list[str | list[str]] = []
    for name in files:
        if name == "-":
            text = sys.stdin.read()
        else:
            path = Path(name)
            if not path.is_file():
                raise SummarizeError(f"{path}: no such file")
            try:
                text = path.read_text(encoding="utf-8")
            except UnicodeDecodeError as err:
                raise SummarizeError(f"{path}: not UTF-8 text ({err.reason} at byte {err.start})") from None
            except OSError as err:
                raise SummarizeError(f"{path}: cannot read ({err.strerror})") from None
        documents.append([line.strip() for line in text.splitlines() if line.strip()] if sentences_per_line else text)
    return documents


def run_summarize(args: argparse.Namespace) -> int:
    """Run the subcommand; bad input raises :class:`SummarizeError` (one line, exit 2, from the command's dispatch)."""
    return _summarize(args)


def _summarize(args: argparse.Namespace) -> int:
    import modeling_qbert  # its classes load only when used: the model's check reads no more than its config.json

    try:
        model_dir = modeling_qbert.check_model_source(args.model)  # a saved Q-BERT folder or a Hub id
    except ValueError as error:
        raise SummarizeError(str(error)) from None
    if not any(level.strip() for level in args.query):
        raise SummarizeError("--query is empty: give the topic or question to summarize for (repeat --query for its "
                             "levels)")
    documents = read_documents(args.files, args.sentences_per_line)
    if not args.sentences_per_line:
        check_sentence_splitter()
    if args.max_words <= 0 or args.batch_size <= 0:
        raise SummarizeError("--max-words and --batch-size must be positive")
    from wikiref_dataset.selection import check_settings

    try:  # before the model loads: a value out of range is refused at once
        check_settings(redundancy=args.redundancy, tradeoff=args.tradeoff, candidates=args.candidates)
    except ValueError as error:
        raise SummarizeError(f"--{error}") from None

    start = time.perf_counter()
    if not args.quiet:
        print(f"loading Q-BERT from {model_dir} …", file=sys.stderr, flush=True)
    import torch

    if args.threads:
        torch.set_num_threads(args.threads)
    try:
        # this package's classes, not a Hub copy's code; -q: without transformers' "Loading weights" bar
        summarize = modeling_qbert.load_pipeline(model_dir, progress=not args.quiet)
    except (OSError, ValueError) as err:
        where = "cannot load the model" if Path(model_dir).exists() else "cannot be reached on the Hub"
        raise SummarizeError(f"{model_dir}: {where} ({' '.join(str(err).split())[:300]})") from None
    loaded = time.perf_counter()
    if not args.quiet:
        print(f"scoring {len(documents)} document(s) for the query {' > '.join(args.query)!r} …", file=sys.stderr,
              flush=True)
    options = {"selection": args.selection, "max_words": args.max_words, "batch_size": args.batch_size,
               "budget": args.budget}
    for name in ("redundancy", "tradeoff", "candidates"):
        if getattr(args, name) is not None:
            options[name] = getattr(args, name)
    if args.threshold is not None:
        options["threshold"] = args.threshold
    if args.max_sentences is not None:
        options["max_sentences"] = args.max_sentences
    try:
        result = summarize(query=list(args.query), documents=documents, **options)
    except ImportError as err:  # raw text needs the project's sentence splitter
        if (err.name or "").split(".")[0] in SPLITTER_MODULES:
            raise SummarizeError(SPLITTER_MISSING) from None
        raise SummarizeError(str(err)) from None

    if args.json:
        print(json.dumps(result, ensure_ascii=False, indent=1))
    else:
        print(result["summary"])
    words = sum(len(item["text"].split()) for item in result["selected"])
    print(f"selected {len(result['selected'])} of {len(result['sentences'])} sentences ({words} words) from "
          f"{len(documents)} document(s) with the {result['selection']} rule; model loaded in {loaded - start:.1f} s, "
          f"scored in {time.perf_counter() - loaded:.1f} s", file=sys.stderr)
    return 0


__all__ = ["add_summarize_parser", "run_summarize", "read_documents", "check_sentence_splitter", "SummarizeError"]
