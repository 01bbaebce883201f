"""Page preparation: comments, extension tags, ref placeholders, named definitions, sections."""

import pytest

from wikiref_dataset.wiki.markup import PLACEHOLDER, parse_ref_attributes, prepare, split_sections
from wikiref_dataset.wiki.plaintext import hole


@pytest.mark.parametrize("attributes, expected", [
    (' name="a b"', ("a b", None)),
    (" name='x'", ("x", None)),
    (" name=plain", ("plain", None)),
    (" name=plain/", ("plain", None)),
    (' group="note" name="n1"', ("n1", "note")),
    (' name = "spaced" ', ("spaced", None)),
    (' name=""', (None, None)),
    (None, (None, None)),
])
def test_parse_ref_attributes(attributes, expected):
    assert parse_ref_attributes(attributes) == expected


def test_refs_become_placeholders_and_definitions_are_collected():
    text = ('A.<ref name="a">{{cite web|url=https://a.example.org}}</ref> B.<ref name=b/> C.<ref>plain</ref>'
            "<!-- <ref name=\"c\">commented</ref> -->\n"
            "{{reflist|refs=\n<ref name=b>{{cite news|url=https://b.example.org}}</ref>\n}}\n"
            "<references>\n<ref name='d'>defined in references</ref>\n</references>")
    page = prepare(text)
    assert [(ref.name, ref.content is None) for ref in page.refs] == [("a", False), ("b", True), (None, False),
                                                                        ("b", False)]
    assert page.refs[1].is_reuse and not page.refs[0].is_reuse
    assert set(page.definitions) == {("", "a"), ("", "b"), ("", "d")}
    assert page.definition("", "b") == "{{cite news|url=https://b.example.org}}"
    assert "commented" not in page.text and "<ref" not in page.text and "<references" not in page.text
    assert [int(match.group(1)) for match in PLACEHOLDER.finditer(page.text)] == [0, 1, 2, 3]


def test_first_definition_wins_and_loose_names_match():
    page = prepare('<ref name="Smith 2007">first</ref><ref name="Smith 2007">second</ref>')
    assert page.definition("", "Smith 2007") == "first"
    assert page.definition("", "Smith_2007") == "first"
    assert page.definition("", "Jones") is None
    assert page.definition("note", "Smith 2007") is None


def test_grouped_refs_keep_their_group():
    page = prepare('x<ref group="note" name="n">A note.</ref>')
    assert page.refs[0].group == "note"
    assert page.definitions == {("note", "n"): "A note."}


def test_unclosed_ref_is_dropped_and_counted():
    page = prepare("a<ref>unclosed b<ref>{{cite web|url=https://x.example.org}}</ref> c")
    assert page.unclosed_refs == 1
    assert len(page.refs) == 1 and page.refs[0].content.startswith("{{cite web")


def test_other_extension_tags():
    page = prepare("a <math>x^2</math> b <nowiki>[[c]]</nowiki> <gallery>\nFile:x.jpg\n</gallery> d <pre>code</pre>")
    assert "x^2" not in page.text and "File:x.jpg" not in page.text and "code" not in page.text
    assert "[[c]]" not in page.text and "&#91;&#91;c&#93;&#93;" in page.text


def test_split_sections():
    sections = split_sections("lead\n== A ==\na text\n=== B ===\nb text\n==C==\nc\n== D ===\nd")
    assert [(section.level, section.title) for section in sections] == [(0, ""), (2, "A"), (3, "B"), (2, "C"),
                                                                        (2, "D =")]
    assert sections[0].body == "lead\n" and sections[2].body.strip() == "b text"


def test_formulas_leave_a_hole_and_other_tags_nothing():
    page = prepare("E is <math>mc^2</math>, <chem>H2O</chem> and <ce>CO2</ce>.<ref>See <math>x</math></ref>"
                   "<gallery>a.jpg</gallery><score>c d</score>")
    assert page.text == f"E is {hole('math tag')}, {hole('chem tag')} and {hole('ce tag')}.\ue0000\ue001" + hole(
        "score tag")
    assert page.refs[0].content == "See "  # inside a ref a formula is no part of a statement
