"""The one JSON-lines loop: plain and gzipped files, bad lines raised or reported with their location."""

import gzip

import pytest

from wikiref_dataset.utils.jsonl import JsonLinesError, iter_json_objects, open_text

LINES = ['{"id": 1}', "", "   ", "[1, 2]", "{not json", '{"id": 2, "text": "é"}']


@pytest.mark.parametrize("compressed, name", [(False, "a.jsonl"), (True, "a.jsonl.gz"), (True, "gz-without-suffix")])
def test_objects_with_line_numbers_and_reported_bad_lines(tmp_path, compressed, name):
    path = tmp_path / name
    data = ("\n".join(LINES) + "\n").encode("utf-8")
    path.write_bytes(gzip.compress(data) if compressed else data)
    bad = []
    records = list(iter_json_objects(path, on_error=lambda location, reason: bad.append((location, reason))))
    assert records == [(1, {"id": 1}), (6, {"id": 2, "text": "é"})]
    assert [location for location, _ in bad] == [f"{path}:4", f"{path}:5"]
    assert "expected a JSON object, got list" in bad[0][1] and "not valid JSON" in bad[1][1]


def test_without_on_error_the_first_bad_line_raises_with_its_location(tmp_path):
    path = tmp_path / "a.jsonl"
    path.write_text('{"ok": true}\n"just a string"\n', encoding="utf-8")
    reader = iter_json_objects(path)
    assert next(reader) == (1, {"ok": True})
    with pytest.raises(JsonLinesError, match=r"a\.jsonl:2: expected a JSON object, got str"):
        next(reader)


def test_decoding_policy(tmp_path):
    path = tmp_path / "latin1.jsonl"
    path.write_bytes(b'{"text": "caf\xe9"}\n')
    with pytest.raises(UnicodeDecodeError):
        list(iter_json_objects(path))
    assert list(iter_json_objects(path, errors="replace")) == [(1, {"text": "caf\ufffd"})]
    with open_text(path, errors="replace") as handle:
        assert handle.read().startswith('{"text"')


def test_truncated_gzip_raises_an_io_error(tmp_path):
    path = tmp_path / "cut.jsonl.gz"
    path.write_bytes(gzip.compress(b'{"id": 1}\n' * 1000)[:-20])
    with pytest.raises((EOFError, OSError)):
        list(iter_json_objects(path))
