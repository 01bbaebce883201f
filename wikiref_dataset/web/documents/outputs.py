"""What stage 2 writes: one :class:`CitedDocument` per cited page, ``ok`` ones to ``documents/`` and the others, with
their status, to ``failed/`` (:class:`KeepFetched`); such a folder read back (:func:`reused_document_files`), and its
transient failures reopened so that the next run fetches them again (:func:`reopen_transient_failures`)."""

from __future__ import annotations

import dataclasses
import hashlib
import os
from dataclasses import dataclass, field
from pathlib import Path

from datatrove.data import Document
from datatrove.pipeline.filters.base_filter import BaseFilter

from ...utils.jsonl import iter_json_objects

__all__ = ["MISSING_STATUSES", "RETRY_FOLDER", "CitedDocument", "KeepFetched", "reopen_transient_failures",
           "reused_document_files"]

MISSING_STATUSES = ("not_archived", "not_found")
"""Statuses that mean "no copy of the page exists in the sources used" (the rest of the non-ok ones: failed)."""


@dataclass
class CitedDocument:
    """One cited page (one per normalized URL), fetched or not.

    Args:
        url (`str`): the citation's original URL (`metadata.url`).
        fetch_url (`str`): the URL that was to be downloaded (`metadata.fetch_url`).
        normalized_url (`str`): the dedup key (:func:`normalize_url`).
        source (`str`): `warc` (local WARC files), `cc` (Common Crawl), `http` (live web), or `""` when no source
            answered.
        status (`str`): `ok` or why there is no document (see :mod:`wikiref_dataset.web.documents`).
        title (`str`): the page title.
        text (`str`): the main text, one paragraph per line.
        sentences (`list[str]`): the sentences of `text`.
        capture_date (`str`, *optional*): when the archived capture was made, or the time of the HTTP download
            (ISO 8601 UTC).
        content_type (`str`, *optional*): the page's Content-Type.
        final_url (`str`, *optional*): the URL that answered (after redirects).
        warc_record (`str`, *optional*): `path:offset` of the WARC record used.
        warc_filename (`str`, *optional*): the WARC file of the record: its name for a local file, its path in the
            crawl for Common Crawl (``crawl-data/CC-MAIN-.../warc/....warc.gz``).
        warc_offset (`int`, *optional*), warc_length (`int`, *optional*): where the record lies in it (what an
            HTTP Range request for it needs).
        statement_ids (`list[str]`): ids of the statements citing the page.
        detail (`str`): what went wrong, when something did.
        transient (`bool`): the failure came from the network (a source still failing after its retries: an index
            or archive that did not answer, a live site that timed out or answered 429/5xx); the next run retries
            the page (:func:`reopen_transient_failures`).
        cc_outcome (`str`, *optional*): what Common Crawl gave for the page, when it was asked
            (:data:`~wikiref_dataset.web.commoncrawl.OUTCOMES`).
    """

    url: str
    fetch_url: str
    normalized_url: str
    source: str = ""
    status: str = "not_archived"
    title: str = ""
    text: str = ""
    sentences: list[str] = field(default_factory=list)
    capture_date: str | None = None
    content_type: str | None = None
    final_url: str | None = None
    warc_record: str | None = None
    statement_ids: list[str] = field(default_factory=list)
    detail: str = ""
    warc_filename: str | None = None
    warc_offset: int | None = None
    warc_length: int | None = None
    transient: bool = False
    cc_outcome: str | None = None

    @property
    def document_id(self) -> str:
        """A stable id: the first 20 hex digits of the SHA-1 of the normalized URL."""
        return hashlib.sha1(self.normalized_url.encode("utf-8")).hexdigest()[:20]

    def to_document(self) -> Document:
        """A datatrove Document: `text` is the main text, every other field goes to `metadata`."""
        metadata = {k: v for k, v in dataclasses.asdict(self).items() if k != "text"}
        return Document(text=self.text, id=self.document_id, metadata=metadata)

    @classmethod
    def from_document(cls, document: Document | dict) -> CitedDocument:
        """Back from a Document (or its JSON dict, as JsonlWriter writes it)."""
        if isinstance(document, dict):
            text, metadata = document.get("text", ""), document.get("metadata", {})
        else:
            text, metadata = document.text, document.metadata
        names = {f.name for f in dataclasses.fields(cls)}
        return cls(text=text, **{k: v for k, v in metadata.items() if k in names and k != "text"})


class KeepFetched(BaseFilter):
    """Keeps the documents whose status is `ok`; the others go to the exclusion writer, counted by status."""

    name = "✅ fetched"

    def filter(self, doc: Document) -> bool | tuple[bool, str]:
        status = doc.metadata.get("status", "")
        return True if status == "ok" else (False, status)


def reused_document_files(folder: str | os.PathLike) -> list[Path]:
    """The JSONL files of a documents folder (a `wikiref documents` output folder or a build's
    ``<work>/documents``): ``documents/*.jsonl.gz`` and ``failed/*.jsonl.gz``.

    Raises:
        FileNotFoundError: the folder holds neither `documents/` nor `failed/`.
    """
    root = Path(folder)
    parts = [root / name for name in ("documents", "failed") if (root / name).is_dir()]
    if not parts:
        raise FileNotFoundError(f"{root}: not a documents folder (no documents/ or failed/ in it; give the --out "
                                "folder of `wikiref documents`)")
    return sorted(path for part in parts for path in part.glob("*.jsonl*"))


RETRY_FOLDER = "retry"
"""Under a documents folder: the earlier output of the tasks :func:`reopen_transient_failures` reopened."""


def reopen_transient_failures(output: str | os.PathLike, logs: str | os.PathLike, tasks: int) -> int:
    """Make the next run of the documents stage try again the pages that failed because of the network.

    For every finished task (its completion marker under ``logs/completions``) whose ``failed/<rank>.jsonl.gz`` in
    `output` holds a transient failure (:attr:`CitedDocument.transient`), its two output files are moved to
    ``output/retry/`` and its marker deleted: the task runs again, takes its documents and lasting failures from
    there as they are, and fetches only the transient failures again. Returns the number of pages to retry (0: the
    folder is left as it is)."""
    output, completions = Path(output), Path(logs) / "completions"
    pages = 0
    for rank in range(tasks):
        marker, failed = completions / f"{rank:05d}", output / "failed" / f"{rank:05d}.jsonl.gz"
        if not marker.is_file() or not failed.is_file():
            continue
        transient = sum(bool((record.get("metadata") or {}).get("transient"))
                        for _, record in iter_json_objects(failed, on_error=lambda where, why: None))
        if not transient:
            continue
        for name in ("documents", "failed"):
            source = output / name / f"{rank:05d}.jsonl.gz"
            if source.is_file():
                target = output / RETRY_FOLDER / name / source.name
                target.parent.mkdir(parents=True, exist_ok=True)
                os.replace(source, target)
        marker.unlink()
        pages += transient
    return pages
