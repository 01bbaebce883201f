"""Wikipedia languages: the per-language tables (data/languages/*.toml), the dump's stated language, citations and
sections of other Wikipedias, dates in their languages, and the commands' handling of them."""

from __future__ import annotations

import bz2
import gzip
import json
import subprocess
import sys
from pathlib import Path

import pytest

from wikiref_dataset.wiki import languages
from wikiref_dataset.wiki.citations import CITATION_TYPE_ALIASES, classify_ref, parse_citation
from wikiref_dataset.wiki.dump import WikiPage
from wikiref_dataset.wiki.languages import UnsupportedLanguage, dump_language, supported_languages, wiki_language
from wikiref_dataset.wiki.statements import StatementConfig, StatementExtractor

MULTILINGUAL = Path(__file__).resolve().parents[3] / ".." / "shared" / "realdata" / "wikipedia_dump" / "multilingual"
REQUIRED = ("en", "de", "fr", "es", "it", "ja", "ru", "pt", "zh", "pl", "nl", "sv", "fi")


def page(text: str, title: str = "Berlin") -> WikiPage:
    return WikiPage(page_id=5, title=title, namespace=0, revision_id=50, timestamp="2021-06-01T00:00:00Z", text=text)


def extract(text: str, language: str) -> list:
    return StatementExtractor(StatementConfig(language=language)).extract(page(text))


# ---- the tables ---------------------------------------------------------------------------------------------------


def test_every_required_language_has_a_table_that_loads():
    assert set(REQUIRED) <= set(supported_languages())
    for code in supported_languages():
        language = wiki_language(code)
        assert language.code == code and language.name and language.spacy
        assert language.names("url"), code  # every language reads a url
        assert "references" in language.skip_sections  # the English names are merged into every table


def test_bare_links_are_kept_where_the_table_says_and_the_options_override_it():
    """German, Dutch and Finnish cite mostly with bare links, and French, Italian, Japanese and Portuguese bare links
    name the statement's source as often as templates do (the hand checks in docs/languages.md): kept by default
    there, not elsewhere; --bare-urls / --no-bare-urls (StatementConfig.include_bare_urls) choose for one run."""
    import argparse

    from wikiref_dataset.wiki.cli import add_statement_arguments, statement_config

    assert {code for code in supported_languages() if wiki_language(code).bare_urls} == {"de", "nl", "fi", "fr", "it",
                                                                                          "ja", "pt"}
    assert StatementConfig(language="de").include_bare_urls and not StatementConfig(language="en").include_bare_urls
    assert StatementConfig(language="de", include_bare_urls=False).include_bare_urls is False
    text = "Die Stadt hat rund 12.000 Einwohner.<ref>https://www.example.de/stadt</ref>"
    assert [s.text for s in extract(text, "de")] == ["Die Stadt hat rund 12.000 Einwohner."]
    assert extract(text.replace(".de/", ".es/"), "es") == []
    parser = argparse.ArgumentParser()
    add_statement_arguments(parser)
    for argv, language, expected in ((["--no-bare-urls"], "de", False), ([], "de", True), ([], "en", False),
                                     (["--bare-urls"], "en", True)):
        args = parser.parse_args(argv)
        assert statement_config(args, language).include_bare_urls is expected, (argv, language)


def test_the_english_table_is_the_former_english_constants():
    english = wiki_language("en")
    assert CITATION_TYPE_ALIASES == dict(english.citation_types)
    assert english.citation_types["cite newspaper"] == "cite news"
    assert english.names("access_date") == ("access-date", "accessdate")
    assert english.skip_sections[:3] == ("references", "reference", "notes")


def test_a_language_without_a_table_is_one_error_naming_the_supported_ones():
    with pytest.raises(UnsupportedLanguage, match=r"'xx' is not supported.*Supported: de, en, es"):
        wiki_language("xx")
    with pytest.raises(UnsupportedLanguage):
        StatementConfig(language="xx")


@pytest.mark.parametrize(("text", "message"), [
    ('code = "de"\nname = "German"\nspacy = "de"\ncolour = 1\n', "unknown key"),
    ('code = "de"\nname = "German"\nspacy = "de"\n[parameters]\nlink = ["url"]\n', "unknown citation field"),
    ('code = "de"\nname = "German"\nspacy = "de"\n[url_status_values]\n"ja" = "tot"\n', "must be 'dead' or 'live'"),
    ('code = "de"\nname = "German"\nspacy = "de"\n[templates]\nsilent = "belege"\n', "list of non-empty strings"),
    ('code = "fr"\nname = "German"\nspacy = "de"\n', "differs from the file name"),
    ('code = "de"\nname = "German"\nspacy = "de"\ndate_order = "DDMM"\n', "date_order"),
    ('code = "de"\nname = "German"\nspacy = "de"\nbare_urls = "yes"\n', "bare_urls must be true or false"),
    ('code = "de"\nname = \n', "cannot read"),
    ('code = "de"\nname = "German"\nspacy = "de"\nparameters = ["url"]\n', r"\[parameters\].*not a table"),
])
def test_a_broken_table_is_an_error_naming_the_problem(tmp_path, text, message):
    path = tmp_path / "de.toml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(UnsupportedLanguage, match=message):
        languages._read(path)


@pytest.mark.parametrize(("code", "text", "iso"), [
    ("de", "1. März 2020", "2020-03-01"), ("de", "12.03.2019", "2019-03-12"), ("de", "Mai 2010", "2010-05"),
    ("fr", "1 janvier 2021", "2021-01-01"), ("fr", "mars2015", "2015-03"), ("ja", "2008年8月20日", "2008-08-20"),
    ("ja", "20 August 2008", "2008-08-20"), ("ru", "13 января 2019", "2019-01-13"), ("es", "12 de marzo de 2019",
                                                                                  "2019-03-12"),
    ("pl", "12 maja 2019", "2019-05-12"), ("nl", "12 maart 2019", "2019-03-12"), ("zh", "2019年3月12日", "2019-03-12"),
    ("de", "2010", "2010"), ("de", "ohne Datum", None), ("fr", "", None),
])
def test_citation_dates_are_read_in_the_language(code, text, iso):
    assert wiki_language(code).iso_date(text) == iso


# ---- citations and sections ---------------------------------------------------------------------------------------

GERMAN = """Berlin ist die Hauptstadt Deutschlands.<ref>{{Internetquelle |url=https://www.berlin.de/a.html |titel=Hauptstadt \
|werk=Berlin.de |datum=2019-04-18 |abruf=1. März 2020 |archiv-url=https://web.archive.org/web/2020/https://www.berlin.de/a.html \
|offline=ja}}</ref> Die Stadt hat zwölf Bezirke.<ref>{{Webarchiv |url=https://www.bezirke.example.de/liste \
|wayback=20150101000000 |text=Die Bezirke}}</ref> Sie wurde 1237 erstmals erwähnt.<ref>{{Literatur |Autor=A. B. \
|Titel=Geschichte |Verlag=V |Jahr=2001}}</ref>

== Einzelnachweise ==
Ein Satz im Anhang mit Beleg.<ref>{{Internetquelle |url=https://www.example.de/x |titel=X}}</ref>
"""


def test_german_citations_sections_and_dates():
    statements = extract(GERMAN, "de")
    assert [s.text for s in statements] == ["Berlin ist die Hauptstadt Deutschlands.", "Die Stadt hat zwölf Bezirke."]
    web, archived = (s.citation for s in statements)
    assert (web.type, web.url, web.title, web.work, web.date, web.access_date, web.url_status) == (
        "cite web", "https://www.berlin.de/a.html", "Hauptstadt", "Berlin.de", "2019-04-18", "2020-03-01", "dead")
    assert web.fetch_url == web.archive_url == "https://web.archive.org/web/2020/https://www.berlin.de/a.html"
    assert (archived.type, archived.url, archived.title, archived.archive_date) == (
        "webarchive", "https://www.bezirke.example.de/liste", "Die Bezirke", "2015-01-01")
    assert archived.archive_url == "https://web.archive.org/web/20150101000000/https://www.bezirke.example.de/liste"


def test_the_same_page_read_as_english_keeps_nothing_of_it():
    """The override matters: German templates are not citations of a kept type to the English table."""
    assert extract(GERMAN, "en") == []
    assert classify_ref("{{Internetquelle|url=https://a.example.de/}}") == "bare url"  # a link in an unknown template
    assert classify_ref("{{Internetquelle|url=https://a.example.de/}}", wiki_language("de")) == "cite web"


FRENCH = """Paris est la capitale de la France.<ref>{{Lien web |titre=Paris |url=https://www.paris.fr/p \
|site=paris.fr |consulté le=1 janvier 2021}}</ref> La ville compte vingt arrondissements.<ref>{{Lien brisé \
|url=https://mort.example.fr/a |titre=Arrondissements}}</ref> Elle est traversée par la Seine.<ref>{{Article \
|titre=La Seine |périodique=Le Monde |date=3 avril 2017 |lire en ligne=https://www.lemonde.fr/seine}}</ref>

== Notes et références ==
Une phrase des notes.<ref>{{Lien web |titre=N |url=https://www.example.fr/n}}</ref>
"""


def test_french_citations_dead_links_and_sections():
    statements = extract(FRENCH, "fr")
    assert [s.text for s in statements] == ["Paris est la capitale de la France.",
                                            "La ville compte vingt arrondissements.", "Elle est traversée par la Seine."]
    web, dead, article = (s.citation for s in statements)
    assert (web.type, web.title, web.work, web.access_date) == ("cite web", "Paris", "paris.fr", "2021-01-01")
    assert dead.url_status == "dead"  # {{Lien brisé}} cites a dead link
    assert (article.type, article.url, article.work, article.date) == (
        "cite magazine", "https://www.lemonde.fr/seine", "Le Monde", "2017-04-03")


def test_the_full_stop_after_the_ref_ends_the_statement_it_cites():
    """Japanese, Chinese and French put the citation before the full stop: the 。 or . after the ref is the cited
    statement's, not the next one's."""
    text = ("ベルリンはドイツの首都である<ref>{{Cite web|url=https://a.example.jp/|title=A|accessdate=2008年8月20日}}</ref>。"
            "人口は約370万人である<ref>{{Cite web|url=https://b.example.jp/|title=B}}</ref>"
            "<ref>{{Cite web|url=https://c.example.jp/|title=C}}</ref>。「壁」は1989年に開かれた"
            "<ref>{{Cite web|url=https://d.example.jp/|title=D}}</ref>」。")
    statements = extract(text, "ja")
    assert [s.text for s in statements] == ["ベルリンはドイツの首都である。", "人口は約370万人である。", "「壁」は1989年に開かれた」。"]
    assert statements[0].citation.access_date == "2008-08-20"
    french = ("L'Autriche est un pays neutre<ref>{{Lien web|url=https://a.example.fr/|titre=A}}</ref>"
              "{{référence insuffisante|date=juillet 2020}}. Est-ce vrai<ref>{{Lien web|url=https://b.example.fr/|"
              "titre=B}}</ref> ? Il mesure 3<ref>{{Lien web|url=https://c.example.fr/|titre=C}}</ref>.5 m de haut, "
              "dit-on<ref>{{Lien web|url=https://d.example.fr/|titre=D}}</ref> [[Paris|à Paris]].")
    assert [s.text for s in extract(french, "fr")] == [
        "L'Autriche est un pays neutre.", "Est-ce vrai?", "Il mesure 3.5 m de haut, dit-on à Paris."]
    chinese = ("柏林是德国的首都和最大的城市，位于德国东北部<ref>{{Cite web|url=https://a.example.cn/|title=A}}</ref>。"
               "柏林的人口约为三百七十万，是欧盟人口第三多的城市<ref>{{Cite web|url=https://b.example.cn/|title=B}}</ref>！")
    assert [s.text for s in extract(chinese, "zh")] == ["柏林是德国的首都和最大的城市，位于德国东北部。",
                                                        "柏林的人口约为三百七十万，是欧盟人口第三多的城市！"]


def test_positional_parameters_and_a_generic_template_typed_citation():
    italian = parse_citation("{{cita web|https://www.comune.example.it/|Il comune}}", "cite web",
                             language=wiki_language("it"))
    assert (italian.url, italian.title) == ("https://www.comune.example.it/", "Il comune")
    polish = wiki_language("pl")
    assert classify_ref("{{Cytuj |tytuł=Strona |url=https://a.example.pl/}}", polish) == "citation"
    assert classify_ref("{{Cytuj |tytuł=Książka |isbn=978-83-01-00000-0}}", polish) == "citation (book)"


def test_language_templates_do_not_leak_into_english():
    """A German silent template is a hole (its statement dropped) when the page is read as English."""
    text = "Die Stadt wächst seit 2010 stark{{Belege fehlen}} weiter.<ref>{{cite web|url=https://a.example/|title=A}}</ref>"
    assert [s.text for s in extract(text, "de")] == ["Die Stadt wächst seit 2010 stark weiter."]
    assert extract(text, "en") == []


# ---- the dump's language and the commands ------------------------------------------------------------------------


def _dump(path: Path, dbname: str | None, xml_lang: str | None, body: str = GERMAN) -> Path:
    lang = f' xml:lang="{xml_lang}"' if xml_lang else ""
    site = f"<siteinfo><sitename>W</sitename><dbname>{dbname}</dbname></siteinfo>" if dbname else ""
    from xml.sax.saxutils import escape

    xml = (f'<mediawiki xmlns="http://www.mediawiki.org/xml/export-0.10/" version="0.10"{lang}>{site}<page>'
           f"<title>Berlin</title><ns>0</ns><id>5</id><revision><id>50</id><timestamp>2021-06-01T00:00:00Z</timestamp>"
           f"<text>{escape(body)}</text></revision></page></mediawiki>")
    path.write_bytes(bz2.compress(xml.encode()))
    return path


@pytest.mark.parametrize(("dbname", "xml_lang", "expected"), [
    ("dewiki", "de", "de"), ("dewiki", None, "de"), ("samplewiki", "en", "en"), (None, "fr", "fr"),
    (None, None, None), ("enwiki", "en", "en"), ("xxwiki", "xx", "xx"), ("zh_yuewiki", None, "zh-yue"),
])
def test_the_dump_header_states_the_language(tmp_path, dbname, xml_lang, expected):
    assert dump_language(_dump(tmp_path / "d.xml.bz2", dbname, xml_lang)) == expected


def wikiref(*argv: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "trainer_scripts.cli", *argv], cwd=cwd, capture_output=True, text=True,
                          timeout=300)


def _statements(folder: Path) -> list[dict]:
    return [json.loads(line) for shard in sorted(folder.glob("*.jsonl.gz"))
            for line in gzip.open(shard, "rt", encoding="utf-8")]


def test_statements_command_reads_the_language_from_the_dump_and_refuses_what_it_cannot_read(tmp_path):
    german = _dump(tmp_path / "dewiki-pages-articles.xml.bz2", "dewiki", "de")
    done = wikiref("statements", german.name, "--out", "de", "--quiet", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert [row["metadata"]["access_date"] for row in _statements(tmp_path / "de")] == ["2020-03-01", None]
    assert "\n  language: German (de): stated by the dump header\n" in done.stdout
    as_english = wikiref("statements", german.name, "--out", "as_en", "--language", "en", "--quiet", cwd=tmp_path)
    assert as_english.stdout.startswith("statements: 0 from 1 pages")
    assert "\n  language: English (en): given with --language\n" in as_english.stdout
    headless = wikiref("statements", _dump(tmp_path / "export.xml.bz2", None, None).name, "--out", "headless",
                       "--quiet", cwd=tmp_path)
    assert "\n  language: English (en): the default, as the dump header states none\n" in headless.stdout
    # an excerpt that kept the header it was cut from (the dbpedia minidumps: "jawiki-…" saying enwiki) is read as
    # the header says, with a warning that names the way out
    excerpt = wikiref("statements", _dump(tmp_path / "jawiki-minidump.xml.bz2", "enwiki", "en").name, "--out",
                      "excerpt", "--quiet", cwd=tmp_path)
    assert excerpt.returncode == 0, excerpt.stderr
    assert ("jawiki-minidump.xml.bz2: the file name names another Wikipedia than the header (en); read as en. Pass "
            "--language ja if the header is wrong") in excerpt.stderr
    assert ("\n  language: English (en): stated by the dump header (the file name says otherwise: --language ja if "
            "the header is wrong)\n") in excerpt.stdout
    assert "file name" not in done.stderr + done.stdout  # dewiki-… saying dewiki

    unknown = _dump(tmp_path / "xxwiki.xml.bz2", "xxwiki", None)
    refused = wikiref("statements", unknown.name, "--out", "xx", cwd=tmp_path)
    assert refused.returncode == 2 and not (tmp_path / "xx").exists()
    assert refused.stderr.count("\n") == 1 and "'xx' is not supported" in refused.stderr

    french = _dump(tmp_path / "frwiki.xml.bz2", "frwiki", "fr", FRENCH)
    mixed = wikiref("statements", german.name, french.name, "--out", "mixed", cwd=tmp_path)
    assert mixed.returncode == 2 and "different Wikipedias (de: dewiki-pages-articles.xml.bz2; fr: frwiki" in mixed.stderr

    build = wikiref("build", unknown.name, "--out", "wikiref", cwd=tmp_path)  # refused before any work
    assert build.returncode == 2 and "'xx' is not supported" in build.stderr and build.stderr.count("\n") == 1
    assert not (tmp_path / "wikiref").exists() and not (tmp_path / "wikiref.work").exists()


@pytest.mark.skipif(not MULTILINGUAL.is_dir(), reason="../shared/realdata is not beside the project")
@pytest.mark.parametrize(("code", "at_least"), [("de", 60), ("fr", 20), ("es", 12), ("it", 10), ("ja", 100),
                                                ("pt", 50), ("pl", 20), ("sv", 25), ("fi", 18), ("ru", 5), ("zh", 4)])
def test_real_excerpts_keep_their_statements(code, at_least):
    """The real dump excerpts (their headers say enwiki: the language is given), read in process."""
    from wikiref_dataset.wiki.dump import iter_pages

    extractor = StatementExtractor(StatementConfig(language=code))
    statements = [s for wiki_page in iter_pages(MULTILINGUAL / f"{code}wiki-minidump.xml.bz2")
                  for s in extractor.extract(wiki_page)]
    assert len(statements) >= at_least, extractor.stats
    assert extractor.stats["pages_failed"] == 0
    assert all(s.citation.fetch_url.startswith("http") for s in statements)
    assert not [s.text for s in statements if s.text[0] in "。、，.,;:"]


def test_local_file_links_numbers_and_french_dates():
    """Found by hand-checking the real excerpts: captions of [[Fil:...|miniatyr|...]] leaked into statements,
    {{formatnum}} grouped numbers with English commas (60,000 is sixty in French: now 60 000, as frwiki shows it), and
    French {{date|29 9 2019}} came out as written (now 29 septembre 2019, from the French table)."""
    swedish = ("[[Fil:Berlin 1700.jpg|miniatyr|Berlin omkring 1700.]]\nSedan 1618 var Brandenburg i personalunion med "
               "Preussen.<ref>{{Webbref |url=https://a.example.se/ |titel=A |hämtdatum=29 maj 2013}}</ref>")
    (statement,) = extract(swedish, "sv")
    assert statement.text == "Sedan 1618 var Brandenburg i personalunion med Preussen."
    assert statement.citation.access_date == "2013-05-29"
    french = ("Les alévis sont environ {{formatnum:60000}} en Autriche.<ref>{{Lien web |url=https://a.example.fr/ "
              "|titre=A}}</ref> La loi date du {{date|29 9 2019}}.<ref>{{Lien web |url=https://b.example.fr/ "
              "|titre=B}}</ref>")
    statements = extract(french, "fr")
    assert [s.text for s in statements] == ["Les alévis sont environ 60 000 en Autriche.",
                                            "La loi date du 29 septembre 2019."]
    english = "About {{formatnum:60000}} people live there.<ref>{{cite web|url=https://a.example/|title=A}}</ref>"
    assert [s.text for s in extract(english, "en")] == ["About 60,000 people live there."]


FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "multilingual"


@pytest.mark.parametrize(("code", "expected"), [
    ("de", {"7001-1", "7001-2", "7001-3", "7001-5", "7001-6"}),  # 8 statements, 3 outside the length bounds
    ("ja", {"8001-0", "8001-1", "8001-3", "8001-4", "8001-5", "8001-6"}),
    ("zh", {"9001-1", "9001-2", "9001-3", "9001-4"}),  # jieba's words
])
def test_german_japanese_and_chinese_builds_load_and_say_their_language(tmp_path, code, expected):
    """A whole build from a German, a Japanese and a Chinese dump (their headers say which) and the WARC of their
    cited pages, in a fresh process; the folder loads with load_dataset, the card and build.json name the language and
    the ROUGE, and the oracle found each statement's sentence in its page."""
    import datasets

    folder = FIXTURES / code
    done = wikiref("build", str(folder / f"{code}wiki-20240601-pages-articles.xml"), "--warc",
                   str(folder / "pages.warc.gz"), "--out", "out", "--quiet", cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "lemma table" not in done.stderr
    rows = [row for split in datasets.load_dataset(str(tmp_path / "out")).values() for row in split]
    assert {row["id"] for row in rows} == expected
    for row in rows:
        assert row["summary"] and row["summary"][0] not in "。、" and sum(row["oracle_label"]) >= 1
        assert row["oracle_rouge2_recall"] > 0.5  # the statement is (nearly) a sentence of its page
    card = (tmp_path / "out" / "README.md").read_text(encoding="utf-8")
    assert f"language:\n- {code}\n" in card and f"Unicode ROUGE: words of spaCy's '{code}' tokenizer" in card
    build = json.loads((tmp_path / "out.work" / "build.json").read_text(encoding="utf-8"))
    assert build["language"] == code and build["rouge"].startswith("Unicode ROUGE")
    # the card states the statement rules used: bare links are German's and Japanese's default, not Chinese's
    bare = "kept" if code in ("de", "ja") else "not kept"
    assert ("with the sentence-final punctuation that follows the ref; a sentence holding several refs goes to its "
            "last ref; a lead-in ending with a colon is cut; citation types kept: cite web" in card
            and f"refs that hold only a link: {bare} (the language's default)" in card), card
    if code == "ja":  # the 。 after the ref is the statement's
        assert sum(row["summary"].endswith("。") for row in rows) >= len(rows) - 1, [row["summary"] for row in rows]
    if code == "de":  # the Weblinks section is skipped, the image caption is no statement, the access date is ISO
        row = next(row for row in rows if row["id"] == "7001-1")  # cites a reused named ref
        assert row["summary"] == "Die Stadt hat rund 12.000 Einwohner und gehört zum Landkreis Grünwald."
        assert not any("Kapelle am Hafen" in row["summary"] for row in rows)
    else:
        assert any(row["section_path"] == {"ja": ["歴史"], "zh": ["历史"]}[code] for row in rows)


def test_psg2sum_mines_a_german_history_with_german_text_and_rouge(tmp_path):
    """PSG2SUM on a dewiki history (the language from its header): the German lead sentence and passage are paired,
    the image caption is not text, the card says the language and the baselines are scored with the Unicode ROUGE."""
    import datasets

    done = wikiref("psg2sum", str(FIXTURES / "de" / "dewiki-20240601-pages-meta-history.xml"), "--out", "psg",
                   "--validation-size", "0", "--test-size", "0", cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    rows = list(datasets.load_dataset(str(tmp_path / "psg"))["train"])
    assert [(row["summary"], row["passage"]) for row in rows] == [(
        "Jedes Jahr im Juli feiert die Stadt drei Tage lang das Seefest am Hafen.",
        "Das Seefest am Hafen dauert drei Tage und wird jedes Jahr im Juli gefeiert. Höhepunkt ist ein Ruderrennen der "
        "Vereine.")]
    card = (tmp_path / "psg" / "README.md").read_text(encoding="utf-8")
    assert "language:\n- de\n" in card and "Unicode ROUGE" in card
    assert "| LEAD1 |" in card and "| LEAD1 | 0.00" not in card  # the baselines scored German words
