"""``wikiref app``: serve the app (:mod:`.ui`) on this machine.

    wikiref app --model outputs/qbert-duc --dataset outputs/wikiref

This module imports only the standard library at import time (the ``wikiref`` command builds its parser on every
call); Gradio, transformers and datasets load when the command runs.
"""

from __future__ import annotations

import argparse
import sys
from contextlib import nullcontext
from typing import Any

from wikiref_dataset.command import CliError, add_subcommand

DEFAULT_PORT = 7860


def add_app_parser(commands: Any) -> argparse.ArgumentParser:
    """Add the ``app`` subcommand to ``commands`` (the object ``add_subparsers`` returns)."""
    parser = add_subcommand(
        commands, "app", help="a web app to try a Q-BERT model and explore a built dataset",
        description="Serve a Gradio app on this machine: summarize pasted or uploaded documents (or a dataset "
                    "example) with a Q-BERT model, each sentence shaded by its score; compare Q-BERT with QUERY-SIM, "
                    "LEAD and ORACLE on a DUC or benchmark cluster, scored against its references; explore a built "
                    "dataset (search, examples with their oracle sentences and provenance, the card, the dropped "
                    "statements). Needs the app extra (pip install \"wikiref[app]\").",
        example="wikiref app --model outputs/qbert-duc --dataset outputs/wikiref", func=run_app,
        quiet_help="no 'loading' and 'served to others' lines or transformers' \"Loading weights\" bar on stderr; "
                   "the address served and errors are still printed")
    parser.add_argument("--model", metavar="DIR_OR_HUB_ID", help="a saved Q-BERT folder or a Hub model id")
    parser.add_argument("--dataset", metavar="DIR_OR_HUB_ID",
                        help="a dataset folder (WikiRef, PSG2SUM, AQuaMuSe, a converted DUC year or benchmark) or a "
                             "Hub dataset id")
    parser.add_argument("--host", default="127.0.0.1",
                        help="address to serve on (127.0.0.1: this machine only; any other, such as 0.0.0.0, serves "
                             "others, and then the app loads only --model, --dataset and --allow, with bounded "
                             "uploads, requests and queue: docs/app.md)")
    parser.add_argument("--port", type=int, default=DEFAULT_PORT, help=f"port ({DEFAULT_PORT}; 0: any free port)")
    parser.add_argument("--allow", nargs="*", action="extend", default=[], metavar="DIR_OR_HUB_ID",
                        help="served to others (--host other than 127.0.0.1 or localhost): more model or dataset "
                             "folders or Hub ids the page's boxes may load besides --model and --dataset (zero or "
                             "more; repeatable); on 127.0.0.1 the boxes load anything")
    return parser


def run_app(args: argparse.Namespace) -> int:
    """Load what was given and serve until interrupted; a model or dataset that cannot be loaded is one line, exit 2."""
    try:
        from .ui import serve
    except ImportError as error:
        if (error.name or "").split(".")[0] == "gradio":
            raise CliError('the app needs Gradio: pip install "wikiref[app]"') from None
        raise
    from .backend import AppError
    from .public import is_public_host

    if args.port < 0 or args.port > 65535:
        raise CliError(f"--port must lie in 0-65535, got {args.port}")
    port = args.port or _free_port(args.host)
    if not args.quiet:
        print("loading " + " and ".join(what for what in (args.model, args.dataset) if what) + " …"
              if args.model or args.dataset else "starting without a model or dataset …", file=sys.stderr, flush=True)
    if is_public_host(args.host) and not args.quiet:
        allowed = [what for what in (args.model, args.dataset, *args.allow) if what]
        print(f"served to others ({args.host}): the page loads only {', '.join(allowed) or 'nothing'}; uploads, "
              "requests and the queue are bounded (docs/app.md)", file=sys.stderr, flush=True)
    bars = nullcontext()
    if args.quiet:  # every model the app loads, at start or from the page, without transformers' bars
        from modeling_qbert import no_progress_bars

        bars = no_progress_bars()
    try:
        with bars:
            serve(args.model, args.dataset, host=args.host, port=port, allow=args.allow,
                  on_ready=lambda url: print(f"serving on {url} (Ctrl-C stops)", flush=True))
    except AppError as error:
        raise CliError(str(error)) from None
    except OSError as error:
        raise CliError(f"cannot serve on {args.host}:{port} ({error})") from None
    return 0


def _free_port(host: str) -> int:
    import socket

    with socket.socket() as probe:
        probe.bind((host, 0))
        return probe.getsockname()[1]


__all__ = ["add_app_parser", "run_app"]
