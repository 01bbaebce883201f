"""A language's own inline templates rendered as its table says: numbers with units, dates, centuries, amounts.

Each Wikipedia writes numbers, dates and centuries in prose with its own templates: French ``{{unité|1234.5|km|2}}``
(``1 234,5 km²``), ``{{s|XIX}}`` (``XIXe siècle``), ``{{date-|14 juillet 1789}}``, ``{{euro|20}}`` (``20 €``);
Portuguese ``{{séc|XIX}}`` (``século XIX``), ``{{fmtn|1234567}}`` (``1 234 567``). What each shows is data: the
``[inline]`` and ``[inline_patterns]`` tables of the language's file, read into
:class:`~wikiref_dataset.wiki.languages.InlineTemplate` (kinds ``pattern``, ``number`` and ``date``; the docstring
there says what each does). :func:`inline_renderer` makes the renderer of one entry; :func:`language_templates` puts them before every other table while a language is read (the plain-text renderer,
:mod:`~wikiref_dataset.wiki.plaintext`, reads them from the ``LANGUAGE_TEMPLATES`` context of
:mod:`~wikiref_dataset.wiki.templates.context`). A template whose
arguments do not fit its kind (a date that is not one) still leaves a hole, so its statement is dropped and counted.
"""

from __future__ import annotations

import contextlib
import functools
import re
from collections.abc import Iterator
from datetime import date

from .languages import DateFormat, InlineTemplate, NumberFormat, WikiLanguage
from .plaintext import superscript
from .templates.arguments import Renderer, TemplateArgs, unrendered
from .templates.context import LANGUAGE_TEMPLATES, LanguageTemplates
from .templates.numbers import format_number

__all__ = ["inline_renderer", "language_templates"]

_PLACEHOLDER = re.compile(r"\{([^{}]*)\}")
_QUALIFIER = re.compile(r"\s*\([^()]*\)\s*\Z")
_SPACES = re.compile(r"[ \t]{2,}")
_NUMBER_THEN_TEXT = re.compile(r"([+\-−–]?\d[\d.,]*)(?:\s+(.*))?\Z", re.S)
_EXPONENT = re.compile(r"[+\-−]?\d{1,2}\Z")
_ROMAN_ONE = frozenset({"1", "i"})


def _ordinal(value: str, numbers: NumberFormat) -> str:
    """``XIX`` → ``XIXe``, ``I`` → ``Ier`` (French); the language's ``ordinal`` patterns."""
    if not value:
        return ""
    first = numbers.ordinal_first and value.lower() in _ROMAN_ONE
    return (numbers.ordinal_first if first else numbers.ordinal).replace("{}", value)


def _pattern(spec: InlineTemplate, numbers: NumberFormat) -> Renderer:
    def render_pattern(args: TemplateArgs) -> str:
        def fill(match: re.Match) -> str:
            names, _, flavour = match.group(1).partition(":")
            value = ""
            for name in (name.strip() for name in names.split("|")):
                value = " ".join(str(args.template.name).split()) if name == "name" else args.get(name)
                if value:
                    break
            if flavour == "number":
                return format_number(value, numbers, decimal_comma=True)
            if flavour == "ordinal":
                return _ordinal(value, numbers)
            if flavour == "map":
                return spec.map.get(value.lower(), value)
            if flavour == "title":
                return _QUALIFIER.sub("", value)
            return value

        return _SPACES.sub(" ", _PLACEHOLDER.sub(fill, spec.pattern))

    return render_pattern


def _units(words: list[str]) -> str:
    """Units with their exponents: ``["km", "2"]`` → ``km²``, ``["m", "s", "-2"]`` → ``m s⁻²``."""
    out: list[str] = []
    for word in words:
        if out and _EXPONENT.match(word) and not _EXPONENT.match(out[-1]):
            out[-1] += superscript(word, out[-1])
        elif word:
            out.append(word)
    return " ".join(out)


def _number(numbers: NumberFormat) -> Renderer:
    def render_number(args: TemplateArgs) -> str:
        """``{{unité|1234.5|km|2}}`` → ``1 234,5 km²``; ``{{unité|1000 habitants}}`` → ``1 000 habitants``;
        ``{{nombre|3|millions}}`` → ``3 millions``; ``e=6`` → ``×10^6``."""
        values = args.positionals()
        if not values or not values[0]:
            return unrendered(args)
        match = _NUMBER_THEN_TEXT.match(values[0])
        if not match:
            return values[0]  # words only: shown as written, as the template does
        value = format_number(match.group(1), numbers, decimal_comma=True)
        exponent = args.get("e")
        if exponent:
            value += f"×10^{exponent}"
        units = _units((match.group(2) or "").split() + values[1:])
        return f"{value} {units}" if units else value

    return render_number


def _day(token: str) -> int | None:
    token = token.lower().removesuffix("er").removesuffix("º").removesuffix("o")
    return int(token) if token.isdigit() and 1 <= int(token) <= 31 else None


def _month(token: str, dates: DateFormat) -> int | None:
    token = token.strip().lower()
    if token.isdigit():
        return int(token) if 1 <= int(token) <= 12 else None
    return _month_numbers(dates.months).get(token)


@functools.lru_cache(maxsize=32)
def _month_numbers(months: tuple[str, ...]) -> dict[str, int]:
    """``{lowered month name: its number}`` of a language's month names (one table per language, not per date)."""
    numbers: dict[str, int] = {}
    for number, name in enumerate(months, start=1):
        numbers.setdefault(name.lower(), number)  # the first of two equal names, as list.index gave
    return numbers


def _date_parts(tokens: list[str], dates: DateFormat) -> tuple[int | None, int | None, str] | None:
    """(day, month, year) of a date written as 1–3 tokens (``29 9 2019``, ``19 janvier``, ``décembre 2015``,
    ``1955``); ``None`` when the tokens are not such a date."""
    if len(tokens) == 3:
        day, month, year = _day(tokens[0]), _month(tokens[1], dates), tokens[2]
        return (day, month, year) if day and month and year.lstrip("-").isdigit() else None
    if len(tokens) == 2:
        day, month = _day(tokens[0]), _month(tokens[1], dates)
        if day and month and not tokens[1].isdigit():
            return day, month, ""
        month = _month(tokens[0], dates)
        return (None, month, tokens[1]) if month and not tokens[0].isdigit() and tokens[1].isdigit() else None
    if len(tokens) == 1:
        if tokens[0].lstrip("-").isdigit():
            return None, None, tokens[0]
        month = _month(tokens[0], dates)
        return (None, month, "") if month else None
    return None


def _written(parts: tuple[int | None, int | None, str], dates: DateFormat) -> str:
    day, month, year = parts
    day_text = "" if day is None else dates.first_day if day == 1 and dates.first_day else str(day)
    text = dates.format.format(day=day_text, month=dates.months[month - 1] if month else "", year=year)
    return " ".join(text.split())


def _date(spec: InlineTemplate, dates: DateFormat) -> Renderer:
    def render_date(args: TemplateArgs) -> str:
        """``{{date|29 9 2019}}`` → ``29 septembre 2019``, ``{{date-|1|janvier|2016}}`` → ``1er janvier 2016``;
        with ``age`` and a birth date in arguments 4–6, the age at the date follows."""
        values = args.positionals()
        given = [value for value in values[:3] if value]
        tokens = given[0].split() if len(given) == 1 else given
        parts = _date_parts(tokens, dates) if dates.months else None
        if parts is None:
            return unrendered(args)
        text = _written(parts, dates)
        born = _date_parts([value for value in values[3:6] if value], dates) if spec.age else None
        if born and all(born) and all(parts):
            try:
                then, birth = date(int(parts[2]), parts[1], parts[0]), date(int(born[2]), born[1], born[0])
            except ValueError:
                return text
            age = then.year - birth.year - ((then.month, then.day) < (birth.month, birth.day))
            if age >= 0:
                text += spec.age.replace("{age}", str(age))
        return text

    return render_date


def inline_renderer(spec: InlineTemplate, language: WikiLanguage) -> Renderer:
    """The renderer of one ``[inline]`` entry of ``language`` (a function of
    :class:`~wikiref_dataset.wiki.templates.arguments.TemplateArgs` to text)."""
    if spec.kind == "number":
        return _number(language.numbers)
    if spec.kind == "date":
        return _date(spec, language.dates)
    return _pattern(spec, language.numbers)


@contextlib.contextmanager
def language_templates(language: WikiLanguage) -> Iterator[None]:
    """Within the block, render a language's own inline templates as its table says
    (:class:`~wikiref_dataset.wiki.languages.WikiLanguage`), before this module's English tables: its
    ``silent_templates`` show nothing, its ``first_argument_templates`` show their first positional argument, its
    ``renders_as`` templates render as the English template they name, its ``hole_templates`` are left unrendered,
    and links into its ``dropped_link_namespaces`` (``[[Datei:...]]``) show nothing. For a language other than English
    the English *name patterns* of silent templates (prefixes such as ``s-``, suffixes such as `` icon``) are off
    (French ``{{s-|XIX}}`` is a century, not a succession box), and numbers are not grouped with English commas
    (``{{formatnum:60000}}`` is ``60 000`` in French, ``60.000`` in German: ``60,000`` reads as sixty there), and its
    ``[inline]`` templates render as the table says (:func:`inline_renderer`), before anything else.
    English adds nothing."""
    token = LANGUAGE_TEMPLATES.set(_language_context(language))
    try:
        yield
    finally:
        LANGUAGE_TEMPLATES.reset(token)


def _language_context(language: WikiLanguage) -> LanguageTemplates:
    if language.code == "en":
        return LanguageTemplates()
    return LanguageTemplates(
        silent=language.silent_templates, first_argument=language.first_argument_templates,
        renders_as=language.renders_as, holes=language.hole_templates,
        dropped_namespaces=language.dropped_link_namespaces,
        inline={name: inline_renderer(spec, language) for name, spec in language.inline.items()},
        inline_patterns=tuple((pattern, inline_renderer(spec, language)) for pattern, spec in language.inline_patterns),
        numbers=language.numbers)
