"""Tests for the ROUGE-1.5.5 ``-m`` stemmer (WordNet exceptions + modified Porter)."""

from __future__ import annotations

from pathlib import Path

import pytest

from wikiref_dataset.rouge.stemmer import RougeStemmer, load_wordnet_exceptions, porter_stem

GOLDEN_STEMS = Path(__file__).resolve().parents[3] / "shared" / "rouge_golden" / "stems.tsv"


@pytest.fixture(scope="module")
def stemmer() -> RougeStemmer:
    return RougeStemmer()


def test_golden_stems_reproduced(stemmer: RougeStemmer) -> None:
    if not GOLDEN_STEMS.is_file():
        pytest.skip(f"golden stems not available: {GOLDEN_STEMS}")
    rows = [line.split("\t") for line in GOLDEN_STEMS.read_text(encoding="utf-8").splitlines() if line]
    assert len(rows) == 31243
    tokens = [token for token, _ in rows]
    got = stemmer.stem_many(tokens)
    mismatches = [(token, want, have) for (token, want), have in zip(rows, got, strict=True) if want != have]
    assert not mismatches, f"{len(mismatches)} mismatches (token, expected, got), first ones: {mismatches[:20]}"
    # The single-token path agrees with the batch path (both now served from the cache).
    assert all(stemmer(token) == want for token, want in rows)


@pytest.mark.parametrize(
    ("token", "stem"),
    [
        # Step 1c: final y -> i whenever the rest of the word has a vowel.
        ("they", "thei"),
        ("today", "todai"),
        ("played", "plai"),
        ("keys", "kei"),
        ("happy", "happi"),
        ("yesterday", "yesterdai"),
        # Modified step 4: the three rules apply one after another.
        ("agreement", "agreem"),
        ("settlement", "settlem"),
        ("government", "govern"),
        ("different", "differ"),
        # Classic Porter behaviour.
        ("caresses", "caress"),
        ("ponies", "poni"),
        ("feed", "feed"),
        ("agreed", "agre"),
        ("motoring", "motor"),
        ("hopping", "hop"),
        ("filing", "file"),
        ("falling", "fall"),
        ("relational", "relat"),
        ("rational", "ration"),
        ("generalization", "gener"),
        ("possibly", "possibl"),
        ("hopefulness", "hope"),
        ("controlling", "control"),
        # WordNet exceptions win over Porter and are used as is.
        ("said", "say"),
        ("were", "be"),
        ("children", "child"),
        ("better", "well"),
        # Tokens of three characters or fewer never change.
        ("men", "men"),
        ("was", "was"),
        ("sky", "sky"),
        ("the", "the"),
        ("a", "a"),
        # Digits.
        ("2004", "2004"),
        ("1990s", "1990"),
        ("x86", "x86"),
    ],
)
def test_hand_written_cases(stemmer: RougeStemmer, token: str, stem: str) -> None:
    assert stemmer(token) == stem


def test_porter_stem_alone_has_no_length_rule_or_exceptions() -> None:
    assert porter_stem("was") == "wa"
    assert porter_stem("said") == "said"
    assert porter_stem("children") == "children"
    assert porter_stem("they") == "thei"
    assert porter_stem("agreement") == "agreem"
    assert porter_stem("ab") == "ab"
    assert porter_stem("123456") == "123456"


def test_exception_lookup_beats_porter_and_length_rule_beats_exceptions() -> None:
    custom = RougeStemmer({"cats": "feline", "men": "man"})
    assert custom("cats") == "feline"
    assert custom("dogs") == "dog"
    assert custom("men") == "men"
    no_exceptions = RougeStemmer({})
    assert no_exceptions("said") == porter_stem("said") == "said"
    assert no_exceptions("children") == "children"


def test_stem_many_matches_call_and_memoises() -> None:
    stemmer = RougeStemmer({"said": "say"})
    tokens = ["they", "said", "the", "agreement", "they", "1990s", "said"]
    assert stemmer.stem_many(tokens) == ["thei", "say", "the", "agreem", "thei", "1990", "say"]
    assert stemmer.stem_many([]) == []
    assert [stemmer(t) for t in tokens] == stemmer.stem_many(tokens)


def test_default_exception_map() -> None:
    exceptions = load_wordnet_exceptions()
    assert len(exceptions) == 5930
    assert exceptions["said"] == "say"
    assert exceptions["were"] == "be"
    assert exceptions["children"] == "child"
    assert exceptions["better"] == "well"


def test_default_exception_map_read_beside_the_package_when_resources_fail(monkeypatch: pytest.MonkeyPatch) -> None:
    import wikiref_dataset.rouge.stemmer as stemmer_module

    def unreadable(package: str) -> None:
        raise ImportError(f"no resources for {package}")  # as Python 3.11 with a stale editable install

    monkeypatch.setattr(stemmer_module.resources, "files", unreadable)
    assert load_wordnet_exceptions() == load_wordnet_exceptions(
        Path(stemmer_module.__file__).resolve().parents[1] / "data" / "wordnet-2.0-exceptions.tsv")


def test_load_exceptions_from_path(tmp_path: Path) -> None:
    path = tmp_path / "exc.tsv"
    path.write_text("geese\tgoose\n\nmice\tmouse\n", encoding="utf-8")
    assert load_wordnet_exceptions(path) == {"geese": "goose", "mice": "mouse"}
    assert load_wordnet_exceptions(str(path)) == {"geese": "goose", "mice": "mouse"}


@pytest.mark.parametrize("bad_row", ["no tab here", "a\tb\tc", "\tbase", "inflected\t"])
def test_malformed_exception_file_names_file_and_line(tmp_path: Path, bad_row: str) -> None:
    path = tmp_path / "broken.tsv"
    path.write_text(f"geese\tgoose\nmice\tmouse\n{bad_row}\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"broken\.tsv, line 3") as excinfo:
        load_wordnet_exceptions(path)
    assert str(path) in str(excinfo.value)
