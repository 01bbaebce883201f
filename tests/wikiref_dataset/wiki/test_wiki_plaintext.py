"""Plain text of wikitext: links, tags, the rendered-template table, cleaning, and the markup detector."""

import pytest

from wikiref_dataset.wiki.plaintext import (
    TEMPLATE_RENDERERS,
    canonical_template_name,
    clean_text,
    find_markup,
    format_date,
    render,
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
    ("x<sup>2</sup> H<sub>2</sub>O <small>small</small> <span style='c'>span</span>", "x2 H2O small span"),
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
