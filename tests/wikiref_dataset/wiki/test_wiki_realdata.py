"""Statements of real Wikipedia dumps (../shared/realdata/wikipedia_dump; skipped when absent).

The 32 expected statements below were checked by hand against the wikitext of the sample dump (2016 revisions of
Alberta, Andre Agassi and Alaska): the text between the previous citation (or the paragraph start) and the ref,
rendered to plain text; the heading path; and the url of the first citation of the ref group (named refs resolved).
"""

import re
from collections import Counter
from pathlib import Path

import pytest

from wikiref_dataset.wiki.dump import iter_pages
from wikiref_dataset.wiki.statements import DEFAULT_KEEP_TYPES, Statement, StatementConfig, StatementExtractor

REALDATA = Path(__file__).resolve().parents[4] / "shared" / "realdata" / "wikipedia_dump"
SAMPLE = REALDATA / "enwiki-pages-articles-sample.xml.bz2"
TABLES = REALDATA / "enwiki-table-markup.xml.bz2"


def _extract(path: Path) -> tuple[list[Statement], Counter]:
    if not path.is_file():
        pytest.skip(f"{path} is not present")
    extractor = StatementExtractor()
    statements = [statement for page in iter_pages(path) for statement in extractor.extract(page)]
    return statements, extractor.stats


@pytest.fixture(scope="module")
def sample() -> tuple[list[Statement], Counter]:
    return _extract(SAMPLE)


@pytest.fixture(scope="module")
def tables() -> tuple[list[Statement], Counter]:
    return _extract(TABLES)


def test_counts_on_the_sample(sample):
    statements, stats = sample
    assert stats["pages"] == 106 and stats["pages_failed"] == 0
    assert Counter(s.citation.type for s in statements) == {"cite web": 1737, "cite news": 249,
                                                            "cite press release": 8, "citation": 23, "wayback": 34}
    assert stats["statements"] == len(statements) == 2051
    # refs inside a sentence that goes on: the sentence goes whole to its last ref (513 refs give no statement of their
    # own, 398 are the last ref of their sentence and get its rest); with fragments, 2,201 statements
    assert (stats["refs_mid_sentence"], stats["refs_inside_later_statement"], stats["mid_sentence_completed"]) == (
        1037, 513, 398)
    assert stats["mid_sentence_unaligned"] == 0
    # six statements end with a lead-in ("… are as follows:"): cut, five of them were nothing else
    assert (stats["lead_ins_cut"], stats["dropped_lead_in"]) == (6, 5)
    # what is not kept is counted by type (refs that give no statement of their own are not typed)
    assert stats["skipped/cite book"] == 847 and stats["skipped/cite journal"] == 692
    assert stats["skipped/text"] == 1553 and stats["skipped/harvnb"] == 424 and stats["skipped/sfn"] == 187
    assert stats["bare_urls_skipped"] == 553
    assert stats["named_refs_resolved"] == 1476 and stats["refs_unresolved"] == 0
    assert stats["archive_urls_used"] == 347
    # one sentence holds a <math> formula after its ref (39-14, see test_holes_are_dropped_and_counted)
    assert stats["dropped_markup"] == 0 and stats["dropped_unrendered_template"] == 1
    # {{citation}} is kept only with a url and for a web page or periodical; its other uses are counted apart
    assert (stats["skipped/citation (book)"], stats["skipped/citation (journal)"],
            stats["skipped/citation (no url)"]) == (27, 5, 4)
    assert len({s.id for s in statements}) == len(statements)


# (page, position, section path, statement, url) — verified by reading the wikitext. A sentence that holds several refs
# is its last ref's statement; a ref inside a sentence that a later ref of it closes gives no statement (None)
EXPECTED = [
    ("Alberta", 0, [],
     "Alberta is a western province of Canada. With an estimated population of 4,196,457 as of July 1, 2015, it is "
     "Canada's fourth-most populous province and the most populous of Canada's three prairie provinces.",
     "http://www12.statcan.gc.ca/census-recensement/2011/dp-pd/hlt-fst/pd-pl/Table-Tableau.cfm?LANG=Eng&T=101&S=50"
     "&O=A"),
    ("Alberta", 1, [],
     "Alberta and its neighbour Saskatchewan were districts of the Northwest Territories until they were established "
     "as provinces on September 1, 1905.",
     "http://www.abheritage.ca/abpolitics/events/becoming_province.html"),
    ("Alberta", 2, [],
     "Alberta is bounded by the provinces of British Columbia to the west and Saskatchewan to the east, the Northwest "
     "Territories to the north, and the US state of Montana to the south. Alberta is one of three Canadian provinces "
     "and territories to border only a single US state and one of only two landlocked provinces. It has a "
     "predominantly humid continental climate, with stark contrasts over a year but seasonal temperature average "
     "swings are smaller than to areas further east, due to winters being warmed by occasional chinook winds "
     "bringing sudden warming.",
     "http://www.theweathernetwork.com/news/articles/chinook-winds-and-alberta-weather/43265/"),
    ("Alberta", 3, [],
     "Alberta's capital Edmonton is near the geographic centre of the province and is the primary supply and service "
     "hub for Canada's crude oil, oil sands (Athabasca oil sands) and other northern resource industries.",
     "http://www.neb.gc.ca/clf-nsi/rnrgynfmtn/nrgyrprt/nrgyvrvw/cndnnrgyvrvw2007/cndnnrgyvrvw2007-eng.html#s4_2"),
    ("Alberta", 4, [],
     "About 290 km south of the capital is Calgary, the largest city in Alberta.",
     "http://www12.statcan.gc.ca/census-recensement/2011/dp-pd/hlt-fst/pd-pl/Table-Tableau.cfm?LANG=Eng&T=205&S=3"
     "&RPP=50"),
    ("Alberta", 5, [],
     "Calgary and Edmonton centre Alberta's two census metropolitan areas, both of which have populations exceeding "
     "one million, while the province has 16 census agglomerations.",
     "http://www12.statcan.ca/census-recensement/2011/dp-pd/hlt-fst/pd-pl/Table-Tableau.cfm?LANG=Eng&T=202&SR=1&S=0"
     "&O=D&RPP=50&CMA=0&PR=48"),
    ("Alberta", 6, ["Etymology"],
     "Alberta is named after Princess Louise Caroline Alberta (1848–1939), the fourth daughter of Victoria, Queen of "
     "Canada, and Albert, Prince Consort.",
     "http://alberta.ca/history.cfm"),
    ("Alberta", 7, ["Etymology"],
     "Princess Louise was the wife of the Marquess of Lorne, Governor General of Canada (1878–83). Lake Louise and "
     "Mount Alberta were also named in her honour.",
     "http://www.albertacentennial.ca/history/viewpost.aspx~id=249.html"),
    ("Alberta", 8, ["Geography"],
     "Alberta, with an area of 661,848 km², is the fourth largest province after Quebec, Ontario, and British "
     "Columbia.",
     "http://www40.statcan.ca/l01/cst01/phys01.htm"),
    ("Alberta", 9, ["Geography"],
     "The province extends 1,223 km north to south and 660 km east to west at its maximum width. Its highest point "
     "is 3,747 m at the summit of Mount Columbia in the Rocky Mountains along the southwest border, while its lowest "
     "point is 152 m on the Slave River in Wood Buffalo National Park in the northeast.",
     "http://www.alberta.ca/home/90.cfm"),
    ("Alberta", 13, ["Geography", "Climate"],
     "Alberta has a humid continental climate with warm summers and cold winters. The province is open to cold "
     "arctic weather systems from the north, which often produce extremely cold conditions in winter. As the fronts "
     "between the air masses shift north and south across Alberta, the temperature can change rapidly. Arctic air "
     "masses in the winter produce extreme minimum temperatures varying from -54 °C in northern Alberta to -46 °C in "
     "southern Alberta, although temperatures at these extremes are rare. In the summer, continental air masses have "
     "produced record maximum temperatures from 32 °C in the mountains to over 40 °C in southeastern Alberta.",
     "http://www1.agric.gov.ab.ca/$department/deptdocs.nsf/all/sag6299"),
    ("Alberta", 17, ["Geography", "Climate"],
     "In southwestern Alberta, the cold winters are frequently interrupted by warm, dry chinook winds blowing from "
     "the mountains, which can propel temperatures upward from frigid conditions to well above the freezing point in "
     "a very short period. During one chinook recorded at Pincher Creek, temperatures soared from -19 to 22 °C in "
     "just one hour.",
     "http://www.alberta.ca/home/90.cfm"),
    ("Andre Agassi", 0, [],
     "Andre Kirk Agassi (born April 29, 1970) is an American retired professional tennis player and former World "
     "No. 1, who was one of the game's most dominant players from the early 1990s to the mid-2000s.",
     "http://www.thebiographychannel.co.uk/biographies/andre-agassi.html"),
    ("Andre Agassi", 1, [],
     None,
     "http://sportsillustrated.cnn.com/multimedia/photo_gallery/1009/top.ten.tennis/content.4.html"),
    ("Andre Agassi", 2, [],
     "Generally considered by critics and fellow players to be one of the greatest tennis players of all time, "
     "Agassi had been called the greatest service returner in the history of the game.",
     "http://www.cbc.ca/sports/columns/newsmakers/andre-agassi.html"),
    ("Andre Agassi", 4, [],
     "As a result, he is credited for helping to revive the popularity of tennis during the 1990s.",
     "http://www.cbc.ca/sports/columns/newsmakers/andre-agassi.html"),
    ("Andre Agassi", 5, [],
     "In singles tennis, Agassi is an eight-time Grand Slam champion and a 1996 Olympic gold medalist, as well as "
     "finishing runner-up in seven other Grand Slam tournaments. During the Open Era, Agassi is the first male "
     "player to win 4 Australian Open titles and those were an Open Era record until Novak Djokovic won his 5th "
     "title on February 1, 2015.",
     "http://latimesblogs.latimes.com/olympics_blog/2008/08/federer-gets-hi.html"),
    ("Andre Agassi", 7, [],
     None,
     "http://www.fft.fr/rolandgarros/default_en.asp?ID=1576"),
    ("Andre Agassi", 8, [],
     "Agassi was the first male player to win all four Grand Slam tournaments on three different surfaces (hard, "
     "clay and grass), and the last American male to win the French Open, in 1999 and the Australian Open (2003).",
     "http://www.australianopen.com/en_AU/event_guide/history/players/107.html"),
    ("Andre Agassi", 12, [],
     "After suffering from sciatica caused by two bulging discs in his back, a spondylolisthesis (vertebral "
     "displacement) and a bone spur that interfered with the nerve, Agassi retired from professional tennis on "
     "September 3, 2006, after losing in the third round of the US Open to Benjamin Becker.",
     "http://www.agassifoundation.org/"),
    ("Andre Agassi", 13, [],
     "He is the founder of the Andre Agassi Charitable Foundation, which has raised over $60 million for at-risk "
     "children in Southern Nevada.",
     "http://www.atptennis.com/en/players/tribute/agassi/agassi_charity.asp"),
    ("Andre Agassi", 16, ["1970–85: Early life"],
     "His father, a former Olympic boxer for Iran, stated he is from a mixed, mostly Armenian, heritage. He later "
     "elaborated that his grandfather was Assyrian.",
     "http://www.persianmirror.com/culture/famous/bios/andreagassi.cfm"),
    ("Alaska", 3, ["Geography"],
     "The state is bordered by Yukon and British Columbia in Canada, to the east, the Gulf of Alaska and the Pacific "
     "Ocean to the south, the Bering Sea, Bering Strait, and Chukchi Sea to the west and the Arctic Ocean to the "
     "north. Alaska's territorial waters touch Russia's territorial waters in the Bering Strait, as the Russian Big "
     "Diomede Island and Alaskan Little Diomede Island are only 3 mi apart. Alaska has a longer coastline than all "
     "the other U.S. states combined.",
     "http://www.gi.alaska.edu/ScienceForum/ASF14/1404.html"),
    ("Alaska", 4, ["Geography", "Regions", "Southeast"],
     "Also referred to as the Panhandle or Inside Passage, this is the region of Alaska closest to the rest of the "
     "United States. As such, this was where most of the initial non-indigenous settlement occurred in the years "
     "following the Alaska Purchase. The region is dominated by the Alexander Archipelago as well as the Tongass "
     "National Forest, the largest national forest in the United States. It contains the state capital Juneau, the "
     "former capital Sitka, and Ketchikan, at one time Alaska's largest city.",
     "http://www.sitnews.us/Kiffer/Ketchikan/043007_ketchikan_1927.html"),
    ("Alaska", 5, ["Geography", "Regions", "North Slope"],
     "The North Slope is mostly tundra peppered with small villages. The area is known for its massive reserves of "
     "crude oil, and contains both the National Petroleum Reserve–Alaska and the Prudhoe Bay Oil Field.",
     "http://www.alaska.com/regions/"),
    ("Alaska", 7, ["Geography", "Natural features"],
     "Alaska has more than three million lakes.",
     "http://dnr.alaska.gov/mlw/water/hydro/components/surface-water.cfm"),
    ("Alaska", 9, ["Geography", "Climate"],
     "The climate in Southeast Alaska is a mid-latitude oceanic climate (Köppen climate classification: Cfb) in the "
     "southern sections and a subarctic oceanic climate (Köppen Cfc) in the northern parts. On an annual basis, "
     "Southeast is both the wettest and warmest part of Alaska with milder temperatures in the winter and high "
     "precipitation throughout the year. Juneau averages over 50 in of precipitation a year, and Ketchikan averages "
     "over 150 in.",
     "http://www.wrcc.dri.edu/cgi-bin/cliMAIN.pl?akketc"),
    ("Alaska", 11, ["Geography", "Climate"],
     "The highest and lowest recorded temperatures in Alaska are both in the Interior.",
     "http://www.arh.noaa.gov/docs/AKWXfacts.pdf"),
    ("Alaska", 12, ["Geography", "Climate"],
     "The highest is 100 °F in Fort Yukon (which is just 8 mi inside the arctic circle) on June 27, 1915, making "
     "Alaska tied with Hawaii as the state with the lowest high temperature in the United States.",
     "http://www.crh.noaa.gov/fsd/?n=fsdtrivia05"),
    ("Alaska", 13, ["Geography", "Climate"],
     None,
     "http://www.arh.noaa.gov/docs/AKWXfacts.pdf"),
    ("Alaska", 26, ["Demographics"],
     "Alaska is the least densely populated state, and one of the most sparsely populated areas in the world, at "
     "1.2/sq mi, with the next state, Wyoming, at 5.8/sq mi.",
     "http://2010.census.gov/2010census/data/apportionment-dens-text.php"),
    ("Alaska", 28, ["Demographics"],
     "As of November 2014, the state's unemployment rate was 6.6%.",
     "http://www.bls.gov/lau/"),
]


def _by_key(statements: list[Statement]) -> dict[tuple[str, int], Statement]:
    return {(s.page_title, s.position): s for s in statements}


@pytest.mark.parametrize("page, position, section_path, text, url", EXPECTED,
                         ids=[f"{row[0]}-{row[1]}" for row in EXPECTED])
def test_hand_checked_statements(sample, page, position, section_path, text, url):
    statement = _by_key(sample[0]).get((page, position))
    if text is None:
        assert statement is None, f"{page} #{position}: its sentence goes to a later ref, got {statement.text!r}"
        return
    assert statement is not None, f"no statement {page} #{position}"
    assert statement.section_path == section_path
    assert statement.text == text
    assert statement.citation.url == url


@pytest.mark.parametrize("page, position, ref_name, where", [
    ("Alberta", 0, "Alberta", "defined in the infobox"),
    ("Alberta", 4, "StatCan2011CMAs", "defined later, in a table"),
    ("Andre Agassi", 2, "cba", "defined earlier, third ref of a group"),
    ("Albedo", 4, "washington", "list-defined in {{Reflist|30em|refs=...}}"),
    ("Albedo", 5, "clim-past", "list-defined in {{Reflist|30em|refs=...}}"),
    ("Albedo", 6, "Smith Robin", "list-defined, with an archive"),
])
def test_named_refs_are_resolved(sample, page, position, ref_name, where):
    statement = _by_key(sample[0])[(page, position)]
    assert statement.citation.ref_name == ref_name, where
    assert statement.citation.url.startswith("http")


@pytest.mark.parametrize("page, position, status, fetch_url", [
    # deadurl=yes + archiveurl → the archive
    ("Alberta", 7, "dead",
     "https://web.archive.org/20120311014923/http://www.albertacentennial.ca/history/viewpost.aspx~id=249.html"),
    # archiveurl without deadurl → the archive (CS1 default), protocol-relative made https
    ("Alberta", 9, None, "https://web.archive.org/web/20101119101021/http://alberta.ca/home/90.cfm"),
    # deadurl=no, but a later {{Dead link}} in the same ref → the archive
    ("Alberta", 8, "dead", "https://web.archive.org/web/20070210220013/http://www40.statcan.ca/l01/cst01/phys01.htm"),
    # deadurl=no → the original
    ("Andre Agassi", 12, "live", "http://www.agassifoundation.org/"),
    # a named ref (cba) whose definition has deadurl=yes
    ("Andre Agassi", 2, "dead",
     "https://web.archive.org/20090725010912/http://www.cbc.ca:80/sports/columns/newsmakers/andre-agassi.html"),
    # a WebCite archive
    ("Andre Agassi", 16, "dead", "http://www.webcitation.org/5gzbWaTky"),
    # list-defined ref with an archive and no status
    ("Albedo", 6, None,
     "http://web.archive.org/web/20090920212836/http://www.mpimet.mpg.de/fileadmin/staff/smithrobin/IC_JClim-final.pdf"),
])
def test_archive_urls(sample, page, position, status, fetch_url):
    citation = _by_key(sample[0])[(page, position)].citation
    assert citation.url_status == status
    assert citation.fetch_url == fetch_url
    assert citation.archive_url is not None
    assert (citation.fetch_url == citation.url) == (status == "live")


MARKUP = re.compile(r"\{\{|\}\}|\[\[|\]\]|<ref|</|<!--|-->|'''|''|\{\||\|\}|File:|Image:|Category:|thumb\||"
                    r"<br|<span|<sup|&[a-z]+;|&#\d+;|__[A-Z]+__|\ue000", re.IGNORECASE)


@pytest.mark.parametrize("which", ["sample", "tables"])
def test_no_markup_left_in_any_statement(request, which):
    statements, _ = request.getfixturevalue(which)
    assert statements
    leftovers = [(s.id, MARKUP.search(s.text).group(0), s.text[:120]) for s in statements if MARKUP.search(s.text)]
    assert leftovers == []
    for statement in statements:
        assert statement.text == statement.text.strip() and "  " not in statement.text
        for field in (statement.citation.title, statement.citation.work, statement.citation.publisher):
            assert field is None or not re.search(r"\{\{|\[\[|<ref|'''", field), (statement.id, field)
        assert statement.citation.fetch_url.startswith(("http://", "https://"))


def test_table_markup_dump(tables):
    statements, stats = tables
    assert stats["pages"] == 5 and stats["pages_failed"] == 0
    per_page = Counter(s.page_title for s in statements)
    assert per_page["List of Prison Break characters"] == 0  # tables only
    assert per_page["Economy of Estonia"] == 39  # one {{webarchive}} ref, and "AA-" inside {{nowrap begin}}
    # three {{citation}}s of web pages: the lead sentence's first ref is mid-sentence, the sentence goes to a book;
    # "Below is the new promoted … orthography:" is a lead-in to a table
    assert per_page["Brahui language"] == 1 and stats["dropped_lead_in"] == 1
    assert sum(per_page.values()) == stats["statements"] == 50
    constructive = [s for s in statements if s.page_title == "Constructive vote of no confidence"]
    assert constructive[0].section_path == ["Germany"]
    assert constructive[0].text == "(2) Forty-eight hours must elapse between the motion and the vote thereon."


@pytest.fixture(scope="module")
def broad_sample() -> tuple[list[Statement], Counter]:
    """The sample with books, journals and bare links kept too: more statements to look for holes in."""
    if not SAMPLE.is_file():
        pytest.skip(f"{SAMPLE} is not present")
    extractor = StatementExtractor(StatementConfig(
        keep_types=DEFAULT_KEEP_TYPES + ("cite book", "cite journal", "cite encyclopedia"), include_bare_urls=True))
    statements = [statement for page in iter_pages(SAMPLE) for statement in extractor.extract(page)]
    return statements, extractor.stats


# What a template or a tag left out of a sentence looks like once rendered (all seen in this sample before the
# templates were rendered or their statements dropped): "was years old", "the -gauge line", "Dari:, Afġānistān",
# "density of in 2011", "as in (read bar)", "a cost of $ (net", "notes A4, B4" for A♭4, "1018" for 10^18.
HOLES = re.compile(r"\b(?:was|is|aged) (?:years|days) old|\bthe -|[:;],|\bof in \d|\bat and\b|\bas in \(|"
                   r"[$£€] [(,.]|\bnotes A4|\b1018\b|\b10002\b|\(\s*[,;)]|\s[,.;:]\s")


@pytest.mark.parametrize("which", ["sample", "tables", "broad_sample"])
def test_no_holes_left_by_templates(request, which):
    statements, stats = request.getfixturevalue(which)
    holes = [(s.id, HOLES.search(s.text).group(0), s.text[:160]) for s in statements if HOLES.search(s.text)]
    assert holes == []
    assert not any("  " in s.text or "()" in s.text for s in statements)


def test_holes_are_dropped_and_counted(broad_sample):
    statements, stats = broad_sample
    # a {{inflation}} amount, three <math> formulas and a formula made of element templates ({{carbon}}n{{hydrogen}});
    # 39-14 is a sentence whose ref stands before its formula ("... diameter is:,<ref/> <math>...</math>"), whole
    assert stats["dropped_unrendered_template"] == 5
    assert stats["unrendered_template/inflation"] == 1 and stats["unrendered_template/math tag"] == 3
    assert stats["unrendered_template/carbon"] == stats["unrendered_template/hydrogen"] == 1
    assert not {"25-218", "612-2", "612-3", "39-14", "639-1"} & {s.id for s in statements}


@pytest.mark.parametrize("statement_id, fragment", [
    ("600-62", "on the 1,435 mm-gauge line"),  # {{RailGauge|1435mm}}
    ("717-47", "it had a population density of 5.7/km² in 2011"),  # {{Pop density|...}}
    ("663-87", "officially reported as 8°08′N 165°01′W in the North Pacific"),  # {{Coord|...}}
    ("737-0", "(Pashto/Dari: افغانستان, Afġānistān)"),  # {{nq|...}}
    ("309-4", "the notes A♭4, B♭4, D5, and A4"),  # {{Music|flat}}
    ("600-1", "an area of 468 km² (181 sq mi)"),  # km<sup>2</sup>, as {{convert}} writes it
    ("666-264", "one francium atom for every 10^18 uranium atoms"),  # 10<sup>18</sup>
    ("677-13", "powers of 1000 (1000, 1000^2 and 1000^3)"),
    ("736-168", "On 11 November 1930, U.S. patent 1,781,541 was awarded"),  # {{US patent|...}}
])
def test_meaning_bearing_templates_are_rendered(broad_sample, statement_id, fragment):
    statement = next(s for s in broad_sample[0] if s.id == statement_id)
    assert fragment in statement.text


def test_archive_first_refs_carry_their_original_url(sample):
    wayback = [s for s in sample[0] if s.citation.type == "wayback"]
    assert len(wayback) == 34
    for statement in wayback:
        citation = statement.citation
        assert citation.url.startswith("http") and "archive.org" not in citation.url
        if citation.archive_url is None:  # {{wayback}} without a date names no capture: the original is fetched
            assert citation.archive_date is None and citation.fetch_url == citation.url
            continue
        stamp = citation.archive_url.split("/")[4]
        assert citation.archive_url == f"https://web.archive.org/web/{stamp}/{citation.url}"
        assert citation.archive_date == f"{stamp[:4]}-{stamp[4:6]}-{stamp[6:8]}"
    assert sum(s.citation.archive_url is None for s in wayback) == 2
    first = _by_key(sample[0])[("Anarchism", 85)].citation  # {{Wayback |date=20090312022528 |url=... |title=...}}
    assert (first.url, first.archive_date) == ("http://www.zabalaza.net/theory/txt_anok_comm_ap.htm", "2009-03-12")
    assert first.title == '"Anarchist-Communism" by Alain Pengam'
