"""The app against `wikiref summarize`, on one real DUC 2006 cluster (25 documents), on this machine.

Rows (best of ``--repeats``):

* **summarize, one cluster**: `wikiref summarize --sentences-per-line` on the cluster's 25 documents (one file each),
  its own "scored in" time (the model is already loaded: the scoring and selection alone), against the app's
  ``/summarize`` on the same input through ``gradio_client`` to `wikiref app` running in its own process (the whole
  request: the text sent, scoring, selection, the shaded HTML and the JSON file, the answer). The two alternate, best
  of ``--repeats`` each (one cluster's scoring varies by about 15% from run to run on the 2-core machine). Target: the
  app at most 1.1x. Both give the same summary (checked).
* **start, once the model is loaded**: in one process, ``trainer_scripts.app.ui.serve`` from a loaded model to a
  page that answers, beside the model's load itself. Target: under 10 s.

The model is the shipped MiniLM encoder made into a Q-BERT folder (head untrained: speed does not depend on training),
with the sentence-encoder recipe's settings. DUC 2006 is read from ``../shared/realdata/duc/2006`` (converted once into
a temporary folder); without it the script stops and says so.

    .venv/bin/python benchmarks/bench_app.py              # about 2 minutes on 2 cores
"""

from __future__ import annotations

import argparse
import os
import re
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import _common

ROOT = Path(__file__).resolve().parents[1]
NIST = ROOT.parent / "shared" / "realdata" / "duc" / "2006"


def make_model(folder: Path) -> Path:
    """A Q-BERT folder from the shipped MiniLM with the sentence-encoder recipe's architecture."""
    from trainer_scripts.common import ModelArguments, load_model_and_processor

    model, processor, _ = load_model_and_processor(ModelArguments(packing="sentences", attention_scope="sentence",
                                                                  query_similarity=True))
    model.save_pretrained(folder)
    processor.save_pretrained(folder)
    return folder


def cluster(work: Path) -> tuple[list[str], list[Path]]:
    """The first DUC 2006 cluster: its query levels and one file per document, one sentence per line."""
    from wikiref_dataset.duc.reader import convert_duc, load_duc

    if not NIST.is_dir():
        sys.exit(f"bench_app: {NIST} is missing (NIST's DUC 2006): nothing to measure")
    converted = work / "duc2006"
    convert_duc(NIST, 2006, converted)
    row = next(iter(load_duc(converted)))
    files = []
    for number, document in enumerate(row["documents"]):
        path = work / f"doc{number:02d}.txt"
        path.write_text("\n".join(document["sentences"]) + "\n", encoding="utf-8")
        files.append(path)
    return list(row["query"]), files


WIKIREF = Path(sys.executable).parent / "wikiref"


def cli_scoring(model: Path, query: list[str], files: list[Path]) -> tuple[float, str]:
    """`wikiref summarize`'s own "scored in" seconds and its summary."""
    argv = [str(WIKIREF), "summarize", "--model", str(model), "--sentences-per-line",
            *[item for level in query for item in ("--query", level)], *map(str, files)]
    done = subprocess.run(argv, capture_output=True, text=True, env={**os.environ, "HF_HUB_OFFLINE": "1"}, check=True)
    return float(re.search(r"scored in ([0-9.]+) s", done.stderr).group(1)), done.stdout.rstrip("\n")


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def start_app(model: Path, log: Path) -> tuple[subprocess.Popen, str]:
    """`wikiref app --model MODEL` in its own process; returns it and the URL it prints once serving."""
    port = free_port()
    with open(log, "w") as handle:
        server = subprocess.Popen([str(WIKIREF), "app", "--model", str(model), "--port", str(port)], stdout=handle,
                                  stderr=subprocess.STDOUT, env={**os.environ, "HF_HUB_OFFLINE": "1"})
    while "serving on " not in log.read_text():
        if server.poll() is not None:
            sys.exit(f"bench_app: the app stopped: {log.read_text()[-2000:]}")
        time.sleep(0.2)
    return server, f"http://127.0.0.1:{port}/"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=5, help="summaries of each kind, alternately (5)")
    parser.add_argument("--quick", action="store_true", help="one of each (a smoke run)")
    args = parser.parse_args(argv)
    if args.quick:
        args.repeats = 1
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")
    sys.path.insert(0, str(ROOT))
    print(_common.machine_line())
    with tempfile.TemporaryDirectory(prefix="bench_app-") as temporary:
        work = Path(temporary)
        model = make_model(work / "model")
        query, files = cluster(work)
        from gradio_client import Client

        from trainer_scripts.app import backend
        from trainer_scripts.app.ui import AppHandlers, build_app

        # the app's start, in this process: from a loaded model to a page that answers
        started = time.perf_counter()
        loaded = backend.load_model(str(model))
        model_seconds = time.perf_counter() - started
        started = time.perf_counter()
        app = build_app(AppHandlers(loaded))
        app.queue(default_concurrency_limit=1)
        port = free_port()
        app.launch(server_name="127.0.0.1", server_port=port, prevent_thread_lock=True, quiet=True)
        Client(f"http://127.0.0.1:{port}/", verbose=False)
        start_seconds = time.perf_counter() - started
        app.close()
        del loaded, app

        # the summary: `wikiref app` in its own process, as a user runs it, and `wikiref summarize`, alternately
        server, url = start_app(model, work / "app.log")
        try:
            client = Client(url, verbose=False)
            documents = f"\n{backend.DOCUMENT_SEPARATOR}\n".join(path.read_text(encoding="utf-8") for path in files)
            times, cli_times, summary, cli_summary = [], [], "", ""
            for _ in range(args.repeats):
                seconds, cli_summary = cli_scoring(model, query, files)
                cli_times.append(seconds)
                started = time.perf_counter()
                summary = client.predict(" > ".join(query), documents, None, True, 250, "auto", 0.7, 300, None,
                                         api_name="/summarize")[0]
                times.append(time.perf_counter() - started)
        finally:
            server.terminate()
            server.wait(timeout=30)
    cli_seconds = min(cli_times)
    app_seconds = min(times)
    same = "same summary" if summary == cli_summary else "DIFFERENT summaries"
    print(f"DUC 2006 cluster, {len(files)} documents, {documents.count(chr(10)) + 1} lines; {same}")
    print(f"summarize: wikiref summarize {cli_seconds:.2f} s (scored in), app {app_seconds:.2f} s (request); "
          f"ratio app/cli {app_seconds / cli_seconds:.2f}x (target <= 1.1x)")
    print(f"start: model load {model_seconds:.1f} s, then app start to a page that answers {start_seconds:.1f} s "
          "(target < 10 s)")
    print(f"RESULT app/cli {app_seconds / cli_seconds:.2f} start {start_seconds:.1f}")
    return 0 if summary == cli_summary else 1


if __name__ == "__main__":
    sys.exit(main())
