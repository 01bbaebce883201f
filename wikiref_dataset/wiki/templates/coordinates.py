"""Geographic coordinates: ``{{coord}}`` as a reader sees it in the running text (``13°19′N 169°09′W``), in degrees,
minutes and seconds or decimal degrees as given."""

from __future__ import annotations

from .arguments import Renderer, TemplateArgs, unrendered
from .numbers import is_number

__all__ = ["RENDERERS"]

_COMPASS = {"n": 1, "s": -1, "e": 1, "w": -1}


def _coord(args: TemplateArgs) -> str:
    """``{{coord|13|19|N|169|9|W}}`` → ``13°19′N 169°09′W``; ``{{coord|32.7|-86.7}}`` → ``32.7°N 86.7°W``;
    nothing when shown only in the page title (``display=title``)."""
    display = args.get("display").lower().replace(" ", "")
    if display and "inline" not in display and display not in ("it", "ti"):
        return ""
    values = [value for value in args.positionals() if value and ":" not in value]
    parts: list[str] = []
    numbers: list[str] = []
    for value in values:
        if value.lower() in _COMPASS:
            if not numbers or len(numbers) > 3 or not all(is_number(number) for number in numbers):
                return unrendered(args)
            degrees = f"{numbers[0]}°" + "".join(f"{float(number):02.0f}{mark}" if number.isdigit() else
                                                 f"{number}{mark}" for number, mark in zip(numbers[1:], "′″"))
            parts.append(degrees + value.upper())
            numbers = []
        else:
            numbers.append(value)
    if not parts and len(numbers) == 2 and all(is_number(number) for number in numbers):
        (latitude, longitude) = (float(number.replace("−", "-")) for number in numbers)
        parts = [f"{numbers[0].lstrip('-−')}°{'N' if latitude >= 0 else 'S'}",
                 f"{numbers[1].lstrip('-−')}°{'E' if longitude >= 0 else 'W'}"]
    elif numbers or len(parts) != 2:
        return unrendered(args)
    return " ".join(parts)


RENDERERS: tuple[tuple[Renderer, tuple[str, ...]], ...] = ((_coord, ("coord",)),)
"""The rendered coordinate templates: (renderer, the canonical names it renders)."""
