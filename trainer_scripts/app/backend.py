"""What the app computes, without Gradio: a model or a dataset loaded from a folder or a Hub id, summaries with every
sentence's score, the comparison with the baselines, and the dataset browser.

Every function here is what a tab of the page calls (:mod:`.ui` only lays them out), so tests drive the app's logic
directly, and a problem with the input raises :class:`AppError` with the message the page shows (an empty query, no
documents, a folder that is not a Q-BERT model or not a dataset, a paste over :data:`MAX_CHARACTERS`, a Hub id that
cannot be reached). Served to others, the load functions and :func:`parse_documents` apply the rules of
:mod:`.public` first (only the allowed folders and Hub ids, only files from Gradio's upload folder), and the model
checks the request's time limit before each batch it scores. The numbers are the project's own: the summary is the registered pipeline's
(``modeling_qbert.pipeline_qfs``, the same call as ``wikiref summarize``), the baselines and the model's comparison
summaries are the evaluation's (``trainer_scripts.duc_evaluation``), and ROUGE is the project's engine with the DUC
settings, or the benchmark's own scoring for QMSum, SQuALITY and Debatepedia (``wikiref_dataset.qfs.scoring``).
"""

from __future__ import annotations

import gzip
import html
import json
import re
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .errors import AppError
from .public import AllowedSources, PublicSettings, check_time, check_uploads

MAX_CHARACTERS = 300_000
"""The most text the Summarize tab scores at once (all documents together): about a DUC cluster and a half (a DUC
2006 cluster holds 25 documents, 110,000-190,000 characters), scored in under a minute on two CPU cores. Larger
inputs belong to ``wikiref summarize`` or ``evaluate_duc.py``."""
MAX_DOCUMENTS = 100
DOCUMENT_SEPARATOR = "---"
"""A line holding only this separates two documents in the Summarize tab's text box."""
PAGE_SIZE = 20
SELECTIONS = ("auto", "wikiref", "duc", "mmr", "ilp")
SYSTEMS = ("Q-BERT", "QUERY-SIM", "LEAD", "ORACLE")
DATASET_KINDS = ("wikiref", "psg2sum", "aquamuse", "duc", "benchmark")


# ---- the model ------------------------------------------------------------------------------------------------------


@dataclass
class LoadedModel:
    """A Q-BERT model ready to summarize: ``source`` as given (a folder or a Hub id) and its pipeline."""

    source: str
    pipeline: Any

    @property
    def config(self) -> Any:
        return self.pipeline.model.config

    def describe(self) -> str:
        config = self.config
        return (f"Q-BERT from `{self.source}`: {config.pooling} pooling, {config.objective} objective, "
                f"cluster rule {getattr(config, 'cluster_selection', 'duc')}")


def load_model(source: str, allowed: AllowedSources | None = None) -> LoadedModel:
    """The Q-BERT pipeline of a saved folder, or of a Hub repository (downloaded once into the Hub cache).

    Args:
        source (`str`): a saved Q-BERT folder or a Hub model id.
        allowed (`AllowedSources`, *optional*): in an app served to others, what the Model box may load; ``source``
            is checked against it before anything is read or downloaded, and the allowed entry is what loads.

    Raises:
        AppError: ``source`` is not allowed, the folder is not a Q-BERT model, or the Hub id cannot be reached or holds
            no Q-BERT model.
    """
    if allowed is not None:
        source = allowed.admit(source, "model")
    import modeling_qbert

    try:
        source = modeling_qbert.check_model_source(source)
    except ValueError as error:
        raise AppError(str(error)) from None
    folder = Path(source)

    try:
        loaded = modeling_qbert.load_pipeline(source)
    except (OSError, ValueError) as error:
        where = "cannot load the Q-BERT model of this folder" if folder.exists() else "cannot be reached on the Hub"
        raise AppError(f"{source}: {where} ({_one_line(error)})") from None
    if getattr(loaded.model.config, "model_type", None) != "qbert":
        raise AppError(f"{source}: not a Q-BERT model (model_type {loaded.model.config.model_type!r})")
    loaded.model.register_forward_pre_hook(check_time)  # a request's time limit stops it at its next batch
    return LoadedModel(source, loaded)


def _one_line(error: BaseException) -> str:
    return " ".join(str(error).split())[:300]


# ---- Summarize ------------------------------------------------------------------------------------------------------


def parse_query(text: str | Sequence[str] | None) -> list[str]:
    """The query's levels: one per line, or separated by ``>`` (``Lake Varnholm > Recreation``).

    Raises:
        AppError: the query is empty.
    """
    if isinstance(text, (list, tuple)):
        levels = [str(level).strip() for level in text]
    else:
        lines = [line.strip() for line in (text or "").splitlines()]
        levels = [level.strip() for line in lines for level in line.split(" > ")]
    levels = [level for level in levels if level]
    if not levels:
        raise AppError("the query is empty: type a query (levels on separate lines or separated by ' > ')")
    return levels


def parse_documents(text: str | None, files: Sequence[str | Path] = (), sentences_per_line: bool = False,
                    public: PublicSettings | None = None) -> list[str | list[str]]:
    """The documents of the Summarize tab: the text box's blocks (separated by a line holding only
    :data:`DOCUMENT_SEPARATOR`) and each uploaded ``.txt`` file. With ``sentences_per_line`` every non-empty line is
    one sentence (as a dataset example gives them); otherwise each document is split with the project's splitter.
    In an app served to others (``public``), the files are checked before any is read: only files in Gradio's upload
    folder, and at most its number and bytes of uploads.

    Raises:
        AppError: no document, more than :data:`MAX_DOCUMENTS`, more than :data:`MAX_CHARACTERS`, a file that is not
            UTF-8 text, or (``public``) a file not uploaded or over the upload limits.
    """
    if public is not None and files:
        files = check_uploads(files, public.upload_folder, public.max_uploads, public.max_upload_bytes)
    texts = [block for block in re.split(rf"(?m)^[ \t]*{re.escape(DOCUMENT_SEPARATOR)}[ \t]*$", text or "")
             if block.strip()]
    for name in files or ():
        path = Path(name)
        try:
            texts.append(path.read_text(encoding="utf-8"))
        except UnicodeDecodeError as error:
            raise AppError(f"{path.name}: not UTF-8 text ({error.reason} at byte {error.start})") from None
        except OSError as error:
            raise AppError(f"{path.name}: cannot read ({error.strerror})") from None
    texts = [item for item in texts if item.strip()]
    if not texts:
        raise AppError("no documents: paste text or upload .txt files (one document per file; in the text box, a "
                       f"line holding only {DOCUMENT_SEPARATOR} separates documents)")
    if len(texts) > MAX_DOCUMENTS:
        raise AppError(f"{len(texts)} documents: the app scores at most {MAX_DOCUMENTS} at once")
    size = sum(len(item) for item in texts)
    if size > MAX_CHARACTERS:
        raise AppError(f"the documents hold {size:,} characters: the app scores at most {MAX_CHARACTERS:,} at once "
                       "(about a DUC cluster and a half); use `wikiref summarize` for more")
    if sentences_per_line:
        return [[line.strip() for line in item.splitlines() if line.strip()] for item in texts]
    return [item.strip() for item in texts]


@dataclass
class SummaryView:
    """A summary and how it was chosen: the pipeline's output (``summary``, ``selected``, every ``sentences`` entry
    with its document, position and score, the ``selection`` rule), the documents shaded by score as HTML, and the
    JSON that the download gives."""

    result: dict[str, Any]
    html: str
    json_path: str


def summarize(model: LoadedModel, query: str | Sequence[str], documents: Sequence[str | list[str]],
              max_words: int = 250, selection: str = "auto", tradeoff: float | None = None,
              candidates: int | None = None, threshold: float | None = None) -> SummaryView:
    """The registered pipeline's summary of ``documents`` for ``query`` (the same call and options as ``wikiref
    summarize``), with the HTML view and the JSON file of the scores.

    Raises:
        AppError: a bad setting, or raw text without the sentence splitter (the ``build`` extra).
    """
    levels = parse_query(query)
    if selection not in SELECTIONS:
        raise AppError(f"unknown selection rule {selection!r}; one of {', '.join(SELECTIONS)}")
    if not isinstance(max_words, (int, float)) or max_words < 1:
        raise AppError(f"the word budget must be a positive number, got {max_words!r}")
    options: dict[str, Any] = {"selection": selection, "max_words": int(max_words)}
    for name, value in (("tradeoff", tradeoff), ("candidates", candidates), ("threshold", threshold)):
        if value is not None:
            options[name] = int(value) if name == "candidates" else float(value)
    try:
        result = model.pipeline(query=levels, documents=list(documents), **options)
    except ImportError as error:  # raw text needs the project's sentence splitter
        raise AppError(str(error)) from None
    return SummaryView(result, documents_html(result, len(documents)), _write_json(result, levels))


def _write_json(result: Mapping[str, Any], query: list[str]) -> str:
    handle = tempfile.NamedTemporaryFile("w", suffix=".json", prefix="qbert-summary-", delete=False, encoding="utf-8")
    with handle:
        json.dump({"query": query, **result}, handle, ensure_ascii=False, indent=1)
    return handle.name


def documents_html(result: Mapping[str, Any], n_documents: int) -> str:
    """Every document, each sentence shaded by its score (min-max over the input) and the chosen ones marked."""
    sentences = result["sentences"]
    chosen = {(item["document"], item["sentence"]) for item in result["selected"]}
    scores = [float(item["score"]) for item in sentences]
    low, high = (min(scores), max(scores)) if scores else (0.0, 1.0)
    parts = ['<div class="qfs-documents">']
    for document in range(n_documents):
        parts.append(f'<h4>Document {document + 1}</h4><p>')
        for item in (item for item in sentences if item["document"] == document):
            share = (float(item["score"]) - low) / (high - low) if high > low else 0.0
            picked = (item["document"], item["sentence"]) in chosen
            style = f"background: rgba(255, 165, 0, {0.08 + 0.6 * share:.2f});"
            if picked:
                style += " outline: 2px solid #1f6feb; font-weight: 600;"
            parts.append(f'<span class="{"qfs-chosen" if picked else "qfs-sentence"}" style="{style}" '
                         f'title="score {float(item["score"]):.4f}">{html.escape(item["text"])}</span> ')
        parts.append("</p>")
    parts.append("</div>")
    return "".join(parts)


# ---- datasets -------------------------------------------------------------------------------------------------------


@dataclass
class LoadedDataset:
    """A built or converted dataset: its ``kind`` (:data:`DATASET_KINDS`), its splits, and its folder when local."""

    source: str
    kind: str
    splits: dict[str, Any]
    folder: Path | None = None
    _search_cache: dict[str, list[str]] = field(default_factory=dict, repr=False)

    def split_names(self) -> list[str]:
        return list(self.splits)

    def rows(self, split: str) -> Any:
        if split not in self.splits:
            raise AppError(f"no split {split!r} in {self.source}; splits: {', '.join(self.splits)}")
        return self.splits[split]


def load_dataset(source: str, allowed: AllowedSources | None = None) -> LoadedDataset:
    """A dataset folder the project wrote (WikiRef, PSG2SUM, AQuaMuSe, a converted DUC year or benchmark) or a Hub
    dataset id.

    Args:
        source (`str`): a dataset folder or a Hub dataset id.
        allowed (`AllowedSources`, *optional*): in an app served to others, what the Dataset box may load; ``source``
            is checked against it before anything is read, listed or downloaded, and the allowed entry is what loads.

    Raises:
        AppError: ``source`` is not allowed, not such a dataset, or the Hub id cannot be reached.
    """
    if allowed is not None:
        source = allowed.admit(source, "dataset")
    source = str(source).strip()
    if not source:
        raise AppError("no dataset given: pass a dataset folder or a Hub id")
    folder = Path(source)
    import datasets

    if folder.exists():
        if not folder.is_dir() or not any(folder.rglob("*.parquet")):
            raise AppError(f"{folder}: not a dataset folder (no Parquet files); pass a folder written by wikiref build, "
                           "psg2sum, aquamuse, duc convert or qfs convert")
        from wikiref_dataset.process.folders import load_dataset_folder

        loader, where = (lambda: load_dataset_folder(folder)), "cannot be loaded"
    elif re.fullmatch(r"[\w.-]+/[\w.-]+", source):
        loader, where = (lambda: datasets.load_dataset(source)), "cannot be reached on the Hub"
    else:
        raise AppError(f"{source}: no such folder, and not a Hub id (org/name)")
    try:
        loaded = loader()
    except Exception as error:  # datasets raises many kinds (FileNotFoundError, DatasetNotFoundError, ConnectionError)
        raise AppError(f"{source}: {where} ({_one_line(error)})") from None
    splits = dict(loaded) if isinstance(loaded, Mapping) else {"train": loaded}
    columns = set(next(iter(splits.values())).column_names) if splits else set()
    return LoadedDataset(source, dataset_kind(columns, source), splits, folder if folder.is_dir() else None)


def dataset_kind(columns: set[str], source: str = "dataset") -> str:
    """Which of :data:`DATASET_KINDS` a dataset is, from its columns.

    Raises:
        AppError: none of them.
    """
    if {"document", "oracle_label", "summary"} <= columns:
        return "wikiref"
    if {"passage_sentences", "summary"} <= columns:
        return "psg2sum"
    if {"target", "query"} <= columns and ("documents" in columns or "input_urls" in columns):
        return "aquamuse"
    if {"documents", "references", "query"} <= columns:
        return "benchmark" if "benchmark" in columns else "duc"
    raise AppError(f"{source}: not a WikiRef, PSG2SUM, AQuaMuSe, DUC or benchmark dataset (columns: "
                   f"{', '.join(sorted(columns)) or 'none'})")


def query_text(row: Mapping[str, Any], kind: str) -> str:
    """The row's query as one line (levels joined by ``>``)."""
    return _query_line(row.get(_query_column(kind)))


def _query_column(kind: str) -> str:
    return "title" if kind == "psg2sum" else "query"


def _query_line(value: Any) -> str:
    return " > ".join(value) if isinstance(value, (list, tuple)) else str(value or "")


def search(dataset: LoadedDataset, split: str, text: str = "", page: int = 1) -> tuple[list[list[Any]], int]:
    """One page (:data:`PAGE_SIZE` rows: index, query, summary's start) of the examples whose query holds ``text``
    (case-insensitive; every example when empty), and how many pages there are. The split's queries are read once,
    as one column (a WikiRef row's document or a DUC cluster's 25 is not decoded to search)."""
    rows = dataset.rows(split)
    if split not in dataset._search_cache:
        column = _query_column(dataset.kind)
        values = rows[column] if hasattr(rows, "column_names") else [row.get(column) for row in rows]
        dataset._search_cache[split] = [_query_line(value).lower() for value in values]
    needle = (text or "").strip().lower()
    found = [index for index, query in enumerate(dataset._search_cache[split]) if needle in query]
    pages = max(1, -(-len(found) // PAGE_SIZE))
    page = min(max(1, int(page or 1)), pages)
    shown = found[(page - 1) * PAGE_SIZE: page * PAGE_SIZE]
    return [[index, query_text(rows[index], dataset.kind), _summary_start(rows[index], dataset.kind)]
            for index in shown], pages


def _summary_start(row: Mapping[str, Any], kind: str, size: int = 120) -> str:
    text = str(row.get("target") if kind == "aquamuse" else
               (row.get("references") or [""])[0] if kind in ("duc", "benchmark") else row.get("summary") or "")
    text = " ".join(text.split())
    return text if len(text) <= size else text[: size - 1] + "…"


def example(dataset: LoadedDataset, split: str, index: int) -> dict[str, Any]:
    """One example as the Explore tab shows it: ``markdown`` (query, summary, provenance, split) and ``html`` (the
    document, oracle-labelled sentences highlighted where the dataset has labels).

    Raises:
        AppError: no such example.
    """
    rows = dataset.rows(split)
    if not isinstance(index, (int, float)) or not 0 <= int(index) < len(rows):
        raise AppError(f"no example {index!r} in {split} (it holds {len(rows):,})")
    row = rows[int(index)]
    render = {"wikiref": _wikiref_example, "psg2sum": _psg2sum_example, "aquamuse": _aquamuse_example}.get(
        dataset.kind, _cluster_example)
    markdown, body = render(row)
    return {"markdown": f"**Split:** {split} · **example** {int(index)}\n\n" + markdown, "html": body, "row": row}


def _provenance(row: Mapping[str, Any], names: Sequence[str]) -> str:
    lines = [f"- **{name}:** {row[name]}" for name in names if row.get(name) not in (None, "", [])]
    return "\n".join(lines)


def _wikiref_example(row: Mapping[str, Any]) -> tuple[str, str]:
    markdown = (f"**Query:** {' > '.join(row['query'])}\n\n**Summary (the cited statement):** {row['summary']}\n\n"
                f"**Oracle ROUGE-2 recall:** {float(row.get('oracle_rouge2_recall') or 0):.3f}\n\n**Provenance**\n\n"
                + _provenance(row, ("wiki_title", "section_path", "url", "final_url", "archive_url", "citation_type",
                                    "document_source", "capture_date", "warc_filename", "warc_offset", "warc_length",
                                    "wiki_page_id", "wiki_revision_id")))
    labels = list(row.get("oracle_label") or [])
    parts = [f"<h4>{html.escape(str(row.get('document_title') or 'Document'))}</h4><p>"]
    for position, sentence in enumerate(row["document"]):
        labelled = position < len(labels) and labels[position] == 1
        style = "background: #c6f6d5; outline: 2px solid #2f855a;" if labelled else ""
        parts.append(f'<span class="{"oracle" if labelled else "sentence"}" style="{style}">'
                     f"{html.escape(sentence)}</span> ")
    parts.append("</p><p><em>Highlighted: the oracle's sentences (label 1).</em></p>")
    return markdown, "".join(parts)


def _psg2sum_example(row: Mapping[str, Any]) -> tuple[str, str]:
    markdown = (f"**Article:** {row['title']}\n\n**Summary (the lead sentence added):** {row['summary']}\n\n"
                f"**Score (λ):** {float(row.get('score') or 0):.3f}\n\n**Provenance**\n\n"
                + _provenance(row, ("page_id", "revision_id", "parent_revision_id", "timestamp")))
    body = "<h4>Passage</h4><p>" + " ".join(html.escape(s) for s in row.get("passage_sentences") or []) + "</p>"
    return markdown, body


def _aquamuse_example(row: Mapping[str, Any]) -> tuple[str, str]:
    markdown = f"**Query:** {row['query']}\n\n**Summary (the long answer):** {row['target']}\n\n"
    if row.get("summary_recall") is not None:
        markdown += f"**Summary recall:** {float(row['summary_recall']):.3f}\n\n"
    documents = row.get("documents") or []
    markdown += "**Provenance**\n\n" + "\n".join(f"- document {k + 1}: {doc.get('url', '')}"
                                                   for k, doc in enumerate(documents))
    matched = {(m["document"], m["document_sentence"]) for m in row.get("matches") or []}
    parts = []
    for k, document in enumerate(documents):
        parts.append(f"<h4>Document {k + 1} ({html.escape(str(document.get('url', '')))})</h4>"
                     f"<p>{html.escape(str(document.get('text', ''))[:20000])}</p>")
    if matched:
        parts.append(f"<p><em>{len(matched)} document sentences matched answer sentences.</em></p>")
    return markdown, "".join(parts)


def _cluster_example(row: Mapping[str, Any]) -> tuple[str, str]:
    query = row["query"]
    markdown = f"**Topic:** {row.get('topic_id', '')}\n\n**Query:** {' > '.join(query)}\n\n"
    markdown += "**Reference summaries**\n\n" + "\n\n".join(f"{k + 1}. {' '.join(str(ref).split())}"
                                                          for k, ref in enumerate(row.get("references") or []))
    parts = []
    for k, document in enumerate(row["documents"]):
        title = " · ".join(str(document.get(name)) for name in ("docno", "date", "headline") if document.get(name))
        parts.append(f"<h4>Document {k + 1}: {html.escape(title)}</h4><p>"
                     + " ".join(html.escape(s) for s in document["sentences"]) + "</p>")
    return markdown, "".join(parts)


def example_input(dataset: LoadedDataset, split: str, index: int) -> tuple[str, str]:
    """A dataset example as the Summarize tab's input: the query, and its documents one sentence per line
    (separated by :data:`DOCUMENT_SEPARATOR` lines), so the model scores the dataset's own sentences."""
    row = example(dataset, split, index)["row"]
    kind = dataset.kind
    if kind == "wikiref":
        documents = [list(row["document"])]
    elif kind == "psg2sum":
        documents = [list(row["passage_sentences"])]
    elif kind == "aquamuse":
        documents = [[line for line in str(doc.get("text", "")).splitlines() if line.strip()]
                     for doc in row.get("documents") or []]
    else:
        documents = [list(document["sentences"]) for document in row["documents"]]
    text = f"\n{DOCUMENT_SEPARATOR}\n".join("\n".join(sentences) for sentences in documents if sentences)
    return query_text(row, kind), text


def card(dataset: LoadedDataset) -> tuple[str, list[str]]:
    """The dataset card's text (without its YAML front matter) and its figures' paths (local folders only)."""
    if dataset.folder is None:
        return (f"`{dataset.source}` was loaded from the Hub; its card is on the dataset's page.", [])
    readme = dataset.folder / "README.md"
    text = readme.read_text(encoding="utf-8") if readme.is_file() else "(no README.md card in the folder)"
    text = re.sub(r"\A---\n.*?\n---\n", "", text, flags=re.S)
    text = re.sub(r"!\[[^\]]*\]\([^)]*\)", "", text)  # the figures are shown as images beside it
    figures = sorted(str(path) for path in (dataset.folder / "figures").glob("*.png"))
    return text, figures


def dropped_statements(dataset: LoadedDataset, limit: int = 500) -> list[list[str]]:
    """The statements the build dropped, each with the filter that dropped it, read from the build's work folder
    beside the dataset (``<folder>.work/rejects/<filter>/*.jsonl.gz``); [] when there is none."""
    if dataset.folder is None:
        return []
    rejects = dataset.folder.with_name(dataset.folder.name + ".work") / "rejects"
    found: list[list[str]] = []
    for part in sorted(rejects.glob("*/*.jsonl*")) if rejects.is_dir() else []:
        opener = gzip.open if part.suffix == ".gz" else open
        with opener(part, "rt", encoding="utf-8") as handle:
            for line in handle:
                record = json.loads(line)
                metadata = record.get("metadata") or {}
                reason = metadata.get("filter_reason") or record.get("reason") or ""
                query = metadata.get("query")
                found.append([part.parent.name + (f" ({reason})" if reason and reason != part.parent.name else ""),
                              " > ".join(query) if isinstance(query, list) else str(query or ""),
                              str(record.get("text") or ""), str(metadata.get("url") or record.get("url") or "")])
                if len(found) >= limit:
                    return found
    return found


# ---- Compare --------------------------------------------------------------------------------------------------------


COMPARE_HEADERS = ["system", "rule", "ROUGE-1", "ROUGE-2", "ROUGE-SU4"]
"""The Compare tab's table columns: each row's system and the rule its sentences were chosen with."""


def compare(model: LoadedModel, row: Mapping[str, Any]) -> dict[str, Any]:
    """Q-BERT, QUERY-SIM, LEAD and ORACLE on one cluster with references: each system's summary (as the evaluation
    makes it: ``evaluate_duc.py`` / ``evaluate_qfs.py``), the sentences it picked, and its ROUGE-1/2/SU4 against the
    references (the official DUC settings; a benchmark row is scored with the benchmark's own scoring). When the
    model's rule (``config.cluster_selection``) is not the paper's greedy one, QUERY-SIM and LEAD are also chosen by
    it (``QUERY-SIM (ILP)``) and the model by the greedy rule (``Q-BERT (greedy)``, from the same scores): the same
    rule for every system, each row naming its rule.

    Raises:
        AppError: the row has no references or no documents.
    """
    from trainer_scripts.duc_evaluation import baseline_rows, compared_rules, model_rows, model_rule
    from wikiref_dataset.baselines import rule_label

    if not row.get("references"):
        raise AppError("this example has no reference summaries: Compare needs a DUC or benchmark row")
    if not row.get("documents"):
        raise AppError("this example has no documents")
    benchmark = row.get("benchmark") or None
    scoring = None
    if benchmark:
        from wikiref_dataset.qfs.scoring import scoring_for

        scoring = scoring_for(str(benchmark))
    budget = (lambda item: scoring.budget(item)) if scoring else None
    rows = [dict(row, topic_id=str(row.get("topic_id") or "example"))]
    topic = rows[0]["topic_id"]
    rules = compared_rules(model_rule=model_rule(model.pipeline))
    found = model_rows(model.pipeline, "Q-BERT", rows, rules, budget=budget)
    found.extend(baseline_rows(["query-sim", "lead", "oracle"], rows, rules, budget=budget))
    summaries = {name: by_topic[topic] for name, by_topic in found.summaries.items()}
    table = [[name, rule_label(found.rules[name]), *_rouge_cells(summary, list(row["references"]), scoring)]
             for name, summary in summaries.items()]
    return {"table": table, "headers": list(COMPARE_HEADERS),
            "value": "F1" if scoring and scoring.value == "f" else "recall",
            "settings": scoring.describe() if scoring else _duc_settings(),
            "summaries": summaries, "rules": dict(found.rules), "html": _picks_html(row, summaries)}


def _duc_settings() -> str:
    from trainer_scripts.duc_evaluation import official_settings

    return f"ROUGE-1.5.5 {official_settings()}, recall (the official DUC settings)"


def _rouge_cells(summary: str, references: list[str], scoring: Any) -> list[str]:
    from wikiref_dataset.rouge import rouge

    if scoring is not None:
        averages = scoring.score([summary], [references]).averages
        value = scoring.value
    else:
        averages = rouge([summary], [references]).averages
        value = "recall"
    cells = []
    for measure in ("rouge_1", "rouge_2", "rouge_su4"):
        score = averages.get(measure)
        cells.append(f"{100 * getattr(score, value):.2f}" if score is not None else "—")
    return cells


def _picks_html(row: Mapping[str, Any], summaries: Mapping[str, str]) -> str:
    parts = []
    for name, summary in summaries.items():
        lines = [line for line in summary.split("\n") if line.strip()]
        parts.append(f"<h4>{html.escape(name)} ({sum(len(line.split()) for line in lines)} words)</h4><ol>"
                     + "".join(f"<li>{html.escape(line)}</li>" for line in lines) + "</ol>")
    parts.append("<h4>Reference summaries</h4><ol>" + "".join(
        f"<li>{html.escape(' '.join(str(ref).split()))}</li>" for ref in row["references"]) + "</ol>")
    return "".join(parts)


__all__ = ["AppError", "LoadedModel", "LoadedDataset", "SummaryView", "load_model", "load_dataset", "parse_query",
           "parse_documents", "summarize", "documents_html", "dataset_kind", "search", "example", "example_input",
           "card", "dropped_statements", "compare", "query_text", "COMPARE_HEADERS", "MAX_CHARACTERS", "MAX_DOCUMENTS",
           "DOCUMENT_SEPARATOR", "SELECTIONS", "SYSTEMS", "DATASET_KINDS", "PAGE_SIZE"]
