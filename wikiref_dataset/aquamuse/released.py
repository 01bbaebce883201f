"""The released AQuaMuSe files: TFRecord shards of ``tf.train.Example`` with ``query``, ``input_urls`` and ``target``
(google-research-datasets/aquamuse), read without TensorFlow; and the same examples decoded to JSON lines.

The release is laid out as ``v2/{abstractive,extractive}/{train,dev,test}/release-set-tf-examples-000NN-of-000MM``
(no extension). A file is recognised by its content, never its name: a TFRecord shard when its first 12 bytes are a
length and that length's masked CRC-32C (a 1 in 2^32 accident otherwise), else JSON lines when it starts with ``{``,
else an error naming the file. (Looking at the first byte alone read every shard whose first record's length ends in
0x7B, ``{``, as JSON lines: the "'utf-8' codec can't decode" failure.) A shard damaged further on (a CRC mismatch,
a truncated record) keeps the records before the damage and is reported. The split comes from a word of the file
name (``v2_abstractive_dev.jsonl``) or else the nearest folder named ``train``, ``dev`` (-> ``validation``),
``validation`` or ``test``; the variant likewise from ``abstractive``/``extractive``. The records carry no variant of
their own (both folders hold the same three features), so the folder is the only signal; a file whose path names
none is read as train / abstractive and counted. The same record (query, URLs and target) read twice in one variant
is kept once and counted.

Libraries, measured on a 5,000-record shard of the real dev examples (5.6 MB, one core): CRC-32C of every payload
takes 0.41 s with the table-driven pure-Python loop this module had, 0.7 ms with ``google-crc32c`` or ``crc32c``
(identical values on every record); ``google-crc32c`` is used (Apache-2.0 like this project, wheels for CPython
3.10-3.13 on Linux, macOS and Windows; ``crc32c`` is LGPL-2.1 for the same speed). The ``tfrecord`` package is not
used: its reader checks neither CRC (a flipped payload byte reads as 5,000 good records), stops a truncated shard
with a bare ``RuntimeError`` naming neither file nor offset, and takes a JSON-lines file's first bytes for a length
it then allocates (``MemoryError``); its ``tf.train.Example`` parser needs ``protobuf`` and saves 40 ms per 5,000
records (33 ms against 73 ms for the decoder below). So the framing (four fields: ``uint64`` length, masked CRC-32C
of the length, the payload, masked CRC-32C of the payload) and the ``tf.train.Example`` decoder (three nested
length-delimited messages: ``Example.features`` -> ``map<string, Feature>`` entries ->
``Feature.bytes_list|float_list|int64_list``) stay hand-written.

``input_urls`` is one string of URLs joined by the literal ``<EOD>``. The release holds URLs only: where those pages
are in the user's WARC files (Common Crawl 2017-26 for the release), :func:`fill_documents` extracts them with the
WikiRef document extractor.
"""

from __future__ import annotations

import gzip
import hashlib
import re
import struct
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

import google_crc32c

from ..utils.jsonl import GZIP_MAGIC, iter_json_objects
from ..utils.walk import walk_files

__all__ = [
    "EOD", "SPLIT_NAMES", "VARIANTS", "ReleasedDocument", "ReleasedExample", "ReleasedFile", "ReleasedRead",
    "TFRecordError", "crc32c", "decode_example", "fill_documents", "iter_tfrecords", "read_release", "read_released",
    "released_files", "released_format",
]  # fmt: skip

EOD = "<EOD>"
"""Separator of the URLs in ``input_urls``."""

SPLIT_NAMES = {"train": "train", "dev": "validation", "validation": "validation", "test": "test"}
"""The release's split folder names (and the words of a file name) -> the dataset's split."""

VARIANTS = ("abstractive", "extractive")
"""The release's variant folders, the dataset folders' names."""


class TFRecordError(ValueError):
    """A TFRecord file or a ``tf.train.Example`` in it is malformed; the message names the file, the record and
    the problem."""


def crc32c(data: bytes) -> int:
    """CRC-32C (Castagnoli polynomial, as TFRecord uses) of ``data``."""
    return google_crc32c.value(data)


def _masked_crc(data: bytes) -> int:
    crc = crc32c(data)
    return (((crc >> 15) | (crc << 17)) + 0xA282EAD8) & 0xFFFFFFFF


def _open_binary(path: Path) -> IO[bytes]:
    """``path`` for reading bytes, decompressed when it is gzip (by its magic bytes)."""
    with open(path, "rb") as probe:
        gzipped = probe.read(2) == GZIP_MAGIC
    return gzip.open(path, "rb") if gzipped else open(path, "rb")


def released_format(path: str | Path) -> str:
    """``"tfrecord"`` when the file starts with TFRecord framing (a length and its masked CRC-32C; an empty file is
    an empty shard), ``"jsonl"`` when it starts with ``{``.

    Raises:
        TFRecordError: neither, naming the file.
    """
    path = Path(path)
    try:
        with _open_binary(path) as handle:
            header = handle.read(12)
    except (OSError, EOFError) as error:  # a damaged gzip stream
        raise TFRecordError(f"{path}: unreadable ({error})") from None
    if not header or (len(header) == 12 and _masked_crc(header[:8]) == struct.unpack("<I", header[8:])[0]):
        return "tfrecord"
    if header.lstrip()[:1] == b"{":
        return "jsonl"
    raise TFRecordError(f"{path}: neither a TFRecord shard (its first 12 bytes are not a length and its CRC-32C) nor "
                        f"JSON lines (it does not start with '{{')")


def iter_tfrecords(path: str | Path, verify: bool = True) -> Iterator[bytes]:
    """The payloads of a TFRecord file (gzip-compressed files are recognised by their magic bytes).

    Raises:
        TFRecordError: truncated framing or a CRC mismatch, naming the file, the record number and the offset.
    """
    path = Path(path)
    with _open_binary(path) as handle:
        number, offset = 0, 0
        while True:
            where = f"{path}: record {number} at byte {offset}"
            try:
                header = handle.read(12)
                if not header:
                    return
                if len(header) < 12:
                    raise TFRecordError(f"{where}: truncated length header ({len(header)} of 12 bytes)")
                length, length_crc = struct.unpack("<QI", header)
                if verify and _masked_crc(header[:8]) != length_crc:
                    raise TFRecordError(f"{where}: length CRC mismatch (not a TFRecord file, or corrupted)")
                payload = handle.read(length)
                footer = handle.read(4)
            except (OSError, EOFError) as error:  # a truncated or damaged gzip stream
                raise TFRecordError(f"{where}: unreadable ({error})") from None
            if len(payload) < length or len(footer) < 4:
                raise TFRecordError(f"{where}: truncated payload ({len(payload)} of {length} bytes)")
            if verify and _masked_crc(payload) != struct.unpack("<I", footer)[0]:
                raise TFRecordError(f"{where}: payload CRC mismatch")
            yield payload
            number += 1
            offset += 16 + length


def _varint(data: bytes, position: int) -> tuple[int, int]:
    result, shift = 0, 0
    while True:
        if position >= len(data):
            raise ValueError("truncated varint")
        byte = data[position]
        position += 1
        result |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return result, position
        shift += 7
        if shift > 63:
            raise ValueError("varint longer than 10 bytes")


def _fields(data: bytes) -> Iterator[tuple[int, int, Any]]:
    """(field number, wire type, value) of a protobuf message: ints for varints, bytes for length-delimited."""
    position = 0
    while position < len(data):
        key, position = _varint(data, position)
        number, wire = key >> 3, key & 7
        if wire == 0:
            value, position = _varint(data, position)
        elif wire == 2:
            length, position = _varint(data, position)
            if position + length > len(data):
                raise ValueError(f"field {number} runs past the end of the message")
            value, position = data[position:position + length], position + length
        elif wire == 1:
            value, position = data[position:position + 8], position + 8
        elif wire == 5:
            value, position = data[position:position + 4], position + 4
        else:
            raise ValueError(f"unsupported wire type {wire} for field {number}")
        yield number, wire, value


def _feature_values(data: bytes) -> list[Any]:
    """The values of a ``tf.train.Feature``: bytes (``bytes_list``), floats (``float_list``) or ints."""
    for kind, _, payload in _fields(data):
        values: list[Any] = []
        for number, wire, value in _fields(payload):
            if number != 1:
                continue
            if kind == 1:
                values.append(value)
            elif kind == 2:
                values.extend(struct.unpack(f"<{len(value) // 4}f", value) if wire == 2 else struct.unpack("<f", value))
            elif kind == 3:
                if wire == 2:
                    position = 0
                    while position < len(value):
                        item, position = _varint(value, position)
                        values.append(item - (1 << 64) if item >= 1 << 63 else item)
                else:
                    values.append(value - (1 << 64) if value >= 1 << 63 else value)
        return values
    return []


def decode_example(data: bytes) -> dict[str, list[Any]]:
    """A serialized ``tf.train.Example`` as ``{feature name: values}`` (bytes, floats or ints).

    Raises:
        ValueError: the bytes are not a well-formed protobuf message.
    """
    features: dict[str, list[Any]] = {}
    for number, _, payload in _fields(data):
        if number != 1:  # Example.features
            continue
        for entry_number, _, entry in _fields(payload):
            if entry_number != 1:  # Features.feature (map entry)
                continue
            name, value = "", b""
            for key, _, item in _fields(entry):
                if key == 1:
                    name = item.decode("utf-8")
                elif key == 2:
                    value = item
            features[name] = _feature_values(value)
    return features


@dataclass
class ReleasedDocument:
    """One input document of a released example: its URL and, once found in a WARC file, its text."""

    url: str
    text: str = ""
    title: str = ""
    sentences: list[str] = field(default_factory=list)
    status: str = "not_looked_up"


@dataclass
class ReleasedExample:
    """A released AQuaMuSe example.

    Args:
        id (`str`): sha1 of query and target (the release has no ids).
        query (`str`), target (`str`): the NQ question and its long answer.
        documents (`list[ReleasedDocument]`): the input documents, URL first.
        source (`str`): ``file:record`` it was read from.
    """

    id: str
    query: str
    target: str
    documents: list[ReleasedDocument]
    source: str = ""

    @classmethod
    def from_record(cls, record: dict[str, Any], source: str = "") -> ReleasedExample:
        """From ``{query, target, input_urls}`` values: strings, bytes, or one-element lists of them (the JSON
        decoding of the TFRecord features). Raises ValueError naming ``source`` when a field is missing."""
        def single(name: str, required: bool = True) -> str:
            value = record.get(name)
            if isinstance(value, list):
                if len(value) > 1:
                    raise ValueError(f"{source}: '{name}' holds {len(value)} values, expected one")
                value = value[0] if value else None
            if isinstance(value, bytes):
                value = value.decode("utf-8", errors="replace")
            if value is None and not required:
                return ""
            if not isinstance(value, str):
                raise ValueError(f"{source}: '{name}' must be a string, got {type(value).__name__}")
            return value.strip()

        query, target = single("query"), single("target")
        urls = [url.strip() for url in single("input_urls", required=False).split(EOD) if url.strip()]
        identifier = hashlib.sha1(f"{query}\x00{target}".encode()).hexdigest()[:16]
        return cls(id=identifier, query=query, target=target, documents=[ReleasedDocument(url) for url in urls],
                   source=source)


def read_released(path: str | Path, verify: bool = True) -> Iterator[ReleasedExample]:
    """The examples of a released file: a TFRecord shard or its JSON-lines decoding (by content, see
    :func:`released_format`).

    Raises:
        TFRecordError: neither format, damaged framing (after the records before it), or a record that is not a
            ``tf.train.Example``; naming the file and the record.
        ValueError: a bad JSON line or a record without ``query``/``target``, naming the file and the record.
    """
    path = Path(path)
    if released_format(path) == "jsonl":
        try:
            for number, record in iter_json_objects(path):  # JsonLinesError (a ValueError) names path:line
                yield ReleasedExample.from_record(record, f"{path}:{number}")
        except UnicodeDecodeError as error:
            raise ValueError(f"{path}: JSON lines that are not UTF-8 ({error})") from None
        return
    for number, payload in enumerate(iter_tfrecords(path, verify=verify)):
        try:
            features = decode_example(payload)
        except ValueError as error:  # UnicodeDecodeError included
            raise TFRecordError(f"{path}: record {number}: not a tf.train.Example ({error})") from None
        yield ReleasedExample.from_record(features, f"{path}:{number}")


@dataclass(frozen=True)
class ReleasedFile:
    """A released file and what its path says about it.

    Args:
        path (`Path`): the file.
        format (`str`): ``tfrecord`` or ``jsonl``, by content.
        split (`str`, *optional*): ``train``, ``validation`` or ``test``; ``None`` when the path names none.
        variant (`str`, *optional*): ``abstractive`` or ``extractive``; ``None`` when the path names none.
    """

    path: Path
    format: str
    split: str | None
    variant: str | None


def _path_label(path: Path, names: Iterable[str]) -> str | None:
    """The first of ``names`` that is a word of the file name, else the nearest folder named exactly so (a word of a
    folder name would find ``test`` in ``/tmp/test_x/v2/abstractive/dev``)."""
    names = set(names)
    for word in re.split(r"[^a-z0-9]+", path.name.lower()):
        if word in names:
            return word
    return next((part.lower() for part in reversed(path.parent.parts) if part.lower() in names), None)


def released_files(paths: Iterable[str | Path]) -> list[ReleasedFile]:
    """The files of ``paths`` in the order given, each folder (the release tree, or part of it) walked for every file
    not hidden, in sorted order; each recognised by content and placed by its path. A file reached twice (given
    twice, or given and inside a given folder) is listed once; a copy of it elsewhere is read, and its records are
    then duplicates (see :func:`read_release`).

    Raises:
        ValueError: a path that does not exist; TFRecordError: a file that is neither a TFRecord shard nor JSON lines.
    """
    found: list[Path] = []
    for path in map(Path, paths):
        if path.is_dir():
            found += walk_files(path, hidden=False)  # linked folders too
        elif path.is_file():
            found.append(path)
        else:
            raise ValueError(f"{path}: no such file or folder")
    files, seen = [], set()
    for path in found:
        if path.resolve() in seen:
            continue
        seen.add(path.resolve())
        split = _path_label(path, SPLIT_NAMES)
        files.append(ReleasedFile(path, released_format(path), SPLIT_NAMES[split] if split else None,
                                  _path_label(path, VARIANTS)))
    return files


@dataclass
class ReleasedRead:
    """The records of a set of released files, each kept once per variant.

    Args:
        files (`list[ReleasedFile]`): the files read, in order.
        examples (`dict[str, dict[str, list[ReleasedExample]]]`): variant -> split -> examples (a file whose path names
            no split is read as train, no variant as abstractive).
        records_read (`int`): records read, duplicates included.
        duplicates (`dict[str, int]`): per variant, records skipped as already read (same query, URLs and target).
        damaged (`list[str]`): one line per damaged shard: the problem, where, and the records kept before it.
    """

    files: list[ReleasedFile]
    examples: dict[str, dict[str, list[ReleasedExample]]]
    records_read: int = 0
    duplicates: dict[str, int] = field(default_factory=dict)
    damaged: list[str] = field(default_factory=list)

    @property
    def records(self) -> dict[str, dict[str, int]]:
        """Records kept per variant and split."""
        return {variant: {split: len(examples) for split, examples in splits.items()}
                for variant, splits in self.examples.items()}


def read_release(paths: Iterable[str | Path], verify: bool = True) -> ReleasedRead:
    """Read the released files and folders in ``paths`` (see :func:`released_files`): every record once per variant;
    a damaged shard keeps the records before the damage and is listed in ``damaged``.

    Raises:
        ValueError: a missing path, a file in neither format (before anything is read), a bad JSON line or a record
            without ``query``/``target``.
    """
    files = released_files(paths)
    read = ReleasedRead(files, {variant: {split: [] for split in ("train", "validation", "test")}
                                for variant in VARIANTS})
    seen: set[tuple[str, str, tuple[str, ...], str]] = set()
    duplicates: Counter[str] = Counter()
    for file in files:
        variant, split = file.variant or "abstractive", file.split or "train"
        records = 0
        try:
            for example in read_released(file.path, verify=verify):
                records += 1
                key = (variant, example.query, tuple(d.url for d in example.documents), example.target)
                if key in seen:
                    duplicates[variant] += 1
                    continue
                seen.add(key)
                read.examples[variant][split].append(example)
        except TFRecordError as error:
            read.damaged.append(f"{error}; kept the {records:,} record(s) before it")
        read.records_read += records
    read.duplicates = {variant: duplicates[variant] for variant in VARIANTS}
    return read


def fill_documents(examples: list[ReleasedExample], warc_index: Any, pipeline: Any = None) -> dict[str, int]:
    """Fill in each document found in ``warc_index`` (a :class:`~wikiref_dataset.web.warc.WarcIndex`): title, main
    text and sentences, extracted as WikiRef documents are. Sets each document's ``status`` (``ok``,
    ``not_archived``, ``read_error``, ``not_html``, ``no_text``, ``parse_error``) and returns the status counts."""
    from collections import Counter

    from ..web.extract import ExtractionError, extract_pages
    from ..web.warc import WarcReadError

    counts: Counter[str] = Counter()
    pending: list[tuple[ReleasedDocument, bytes, str | None]] = []
    for example in examples:
        for document in example.documents:
            capture = warc_index.lookup(document.url)
            if capture is None:
                document.status = "not_archived"
                counts["not_archived"] += 1
                continue
            try:
                pending.append((document, warc_index.read(capture), capture.content_type))
            except WarcReadError as error:
                document.status = error.reason
                counts[error.reason] += 1
    pages = extract_pages(((body, doc.url, content_type) for doc, body, content_type in pending), pipeline=pipeline)
    for (document, _, _), page in zip(pending, pages, strict=True):
        if isinstance(page, ExtractionError):
            document.status = page.reason
        else:
            document.title, document.text, document.sentences = page.title, page.text, page.sentences
            document.status = "ok"
        counts[document.status] += 1
    return dict(counts)
