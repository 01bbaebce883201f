"""The WikiRef dataset: typed features, the ``GeneratorBasedBuilder`` and the output folder (Parquet + card).

:func:`write_dataset_folder` writes ``data/{train,validation,test}-00000-of-00001.parquet`` with fixed row groups
and no timestamps (same examples -> same bytes), ``figures/*.png`` (Table I-II histograms) and a ``README.md``
whose ``configs:`` block lets ``load_dataset("path/to/folder")`` (and ``load_dataset("org/wikiref")`` after
``push_to_hub``/``upload_folder``) load train/validation/test. :class:`WikiRef` reads the same Parquet shards
as a ``GeneratorBasedBuilder``.
"""

from __future__ import annotations

import json
import logging
import statistics
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

import datasets

from .curation import Example

__all__ = ["FEATURES", "SPLITS", "WikiRef", "split_statistics", "write_dataset_folder"]

logger = logging.getLogger(__name__)

SPLITS = ("train", "validation", "test")

FEATURES = datasets.Features({
    "id": datasets.Value("string"),
    "query": datasets.List(datasets.Value("string")),
    "document_title": datasets.Value("string"),
    "document": datasets.List(datasets.Value("string")),
    "summary": datasets.Value("string"),
    "summary_sentences": datasets.List(datasets.Value("string")),
    "oracle_label": datasets.List(datasets.Value("int8")),
    "oracle_score": datasets.List(datasets.Value("float32")),
    "oracle_rouge2_recall": datasets.Value("float32"),
    "url": datasets.Value("string"),
    "archive_url": datasets.Value("string"),
    "citation_type": datasets.Value("string"),
    "wiki_page_id": datasets.Value("int64"),
    "wiki_revision_id": datasets.Value("int64"),
    "wiki_title": datasets.Value("string"),
    "section_path": datasets.List(datasets.Value("string")),
})  # fmt: skip

ROW_GROUP_SIZE = 1_000
PERCENTILES = (5, 20, 40, 50, 60, 80, 95)
_STATISTICS = {  # Table I/II row -> how to read it off an example
    "Document Tokens": lambda e: e.document_tokens,
    "Document Sents": lambda e: e.document_sentences,
    "Summary Tokens": lambda e: e.summary_tokens,
    "Summary Sents": lambda e: e.summary_sentences_count,
    "Query Depth": lambda e: len(e.query),
    "Query Tokens": lambda e: e.query_tokens,
}

_DESCRIPTION = """WikiRef: query-focused summarization examples built from Wikipedia citations (§II of Zhu et al., 2022,
"Transforming Wikipedia into Augmented Data for Query-Focused Summarization").
The summary is a cited Wikipedia statement, the query is [article title, section, subsection, ...] and the document
is the cited web page (its title, then its sentences)."""

WIKIREF_CITATION = """@article{zhu2022transforming,
  title   = {Transforming Wikipedia into Augmented Data for Query-Focused Summarization},
  author  = {Zhu, Haichao and Dong, Li and Wei, Furu and Qin, Bing and Liu, Ting},
  journal = {IEEE/ACM Transactions on Audio, Speech, and Language Processing},
  year    = {2022},
}"""


def feature_row(example: Example) -> dict[str, Any]:
    """The dataset columns of an example (measurements left out)."""
    values = asdict(example)
    return {name: values[name] for name in FEATURES}


def _write_parquet(rows: list[dict[str, Any]], path: Path, features: datasets.Features = FEATURES) -> None:
    """Write ``rows`` with ``features``' schema, fixed row groups, no timestamps (same rows -> same bytes)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    schema = features.arrow_schema
    table = pa.Table.from_pylist(rows, schema=schema) if rows else schema.empty_table()
    temporary = path.with_name(path.name + ".tmp")
    pq.write_table(table, temporary, row_group_size=ROW_GROUP_SIZE, compression="zstd", write_statistics=True)
    temporary.replace(path)


def written_splits(splits: Mapping[str, Sequence[Any]]) -> list[str]:
    """The splits that get a Parquet file and a ``configs:`` entry: the non-empty ones, since ``datasets`` cannot
    load an empty split ("corresponds to no data"), or ``train`` alone (typed, empty) when there is no row at all;
    such a folder documents the build but ``load_dataset`` refuses it."""
    return [split for split in SPLITS if splits.get(split)] or [SPLITS[0]]


def write_split_files(rows_by_split: Mapping[str, Sequence[dict[str, Any]]], output_dir: str | Path,
                      features: datasets.Features = FEATURES) -> dict[str, str]:
    """Write ``output_dir/data/{split}-00000-of-00001-<sha256>.parquet`` for each of the :func:`written_splits`
    (content-addressed names, see :mod:`wikiref_dataset.folders`: the ``datasets`` cache key must change with the
    content) and remove any other Parquet file of those splits; returns ``{split: relative path}`` for the card."""
    from .folders import content_addressed

    output = Path(output_dir)
    data = output / "data"
    data.mkdir(parents=True, exist_ok=True)
    files: dict[str, str] = {}
    for split in SPLITS:
        for stale in data.glob(f"{split}-*.parquet"):
            stale.unlink()
    for split in written_splits(rows_by_split):
        path = data / f"{split}-00000-of-00001.parquet"
        _write_parquet(list(rows_by_split.get(split, [])), path, features)
        files[split] = content_addressed(path, path.name[: -len(".parquet")]).relative_to(output).as_posix()
    return files


def card_front_matter(pretty_name: str, files: Mapping[str, str], licence: str = "cc-by-sa-4.0") -> list[str]:
    """The YAML header of a dataset card: metadata and the ``configs:`` block that ``load_dataset(folder)`` and the
    Hub read, naming each split's file exactly (``files``, as :func:`write_split_files` returns them: a pattern such
    as ``data/train-*.parquet`` would let the ``datasets`` cache serve an earlier folder of the same name)."""
    front = ["---", f"license: {licence}", "language:", "- en", "task_categories:", "- summarization",
             f"pretty_name: {pretty_name}", "configs:", "- config_name: default", "  data_files:"]
    for split, name in files.items():
        front += [f"  - split: {split}", f"    path: {name}"]
    return front + ["---", ""]


def split_statistics(examples: Sequence[Example]) -> dict[str, Any]:
    """Table I (means) and Table II (percentiles) of a list of examples."""
    from .curation import percentile

    result: dict[str, Any] = {"Total Examples": len(examples),
                              "Wiki Articles": len({e.wiki_page_id for e in examples})}
    for name, read in _STATISTICS.items():
        values = sorted(read(e) for e in examples)
        result[name] = {"mean": round(statistics.fmean(values), 2) if values else 0.0,
                        "percentiles": {str(q): percentile(values, q) if values else 0.0 for q in PERCENTILES}}
    return result


def _histograms(examples: Sequence[Example], folder: Path) -> list[str]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    folder.mkdir(parents=True, exist_ok=True)
    names = []
    for name, read in _STATISTICS.items():
        figure, axis = plt.subplots(figsize=(5, 3.2))
        values = [read(e) for e in examples]
        axis.hist(values, bins=min(40, max(5, len(set(values)))), color="#4878a8")
        axis.set_xlabel(name.lower())
        axis.set_ylabel("examples")
        axis.set_title(f"WikiRef: {name.lower()}")
        figure.tight_layout()
        file = name.lower().replace(" ", "_") + ".png"
        figure.savefig(folder / file, dpi=90, metadata={"Software": None})
        plt.close(figure)
        names.append(file)
    return names


def _card(splits: dict[str, list[Example]], build: dict[str, Any], figures: list[str], files: dict[str, str]) -> str:
    all_examples = [e for split in SPLITS for e in splits[split]]
    stats = {split: split_statistics(splits[split]) for split in SPLITS}
    whole = split_statistics(all_examples)
    front = card_front_matter("WikiRef", files)
    lines = ["# WikiRef", "", _DESCRIPTION, "", "## How it was built", "",
             f"- Dump(s): {', '.join(build.get('dumps', [])) or 'n/a'}; latest revision in the build: "
             f"{build.get('latest_revision', 'n/a')}",
             f"- WARC files: {len(build.get('warcs', []))}",
             "- Curation config: `" + json.dumps(build.get("config", {}), sort_keys=True) + "`", "",
             "| step | count |", "|---|---:|"]
    lines += [f"| {name} | {value:,} |" for name, value in build.get("counts", {}).items()]
    lines += ["", "## Table I: means per split", "", "| | " + " | ".join(SPLITS) + " |",
              "|---|" + "---:|" * len(SPLITS)]
    for row in ("Total Examples", "Wiki Articles"):
        lines.append(f"| {row} | " + " | ".join(f"{stats[s][row]:,}" for s in SPLITS) + " |")
    for row in _STATISTICS:
        lines.append(f"| {row} | " + " | ".join(f"{stats[s][row]['mean']:.1f}" for s in SPLITS) + " |")
    lines += ["", "## Table II: percentiles over the whole dataset", "",
              "| | " + " | ".join(str(q) for q in PERCENTILES) + " |", "|---|" + "---:|" * len(PERCENTILES)]
    for row in _STATISTICS:
        lines.append(f"| {row} | " + " | ".join(f"{whole[row]['percentiles'][str(q)]:g}" for q in PERCENTILES)
                     + " |")
    lines += ["", "## Histograms", ""] + [f"![{name}](figures/{name})" for name in figures]
    lines += ["", "## Licence", "",
              "Summaries and queries are Wikipedia text (CC BY-SA 4.0; attribution: the Wikipedia article and "
              "revision named by `wiki_title` / `wiki_revision_id`). Documents are excerpts of the cited web pages "
              "and remain their publishers' copyright; they are provided for research only.", "",
              "## Citation", "", "```bibtex", WIKIREF_CITATION, "```", ""]
    return "\n".join(front + lines)


def write_dataset_folder(splits: dict[str, list[Example]], output_dir: str | Path,
                         build: dict[str, Any] | None = None) -> dict[str, int]:
    """Write the Parquet shards, the histograms, ``statistics.json`` and the card; returns the split sizes."""
    output = Path(output_dir)
    complete = {split: splits.get(split, []) for split in SPLITS}
    files = write_split_files({split: [feature_row(e) for e in sorted(examples, key=lambda e: e.id)]
                       for split, examples in complete.items()}, output)
    figures = _histograms([e for s in SPLITS for e in complete[s]], output / "figures")
    (output / "statistics.json").write_text(json.dumps(
        {split: split_statistics(complete[split]) for split in SPLITS}, indent=1), encoding="utf-8")
    (output / "README.md").write_text(_card(complete, build or {}, figures, files), encoding="utf-8")
    return {split: len(complete[split]) for split in SPLITS}


class WikiRef(datasets.GeneratorBasedBuilder):
    """The curated WikiRef shards (a ``wikiref build`` output folder) as a builder (dataset scripts are gone from
    ``load_dataset``, so it is used directly):

        builder = WikiRef(data_dir="path/to/build", dataset_name="wikiref")
        builder.download_and_prepare()
        dataset = builder.as_dataset()
    """

    VERSION = datasets.Version("1.0.0")

    def __init__(self, *args: Any, data_dir: str | None = None, hash: str | None = None, **kwargs: Any) -> None:
        # the cache key of a GeneratorBasedBuilder is its module, config name and data_dir: the content of the
        # folder's files must be part of it, or a rebuilt folder at the same path loads the previous build
        if data_dir and hash is None and (Path(data_dir) / "README.md").is_file():
            from .folders import content_key

            hash = content_key(data_dir)
        super().__init__(*args, data_dir=data_dir, hash=hash, **kwargs)

    def _info(self) -> datasets.DatasetInfo:
        return datasets.DatasetInfo(description=_DESCRIPTION, features=FEATURES, citation=WIKIREF_CITATION,
                                    license="CC BY-SA 4.0 (Wikipedia text); documents: their publishers' copyright")

    def _split_generators(self, dl_manager: Any) -> list[datasets.SplitGenerator]:
        if not self.config.data_dir:
            raise ValueError("WikiRef needs data_dir: the output folder of `wikiref build`")
        from .folders import card_data_files

        files = card_data_files(Path(self.config.data_dir))  # the files the card names, not every file in data/
        names = {"train": datasets.Split.TRAIN, "validation": datasets.Split.VALIDATION, "test": datasets.Split.TEST}
        return [datasets.SplitGenerator(name=names[split], gen_kwargs={"files": [str(p) for p in files[split]]})
                for split in SPLITS if split in files]

    def _generate_examples(self, files: list[str]) -> Iterator[tuple[str, dict[str, Any]]]:
        import pyarrow.parquet as pq

        for file in files:
            for row in pq.read_table(file).to_pylist():
                yield row["id"], row
