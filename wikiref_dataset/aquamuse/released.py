"""The released AQuaMuSe files: TFRecord shards of ``tf.train.Example`` with ``query``, ``input_urls`` and ``target``
(google-research-datasets/aquamuse), read without TensorFlow; and the same examples decoded to JSON lines.

Hand-written here, and why: TFRecord framing is four fields (``uint64`` length, masked CRC-32C of the length, the
payload, masked CRC-32C of the payload), and a ``tf.train.Example`` is three nested length-delimited protobuf
messages (``Example.features`` -> ``map<string, Feature>`` entries -> ``Feature.bytes_list|float_list|int64_list``).
The ``protobuf`` package does not ship ``tf.train.Example``'s descriptor (it lives in TensorFlow's ``.proto`` files
and would need ``protoc``) and no small PyPI package decodes it without TensorFlow, so a ~60-line wire-format decoder
is the lighter dependency. CRC-32C (Castagnoli) is checked with a table-driven implementation (slow in pure Python
but the released shards are a few MB); pass ``verify=False`` to skip it.

``input_urls`` is one string of URLs joined by the literal ``<EOD>``. The release holds URLs only: where those pages
are in the user's WARC files (Common Crawl 2017-26 for the release), :func:`fill_documents` extracts them with the
WikiRef document extractor.
"""

from __future__ import annotations

import hashlib
import struct
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..jsonl import iter_json_objects

__all__ = [
    "EOD", "ReleasedDocument", "ReleasedExample", "TFRecordError", "crc32c", "decode_example", "fill_documents",
    "iter_tfrecords", "read_released",
]  # fmt: skip

EOD = "<EOD>"
"""Separator of the URLs in ``input_urls``."""


class TFRecordError(ValueError):
    """A TFRecord file or a ``tf.train.Example`` in it is malformed; the message names the file, the record and
    the problem."""


def _crc_table() -> list[int]:
    table = []
    for byte in range(256):
        crc = byte
        for _ in range(8):
            crc = (crc >> 1) ^ 0x82F63B78 if crc & 1 else crc >> 1
        table.append(crc)
    return table


_CRC_TABLE = _crc_table()


def crc32c(data: bytes) -> int:
    """CRC-32C (Castagnoli polynomial, as TFRecord uses) of ``data``."""
    crc = 0xFFFFFFFF
    table = _CRC_TABLE
    for byte in data:
        crc = table[(crc ^ byte) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF


def _masked_crc(data: bytes) -> int:
    crc = crc32c(data)
    return (((crc >> 15) | (crc << 17)) + 0xA282EAD8) & 0xFFFFFFFF


def iter_tfrecords(path: str | Path, verify: bool = True) -> Iterator[bytes]:
    """The payloads of a TFRecord file (gzip-compressed files are recognised by their magic bytes).

    Raises:
        TFRecordError: truncated framing or a CRC mismatch, naming the file, the record number and the offset.
    """
    import gzip

    path = Path(path)
    with open(path, "rb") as probe:
        gzipped = probe.read(2) == b"\x1f\x8b"
    with (gzip.open(path, "rb") if gzipped else open(path, "rb")) as handle:
        number, offset = 0, 0
        while True:
            header = handle.read(12)
            if not header:
                return
            where = f"{path}: record {number} at byte {offset}"
            if len(header) < 12:
                raise TFRecordError(f"{where}: truncated length header ({len(header)} of 12 bytes)")
            length, length_crc = struct.unpack("<QI", header)
            if verify and _masked_crc(header[:8]) != length_crc:
                raise TFRecordError(f"{where}: length CRC mismatch (not a TFRecord file, or corrupted)")
            payload = handle.read(length)
            footer = handle.read(4)
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
    """The examples of a released file: a TFRecord shard or its JSON-lines decoding (recognised by a leading
    ``{``).

    Raises:
        TFRecordError / ValueError: a malformed record, naming the file and the record.
    """
    path = Path(path)
    with open(path, "rb") as probe:
        first = probe.read(1)
    if first == b"{":
        for number, record in iter_json_objects(path):  # JsonLinesError (a ValueError) names path:line
            yield ReleasedExample.from_record(record, f"{path}:{number}")
        return
    for number, payload in enumerate(iter_tfrecords(path, verify=verify)):
        try:
            features = decode_example(payload)
        except (ValueError, UnicodeDecodeError) as error:
            raise TFRecordError(f"{path}: record {number}: not a tf.train.Example ({error})") from None
        yield ReleasedExample.from_record(features, f"{path}:{number}")


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
