"""Statement extraction on hand-written wikitext: boundaries, sections, named refs, citation types, archives."""

from pathlib import Path

import pytest

from wikiref_dataset.wiki.dump import WikiPage
from wikiref_dataset.wiki.statements import Citation, Statement, StatementConfig, StatementExtractor

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "wiki"
ARTICLE = (FIXTURES / "article.wiki").read_text(encoding="utf-8")


def page(text: str, page_id: int = 7, title: str = "Testville") -> WikiPage:
    return WikiPage(page_id=page_id, title=title, namespace=0, revision_id=70, timestamp="2020-05-01T00:00:00Z",
                    text=text, redirect=None)


def extract(text: str, **config) -> tuple[list[Statement], StatementExtractor]:
    extractor = StatementExtractor(StatementConfig(**config))
    return extractor.extract(page(text)), extractor


# (position, section path, text, type, url, fetch url, url status, ref name) of the fixture article, written by
# reading the wikitext in tests/fixtures/wiki/article.wiki
ARCHIVE = "https://web.archive.org/web/"
EXPECTED = [
    (0, [], "Testville (Villetest) is a town of 12 km² on the Test.", "cite web", "https://example.org/about",
     "https://example.org/about", None, None),
    (1, [], "It was founded c. 1850 by John Smith.", "cite web", "https://example.org/founding",
     "https://example.org/founding", "live", "founding"),
    (3, [], "Its budget was US$5 million As of 2015.", "cite web", "https://example.org/budget",
     ARCHIVE + "2016/https://example.org/budget", "dead", None),
    (4, ["History"], "The mill opened in 1901 and closed in 1950.", "cite news", "https://news.example.org/mill",
     ARCHIVE + "1999/https://news.example.org/mill", "dead", "mill"),
    (5, ["History", "Modern times"], "Mayor Jane Roe was elected in 2001.", "cite news",
     "https://news.example.org/mayor", "https://news.example.org/mayor", None, "mayor"),
    (6, ["History", "Modern times"], "She was re-elected in 2005.", "cite news", "https://news.example.org/mill",
     ARCHIVE + "1999/https://news.example.org/mill", "dead", "mill"),
    (7, ["History", "Modern times"], "The town hall moved in 2008.", "cite press release",
     "https://press.example.org/hall", "https://press.example.org/hall", None, None),
    (8, ["History", "Modern times"], "The school opened 1 September 1999.", "cite news",
     "https://news.example.org/school", "https://news.example.org/school", "live", None),
    (12, ["History", "Modern times"], "The population reached 12,000 in 2010.", "cite web",
     "https://census.example.org/testville", "https://census.example.org/testville", None, "census"),
    (13, ["History", "Modern times"], "The weather is mild and dry.", "cite web", "https://weather.example.org/",
     "https://weather.example.org/", "dead", None),
]


def test_fixture_article_statements():
    statements, extractor = extract(ARTICLE)
    got = [(s.position, s.section_path, s.text, s.citation.type, s.citation.url, s.citation.fetch_url,
            s.citation.url_status, s.citation.ref_name) for s in statements]
    assert got == EXPECTED
    assert [s.id for s in statements] == [f"7-{row[0]}" for row in EXPECTED]
    stats = extractor.stats
    assert stats["pages"] == 1 and stats["statements"] == len(EXPECTED) and stats["spans"] == 14
    assert (stats["kept/cite web"], stats["kept/cite news"], stats["kept/cite press release"]) == (5, 4, 1)
    assert stats["skipped/cite book"] == 1 and stats["skipped/sfn"] == 1 and stats["bare_urls_skipped"] == 1
    assert stats["named_refs_resolved"] == 4 and stats["refs_unresolved"] == 0
    assert stats["archive_urls_used"] == 3 and stats["notes_skipped"] == 2 and stats["sections_skipped"] == 2
    assert stats["refs_grouped"] == 2
    # "Its water is <math>H_2O</math> clean." would read "Its water is clean.": dropped and counted
    assert stats["dropped_unrendered_template"] == 1 and stats["unrendered_template/math tag"] == 1


def test_citation_fields_are_plain_text():
    statements, _ = extract(ARTICLE)
    first = statements[0].citation
    assert (first.title, first.work, first.date) == ("About Testville", "Example Gazette", "1 May 2010")


def test_nothing_from_tables_captions_comments_or_skipped_sections():
    statements, _ = extract(ARTICLE)
    urls = {s.citation.url for s in statements}
    for absent in ("table", "caption", "commented", "seealso", "sources"):
        assert not any(absent in url for url in urls), absent


def test_statement_ids_do_not_depend_on_kept_types():
    everything, _ = extract(ARTICLE, include_bare_urls=True, keep_types=("cite web", "cite news",
                                                                          "cite press release", "cite book"))
    by_position = {s.position: s for s in everything}
    assert 2 not in by_position  # kept type, but the cite book has no url to fetch
    assert by_position[9].citation.type == "bare url"
    assert by_position[9].text == "The park opened in 2003."
    assert by_position[9].citation.url == "https://park.example.org/" and by_position[9].citation.title == (
        "Park homepage")
    default, _ = extract(ARTICLE)
    for statement in default:
        assert by_position[statement.position].id == statement.id
        assert by_position[statement.position].text == statement.text


def test_keep_types_and_list_items_options():
    statements, extractor = extract(ARTICLE, keep_types=("Cite_News",))
    assert {s.citation.type for s in statements} == {"cite news"}
    assert extractor.stats["skipped/cite web"] == 6
    statements, _ = extract(ARTICLE, include_list_items=False)
    assert "The school opened 1 September 1999." not in [s.text for s in statements]


def test_skip_sections_option():
    statements, _ = extract(ARTICLE, skip_sections=("history",))
    assert not any(s.section_path[:1] == ["History"] for s in statements)
    assert ["See also"] in [s.section_path for s in statements]  # no longer skipped
    statements, _ = extract(ARTICLE, skip_sections=())
    assert "Other town, founded in 1850." in [s.text for s in statements]
    assert ["References", "Sources"] in [s.section_path for s in statements]


@pytest.mark.parametrize("wikitext, expected", [
    # the span starts after the previous citation, and refs standing together count once
    ("A one.<ref>{{cite web|url=https://a.example.org}}</ref> B two.<ref>{{cite web|url=https://b.example.org}}</ref>",
     ["A one.", "B two."]),
    ("A one.<ref>{{cite web|url=https://a.example.org}}</ref>, <ref>{{cite web|url=https://b.example.org}}</ref>",
     ["A one."]),
    # several sentences in one statement; a blank line starts a new paragraph
    ("First. Second sentence.<ref>{{cite web|url=https://a.example.org}}</ref>", ["First. Second sentence."]),
    ("Uncited paragraph.\n\nCited one.<ref>{{cite web|url=https://a.example.org}}</ref>", ["Cited one."]),
    # a line that shows nothing (a lone template or image) ends the paragraph too
    ("Uncited.\n{{Main|X}}\nCited line.<ref>{{cite web|url=https://a.example.org}}</ref>", ["Cited line."]),
    # a single newline inside a paragraph is a space
    ("Soft\nwrapped line.<ref>{{cite web|url=https://a.example.org}}</ref>", ["Soft wrapped line."]),
    # list items end at their line end
    ("* Item one\n* Item two.<ref>{{cite web|url=https://a.example.org}}</ref>", ["Item two."]),
    # a ref placed before the punctuation: the punctuation ends the statement it cites, not the next one
    ("One<ref>{{cite web|url=https://a.example.org}}</ref>. Two.<ref>{{cite web|url=https://b.example.org}}</ref>",
     ["One.", "Two."]),
    ("One<ref>{{cite web|url=https://a.example.org}}</ref>{{citation needed|date=May 2020}}.\n\nTwo.",
     ["One."]),
    # ... but not a decimal point, nor a full stop after other text: the ref stands inside its sentence, which it gets
    ("Height 3<ref>{{cite web|url=https://a.example.org}}</ref>.5 m.", ["Height 3.5 m."]),
    ("One<ref>{{cite web|url=https://a.example.org}}</ref> and [[two]].", ["One and two."]),
    # refs inside inline markup still end statements
    ("''Italic claim.<ref>{{cite web|url=https://a.example.org}}</ref>''", ["Italic claim."]),
    # {{#tag:ref}} is a ref
    ("Tagged claim.{{#tag:ref|{{cite web|url=https://a.example.org}}|name=t}}", ["Tagged claim."]),
    # quoted, unquoted and single-quoted names, defined after use
    ("X one.<ref name=a/> Y two.<ref name='b' /> Z.<ref name=\"a\">{{cite web|url=https://a.example.org}}</ref>"
     "<ref name=b>{{cite news|url=https://b.example.org}}</ref>", ["X one.", "Y two."]),
    # short spans below min_statement_chars are dropped
    ("Tiny.<ref>{{cite web|url=https://a.example.org}}</ref>", []),
])
def test_statement_boundaries(wikitext, expected):
    statements, _ = extract(wikitext, min_statement_chars=3)
    if expected == []:
        statements, _ = extract(wikitext, min_statement_chars=10)
    assert [s.text for s in statements] == expected


def _web(name: str) -> str:
    return f"<ref>{{{{cite web|url=https://{name}.example.org}}}}</ref>"


@pytest.mark.parametrize("wikitext, whole, fragments", [
    # two refs in one sentence: the sentence is the last ref's; the first keeps its whole sentences before it
    (f"First claim here. Born in 1950,{_web('a')} he moved to Paris in 1970.{_web('b')} Uncited.",
     ["First claim here.", "Born in 1950, he moved to Paris in 1970."],
     ["First claim here. Born in 1950,", "he moved to Paris in 1970."]),
    # an enumeration: one statement, the sentence
    (f"Released in the UK{_web('a')}, the US{_web('b')} and Japan.{_web('c')}",
     ["Released in the UK, the US and Japan."], ["Released in the UK", "the US", "and Japan."]),
    # the last ref of a sentence that goes on gets the rest of it; the next sentence is the next ref's
    (f"Born in 1950,{_web('a')} he moved to Paris in 1970. He then left.{_web('b')}",
     ["Born in 1950, he moved to Paris in 1970.", "He then left."],
     ["Born in 1950,", "he moved to Paris in 1970. He then left."]),
    # ... and at the end of the paragraph
    (f"Born in 1950,{_web('a')} he moved to Paris in 1970. No ref after.\n\nNext paragraph.",
     ["Born in 1950, he moved to Paris in 1970."], ["Born in 1950,"]),
    # a ref inside brackets; a group of refs counts once
    (f"Its mill (founded 1900{_web('a')}{_web('b')}) closed in 1950.{_web('c')}",
     ["Its mill (founded 1900) closed in 1950."], ["Its mill (founded 1900", "closed in 1950."]),
    # a lead-in to a list (or a table, a quote) is not a sentence of the statement; alone it is no statement
    (f"Intro words here. The members are:{_web('a')}\n* One\n* Two", ["Intro words here."],
     ["Intro words here. The members are:"]),
    (f"The publisher wrote, saying:{_web('a')}\n<blockquote>Quoted.</blockquote>", [],
     ["The publisher wrote, saying:"]),
    # a ref at a sentence end is not touched, in any writing
    (f"One sentence.{_web('a')} Two sentences here.{_web('b')}", ["One sentence.", "Two sentences here."],
     ["One sentence.", "Two sentences here."]),
])
def test_a_sentence_with_several_refs_goes_to_its_last_ref(wikitext, whole, fragments):
    statements, extractor = extract(wikitext, min_statement_chars=3)
    assert [s.text for s in statements] == whole
    old, _ = extract(wikitext, min_statement_chars=3, whole_sentences=False)
    assert [s.text for s in old] == fragments


def test_mid_sentence_refs_are_counted_and_keep_their_positions():
    statements, extractor = extract(f"A one,{_web('a')} B two,{_web('b')} C three.{_web('c')} D four,{_web('d')} "
                                    f"E five.", min_statement_chars=3)
    assert [(s.position, s.text) for s in statements] == [(2, "A one, B two, C three."), (3, "D four, E five.")]
    stats = extractor.stats
    assert (stats["refs_mid_sentence"], stats["refs_inside_later_statement"], stats["mid_sentence_completed"]) == (
        3, 2, 1)
    assert stats["spans"] == 4 and stats["statements"] == 2
    from wikiref_dataset.wiki.steps import StatementsSummary  # the closing summary of the stage says it

    summary = StatementsSummary.from_counts(dict(stats), "out", tasks=1).format()
    assert ("3 refs stood inside a sentence that goes on, which went whole to its last ref (1 refs got the rest of "
            "their sentence, 2 gave no statement of their own)") in summary


def test_a_list_run_together_is_not_carried_as_one_sentence():
    """Hundreds of refs in one "sentence" with no full stop (a list written as prose): once the unfinished sentence
    passes 2,000 characters it is no longer carried (the span there keeps it), so the work stays bounded."""
    import time

    items = "".join(f"Film number {i} (in {1900 + i}),{_web(str(i))} " for i in range(400))
    started = time.perf_counter()
    statements, extractor = extract(items + "and more.", min_statement_chars=3)
    assert time.perf_counter() - started < 30
    assert extractor.stats["mid_sentence_too_long"] == 5 and len(statements) == 6
    assert all(len(statement.text) < 2200 for statement in statements)
    joined = " ".join(statement.text for statement in statements)
    assert all(f"Film number {i} (in {1900 + i})," in joined for i in range(400)) and joined.endswith("and more.")


def test_a_ref_before_a_comma_in_japanese():
    text = ("東京は日本の首都である<ref>{{Cite web|url=https://a.example.jp/|title=A}}</ref>、人口は多い"
            "<ref>{{Cite web|url=https://b.example.jp/|title=B}}</ref>。次の文である。")
    statements, extractor = extract(text, language="ja", min_statement_chars=3)
    assert [s.text for s in statements] == ["東京は日本の首都である、人口は多い。"]
    assert extractor.stats["refs_inside_later_statement"] == 1


def test_unresolved_named_ref_is_counted():
    statements, extractor = extract("Claim here.<ref name=missing/>")
    assert statements == []
    assert extractor.stats["refs_unresolved"] == 1


def test_blockquote_and_table_text_is_not_a_statement():
    text = ("<blockquote>Quoted words.<ref>{{cite web|url=https://a.example.org}}</ref></blockquote>\n"
            "{|\n| Cell text.<ref>{{cite web|url=https://b.example.org}}</ref>\n|}\n"
            "Prose after.<ref>{{cite web|url=https://c.example.org}}</ref>")
    statements, _ = extract(text)
    assert [s.text for s in statements] == ["Prose after."]


def test_heading_markup_is_rendered_in_the_section_path():
    statements, _ = extract("== ''Art'' and [[music|Music]] ==\nA claim here.<ref>{{cite web|url=https://a.example.org}}"
                            "</ref>")
    assert statements[0].section_path == ["Art and Music"]
    assert statements[0].query_levels == ["Testville", "Art and Music"]


def test_a_failing_page_is_counted_and_extraction_goes_on(monkeypatch, caplog):
    extractor = StatementExtractor()
    original = extractor._extract

    def fail_on_page_13(wiki_page, counts):
        if wiki_page.page_id == 13:
            raise RuntimeError("boom")
        return original(wiki_page, counts)

    monkeypatch.setattr(extractor, "_extract", fail_on_page_13)
    good = "A good claim.<ref>{{cite web|url=https://a.example.org}}</ref>"
    assert extractor.extract(page(good, page_id=13)) == []
    assert len(extractor.extract(page(good, page_id=14))) == 1
    assert extractor.stats["pages"] == 2 and extractor.stats["pages_failed"] == 1
    assert "page 13" in caplog.text and "boom" in caplog.text


def test_document_round_trip():
    statements, _ = extract(ARTICLE)
    for statement in statements:
        document = statement.to_document()
        assert document.id == statement.id and document.text == statement.text
        assert document.metadata["url"] == statement.citation.url
        assert document.metadata["citation_type"] == statement.citation.type
        assert set(document.metadata) == {
            "page_id", "page_title", "revision_id", "timestamp", "section_path", "position", "citation_type", "url",
            "archive_url", "url_status", "fetch_url", "citation_title", "publisher", "work", "date", "ref_name",
            "access_date", "archive_date"}
        assert Statement.from_document(document) == statement


def test_from_document_names_the_record():
    from datatrove.data import Document

    with pytest.raises(ValueError, match="doc-9"):
        Statement.from_document(Document(text="x", id="doc-9", metadata={"page_id": 1}))


@pytest.mark.parametrize("options, message", [
    ({"keep_types": "cite web"}, "keep_types"),
    ({"keep_types": ()}, "nothing would be kept"),
    ({"min_statement_chars": -1}, "min_statement_chars"),
    ({"min_statement_chars": 2.5}, "min_statement_chars"),
    ({"include_bare_urls": "yes"}, "include_bare_urls"),
])
def test_config_validation(options, message):
    with pytest.raises(ValueError, match=message):
        StatementConfig(**options)


def test_config_normalises_names():
    config = StatementConfig(keep_types=("Cite_Web", "cite newspaper", "bare url"), skip_sections=(" See  Also ",))
    assert config.keep_types == ("cite web", "cite news")
    assert config.include_bare_urls is True
    assert config.skip_sections == ("see also",)


def test_config_fields_have_help():
    from dataclasses import fields

    for item in fields(StatementConfig):
        assert item.metadata.get("help"), item.name


def test_citation_is_reexported():
    assert Citation.__module__ == "wikiref_dataset.wiki.citations"


# -- templates that carry words: rendered, or the statement is dropped and counted ------------------------------

WEB = "<ref>{{cite web|url=https://a.example.org}}</ref>"


@pytest.mark.parametrize("wikitext, expected", [
    # rendered: the revision of the test page is dated 2020-05-01
    ("He was {{age|1950|1|2}} years old." + WEB, "He was 70 years old."),
    ("There is one atom for every 10<sup>18</sup> others." + WEB, "There is one atom for every 10^18 others."),
    ("It came {{ordinal|3}} of twelve." + WEB, "It came 3rd of twelve."),
    ("The word {{Wikt-lang|en|bitumen}} is old." + WEB, "The word bitumen is old."),
    ("It is on the {{RailGauge|1000mm}} line." + WEB, "It is on the 1,000 mm line."),
    # silent templates inside a sentence and unknown ones before it or after its end are harmless
    ("Some say{{who}} it is true{{citation needed|date=May 2020}}." + WEB, "Some say it is true."),
    ("{{quote|A quotation.}} He then left." + WEB, "He then left."),
    ("It closed in 1990.{{frobnicate}}" + WEB, "It closed in 1990."),
    # a formula displayed on a line of its own is no hole in the sentence after it
    ("The mean is written\n:<math>\\bar x</math>\nwhere x is the value." + WEB, "where x is the value."),
])
def test_meaning_bearing_templates_in_statements(wikitext, expected):
    statements, extractor = extract(wikitext)
    assert [s.text for s in statements] == [expected]
    assert extractor.stats["dropped_unrendered_template"] == 0


@pytest.mark.parametrize("wikitext, name, without", [
    ("It cost $800 ($ {{inflation|US|800|1861}} today)." + WEB, "inflation", "It cost $800 ($ today)."),
    ("Its water is <math>H_2O</math> clean." + WEB, "math tag", "Its water is clean."),
    ("The patent {{frobnicate|1781541}} was awarded." + WEB, "frobnicate", "The patent was awarded."),
])
def test_holes_drop_the_statement_and_are_counted(wikitext, name, without):
    statements, extractor = extract(wikitext)
    assert statements == []
    assert extractor.stats["dropped_unrendered_template"] == 1
    assert extractor.stats[f"unrendered_template/{name}"] == 1
    assert extractor.stats["spans"] == 1  # the span kept its position: ids of later statements do not move
    statements, extractor = extract(wikitext, drop_unrendered_templates=False)
    assert [s.text for s in statements] == [without]
    assert extractor.stats["dropped_unrendered_template"] == 0


def test_relative_dates_can_be_left_unrendered():
    wikitext = "He was {{age|1950|1|2}} years old." + WEB
    statements, extractor = extract(wikitext, render_relative_dates=False)
    assert statements == [] and extractor.stats["unrendered_template/age"] == 1
    # a page without a usable timestamp cannot date {{age}} either
    extractor = StatementExtractor()
    undated = WikiPage(page_id=8, title="T", namespace=0, revision_id=1, timestamp="", text=wikitext, redirect=None)
    assert extractor.extract(undated) == [] and extractor.stats["unrendered_template/age"] == 1


def test_holes_are_only_counted_for_kept_citations():
    _, extractor = extract("The patent {{frobnicate|1}} was awarded.<ref>{{cite book|title=B}}</ref>")
    assert extractor.stats["skipped/cite book"] == 1 and extractor.stats["dropped_unrendered_template"] == 0


# -- citation types kept by default (§II-A: web pages, news articles, press, press releases) ---------------------

@pytest.mark.parametrize("ref, citation_type, url, fetched", [
    ("{{cite magazine |url=https://mag.example.org/a |title=A |magazine=Time}}", "cite magazine",
     "https://mag.example.org/a", "https://mag.example.org/a"),
    ("{{Cite mag |url=https://mag.example.org/b}}", "cite magazine", "https://mag.example.org/b",
     "https://mag.example.org/b"),
    ("{{citation |url=https://site.example.org/c |title=C |publisher=P}}", "citation", "https://site.example.org/c",
     "https://site.example.org/c"),
    ("{{Wayback |date=20090312022528 |url=http://old.example.org/d |title=D}}", "wayback", "http://old.example.org/d",
     "https://web.archive.org/web/20090312022528/http://old.example.org/d"),
    ("[http://old.example.org/e E] {{wayback|url=http://old.example.org/e |date=20150427181510}}", "wayback",
     "http://old.example.org/e", "https://web.archive.org/web/20150427181510/http://old.example.org/e"),
    ("{{webarchive |url=https://web.archive.org/web/20070707071918/http://old.example.org/f |date=7 July 2007}}",
     "webarchive", "http://old.example.org/f", "https://web.archive.org/web/20070707071918/http://old.example.org/f"),
])
def test_kept_citation_types(ref, citation_type, url, fetched):
    statements, extractor = extract(f"A claim worth citing.<ref>{ref}</ref>")
    assert len(statements) == 1
    citation = statements[0].citation
    assert (citation.type, citation.url, citation.fetch_url) == (citation_type, url, fetched)
    assert extractor.stats[f"kept/{citation_type}"] == 1


@pytest.mark.parametrize("ref, counted", [
    ("{{citation |url=https://j.example.org |journal=Nature |title=T}}", "citation (journal)"),
    ("{{citation |url=https://books.google.com/books?id=x |title=T |publisher=P}}", "citation (book)"),
    ("{{citation |title=T |isbn=0-19-852663-6 |url=https://b.example.org}}", "citation (book)"),
    ("{{citation |title=T |publisher=P |year=1990}}", "citation (no url)"),
    ("{{cite journal |url=https://j.example.org |journal=Nature}}", "cite journal"),
])
def test_other_uses_of_citation_are_skipped_and_counted(ref, counted):
    statements, extractor = extract(f"A claim worth citing.<ref>{ref}</ref>")
    assert statements == []
    assert extractor.stats[f"skipped/{counted}"] == 1


def test_archive_date_is_kept_in_the_statement_metadata():
    wikitext = ("A claim worth citing.<ref>{{cite web |url=https://a.example.org |archive-url=https://web.archive.org/"
                "web/2016/https://a.example.org |archive-date=3 May 2016}}</ref>")
    statement = extract(wikitext)[0][0]
    document = statement.to_document()
    assert document.metadata["archive_date"] == "3 May 2016"
    assert Statement.from_document(document).citation.archive_date == "3 May 2016"


def test_new_config_fields_are_validated():
    for name in ("drop_unrendered_templates", "render_relative_dates"):
        with pytest.raises(ValueError, match=name):
            StatementConfig(**{name: "no"})
