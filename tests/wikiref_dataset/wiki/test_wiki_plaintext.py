"""Plain text of wikitext: links, tags, the rendered-template table, cleaning, and the markup detector."""

from datetime import date

import pytest

from wikiref_dataset.wiki.plaintext import (
    HOLE_END,
    HOLE_START,
    SILENT_TEMPLATES,
    TEMPLATE_RENDERERS,
    canonical_template_name,
    clean_text,
    find_holes,
    find_markup,
    format_date,
    is_silent_template,
    render,
    strip_holes,
    superscript,
)

RENDER_CASES = [
    # links
    ("a [[Paris]] b", "a Paris b"),
    ("[[Paris, Texas|Paris]] and [[apple]]s", "Paris and apples"),
    ("[[Pipe (computing)|]] and [[Paris, Texas|]]", "Pipe and Paris"),
    ("[[File:X.jpg|thumb|A caption with [[a link]]]]Text", "Text"),
    ("[[Image:X.png|left]][[Category:Towns]][[fr:Ville]] text", "text"),
    ("[[:Category:Towns|towns]] and [[wikt:word|word]]", "towns and word"),
    ("[https://example.org a label] and https://bare.example.org and [https://x.example.org]", "a label and and"),
    # formatting and tags
    ("'''bold''' ''italic'' '''''both'''''", "bold italic both"),
    ("x<sup>2</sup> H<sub>2</sub>O <small>small</small> <span style='c'>span</span>", "x² H2O small span"),
    ("a<br/>b<br>c", "a b c"),
    ("<s>struck</s>kept <del>gone</del>", "kept"),
    ("before <math>x^2</math> after", "before after"),
    ("a <!-- hidden --> b", "a b"),
    ("&nbsp;x&ndash;y &amp; z", "x–y & z"),
    ("<nowiki>[[literal]]</nowiki>", "[[literal]]"),
    ('{| class="wikitable"\n| cell\n|}\nafter', "after"),
    ("__NOTOC__ text", "text"),
    # templates (the documented table)
    ("{{convert|5|km|mi}}", "5 km"),
    ("{{convert|1000|km2|sqmi}}", "1,000 km²"),
    ("{{convert|5|to|10|ft|m}}", "5 to 10 ft"),
    ("{{convert|5|-|10|mi}}", "5–10 mi"),
    ("{{cvt|5|ft|6|in|m}}", "5 ft 6 in"),
    ("{{convert|-19|to|22|C|F|sigfig=2}}", "-19 to 22 °C"),
    ("{{convert|1.2|PD/sqmi}}", "1.2/sq mi"),
    ("{{lang|fr|Bonjour}} {{lang-de|Hallo}} {{Lang-grc-gre|Ἀριστοτέλης}}", "Bonjour Hallo Ἀριστοτέλης"),
    ("{{transl|ar|DIN|al-Jazāʼir}}", "al-Jazāʼir"),
    ("{{nowrap|5 May 2010}} {{nobr|x y}}", "5 May 2010 x y"),
    ("{{US$|5 million}} {{£|100}} {{€|20}} {{USD|7}}", "US$5 million £100 €20 US$7"),
    ("{{currency|1000|USD}} {{currency|50|XYZ}}", "US$1000 50 XYZ"),
    ("{{format price|1500000}}", "1.5 million"),
    ("{{as of|2010}}, {{as of|2010|5|lc=y}}, {{as of|2010|5|1}}", "As of 2010, as of May 2010, As of 1 May 2010"),
    ("{{as of|2010|5|1|df=US}} {{as of|2012|alt=Since 2012}}", "As of May 1, 2010 Since 2012"),
    ("{{start date|1990|5|3}} {{start date|1990|5|3|df=y}}", "May 3, 1990 3 May 1990"),
    ("{{birth date|1950|1|2}} {{birth date and age|1950|1|2|df=yes}}", "January 2, 1950 2 January 1950"),
    ("{{death date and age|2000|1|1|1920|1|1}}", "January 1, 2000 (aged 80)"),
    ("{{death year and age|2000|1920}}", "2000 (aged 79–80)"),
    ("{{circa|1850}} {{c.|1900}} {{floruit|1200}} {{reign|1066|1087}}", "c. 1850 c. 1900 fl. 1200 r. 1066–1087"),
    ("{{frac|1|2}} {{frac|3|1|2}} {{frac|4}}", "1/2 3 1/2 1/4"),
    ("{{abbr|NASA|National Aeronautics and Space Administration}} {{sic|teh}}", "NASA teh"),
    ("Smith{{'}}s {{'s}} a{{snd}}b{{ndash}}c{{mdash}}d", "Smith's 's a – b–c—d"),
    ("a{{nbsp}}b{{thinsp}}c", "a b c"),
    ("{{IPA|/ˈæləˈbæmə/}} {{IPA-de|ˈhalo}} ({{IPAc-en|ˈ|æ|l}}) x", "/ˈæləˈbæmə/ ˈhalo x"),
    ("{{val|1.2|e=6|u=m}} {{e|3}}", "1.2×10^6 m ×10^3"),
    ("{{formatnum:1234567}} {{lc:ABC}} {{ucfirst:abc}}", "1,234,567 abc Abc"),
    ("{{nihongo|Tokyo|東京|Tōkyō}} {{ill|Foo|de|Foo (Begriff)}}", "Tokyo Foo"),
    ("{{USS|Enterprise|CV-6}} {{HMS|Victory}}", "USS Enterprise (CV-6) HMS Victory"),
    ("{{hlist|a|b|c}}", "a, b, c"),
    ("{{flagicon|France}} {{flag|France}}", "France"),
    # dropped templates
    ("x{{citation needed|date=May 2010}}.", "x."),
    ("{{Infobox country|name=X|population=5}}Text", "Text"),
    ("{{Navbox|title=Y}}{{Main|Other}}{{efn|a note}}z", "z"),
    # cleaning
    ("Alabama ({{IPAc-en|ˌ|æ}}) is", "Alabama is"),
    ("Agassi ({{IPAc-en|ˈ|ɑː}}; born 1970) is", "Agassi (born 1970) is"),
]


@pytest.mark.parametrize("wikitext, expected", RENDER_CASES, ids=[case[0][:40] for case in RENDER_CASES])
def test_render(wikitext, expected):
    text = render(wikitext)
    assert text == expected
    if "literal" not in wikitext:
        assert find_markup(text) is None


@pytest.mark.parametrize("name, canonical", [
    ("Cite_Web", "cite web"), ("  cite   news ", "cite news"), ("Template:Convert", "convert"), ("US$", "us$"),
])
def test_canonical_template_name(name, canonical):
    assert canonical_template_name(name) == canonical


def test_table_names_are_canonical():
    for name in TEMPLATE_RENDERERS:
        assert name == canonical_template_name(name), name


@pytest.mark.parametrize("text, expected", [
    ("a  \n\t b", "a b"),
    ("word , and . end", "word, and. end"),
    ("( x )", "(x)"),
    ("a () b (; ) c", "a b c"),
    ("''stray'' '''quote'''", "stray quote"),
    ("soft\u00adhyphen zero\u200bwidth", "softhyphen zerowidth"),
    ("x\ue0003\ue001y", "xy"),
])
def test_clean_text(text, expected):
    assert clean_text(text) == expected


@pytest.mark.parametrize("text", [
    "a {{b", "c}} d", "[[x", "y]]", "<ref>", "</span>", "<br/>", "<!-- c", "'''bold", "{| t", "t |}",
    "File:X.jpg", "Category:Towns", "thumb|caption", "<div class='x'>",
])
def test_find_markup_flags_markup(text):
    assert find_markup(text) is not None


@pytest.mark.parametrize("text", [
    "Smith's house", "a | b", "x = 5", "3 < 4 and 5 > 2", "R&D costs", "It was 'quoted'.", "[sic] and [a] man",
])
def test_find_markup_accepts_plain_text(text):
    assert find_markup(text) is None


def test_format_date():
    assert format_date("1950") == "1950"
    assert format_date("1950", "1") == "January 1950"
    assert format_date("1950", "Feb", "3") == "February 3, 1950"
    assert format_date("1950", "2", "3", dmy=True) == "3 February 1950"
    assert format_date("1950", "13", "3") == "1950"


# -- meaning-bearing templates, superscripts and holes ----------------------------------------------------------

REVISION_DATE = date(2016, 5, 1)

MEANING_CASES = [
    # the examples of the issue: each used to render as "1018", "He was years old.", "the place", "en"
    ("10<sup>18</sup> atoms", "10^18 atoms"),
    ("He was {{age|1950|1|2}} years old.", "He was 66 years old."),
    ("the {{ordinal|3}} place", "the 3rd place"),
    ("{{Wikt-lang|en|word}}", "word"),
    ("{{wikt-lang|fr|mot|le mot}}", "le mot"),
    # superscripts: powers, units, ordinals, footnote marks, mass numbers
    ("10{{sup|−7}} N", "10^−7 N"),
    ("1024<sup>2</sup>", "1024^2"),
    ("468 km<sup>2</sup> and ''E'' = ''mc''<sup>2</sup>", "468 km² and E = mc²"),
    ("W m<sup>−2</sup>", "W m⁻²"),
    ("the 1<sup>st</sup> and H<sup>+</sup> and <sup>137</sup>Cs", "the 1st and H+ and 137Cs"),
    ("a claim<sup>[1]</sup> here", "a claim here"),
    ("{{10^|18}}", "10^18"),
    # ordinals
    ("{{ordinal|1}} {{ordinal|2}} {{ordinal|11}} {{ordinal|12}} {{ordinal|13}} {{ordinal|21}} {{ordinal|112}}",
     "1st 2nd 11th 12th 13th 21st 112th"),
    # ages and dates relative to today, at the revision's date
    ("{{age|1950|1|2|2000|1|1}}", "49"),
    ("{{age in years|1969|07|20}}", "46"),
    ("{{Age in years, months and days|1775|04|19|1783|09|03}}", "8 years, 4 months and 15 days"),
    ("{{age in days|2016|4|1}}", "30"),
    ("{{birth date and age|1950|1|2}}", "January 2, 1950 (age 66)"),
    ("{{birth date and age|1950|1|2|df=y}}", "2 January 1950 (age 66)"),
    ("{{birth date and age2|2010|1|1|1950|1|2}}", "January 2, 1950 (age 59)"),
    ("{{birth year and age|1950}}", "1950 (age 65–66)"),
    ("in {{CURRENTYEAR}} and {{CURRENTMONTHNAME}}", "in 2016 and May"),
    # places, gauges, quantities
    ("at {{Coord|13|19|N|169|9|W|type:event}}.", "at 13°19′N 169°09′W."),
    ("at {{coord|32.7|-86.7}}.", "at 32.7°N 86.7°W."),
    ("{{coord|32.7|-86.7|display=title}}", ""),
    ("the {{RailGauge|1000mm|allk=on}}-gauge line", "the 1,000 mm-gauge line"),
    ("{{railgauge|sg}} and {{railgauge|3ft6in}}", "1,435 mm and 3 ft 6 in"),
    ("{{Pop density|3645257|640081.87|km2|sqmi|prec=1}}", "5.7/km²"),
    ("{{height|ft=6|in=2}} or {{height|m=1.88}}", "6 ft 2 in or 1.88 m"),
    # names, symbols and references that are words of the sentence
    ("{{US patent|1781541}}", "U.S. patent 1,781,541"),
    ("the notes A{{Music|flat}}4 and C{{music|sharp}}", "the notes A♭4 and C♯"),
    ("{{bibleref|Mark|3:25|9}}", "Mark 3:25"),
    ("{{nq|افغانستان}} {{langx|fr|texte}} {{zh|c=中国|p=Zhōngguó}}", "افغانستان texte 中国; Zhōngguó"),
    ("{{lit|small river}}", "lit. 'small river'"),
    ("{{sclass|Fletcher|destroyer}} and {{ship|USS|Enterprise|CV-6}}", "Fletcher-class destroyer and USS "
                                                                         "Enterprise (CV-6)"),
    ("{{citation needed span|text=Some claim}} and {{clarify span|this}}", "Some claim and this"),
    ("{{aka}} {{ISBN|0-19-852663-6}}", "a.k.a. ISBN 0-19-852663-6"),
]


@pytest.mark.parametrize("wikitext, expected", MEANING_CASES, ids=[case[0][:40] for case in MEANING_CASES])
def test_meaning_bearing_templates(wikitext, expected):
    text = render(wikitext, current_date=REVISION_DATE)
    assert text == expected
    assert find_holes(render(wikitext, current_date=REVISION_DATE, keep_holes=True)) == []


@pytest.mark.parametrize("wikitext, name", [
    ("He was {{age|1950|1|2}} years old.", "age"),
    ("in {{CURRENTYEAR}} dollars", "currentyear"),
])
def test_templates_relative_to_today_are_holes_without_a_date(wikitext, name):
    assert find_holes(render(wikitext, keep_holes=True)) == [name]
    assert render("{{birth date and age|1950|1|2}}") == "January 2, 1950"  # the age is an aside: the date stays


@pytest.mark.parametrize("wikitext, holes", [
    # a template that carries words, inside a sentence
    ("It cost $800 ($ {{inflation|US|800|1861}} today).", ["inflation"]),
    ("a cost of ${{formatnum:{{inflation|US|800|1861}}}} today", ["inflation"]),  # inside a rendered template
    ("the formula {{carbon}}n{{hydrogen}}2n+2 holds", ["carbon", "hydrogen"]),
    ("as in [[Mean|{{overline|x}}]] here", ["overline"]),  # as a link label
    ("before {{#ifexist:Some page|shown}} after", ["#ifexist:"]),  # needs page data
    ("on our soil{{frobnicate}}.", ["frobnicate"]),
    # harmless: before the first word, after a sentence, alone in brackets
    ("{{quote|Words.}} He then left.", []),
    ("It closed in 1990.{{frobnicate}} Then it opened.", []),
    ("Alabama ({{frobnicate|x}}) is a state.", []),
    # silent templates: maintenance tags, note marks, icons, pronunciation, layout
    ("Some say{{who|date=May 2010}} it is{{citation needed}} true{{rp|5}}.", []),
    ("It is{{dubious discuss}} {{flagicon|France}} French ({{IPAc-en|ˈ|f|r}}) and{{better source needed}} fine.", []),
    ("rated {{nowrap begin}}AA-.{{nowrap end}}", []),
])
def test_holes(wikitext, holes):
    assert find_holes(render(wikitext, keep_holes=True)) == holes
    text = render(wikitext)
    assert HOLE_START not in text and HOLE_END not in text and find_markup(text) is None


def test_holes_are_removed_by_default_and_kept_on_request():
    assert render("a {{frobnicate}} b") == "a b"
    assert render("a {{frobnicate}} b", keep_holes=True) == f"a {HOLE_START}frobnicate{HOLE_END} b"
    assert strip_holes(f"a {HOLE_START}x{HOLE_END}b") == "a b"
    assert clean_text(f"(x {HOLE_START}y{HOLE_END})") == "(x)"


@pytest.mark.parametrize("name, silent", [
    ("citation needed", True), ("cn", True), ("rp", True), ("efn", True), ("ipac-en", True), ("flagicon", True),
    ("year needed", True), ("primary source inline", True), ("infobox settlement", True), ("use dmy dates", True),
    ("pp-semi-protected", True), ("defaultsort:smith, john", True),
    ("inflation", False), ("coord missing here", False), ("quote", False), ("cite web", False), ("frobnicate", False),
])
def test_is_silent_template(name, silent):
    assert is_silent_template(name) is silent


def test_rendered_and_silent_tables_are_disjoint_and_canonical():
    assert not SILENT_TEMPLATES & set(TEMPLATE_RENDERERS)
    for name in SILENT_TEMPLATES:
        assert name == canonical_template_name(name), name
    for name in ("convert", "lang", "nowrap", "ordinal", "age", "wikt-lang", "frac", "sup", "sub", "start date",
                 "birth date", "us$", "cvt", "abbr", "sic", "nbsp", "snd", "ndash", "mdash", "coord", "railgauge"):
        assert name in TEMPLATE_RENDERERS, name


@pytest.mark.parametrize("content, before, expected", [
    ("18", "10", "^18"), ("−10", "× 10", "^−10"), ("2", "km", "²"), ("−2", "W m", "⁻²"), ("3", "(a+b)", "³"),
    ("137", " ", "137"), ("137", "", "137"), ("st", "1", "st"), ("+", "H", "+"), ("[1]", "claim", ""),
    ("2−", "SO4", "2−"),
])
def test_superscript(content, before, expected):
    assert superscript(content, before) == expected
