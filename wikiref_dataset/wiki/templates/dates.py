"""Dates and ages: dates written as templates (``{{start date}}``, ``{{as of}}``, ``{{dts}}``, ``{{circa}}``,
``{{floruit}}`` ...) in English words (:func:`format_date`), ages (``{{age}}``, ``{{birth date and age}}``,
``{{death date and age}}``), and the templates relative to today (``{{CURRENTYEAR}}`` ...), rendered at the date of
the revision (``current_date``) and left as holes without one."""

from __future__ import annotations

import re
from datetime import date, timedelta

from .arguments import Renderer, TemplateArgs, canonical_template_name, unrendered
from .formatting import first_or_text
from .numbers import group_thousands

__all__ = ["RENDERERS", "format_date"]

_MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
           "November", "December"]
_MONTH_BY_NAME = {name.lower(): number for number, name in enumerate(_MONTHS, start=1)}
_MONTH_BY_NAME.update({name[:3].lower(): number for number, name in enumerate(_MONTHS, start=1)})


def _month(value: str) -> int | None:
    value = value.strip().lower()
    if value.isdigit():
        number = int(value)
        return number if 1 <= number <= 12 else None
    return _MONTH_BY_NAME.get(value) or _MONTH_BY_NAME.get(value[:3])


def _day(value: str) -> int | None:
    value = value.strip()
    return int(value) if value.isdigit() and 1 <= int(value) <= 31 else None


def format_date(year: str, month: str = "", day: str = "", dmy: bool = False) -> str:
    """``1950``, ``January 1950``, ``January 2, 1950`` (``dmy``: ``2 January 1950``) from template arguments."""
    year = year.strip()
    number = _month(month) if month else None
    if number is None:
        return year
    name = _MONTHS[number - 1]
    day_number = _day(day) if day else None
    if day_number is None:
        return f"{name} {year}".strip()
    return f"{day_number} {name} {year}" if dmy else f"{name} {day_number}, {year}"


def _age(y1: str, m1: str, d1: str, y2: str, m2: str, d2: str) -> int | None:
    try:
        born = date(int(y1), _month(m1) or 1, _day(d1) or 1)
        died = date(int(y2), _month(m2) or 1, _day(d2) or 1)
    except ValueError:
        return None
    return died.year - born.year - ((died.month, died.day) < (born.month, born.day))


def _dmy(args: TemplateArgs) -> bool:
    return args.flag("df") or args.get("df").lower() in ("dmy",)


def _prefixed(prefix: str, suffix: str = "") -> Renderer:
    def render_prefixed(args: TemplateArgs) -> str:
        value = args.pos(1)
        return f"{prefix}{value}{suffix}" if value else ""

    return render_prefixed


def _as_of(args: TemplateArgs) -> str:
    """``{{as of|2010|5|1}}`` → ``As of 1 May 2010`` (``df=US``: ``May 1, 2010``); ``lc=y``; ``since=y``;
    ``alt=`` replaces the whole text; ``pre=``/``post=`` are added around the date."""
    alt = args.get("alt")
    if alt:
        return alt
    us = args.get("df").lower() in ("us", "mdy")
    when = format_date(args.pos(1), args.pos(2), args.pos(3), dmy=not us)
    lead = "since" if args.flag("since") else "as of"
    if not args.flag("lc"):
        lead = lead.capitalize()
    pre = args.get("pre")
    return f"{lead} {pre + ' ' if pre else ''}{when}{args.get('post')}"


def _date_template(args: TemplateArgs) -> str:
    """``{{birth date|1950|1|2}}``, ``{{start date|...}}`` ...: ``January 2, 1950`` (``df=y``: ``2 January 1950``).
    Ages relative to today (``birth date and age``) are not rendered: they would change with the build date."""
    if not _is_year(args.pos(1)):
        return args.pos(1)  # {{start date|May 2010}}-style free text
    return format_date(args.pos(1), args.pos(2), args.pos(3), dmy=_dmy(args))


def _is_year(text: str) -> bool:
    return bool(re.fullmatch(r"-?\d{1,4}", text.strip()))


def _death_date_and_age(args: TemplateArgs) -> str:
    """``{{death date and age|2000|1|1|1920|1|1}}`` → ``January 1, 2000 (aged 80)``."""
    values = args.positionals() + [""] * 6
    died = format_date(values[0], values[1], values[2], dmy=_dmy(args))
    if not _is_year(values[0]):
        return values[0]
    age = _age(values[3], values[4], values[5], values[0], values[1], values[2]) if _is_year(values[3]) else None
    return f"{died} (aged {age})" if age is not None else died


def _year_and_age(args: TemplateArgs) -> str:
    """``{{death year and age|2000|1920}}`` → ``2000 (aged 79–80)``; ``{{birth year and age|1950}}`` → ``1950 (age
    65–66)`` at a current date in 2016, ``1950`` without one."""
    year, other = args.pos(1), args.pos(2)
    if _is_year(year) and _is_year(other) and int(other) < int(year):
        age = int(year) - int(other)
        return f"{year} (aged {age - 1}–{age})"
    born = "birth" in canonical_template_name(str(args.template.name))
    if born and _is_year(year) and not other and args.current_date and args.current_date.year > int(year):
        age = args.current_date.year - int(year)
        return f"{year} (age {age - 1}–{age})"
    return year


def _iso_date(args: TemplateArgs) -> str:
    """``{{date|2010-05-01}}`` → ``1 May 2010``; other text is kept."""
    value = args.pos(1)
    match = re.fullmatch(r"(\d{4})-(\d{1,2})-(\d{1,2})", value)
    if match:
        return format_date(match.group(1), match.group(2), match.group(3), dmy=True)
    return value


def _dts(args: TemplateArgs) -> str:
    """``{{dts|2010|5|1}}`` → ``May 1, 2010`` (``format=dmy``: ``1 May 2010``); one free-text argument is kept."""
    values = args.positionals()
    if len(values) == 1:
        return _iso_date(args)
    dmy = args.get("format").lower() == "dmy" or args.flag("df")
    return format_date(*(values + ["", ""])[:3], dmy=dmy) if values else ""


def _circa(args: TemplateArgs) -> str:
    first, second = args.pos(1), args.pos(2)
    if not first:
        return "c."
    return f"c. {first}–{second}" if second else f"c. {first}"


def _range_prefix(prefix: str) -> Renderer:
    def render_range(args: TemplateArgs) -> str:
        first, second = args.pos(1), args.pos(2)
        if not first:
            return prefix.strip()
        return f"{prefix}{first}–{second}" if second else f"{prefix}{first}"

    return render_range


def _marriage(args: TemplateArgs) -> str:
    name, start, end = args.pos(1), args.pos(2), args.pos(3)
    if not start:
        return name
    detail = f"m. {start}" + (f"; end {end}" if end else "")
    return f"{name} ({detail})" if name else detail


def _date_args(values: list[str]) -> date | None:
    """A date from (year, month, day) arguments; month and day default to 1 when absent."""
    values = (values + ["", "", ""])[:3]
    if not _is_year(values[0]) or int(values[0]) < 1:
        return None
    month = _month(values[1]) if values[1] else 1
    day = _day(values[2]) if values[2] else 1
    if month is None or day is None:
        return None
    try:
        return date(int(values[0]), month, day)
    except ValueError:
        return None


def _span(start: date, end: date) -> tuple[int, int, int]:
    """Whole years, months and days from ``start`` to ``end`` (``end`` not before ``start``)."""
    years, months, days = end.year - start.year, end.month - start.month, end.day - start.day
    if days < 0:
        months -= 1
        days += (end.replace(day=1) - timedelta(days=1)).day  # the length of the month before end's
    if months < 0:
        years -= 1
        months += 12
    return years, months, days


def _plural(count: int, unit: str) -> str:
    return f"{count} {unit}" if count == 1 else f"{count} {unit}s"


def _age_template(style: str) -> Renderer:
    """``{{age|1950|1|2|2000|1|1}}`` → ``49``; with one date the age is at ``current_date`` (the revision's date),
    and a hole without it. ``style``: ``years`` (``49``), ``days`` (``18,261``), ``years and days``, ``years and
    months``, ``ymd`` (``8 years, 4 months and 15 days``)."""

    def render_age(args: TemplateArgs) -> str:
        values = [value for value in args.positionals() if value]
        if len(values) not in (3, 6) or not all(_is_year(value) or _month(value) for value in values):
            return unrendered(args)
        start = _date_args(values[:3])
        end = _date_args(values[3:]) if len(values) == 6 else args.current_date
        if start is None or end is None or end < start:
            return unrendered(args)
        years, months, days = _span(start, end)
        if style == "years":
            return str(years)
        if style == "days":
            return group_thousands(str((end - start).days))
        if style == "years and days":
            anniversary = _date_args([str(start.year + years), str(start.month), str(start.day)]) or start
            return f"{_plural(years, 'year')}, {_plural((end - anniversary).days, 'day')}"
        if style == "years and months":
            return f"{_plural(years, 'year')}, {_plural(months, 'month')}"
        return f"{_plural(years, 'year')}, {_plural(months, 'month')} and {_plural(days, 'day')}"

    return render_age


def _birth_date_and_age(args: TemplateArgs) -> str:
    """``{{birth date and age|1950|1|2}}`` → ``January 2, 1950 (age 66)`` at ``current_date``; the date alone when
    the current date is unknown (the age is an aside in brackets)."""
    born = _date_template(args)
    start = _date_args(args.positionals()[:3])
    if start is None or args.current_date is None or args.current_date < start:
        return born
    return f"{born} (age {_span(start, args.current_date)[0]})"


def _birth_date_and_age2(args: TemplateArgs) -> str:
    """``{{birth date and age2|2010|1|1|1950|1|2}}``: the age on the first date of someone born on the second →
    ``January 2, 1950 (age 59)``."""
    values = args.positionals() + [""] * 6
    when, start = _date_args(values[:3]), _date_args(values[3:6])
    if start is None:
        return unrendered(args)
    born = format_date(values[3], values[4], values[5], dmy=_dmy(args))
    return f"{born} (age {_span(start, when)[0]})" if when is not None and when >= start else born


def _current(part: str) -> Renderer:
    """``{{CURRENTYEAR}}`` ... at ``current_date`` (the revision's date); a hole without it."""

    def render_current(args: TemplateArgs) -> str:
        when = args.current_date
        if when is None:
            return unrendered(args)
        return {"year": str(when.year), "month": f"{when.month:02d}", "monthname": _MONTHS[when.month - 1],
                "day": str(when.day)}[part]

    return render_current


RENDERERS: tuple[tuple[Renderer, tuple[str, ...]], ...] = (
    (first_or_text, ("start-date", "end-date", "oldstyledate", "old style date")),
    (_as_of, ("as of", "asof")),
    (_date_template, ("start date", "end date", "birth date", "death date", "start date and age",
                      "end date and age", "dob", "birth-date", "death-date", "film date", "start-date and age",
                      "birth date text")),
    (_birth_date_and_age, ("birth date and age", "bda", "birthdate and age")),
    (_birth_date_and_age2, ("birth date and age2",)),
    (_age_template("years"), ("age", "age in years", "age nts")),
    (_age_template("days"), ("age in days",)),
    (_age_template("years and days"), ("age in years and days", "ayd")),
    (_age_template("years and months"), ("age in years and months",)),
    (_age_template("ymd"), ("age in years, months and days", "age in years, months, and days", "aymd")),
    (_current("year"), ("currentyear", "localyear")),
    (_current("month"), ("currentmonth", "localmonth")),
    (_current("monthname"), ("currentmonthname", "localmonthname")),
    (_current("day"), ("currentday", "localday")),
    (_death_date_and_age, ("death date and age", "dda", "death-date and age", "deathdateandage")),
    (_year_and_age, ("death year and age", "birth year and age", "birth-year and age", "death-year and age")),
    (_iso_date, ("date",)),
    (_dts, ("dts", "dtsx", "date table sorting")),
    (_circa, ("circa", "c.", "ca.", "ca")),
    (_range_prefix("fl. "), ("floruit", "fl.")),
    (_range_prefix("r. "), ("reign", "r.")),
    (_prefixed("", " BC"), ("bc",)),
    (_prefixed("", " BCE"), ("bce",)),
    (_prefixed("AD "), ("ad",)),
    (_prefixed("", " CE"), ("ce",)),
    (_marriage, ("marriage", "married")),
)  # fmt: skip
"""The rendered templates of dates and ages: (renderer, the canonical names it renders)."""
