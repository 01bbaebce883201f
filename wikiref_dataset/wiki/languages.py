"""What the statements stage needs to know about one Wikipedia language, read from a data file per language.

Every Wikipedia names its citation templates, their parameters and its non-prose sections in its own language:
German cites the web with ``{{Internetquelle|url=|titel=|abruf=}}`` under ``== Einzelnachweise ==``, French with
``{{Lien web|url=|titre=|consulté le=}}`` under ``== Notes et références ==``. These names are data, not code: each
language has a TOML file in ``wikiref_dataset/data/languages/`` (``de.toml`` ...), read by :func:`wiki_language`,
with

* ``code``, ``name``, ``spacy`` (the spaCy language of its text) and ``date_order`` (``DMY``, ``YMD`` or ``MDY``:
  how its editors write numeric dates such as ``12.03.2019``);
* ``[citation_types]``: template name → the citation type it is counted and kept as (``"internetquelle" = "cite
  web"``). Kept by default are the types of :data:`~wikiref_dataset.wiki.defaults.DEFAULT_KEEP_TYPES`; a template
  mapped to ``"cite book"`` is counted as a book and skipped like an English ``{{cite book}}``;
* ``[parameters]``: citation field (``url``, ``archive_url``, ``archive_date``, ``url_status``, ``access_date``,
  ``title``, ``date``, ``work``, ``publisher``) → the language's parameter names, read before the English (Citation
  Style 1) names, which every language's templates also accept;
* ``[url_status_values]``: a value of a ``url_status`` parameter → ``"dead"`` or ``"live"`` (``"*"``: any other
  non-empty value, for parameters such as German ``offline=`` whose presence says the link is dead);
* ``[templates]``: ``archive`` (like ``{{webarchive}}``), ``dead_link`` (like ``{{dead link}}``), ``not_citation``
  (templates that may open a ref without being its citation, such as language marks), ``silent`` (inline templates
  that show no words of the text: maintenance tags), ``first_argument`` (inline templates that show their first
  positional argument) and ``hole`` (templates whose English namesake renders differently here, such as French
  ``{{date|29 9 2019}}``: left unrendered, so their statements are dropped and counted);
* ``[links]``: ``dropped``, the namespace names of files and categories (``datei``, ``kategorie``): links into them
  show no text (an image's caption is not prose);
* ``[renders_as]``: a local inline template → the English template it shows like (``"langue" = "lang"``: French
  ``{{langue|de|Text}}`` shows ``Text`` as ``{{lang|de|Text}}`` does), rendered by the English renderer;
* ``[inline]``: a local inline template → how it renders (:class:`InlineTemplate`): ``kind = "pattern"`` fills a
  ``pattern`` with its arguments (``"euro" = { kind = "pattern", pattern = "{1:number} €" }``), ``kind = "number"``
  shows a number of the language with its units (French ``{{unité|1234.5|km|2}}`` → ``1 234,5 km²``), ``kind =
  "date"`` a date in the language's ``[dates]`` form (``{{date-|14|juillet|1789}}`` → ``14 juillet 1789``);
  ``[inline_patterns]`` does the same for every template whose folded name matches a regular expression (French
  ordinals such as ``{{1er}}``, ``{{XIXe}}``);
* ``[numbers]``: how the language writes numbers (``decimal``, ``group``: MediaWiki's separators for the language;
  ``min_digits``: the fewest digits grouped; ``ordinal``, ``ordinal_first``: ``"{}e"``, ``"{}er"``); used by
  ``{{formatnum:}}`` and the ``number`` filter of ``[inline]``;
* ``[dates]``: ``months`` (the twelve month names), ``format`` (``"{day} {month} {year}"``) and ``first_day`` (French
  ``"1er"``), used by ``kind = "date"``;
* ``[sections]``: ``skip``, headings of non-prose sections (compared lowercased, whitespace collapsed).

Names are compared folded as template names are (:func:`~wikiref_dataset.wiki.plaintext.canonical_template_name`:
lowercase, ``_`` and runs of spaces → one space). Every language also knows the English names (``en.toml``): most
Wikipedias import the English citation templates, and some (Japanese, Chinese, Russian) use them for most refs.

Citation dates (``access-date``, ``date``) are written in the language (``1. März 2020``, ``12 janvier 2021``,
``2008年8月20日``) or in English; :meth:`WikiLanguage.iso_date` reads them with ``dateparser`` (the date parser of
Scrapinghub/Zyte, 200+ languages) in the language and English, in its ``date_order``, and writes them as ISO 8601 at
the precision given (``2020-03-01``, ``2010-05``, ``2010``).

The language of a dump is read from its ``<siteinfo>`` (:func:`dump_language`: ``<dbname>`` such as ``dewiki``, else
the ``xml:lang`` of ``<mediawiki>``); ``--language`` overrides it (excerpts and exports often carry another site's
header).
"""

from __future__ import annotations

import dataclasses
import functools
import re
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import TypeVar

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

__all__ = [
    "CITATION_FIELDS",
    "DateFormat",
    "INLINE_FILTERS",
    "INLINE_KINDS",
    "InlineTemplate",
    "NumberFormat",
    "UnsupportedLanguage",
    "WikiLanguage",
    "dump_language",
    "supported_languages",
    "wiki_language",
]

CITATION_FIELDS = ("url", "archive_url", "archive_date", "url_status", "access_date", "title", "date", "work",
                   "publisher")
"""The citation fields a language's ``[parameters]`` table may name."""
_TEMPLATE_LISTS = ("archive", "dead_link", "not_citation", "silent", "first_argument", "hole")
INLINE_KINDS = ("pattern", "number", "date")
"""The kinds of rendering an ``[inline]`` entry may name (:class:`InlineTemplate`)."""
INLINE_FILTERS = ("number", "map", "ordinal", "title")
"""The filters a pattern placeholder may name (``{1:number}``; :class:`InlineTemplate`)."""
_PLACEHOLDER = re.compile(r"\{([^{}]*)\}")
_PLACEHOLDER_BODY = re.compile(r"(?:[\w ]+|#)(?:\|(?:[\w ]+|#))*(?::(\w+))?\Z")
_STATUS_VALUES = frozenset({"dead", "live"})
_Text = TypeVar("_Text")  # a TextConfig (wikiref_dataset.text imports spaCy: not imported here)
_DATE_ORDERS = frozenset({"DMY", "YMD", "MDY"})
_YEAR = re.compile(r"(?<!\d)(1[89]\d\d|2[01]\d\d)(?!\d)")
_SPACES = re.compile(r"[\s_]+")


class UnsupportedLanguage(ValueError):
    """A Wikipedia language without a data file (or with a broken one); the message names what is missing."""


@dataclass(frozen=True)
class InlineTemplate:
    """How one of a language's inline templates renders (an ``[inline]`` or ``[inline_patterns]`` entry).

    Args:
        kind (`str`): ``pattern``, ``number`` or ``date``:

            * ``pattern``: ``pattern`` with its placeholders filled: ``{1}`` is positional argument 1, ``{texte}`` the
              named argument ``texte``, ``{texte|fr|1}`` the first of them that is not empty, ``{name}`` the
              template's name as written (``{{84e|congrès}}``: ``84e``). A placeholder may end with a filter:
              ``:number`` (a number written as the language writes it, ``[numbers]``), ``:ordinal`` (``XIX`` →
              ``XIXe``), ``:map`` (looked up in ``map``, lowercased; kept as written when absent), ``:title`` (a page
              title without its bracketed qualifier: ``Joseph II (empereur)`` → ``Joseph II``);
            * ``number``: argument 1 as a number of the language, then its units: the text after the number in the
              same argument, and arguments 2, 3 … as unit, exponent, unit, exponent (``{{unité|9.81|m|s|-2}}`` →
              ``9,81 m s⁻²``); ``e=`` is a power of ten;
            * ``date``: arguments 1–3 (day, month, year; or one argument holding them, ``29 9 2019``) as the
              language's ``[dates]`` write a date; arguments 4–6, when ``age`` is set, are a birth date, and ``age``
              (``" (à {age} ans)"``) follows with the age at the first date.
        pattern (`str`): the pattern of ``kind = "pattern"``.
        map (`Mapping[str, str]`): the values of the ``:map`` filter (lowercased key → text).
        age (`str`): for ``kind = "date"``: what follows the date when a birth date is given.
    """

    kind: str
    pattern: str = ""
    map: Mapping[str, str] = field(default_factory=dict)
    age: str = ""


@dataclass(frozen=True)
class NumberFormat:
    """How a language writes numbers: MediaWiki's separators for it (``$separatorTransformTable``), the fewest digits
    of a whole part that are grouped (its ``$minimumGroupingDigits`` 2 means 5), and ordinals (``"{}e"``)."""

    decimal: str = "."
    group: str = ","
    min_digits: int = 4
    ordinal: str = "{}"
    ordinal_first: str = ""


@dataclass(frozen=True)
class DateFormat:
    """How a language writes a date: ``months`` (the twelve names), ``format`` with ``{day}``, ``{month}``,
    ``{year}`` (parts a date lacks are left out with their spaces), ``first_day`` (French ``1er``)."""

    months: tuple[str, ...] = ()
    format: str = "{day} {month} {year}"
    first_day: str = ""


def _fold(name: str) -> str:
    return _SPACES.sub(" ", name).strip().lower()


@dataclass(frozen=True)
class WikiLanguage:
    """The names one Wikipedia gives its citations and sections (see the module docstring).

    Args:
        code (`str`): the Wikipedia language code (``de``); its dumps are named ``{code}wiki-...``.
        name (`str`): the language's English name.
        spacy (`str`): the spaCy language code of its text pipeline.
        citation_types (`Mapping[str, str]`): folded template name → citation type.
        parameters (`Mapping[str, tuple[str, ...]]`): citation field → parameter names, this language's first.
        url_status_values (`Mapping[str, str]`): ``url_status`` value → ``dead``/``live`` (``*``: any other value).
        archive_templates, dead_link_templates, not_citation_templates, silent_templates, first_argument_templates
            (`frozenset[str]`): folded template names (see the module docstring).
        renders_as (`Mapping[str, str]`): folded local template name → the English template it renders like.
        hole_templates (`frozenset[str]`): templates left unrendered in this language although English renders them.
        dropped_link_namespaces (`frozenset[str]`): lowercased file and category namespace names.
        skip_sections (`tuple[str, ...]`): lowercased headings of non-prose sections.
        date_order (`str`): ``DMY``, ``YMD`` or ``MDY``, the order of numeric dates.
        inline (`Mapping[str, InlineTemplate]`): folded template name → how it renders (``[inline]``).
        inline_patterns (`tuple[tuple[re.Pattern, InlineTemplate], ...]`): regular expressions of folded names → how
            those templates render (``[inline_patterns]``).
        numbers (`NumberFormat`): how the language writes numbers.
        dates (`DateFormat`): how the language writes dates.
        bare_urls (`bool`): whether refs that hold only a link (``<ref>https://…</ref>``, ``<ref>[https://… title]
            </ref>``) give statements by default: true where the Wikipedia cites mostly that way and a hand check found
            such statements as good as those of citation templates (``docs/languages.md``).
    """

    code: str
    name: str
    spacy: str
    citation_types: Mapping[str, str] = field(default_factory=dict)
    parameters: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    url_status_values: Mapping[str, str] = field(default_factory=dict)
    archive_templates: frozenset[str] = frozenset()
    dead_link_templates: frozenset[str] = frozenset()
    not_citation_templates: frozenset[str] = frozenset()
    silent_templates: frozenset[str] = frozenset()
    first_argument_templates: frozenset[str] = frozenset()
    renders_as: Mapping[str, str] = field(default_factory=dict)
    hole_templates: frozenset[str] = frozenset()
    dropped_link_namespaces: frozenset[str] = frozenset()
    skip_sections: tuple[str, ...] = ()
    date_order: str = "DMY"
    bare_urls: bool = False
    inline: Mapping[str, InlineTemplate] = field(default_factory=dict)
    inline_patterns: tuple[tuple[re.Pattern, InlineTemplate], ...] = ()
    numbers: NumberFormat = NumberFormat()
    dates: DateFormat = DateFormat()

    @property
    def dbname(self) -> str:
        """The database name of its Wikipedia (``dewiki``), as dumps name it."""
        return f"{self.code.replace('-', '_')}wiki"

    def names(self, citation_field: str) -> tuple[str, ...]:
        """The parameter names of ``citation_field``, this language's first."""
        return self.parameters.get(citation_field, ())

    def url_status(self, value: str) -> str | None:
        """``dead``/``live`` for a value of a url-status parameter in this language; ``None`` when it means neither."""
        value = _fold(value)
        if not value:
            return None
        return self.url_status_values.get(value) or self.url_status_values.get("*")

    def sections_to_skip(self, given: Sequence[str]) -> tuple[str, ...]:
        """The non-prose sections a stage skips: ``given``, or this language's (with the English ones) where
        ``given`` is the English default list."""
        return self.skip_sections if tuple(given) == wiki_language("en").skip_sections else tuple(given)

    def text_config(self, text: _Text, what: str) -> _Text:
        """``text`` (a :class:`~wikiref_dataset.text.TextConfig`) set to this language's spaCy language where it is
        the default English; an error naming ``what`` (``the dumps`` ...) where it is set to another language."""
        if text.lang == self.spacy:
            return text
        if text.lang != "en":
            raise ValueError(f"{what} are read as {self.name} ({self.code}) but the text pipeline is set to "
                             f"{text.lang!r}")
        return dataclasses.replace(text, lang=self.spacy)

    def iso_date(self, text: str | None) -> str | None:
        """A citation date as this language's editors write it, in ISO 8601 at the precision given (``1. März 2020``
        → ``2020-03-01``, ``Mai 2010`` → ``2010-05``, ``2010`` → ``2010``); ``None`` when it has no year or does not
        read as a date in this language or English."""
        if not text or not _YEAR.search(text):
            return None
        return _iso_date(self.code, self.date_order, text.strip())


def _data_folder() -> Path:
    return Path(str(resources.files("wikiref_dataset") / "data" / "languages"))


def supported_languages() -> tuple[str, ...]:
    """The codes of the languages that have a data file, sorted."""
    return tuple(sorted(path.stem for path in _data_folder().glob("*.toml")))


def _strings(value: object, where: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(item, str) and item.strip() for item in value):
        raise UnsupportedLanguage(f"{where} must be a list of non-empty strings, got {value!r}")
    return tuple(value)


def _only(table: object, known: Iterable[str], message: str) -> None:
    """``table`` is a TOML table whose keys are all in ``known``; else the error ``message`` followed by the others
    (or by what ``table`` is, when it is no table)."""
    if not isinstance(table, dict):
        raise UnsupportedLanguage(f"{message}: not a table but {table!r}")
    unknown = sorted(set(table) - set(known))
    if unknown:
        raise UnsupportedLanguage(f"{message} {', '.join(unknown)} (known: {', '.join(sorted(known))})")


def _string_map(data: dict, key: str, message: str) -> dict[str, str]:
    table = data.get(key, {})
    if not isinstance(table, dict) or not all(isinstance(value, str) and value for value in table.values()):
        raise UnsupportedLanguage(message)
    return table


def _inline(table: object, where: str) -> InlineTemplate:
    """One ``[inline]`` entry, checked: its kind, its pattern's placeholders and filters."""
    _only(table, ("kind", "pattern", "map", "age"), f"{where} has unknown key(s)")
    kind = table.get("kind")
    if kind not in INLINE_KINDS:
        raise UnsupportedLanguage(f"{where}: kind must be one of {', '.join(INLINE_KINDS)}, got {kind!r}")
    pattern = table.get("pattern", "")
    if not isinstance(pattern, str) or (kind == "pattern") != bool(pattern):
        raise UnsupportedLanguage(f"{where}: a pattern (a string) is needed by kind 'pattern' and only by it")
    for placeholder in _PLACEHOLDER.findall(pattern):
        match = _PLACEHOLDER_BODY.match(placeholder)
        if not match or (match.group(1) and match.group(1) not in INLINE_FILTERS):
            raise UnsupportedLanguage(f"{where}: placeholder {{{placeholder}}} is not 'argument(|argument)*(:filter)?' "
                                      f"with a filter among {', '.join(INLINE_FILTERS)}")
    values = table.get("map", {})
    if not isinstance(values, dict) or not all(isinstance(value, str) for value in values.values()):
        raise UnsupportedLanguage(f"{where}: map must map argument values to texts")
    age = table.get("age", "")
    if not isinstance(age, str) or (age and (kind != "date" or "{age}" not in age)):
        raise UnsupportedLanguage(f"{where}: age is a text holding {{age}}, for kind 'date' only")
    return InlineTemplate(kind=kind, pattern=pattern, map={key.lower(): value for key, value in values.items()},
                          age=age)


def _numbers(table: object, where: str) -> NumberFormat:
    _only(table, ("decimal", "group", "min_digits", "ordinal", "ordinal_first"), f"{where} has unknown key(s)")
    numbers = NumberFormat(**table)
    if not all(isinstance(value, str) for value in (numbers.decimal, numbers.group, numbers.ordinal,
                                                     numbers.ordinal_first)) or not isinstance(numbers.min_digits, int):
        raise UnsupportedLanguage(f"{where}: decimal, group, ordinal and ordinal_first are texts, min_digits a number")
    if "{}" not in numbers.ordinal or (numbers.ordinal_first and "{}" not in numbers.ordinal_first):
        raise UnsupportedLanguage(f"{where}: ordinal and ordinal_first hold {{}} (the number)")
    return numbers


def _dates(table: object, where: str) -> DateFormat:
    _only(table, ("months", "format", "first_day"), f"{where} has unknown key(s)")
    months = _strings(table.get("months", []), f"{where}.months") if "months" in table else ()
    dates = DateFormat(months=months, format=table.get("format", "{day} {month} {year}"),
                       first_day=table.get("first_day", ""))
    if months and len(months) != 12:
        raise UnsupportedLanguage(f"{where}.months must name the twelve months, got {len(months)}")
    if not isinstance(dates.format, str) or not isinstance(dates.first_day, str) or not all(
            part in dates.format for part in ("{day}", "{month}", "{year}")):
        raise UnsupportedLanguage(f"{where}: format is a text holding {{day}}, {{month}} and {{year}}")
    return dates


def _read(path: Path) -> WikiLanguage:
    """A language from its TOML file, checked: an unknown key or a value of the wrong kind is an error naming it."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as error:
        raise UnsupportedLanguage(f"{path}: cannot read the language file: {error}") from error
    _only(data, {"code", "name", "spacy", "date_order", "bare_urls", "citation_types", "parameters",
                 "url_status_values", "templates", "renders_as", "links", "sections", "inline", "inline_patterns",
                 "numbers", "dates"}, f"{path}: unknown key(s)")
    if not isinstance(data.get("bare_urls", False), bool):
        raise UnsupportedLanguage(f"{path}: bare_urls must be true or false")
    for key in ("code", "name", "spacy"):
        if not isinstance(data.get(key), str) or not data[key].strip():
            raise UnsupportedLanguage(f"{path}: {key!r} must be a non-empty string")
    if data["code"] != path.stem:
        raise UnsupportedLanguage(f"{path}: code {data['code']!r} differs from the file name")
    if data.get("date_order", "DMY") not in _DATE_ORDERS:
        raise UnsupportedLanguage(f"{path}: date_order must be one of {', '.join(sorted(_DATE_ORDERS))}")
    types = _string_map(data, "citation_types", f"{path}: [citation_types] must map template names to citation types")
    parameters = data.get("parameters", {})
    _only(parameters, CITATION_FIELDS, f"{path}: [parameters] names unknown citation field(s)")
    statuses = data.get("url_status_values", {})
    wrong = sorted(key for key, value in statuses.items() if value not in _STATUS_VALUES)
    if wrong:
        raise UnsupportedLanguage(f"{path}: [url_status_values] {', '.join(wrong)} must be 'dead' or 'live'")
    templates = data.get("templates", {})
    _only(templates, _TEMPLATE_LISTS, f"{path}: [templates] has unknown list(s)")
    renders_as = _string_map(data, "renders_as", f"{path}: [renders_as] must map template names to English ones")
    links = data.get("links", {})
    _only(links, ("dropped",), f"{path}: [links] has unknown list(s)")
    sections = data.get("sections", {})
    lists = {name: frozenset(_fold(item) for item in _strings(templates.get(name, []), f"{path}: templates.{name}"))
             for name in _TEMPLATE_LISTS}
    inline = data.get("inline", {})
    _only(inline, inline, f"{path}: [inline]")
    patterns = data.get("inline_patterns", {})
    _only(patterns, patterns, f"{path}: [inline_patterns]")
    compiled = []
    for expression, entry in patterns.items():
        try:
            compiled.append((re.compile(expression), _inline(entry, f"{path}: inline_patterns.{expression!r}")))
        except re.error as error:
            raise UnsupportedLanguage(f"{path}: inline_patterns.{expression!r} is no regular expression: {error}") from error
    return WikiLanguage(
        code=data["code"],
        name=data["name"],
        spacy=data["spacy"],
        date_order=data.get("date_order", "DMY"),
        bare_urls=data.get("bare_urls", False),
        citation_types={_fold(name): _fold(kind) for name, kind in types.items()},
        parameters={name: tuple(dict.fromkeys(item.strip().lower()
                                              for item in _strings(values, f"{path}: parameters.{name}")))
                    for name, values in parameters.items()},
        url_status_values={_fold(value): status for value, status in statuses.items()},
        archive_templates=lists["archive"],
        dead_link_templates=lists["dead_link"],
        not_citation_templates=lists["not_citation"],
        silent_templates=lists["silent"],
        first_argument_templates=lists["first_argument"],
        renders_as={_fold(name): _fold(english) for name, english in renders_as.items()},
        hole_templates=lists["hole"],
        dropped_link_namespaces=frozenset(_fold(item) for item in _strings(links.get("dropped", []),
                                                                          f"{path}: links.dropped")),
        skip_sections=tuple(dict.fromkeys(" ".join(item.split()).lower().rstrip(":").strip()
                                          for item in _strings(sections.get("skip", []), f"{path}: sections.skip"))),
        inline={_fold(name): _inline(entry, f"{path}: inline.{name!r}") for name, entry in inline.items()},
        inline_patterns=tuple(compiled),
        numbers=_numbers(data.get("numbers", {}), f"{path}: [numbers]"),
        dates=_dates(data.get("dates", {}), f"{path}: [dates]"),
    )


def _merged(own: WikiLanguage, english: WikiLanguage) -> WikiLanguage:
    """``own`` with the English names added after its own (Wikipedias import English templates)."""
    return WikiLanguage(
        code=own.code,
        name=own.name,
        spacy=own.spacy,
        date_order=own.date_order,
        bare_urls=own.bare_urls,
        citation_types={**english.citation_types, **own.citation_types},
        parameters={name: tuple(dict.fromkeys((*own.names(name), *english.names(name)))) for name in CITATION_FIELDS},
        url_status_values={**english.url_status_values, **own.url_status_values},
        archive_templates=own.archive_templates | english.archive_templates,
        dead_link_templates=own.dead_link_templates | english.dead_link_templates,
        not_citation_templates=own.not_citation_templates | english.not_citation_templates,
        silent_templates=own.silent_templates | english.silent_templates,
        first_argument_templates=own.first_argument_templates | english.first_argument_templates,
        renders_as={**english.renders_as, **own.renders_as},
        hole_templates=own.hole_templates,
        dropped_link_namespaces=own.dropped_link_namespaces | english.dropped_link_namespaces,
        skip_sections=tuple(dict.fromkeys((*own.skip_sections, *english.skip_sections))),
        inline={**english.inline, **own.inline},
        inline_patterns=own.inline_patterns + english.inline_patterns,
        numbers=own.numbers,
        dates=own.dates,
    )


@functools.cache
def wiki_language(code: str) -> WikiLanguage:
    """The language of code ``code`` (``de``, ``ja`` ...), with the English names added; a
    :class:`UnsupportedLanguage` error naming the supported codes when there is no data file for it."""
    code = (code or "").strip().lower()
    path = _data_folder() / f"{code}.toml"
    if not re.fullmatch(r"[a-z][a-z0-9-]{1,11}", code) or not path.is_file():
        raise UnsupportedLanguage(
            f"Wikipedia language {code!r} is not supported: no citation-template table "
            f"wikiref_dataset/data/languages/{code}.toml. Supported: {', '.join(supported_languages())}. Pass "
            "--language with one of them, or add a table for this language (docs/languages.md says how)."
        )
    own = _read(path)
    return own if code == "en" else _merged(own, wiki_language("en"))


@functools.cache
def _date_parser(code: str, date_order: str):  # noqa: ANN202 (dateparser's DateDataParser)
    from dateparser.date import DateDataParser

    languages = [code, "en"] if code != "en" else ["en"]
    try:
        return DateDataParser(languages=languages, settings={
            "DATE_ORDER": date_order, "PREFER_DAY_OF_MONTH": "first", "PREFER_MONTH_OF_YEAR": "first",
            "REQUIRE_PARTS": ["year"], "RETURN_TIME_AS_PERIOD": False})
    except ValueError:  # a language dateparser does not know: English only
        return DateDataParser(languages=["en"], settings={"DATE_ORDER": date_order, "REQUIRE_PARTS": ["year"]})


@functools.lru_cache(maxsize=65536)
def _iso_date(code: str, date_order: str, text: str) -> str | None:
    try:
        data = _date_parser(code, date_order).get_date_data(text)
    except (ValueError, OverflowError, TypeError):
        return None
    if data.date_obj is None or not 1800 <= data.date_obj.year <= 2199:
        return None
    formats = {"year": "%Y", "month": "%Y-%m"}
    return data.date_obj.strftime(formats.get(data.period, "%Y-%m-%d"))


_DBNAME = re.compile(rb"<dbname>\s*([a-z0-9_-]+?)wiki\s*</dbname>")
_XML_LANG = re.compile(rb"<mediawiki\b[^>]*\bxml:lang=\"([A-Za-z0-9-]+)\"")


def dump_language(path: str | Path, header_bytes: int = 1 << 16) -> str | None:
    """The language code a dump's header states, from the first ``header_bytes`` of the (decompressed) dump: the
    code of its ``<dbname>`` (``dewiki`` → ``de``, ``zh_yuewiki`` → ``zh-yue``) when that language has a table, else
    the ``xml:lang`` of ``<mediawiki>`` when that one has; else the stated code, a language without a table (the
    caller's :func:`wiki_language` then names it); ``None`` when the header states neither (``samplewiki`` with no
    ``xml:lang`` is no language)."""
    from .dump import open_dump

    with open_dump(path) as handle:
        head = handle.read(header_bytes)
    match = _DBNAME.search(head)
    dbname = match.group(1).decode().replace("_", "-") if match else None
    match = _XML_LANG.search(head)
    xml_lang = match.group(1).decode().lower() if match else None
    supported = supported_languages()
    for code in (dbname, xml_lang):
        if code in supported:
            return code
    if dbname and re.fullmatch(r"[a-z]{2,3}(?:-[a-z]+)*", dbname):
        return dbname
    return xml_lang
