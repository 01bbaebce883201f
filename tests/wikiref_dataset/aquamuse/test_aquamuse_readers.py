"""Natural Questions filter (real NQ lines and our fixtures), corpus readers (real C4, Dolma/CCNet, WET, WARC samples)
and the released-data reader (TFRecord framing, tf.train.Example decoding, the real decoded dev set)."""

from __future__ import annotations

import io
import json
import struct
from collections import Counter
from pathlib import Path

import pytest

from wikiref_dataset.aquamuse.corpus import corpus_format, iter_corpus_documents
from wikiref_dataset.aquamuse.questions import QuestionReader, clean_long_answer_tokens
from wikiref_dataset.aquamuse.released import (
    TFRecordError,
    _masked_crc,
    crc32c,
    decode_example,
    fill_documents,
    iter_tfrecords,
    read_released,
)

ROOT = Path(__file__).resolve().parents[3]
REALDATA = ROOT.parent / "shared" / "realdata"
FIXTURES = ROOT / "tests" / "fixtures" / "aquamuse"
needs_realdata = pytest.mark.skipif(not REALDATA.is_dir(), reason="../shared/realdata is absent")


# ---- questions ------------------------------------------------------------------------------------------------------

@needs_realdata
def test_real_nq_lines_are_filtered_by_answer_kind():
    reader = QuestionReader()
    folder = REALDATA / "natural_questions" / "farm"
    kept = list(reader.read([folder / "dev_sample.jsonl", folder / "train_sample.jsonl"]))
    assert kept == []  # dev: long answer + short answer ("Tracy McConnell"); train: no long answer
    assert reader.stats["lines"] == 2
    assert reader.stats["dropped/short_answer"] == 1 and reader.stats["dropped/no_long_answer"] == 1


@needs_realdata
def test_real_nq_long_answer_cleans_into_text():
    record = json.loads((REALDATA / "natural_questions" / "farm" / "dev_sample.jsonl").read_text().splitlines()[0])
    record["annotations"][0]["short_answers"] = []  # make it a long-answer-only question
    question = QuestionReader().parse(record, "dev:1")
    assert question.answer.startswith('Tracy McConnell, better known as "The Mother", is the title character')
    assert "<P>" not in question.answer and " ," not in question.answer


def test_fixture_formats_and_drop_reasons():
    reader = QuestionReader()
    kept = list(reader.read([FIXTURES / "nq_simplified.jsonl", FIXTURES / "nq_original.jsonl"]))
    assert [q.id for q in kept] == ["9001", "9005"]
    assert kept[1].answer == "Pittsburgh was named in honor of William Pitt, 1st Earl of Chatham."
    assert len(kept[0].answer_sentences) == 2
    assert '"secretary" is borrowed' in kept[0].answer
    assert reader.stats == Counter({"lines": 5, "kept": 2, "dropped/short_answer": 1, "dropped/not_paragraph": 1,
                                    "dropped/yes_no_answer": 1})


def test_bad_records_are_counted_with_file_and_line(tmp_path):
    path = tmp_path / "nq.jsonl"
    good = (FIXTURES / "nq_original.jsonl").read_text()
    path.write_text("{not json\n" + json.dumps({"question_text": "q", "annotations": "x"}) + "\n" + good)
    reader = QuestionReader()
    assert [q.id for q in reader.read([path])] == ["9005"]
    assert reader.stats["dropped/bad_record"] == 2
    assert reader.errors[0].startswith(f"{path}:1: not valid JSON")
    assert reader.errors[1] == f"{path}:2: 'annotations' must be a list"


def test_clean_long_answer_tokens():
    tokens = "<P> Cin ( `` Chin '' ) , a name ; it 's 10 % of $ 5 . </P>".split()
    assert clean_long_answer_tokens(tokens) == 'Cin ("Chin"), a name; it\'s 10% of $5.'


# ---- corpus -----------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize(("name", "kind"), [("a.jsonl.gz", "jsonl"), ("c4.json", "jsonl"), ("x.warc.wet.gz", "wet"),
                                            ("x.warc.gz", "warc"), ("x.arc", "warc")])
def test_corpus_format(name, kind):
    assert corpus_format(name) == kind


def test_unknown_corpus_format_names_the_file():
    with pytest.raises(ValueError, match="x.txt: unknown corpus format"):
        corpus_format("x.txt")


@needs_realdata
def test_real_corpus_samples():
    c4 = list(iter_corpus_documents(REALDATA / "web_corpus" / "c4" / "c4-en-train.00000-of-01024.first3.json"))
    assert len(c4) == 3 and c4[0].url == "https://klyq.com/beginners-bbq-class-taking-place-in-missoula/"
    assert c4[0].text.startswith("Beginners BBQ Class Taking Place in Missoula!")
    ccnet = list(iter_corpus_documents(REALDATA / "web_corpus" / "dolma" / "multiple_files_cc_en_head-0091.jsonl.gz"))
    assert len(ccnet) == 10 and ccnet[0].id == "http://100kinvesting.com/2016/11/28/first-teleconference-calls-invoice-factoring/"
    wet = list(iter_corpus_documents(REALDATA / "warc" / "whirlwind" / "whirlwind.warc.wet.gz"))
    assert [d.url for d in wet] == ["https://an.wikipedia.org/wiki/Escopete"]
    assert wet[0].text.startswith("Escopete - Biquipedia")
    stats: Counter[str] = Counter()
    warc = list(iter_corpus_documents(REALDATA / "warc" / "dolma" / "sample-0001.warc.gz", stats))
    assert len(warc) == 15 and stats["documents"] == 15
    assert all(d.text.strip() for d in warc)


def test_bad_jsonl_corpus_lines_are_skipped(tmp_path):
    path = tmp_path / "c.jsonl"
    path.write_text('{"url": "https://a.example/", "text": "Fine text."}\n[1]\n{"url": "https://b.example/"}\n')
    stats: Counter[str] = Counter()
    errors: list[str] = []
    documents = list(iter_corpus_documents(path, stats, errors))
    assert [d.id for d in documents] == ["https://a.example/"]
    assert stats["skipped/bad_json"] == 1 and stats["skipped/no_text"] == 1
    assert errors[1] == f"{path}:3: no string field 'text' (C4) or 'raw_content' (CCNet)"


# ---- released data --------------------------------------------------------------------------------------------------

def _varint(value: int) -> bytes:
    out = bytearray()
    while True:
        byte, value = value & 0x7F, value >> 7
        out.append(byte | (0x80 if value else 0))
        if not value:
            return bytes(out)


def _field(number: int, payload: bytes) -> bytes:
    return _varint(number << 3 | 2) + _varint(len(payload)) + payload


def example_bytes(features: dict[str, list[bytes]]) -> bytes:
    """A tf.train.Example with bytes_list features, written from the .proto's field numbers."""
    entries = b""
    for name, values in features.items():
        feature = _field(1, b"".join(_field(1, value) for value in values))  # Feature.bytes_list.value
        entries += _field(1, _field(1, name.encode()) + _field(2, feature))  # Features.feature map entry
    return _field(1, entries)


def tfrecord(payloads: list[bytes]) -> bytes:
    out = io.BytesIO()
    for payload in payloads:
        header = struct.pack("<Q", len(payload))
        out.write(header + struct.pack("<I", _masked_crc(header)) + payload + struct.pack("<I", _masked_crc(payload)))
    return out.getvalue()


def test_crc32c_check_value():
    assert crc32c(b"123456789") == 0xE3069283  # the CRC-32C check value (RFC 3720)


def test_decode_example_with_int_and_float_features():
    packed_ints = _field(3, _field(1, _varint(7) + _varint(300)))
    floats = _field(2, _field(1, struct.pack("<2f", 0.5, 2.0)))
    data = _field(1, _field(1, _field(1, b"n") + _field(2, packed_ints)) + _field(1, _field(1, b"f") + _field(2, floats)))
    assert decode_example(data) == {"n": [7, 300], "f": [0.5, 2.0]}


@needs_realdata
def test_tfrecord_of_real_dev_examples_reads_like_the_decoded_jsonl(tmp_path):
    lines = (REALDATA / "aquamuse" / "v2_abstractive_dev.jsonl").read_text(encoding="utf-8").splitlines()[:3]
    records = [json.loads(line) for line in lines]
    payloads = [example_bytes({key: [record[key][0].encode()] for key in ("query", "input_urls", "target")})
                for record in records]
    path = tmp_path / "dev-00000.tfrecord"
    path.write_bytes(tfrecord(payloads))
    from_tfrecord = list(read_released(path))
    from_jsonl = list(read_released(REALDATA / "aquamuse" / "v2_abstractive_dev.jsonl"))[:3]
    assert [(e.id, e.query, e.target, [d.url for d in e.documents]) for e in from_tfrecord] == [
        (e.id, e.query, e.target, [d.url for d in e.documents]) for e in from_jsonl]
    assert from_tfrecord[0].query == "when did newfoundland and labrador become a province"
    assert len(from_tfrecord[0].documents) == 7 and from_tfrecord[0].documents[-1].url.startswith("https://wikivividly")
    corrupted = bytearray(path.read_bytes())
    corrupted[20] ^= 0xFF
    (tmp_path / "bad.tfrecord").write_bytes(bytes(corrupted))
    with pytest.raises(TFRecordError, match=r"bad.tfrecord: record 0 at byte 0: payload CRC mismatch"):
        list(iter_tfrecords(tmp_path / "bad.tfrecord"))
    (tmp_path / "short.tfrecord").write_bytes(path.read_bytes()[:-10])
    with pytest.raises(TFRecordError, match=r"record 2 at byte \d+: truncated payload"):
        list(iter_tfrecords(tmp_path / "short.tfrecord"))


@needs_realdata
def test_real_dev_set_and_documents_from_a_warc(tmp_path):
    from warcio.statusandheaders import StatusAndHeaders
    from warcio.warcwriter import WARCWriter

    from wikiref_dataset.web.warc import WarcIndex

    examples = list(read_released(REALDATA / "aquamuse" / "v2_abstractive_dev.jsonl"))
    assert len(examples) == 661 and len({e.id for e in examples}) == 661
    first = examples[0]
    page = (b"<html><head><title>Newfoundland</title></head><body><article><p>Newfoundland became the tenth province"
            b" of Canada on March 31, 1949, after a referendum.</p></article></body></html>")
    warc = tmp_path / "pages.warc.gz"
    with open(warc, "wb") as handle:
        writer = WARCWriter(handle, gzip=True)
        headers = StatusAndHeaders("200 OK", [("Content-Type", "text/html")], protocol="HTTP/1.1")
        writer.write_record(writer.create_warc_record(first.documents[0].url, "response", payload=io.BytesIO(page),
                                                      http_headers=headers))
    with WarcIndex() as index:
        index.add(warc)
        counts = fill_documents([first], index)
    assert counts == {"ok": 1, "not_archived": 6}
    assert first.documents[0].status == "ok" and "tenth province" in first.documents[0].text
    assert first.documents[1].status == "not_archived" and first.documents[1].text == ""


# ---- damaged WET and WARC corpus files: the records around the damage are kept, the damage is counted ------------


@pytest.mark.parametrize("damage, kept, skipped", [("truncated", [0, 1, 2, 3], "truncated"),
                                                    ("flipped", [0, 1, 2, 3, 5, 6, 7, 8, 9], "corrupt_record")])
def test_damaged_wet_keeps_the_other_pages(tmp_path, damage, kept, skipped):
    from damaged_files import flipped, repeated_wet, truncated

    data = repeated_wet(10)
    whole = list(iter_corpus_documents(_write(tmp_path / "whole.warc.wet.gz", data)))
    assert len(whole) == 10
    member = (len(data) - len(repeated_wet(0))) // 10
    head = len(data) - 10 * member
    # truncated inside the 5th page (cut short: not kept as a shorter page), or a byte of it flipped
    at = (head + 4 * member + member // 2) / len(data)
    path = (truncated if damage == "truncated" else flipped)(data, tmp_path / "cc.warc.wet.gz", at)
    stats: Counter[str] = Counter()
    documents = list(iter_corpus_documents(path, stats))
    assert [(d.text, d.source.rsplit(":", 1)[1]) for d in documents] == [
        (whole[i].text, whole[i].source.rsplit(":", 1)[1]) for i in kept]
    assert stats == {"documents": len(kept), f"skipped/{skipped}": 1}


@needs_realdata
def test_truncated_warc_corpus_keeps_the_pages_before_the_cut(tmp_path):
    from damaged_files import truncated

    from wikiref_dataset.aquamuse.steps import CorpusReader

    source = REALDATA / "warc" / "dolma" / "sample-0001.warc.gz"
    whole = list(iter_corpus_documents(source))
    path = truncated(source.read_bytes(), tmp_path / "dolma-cut.warc.gz", 0.5)
    stats: Counter[str] = Counter()
    documents = list(iter_corpus_documents(path, stats))
    assert 0 < len(documents) < len(whole) and [d.text for d in documents] == [d.text for d in whole[:len(documents)]]
    assert stats["skipped/truncated"] == 1
    reader = CorpusReader([path])
    assert len(list(reader.run())) == len(documents)
    assert reader.stats["damaged/dolma-cut.warc.gz: truncated"].total == 1  # named in the build's counts


def _write(path: Path, data: bytes) -> Path:
    path.write_bytes(data)
    return path
