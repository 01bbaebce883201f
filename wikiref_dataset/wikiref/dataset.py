"""The WikiRef dataset: typed features, the ``GeneratorBasedBuilder`` and the output folder (Parquet + card).

:func:`write_dataset_folder` writes ``data/{train,validation,test}-00000-of-00001.parquet`` with fixed row groups
and no timestamps (same examples -> same bytes), ``figures/*.png`` (Table I-II histograms) and a ``README.md``
whose ``configs:`` block lets ``load_dataset("path/to/folder")`` (and ``load_dataset("org/wikiref")`` after
``push_to_hub``/``upload_folder``) load train/validation/test. :class:`WikiRef` reads the same Parquet shards
as a ``GeneratorBasedBuilder``.

Writing streams: :class:`SplitFilesWriter` (used by every dataset folder of the project) appends each split's rows
to its Parquet file one row group at a time, and :class:`WikiRefFolderWriter` takes examples one at a time, in id
order within each split, keeping only the counts the card's tables need (:class:`SplitStatistics`), so the build's
last stage holds one row group per split, not the dataset.
"""

from __future__ import annotations

import json
import logging
import statistics
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Any

import datasets

from ..mining.dataset_folder import SPLITS, SplitFilesWriter, card_front_matter
from ..utils.running_stats import ValueCounts

if TYPE_CHECKING:  # curation needs datatrove (the build extra); loading a folder with WikiRef does not
    from .curation import Example

__all__ = ["FEATURES", "SplitStatistics", "WikiRef", "WikiRefFolderWriter", "split_statistics",
           "write_dataset_folder"]

logger = logging.getLogger(__name__)

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
    "document_source": datasets.Value("string"),
    "capture_date": datasets.Value("string"),
    "warc_filename": datasets.Value("string"),
    "warc_offset": datasets.Value("int64"),
    "warc_length": datasets.Value("int64"),
    "final_url": datasets.Value("string"),
})  # fmt: skip

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


class SplitStatistics:
    """Table I (means) and Table II (percentiles) of examples added one at a time: a count per distinct value of
    each quantity (:class:`~wikiref_dataset.utils.running_stats.ValueCounts`) and the set of Wikipedia articles, so the
    numbers are exact and the memory does not grow with the examples' text."""

    def __init__(self) -> None:
        self.examples = 0
        self.articles: set[int] = set()
        self.values = {name: ValueCounts() for name in _STATISTICS}

    def add(self, example: Example) -> None:
        self.examples += 1
        self.articles.add(example.wiki_page_id)
        for name, read in _STATISTICS.items():
            self.values[name].add(read(example))

    def merge(self, other: SplitStatistics) -> None:
        self.examples += other.examples
        self.articles |= other.articles
        for name, values in other.values.items():
            self.values[name].merge(values)

    def result(self) -> dict[str, Any]:
        from .curation import percentile

        result: dict[str, Any] = {"Total Examples": self.examples, "Wiki Articles": len(self.articles)}
        for name, values in self.values.items():
            result[name] = {"mean": round(statistics.fmean(values), 2) if values else 0.0,
                            "percentiles": {str(q): percentile(values, q) if values else 0.0 for q in PERCENTILES}}
        return result


def split_statistics(examples: Iterable[Example]) -> dict[str, Any]:
    """Table I (means) and Table II (percentiles) of examples."""
    accumulated = SplitStatistics()
    for example in examples:
        accumulated.add(example)
    return accumulated.result()


def _histograms(values: Mapping[str, ValueCounts], folder: Path) -> list[str]:
    from matplotlib.figure import Figure  # not pyplot: no global figure state, and the caller's backend stays as is

    folder.mkdir(parents=True, exist_ok=True)
    names = []
    # one figure drawn six times, with fixed margins that fit the labels: a figure and a tight layout per histogram
    # took a third of the card's second on every build
    figure = Figure(figsize=(5, 3.2))
    figure.subplots_adjust(left=0.16, right=0.96, bottom=0.16, top=0.9)
    axis = figure.add_subplot()
    for name in _STATISTICS:
        axis.clear()
        counts = values[name].counts
        distinct = sorted(counts)  # each distinct value once, weighted by its count: the same bars as every value
        axis.hist(distinct, bins=min(40, max(5, len(distinct))), weights=[counts[v] for v in distinct],
                  color="#4878a8")
        axis.set_xlabel(name.lower())
        axis.set_ylabel("examples")
        axis.set_title(f"WikiRef: {name.lower()}")
        file = name.lower().replace(" ", "_") + ".png"
        figure.savefig(folder / file, dpi=90, metadata={"Software": None})
        names.append(file)
    return names


_PROVENANCE = (
    "Every example says where its document came from: `document_source` (`warc`: the builder's WARC files, `cc`: "
    "Common Crawl, `http`: downloaded from the live web), `capture_date` (when the archived capture was made, or when "
    "the page was downloaded; ISO 8601 UTC), `warc_filename` + `warc_offset` + `warc_length` (the WARC record of an "
    "archived page: for Common Crawl, an HTTP Range request for those bytes of "
    "`https://data.commoncrawl.org/<warc_filename>` returns it; empty for a download) and `final_url` (the URL that "
    "answered, after redirects). Archived pages are the capture nearest the citation's access-date, else its date, "
    "else the newest. Splits are grouped by `final_url`: a page reached through two cited URLs is in one split.")


def _sources_lines(sources: dict[str, Any] | None) -> list[str]:
    """The card's lines for the document sources besides the WARC files (``build.json``'s ``sources``)."""
    if not sources:
        return []
    lines = []
    crawl = sources.get("common_crawl")
    if crawl:
        where = ("columnar URL index" if crawl.get("cc_index")
                 else f"CDX server `{crawl.get('cdx_api') or 'https://index.commoncrawl.org'}`")
        lines.append(f"- Common Crawl: crawls {', '.join(crawl.get('crawls') or []) or 'n/a'} via the {where}")
    if sources.get("http"):
        lines.append("- Live web: pages missing from the archives were downloaded")
    if sources.get("documents"):
        lines.append("- Documents reused from a previous documents folder")
    return lines


def _card(stats: dict[str, dict[str, Any]], whole: dict[str, Any], build: dict[str, Any], figures: list[str],
          files: dict[str, str]) -> str:
    language = build.get("language", "en")
    front = card_front_matter("WikiRef", files, language=language)
    lines = ["# WikiRef", "", _DESCRIPTION, "", "## How it was built", "",
             f"- Dump(s): {', '.join(build.get('dumps', [])) or 'n/a'}; latest revision in the build: "
             f"{build.get('latest_revision', 'n/a')}",
             f"- Language: `{language}`; the curation filters and oracle labels used {build.get('rouge', 'ROUGE-1.5.5')}",
             *([f"- Statements: {build['statements']}"] if build.get("statements") else []),
             f"- WARC files: {len(build.get('warcs', []))}",
             *_sources_lines(build.get("sources")),
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
    lines += ["", "## Provenance of the documents", "", _PROVENANCE]
    lines += ["", "## Licence", "",
              "Summaries and queries are Wikipedia text (CC BY-SA 4.0; attribution: the Wikipedia article and "
              "revision named by `wiki_title` / `wiki_revision_id`). Documents are excerpts of the cited web pages "
              "and remain their publishers' copyright; they are provided for research only.", "",
              "## Citation", "", "```bibtex", WIKIREF_CITATION, "```", ""]
    return "\n".join(front + lines)


class WikiRefFolderWriter:
    """The WikiRef folder written as examples stream in: :meth:`add` each example (in id order within its
    split), then :meth:`close` writes the histograms, ``statistics.json`` and the card and returns the split sizes.
    Holds one Parquet row group per split and :class:`SplitStatistics`' counts."""

    def __init__(self, output_dir: str | Path) -> None:
        self.output = Path(output_dir)
        self.files = SplitFilesWriter(self.output, FEATURES, ordered_by="id")
        self.statistics = {split: SplitStatistics() for split in SPLITS}

    def add(self, split: str, example: Example) -> None:
        self.files.add(split, feature_row(example))
        self.statistics[split].add(example)

    def close(self, build: dict[str, Any] | None = None) -> dict[str, int]:
        files = self.files.close()
        whole = SplitStatistics()
        for split in SPLITS:
            whole.merge(self.statistics[split])
        figures = _histograms(whole.values, self.output / "figures")
        stats = {split: self.statistics[split].result() for split in SPLITS}
        (self.output / "statistics.json").write_text(json.dumps(stats, indent=1), encoding="utf-8")
        (self.output / "README.md").write_text(_card(stats, whole.result(), build or {}, figures, files),
                                               encoding="utf-8")
        return {split: self.statistics[split].examples for split in SPLITS}


def write_dataset_folder(splits: dict[str, list[Example]], output_dir: str | Path,
                         build: dict[str, Any] | None = None) -> dict[str, int]:
    """Write the Parquet shards, the histograms, ``statistics.json`` and the card from lists of examples
    (:class:`WikiRefFolderWriter`); returns the split sizes."""
    writer = WikiRefFolderWriter(output_dir)
    for split in SPLITS:
        for example in sorted(splits.get(split, []), key=lambda e: e.id):
            writer.add(split, example)
    return writer.close(build)


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
            from ..process.folders import content_key

            hash = content_key(data_dir)
        super().__init__(*args, data_dir=data_dir, hash=hash, **kwargs)

    def _info(self) -> datasets.DatasetInfo:
        return datasets.DatasetInfo(description=_DESCRIPTION, features=FEATURES, citation=WIKIREF_CITATION,
                                    license="CC BY-SA 4.0 (Wikipedia text); documents: their publishers' copyright")

    def _split_generators(self, dl_manager: Any) -> list[datasets.SplitGenerator]:
        if not self.config.data_dir:
            raise ValueError("WikiRef needs data_dir: the output folder of `wikiref build`")
        from ..process.folders import card_data_files

        files = card_data_files(Path(self.config.data_dir))  # the files the card names, not every file in data/
        names = {"train": datasets.Split.TRAIN, "validation": datasets.Split.VALIDATION, "test": datasets.Split.TEST}
        return [datasets.SplitGenerator(name=names[split], gen_kwargs={"files": [str(p) for p in files[split]]})
                for split in SPLITS if split in files]

    def _generate_examples(self, files: list[str]) -> Iterator[tuple[str, dict[str, Any]]]:
        import pyarrow.parquet as pq

        for file in files:
            for row in pq.read_table(file).to_pylist():
                yield row["id"], row
