"""Numbers and units: numbers as the language being read writes them (:func:`format_number`), and the templates of
values, units and measures (``{{convert}}``, ``{{val}}``, ``{{frac}}``, ``{{10^}}``, ``{{ordinal}}``, ``{{pop
density}}``, ``{{railgauge}}``, ``{{height}}``); a converted value is never computed: the value is shown as given."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from .arguments import Renderer, TemplateArgs, unrendered
from .context import LANGUAGE_TEMPLATES

if TYPE_CHECKING:
    from ..languages import NumberFormat

__all__ = ["RENDERERS", "format_number", "group_thousands", "is_number"]

_NUMBER = re.compile(r"[+\-−]?(?:\d[\d,]*(?:\.\d+)?|\.\d+)(?:e[+\-]?\d+)?\Z", re.IGNORECASE)


def is_number(text: str) -> bool:
    """Whether ``text`` is a number as editors write one in template arguments (``1,234.5``, ``-3``, ``2e6``)."""
    return bool(_NUMBER.match(text.strip()))


def group_thousands(number: str) -> str:
    """``1234567.5`` → ``1,234,567.5``; in another language as it writes numbers
    (:func:`~wikiref_dataset.wiki.inline.language_templates`: ``1 234 567,5`` in French); anything that is not a plain
    number is returned unchanged."""
    numbers = LANGUAGE_TEMPLATES.get().numbers
    if numbers is not None:
        return format_number(number, numbers)
    match = re.fullmatch(r"([+\-−]?)(\d{4,})(\.\d+)?", number.strip())
    if not match:
        return number
    sign, whole, fraction = match.groups()
    return f"{sign}{int(whole):,}{fraction or ''}"


_PLAIN_NUMBER = re.compile(r"([+\-−–]?)(\d+)(?:([.,])(\d+))?\Z")


def format_number(number: str, numbers: NumberFormat, decimal_comma: bool = False) -> str:
    """A plain number (``1234567.5``) written as a language writes it (:class:`~wikiref_dataset.wiki.languages.
    NumberFormat`: ``1 234 567,5`` in French, ``1.234.567,5`` in German), grouped by three from ``min_digits``
    digits on. As in ``{{formatnum:}}`` the decimal mark read is ``.``; ``decimal_comma`` reads ``,`` too (French
    editors write ``{{unité|3743,31|km|2}}``). Anything else (already grouped, words) is returned unchanged. Group
    marks are written as a plain space where the language uses a (narrow) no-break space: text is cleaned to one."""
    match = _PLAIN_NUMBER.match(number.strip())
    if not match or (match.group(3) == "," and not decimal_comma):
        return number
    sign, whole, _, fraction = match.groups()
    if len(whole) >= max(numbers.min_digits, 4):
        head = len(whole) % 3 or 3
        whole = numbers.group.join([whole[:head]] + [whole[index:index + 3] for index in range(head, len(whole), 3)])
    return f"{sign}{whole}{numbers.decimal + fraction if fraction else ''}"


# {{convert}}: value (range) unit [value unit ...]; the conversion itself is not computed.
_CONVERT_RANGES = {"-": "–", "–": "–", "to": " to ", "and": " and ", "or": " or ", "to(-)": " to ", "x": " × ",
                   "×": " × ", "by": " by ", "+/-": " ± ", "±": " ± ", "and(-)": " and ", "or(-)": " or ",
                   "&": " & ", "+": " + ", "to about": " to about ", "-to-": " to ", "xx": " × "}
_UNIT_SYMBOLS = {
    "km2": "km²", "m2": "m²", "cm2": "cm²", "mm2": "mm²", "sqkm": "km²", "mi2": "sq mi", "sqmi": "sq mi",
    "ft2": "sq ft", "sqft": "sq ft", "sqyd": "sq yd", "yd2": "sq yd", "in2": "sq in", "sqin": "sq in",
    "acre": "acres", "acres": "acres", "ha": "ha", "km3": "km³", "m3": "m³", "cm3": "cm³", "cuft": "cu ft",
    "ft3": "cu ft", "cuyd": "cu yd", "cumi": "cu mi", "C": "°C", "F": "°F", "K": "K", "kph": "km/h",
    "kmh": "km/h", "km/h": "km/h", "mph": "mph", "kn": "kn", "knot": "kn", "impgal": "imp gal", "USgal": "US gal",
    "usgal": "US gal", "L": "L", "l": "L", "LT": "long tons", "ST": "short tons", "t": "t", "MT": "t",
    "e3acre": "thousand acres", "e6acre": "million acres", "e3km2": "thousand km²", "e6km2": "million km²",
    "e3sqmi": "thousand sq mi", "e6sqmi": "million sq mi", "e3mi2": "thousand sq mi", "e6mi2": "million sq mi",
    "e6m3": "million m³", "e9m3": "billion m³", "e6cuft": "million cu ft", "e9cuft": "billion cu ft",
    "e3t": "thousand t", "e6t": "million t", "e6km": "million km", "e6mi": "million mi", "e9km": "billion km",
    "e3km": "thousand km", "e3mi": "thousand mi", "e6bbl": "million bbl", "e3bbl": "thousand bbl",
    "ftin": "ft in", "ft.in": "ft in", "stlb": "st lb", "lboz": "lb oz", "usgal/min": "US gal/min",
    "deg": "°", "°": "°", "percent": "%", "%": "%", "PD/sqmi": "/sq mi", "PD/mi2": "/sq mi", "PD/km2": "/km²",
    "PD/sqkm": "/km²", "PD/ha": "/ha", "PD/acre": "/acre",
}  # fmt: skip


def _unit(code: str) -> str:
    code = code.strip()
    return _UNIT_SYMBOLS.get(code, code)


def _convert(args: TemplateArgs) -> str:
    values = args.positionals()
    if not values or not values[0]:
        return ""
    parts = [group_thousands(values[0])]
    index = 1
    while index + 1 < len(values) and values[index].strip().lower() in _CONVERT_RANGES and is_number(values[index + 1]):
        parts.append(_CONVERT_RANGES[values[index].strip().lower()])
        parts.append(group_thousands(values[index + 1]))
        index += 2
    if index < len(values) and values[index]:
        unit = _unit(values[index])
        parts.append(unit if unit.startswith(("/", "%")) else " " + unit)
        index += 1
        # compound input: {{convert|5|ft|6|in|m}} → "5 ft 6 in"
        while index + 2 < len(values) and is_number(values[index]) and values[index + 1] and not is_number(
            values[index + 1]
        ):
            parts.append(f" {group_thousands(values[index])} {_unit(values[index + 1])}")
            index += 2
    return "".join(parts)


def _val(args: TemplateArgs) -> str:
    """``{{val|1.2|0.1|e=6|u=m}}`` → ``1.2±0.1×10^6 m``."""
    value = group_thousands(args.pos(1))
    if not value:
        return ""
    uncertainty = args.pos(2)
    if uncertainty:
        value += f"±{uncertainty}"
    exponent = args.get("e")
    if exponent:
        value += f"×10^{exponent}"
    unit = args.get("u", "ul")
    return f"{value} {unit}" if unit else value


def _e_notation(args: TemplateArgs) -> str:
    exponent = args.pos(1)
    return f"×10^{exponent}" if exponent else ""


def _frac(args: TemplateArgs) -> str:
    values = args.positionals()
    if len(values) == 1:
        return f"1/{values[0]}"
    if len(values) == 2:
        return f"{values[0]}/{values[1]}"
    if len(values) >= 3:
        return f"{values[0]} {values[1]}/{values[2]}"
    return ""


def _power_of_ten(args: TemplateArgs) -> str:
    """``{{10^|18}}`` → ``10^18``."""
    return f"10^{args.pos(1)}" if args.pos(1) else "10"


def _population_density(args: TemplateArgs) -> str:
    """``{{pop density|3645257|640081.87|km2|prec=1}}`` → ``5.7/km²`` (population / area, in the first unit)."""
    population, area = args.pos(1).replace(",", ""), args.pos(2).replace(",", "")
    precision = args.get("prec")
    try:
        density = float(population) / float(area)
        digits = int(precision) if precision else 1
    except (ValueError, ZeroDivisionError):
        return unrendered(args)
    return f"{density:,.{max(digits, 0)}f}{_unit('PD/' + args.pos(3)) if args.pos(3) else ''}"


def _ordinal(args: TemplateArgs) -> str:
    """``{{ordinal|3}}`` → ``3rd``, ``{{ordinal|112}}`` → ``112th``."""
    value = args.pos(1)
    digits = value.replace(",", "")
    if not digits.isdigit():
        return value or unrendered(args)
    number = int(digits)
    suffix = "th" if number % 100 in (11, 12, 13) else {1: "st", 2: "nd", 3: "rd"}.get(number % 10, "th")
    return value + suffix


_NAMED_GAUGES = {"sg": 1435, "ussg": 1435, "standard": 1435, "metre": 1000, "meter": 1000, "cape": 1067,
                 "russian": 1520, "irish": 1600, "iberian": 1668, "indian": 1676, "broad": 1676}
_GAUGE_IMPERIAL = re.compile(r"(?:(\d+)\s*ft)?\s*(?:(\d+(?:\.\d+)?)\s*in)?\Z")


def _rail_gauge(args: TemplateArgs) -> str:
    """``{{railgauge|1000mm}}`` → ``1,000 mm``, ``{{railgauge|3ft6in}}`` → ``3 ft 6 in``, ``{{railgauge|sg}}`` →
    ``1,435 mm`` (the gauge as given; the conversion is not computed)."""
    value = args.pos(1).lower().replace(" ", "")
    millimetres = _NAMED_GAUGES.get(value)
    if millimetres is None:
        match = re.fullmatch(r"(\d+(?:\.\d+)?)(?:mm)?", value)
        if match and (value.endswith("mm") or float(match.group(1)) >= 100):
            return f"{group_thousands(match.group(1))} mm"
        imperial = _GAUGE_IMPERIAL.match(value)
        if value and imperial and any(imperial.groups()):
            feet, inches = imperial.groups()
            return " ".join(part for part in (feet and f"{feet} ft", inches and f"{inches} in") if part)
        return unrendered(args)
    return f"{millimetres:,} mm"


def _height(args: TemplateArgs) -> str:
    """``{{height|ft=6|in=2}}`` → ``6 ft 2 in``, ``{{height|m=1.83}}`` → ``1.83 m``."""
    parts = [f"{args.get(unit)} {unit}" for unit in ("m", "cm", "ft", "in") if args.get(unit)]
    return " ".join(parts) or unrendered(args)


RENDERERS: tuple[tuple[Renderer, tuple[str, ...]], ...] = (
    # value + unit: "5 km", "5–10 mi", "5 ft 6 in" (the converted value is not computed)
    (_convert, ("convert", "cvt", "convinfobox")),
    (_val, ("val",)),
    (_e_notation, ("e",)),
    (_frac, ("frac", "fraction", "sfrac", "fracs")),
    (_power_of_ten, ("10^",)),
    (_ordinal, ("ordinal",)),
    (_rail_gauge, ("railgauge", "rail gauge", "gauge")),
    (_height, ("height",)),
    (_population_density, ("pop density", "popdensity")),
)
"""The rendered templates of numbers and units: (renderer, the canonical names it renders)."""
