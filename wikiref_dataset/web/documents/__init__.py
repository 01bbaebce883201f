"""Stage 2 of the WikiRef build: the pages that statements cite, as documents (title + text + sentences).

Each cited page is handled once: citations are grouped by :func:`~wikiref_dataset.web.urls.normalize_url`, and
one :class:`CitedDocument` per normalized URL lists the ids of the statements citing it. Sources are tried in a fixed
order, each for the URLs the ones before it could not serve (:class:`DocumentSources`): a previous documents folder,
the local WARC index, Common Crawl, then the live web. Its title and main text come from
:func:`~wikiref_dataset.web.extract.extract_pages`. Every URL ends with one status: ``ok``
(fetched), a *missing* reason (``not_archived``: no capture and HTTP off; ``not_found``: 404/410) or a *failed*
reason (the fetch statuses of :class:`~wikiref_dataset.web.http.FetchResult`, ``redirect_not_archived``,
``archive_read_error``, and the extraction reasons ``not_html``, ``no_text``, ``parse_error``).

As datatrove steps (the project's build is a datatrove pipeline): :class:`StatementReader` ->
:class:`FetchCitedDocuments` -> :class:`KeepFetched` (failures go to its exclusion writer, counted by reason) ->
``JsonlWriter``. With several tasks, every task reads all statements and keeps the URLs of its own bucket — by
URL, or by host when HTTP is on so that a host's rate limit holds across tasks — so documents are deduplicated
globally, whatever the number of tasks. :func:`run_documents` builds the WARC index, runs that pipeline with
``LocalPipelineExecutor`` (finished tasks are skipped on rerun) and returns a :class:`DocumentsSummary`.

One concept per module:

* :mod:`.inputs`: the statements read, their cited URLs grouped (one per normalized URL) and dealt to tasks;
* :mod:`.sources`: the sources and their order (:class:`DocumentSources`), and what each gave for a page;
* :mod:`.columnar_join`: the two stages that join every cited URL with Common Crawl's columnar index once, before
  the fetch stage;
* :mod:`.fetch`: the fetch step (:class:`FetchCitedDocuments`): a task's URLs through the sources, downloads
  scheduled across hosts, pages extracted and sentence-split, in URL or crawl order;
* :mod:`.outputs`: what the stage writes (:class:`CitedDocument`; ``documents/`` and ``failed/``) and how a rerun
  takes it up again (:func:`reopen_transient_failures`);
* :mod:`.run`: the stage on its own (:func:`documents_pipeline`, :func:`run_documents`, :class:`DocumentsSummary`).

Their public names are importable from here (``from wikiref_dataset.web.documents import run_documents``).
"""

from ...utils.walk import find_files, walk_files
from .columnar_join import CitedUrlKeys, JoinColumnarIndex, columnar_join_stages
from .fetch import FetchCitedDocuments
from .inputs import (
    STATEMENT_SUFFIXES,
    BucketByCitedUrl,
    StatementReader,
    citation_bucket,
    citation_key,
    group_citations,
    statement_files,
    url_bucket,
)
from .outputs import (
    MISSING_STATUSES,
    RETRY_FOLDER,
    CitedDocument,
    KeepFetched,
    reopen_transient_failures,
    reused_document_files,
)
from .run import DocumentsSummary, documents_pipeline, http_config_of_run, run_documents
from .sources import DocumentSources, check_sources

__all__ = [
    "CitedDocument", "DocumentSources", "DocumentsSummary", "CitedUrlKeys", "FetchCitedDocuments", "JoinColumnarIndex",
    "KeepFetched", "StatementReader", "check_sources", "citation_bucket", "group_citations", "columnar_join_stages",
    "documents_pipeline", "run_documents",
    "MISSING_STATUSES", "RETRY_FOLDER", "STATEMENT_SUFFIXES", "BucketByCitedUrl", "citation_key", "find_files",
    "http_config_of_run", "reopen_transient_failures", "reused_document_files", "statement_files", "url_bucket",
    "walk_files",
]  # fmt: skip
