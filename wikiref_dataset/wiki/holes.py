"""Holes: the marker an unrendered template leaves in rendered text, and which holes a sentence misses words by.

A template that :mod:`~wikiref_dataset.wiki.plaintext` can neither render nor knows to show no words (and a
text-bearing tag such as ``<math>``, :func:`~wikiref_dataset.wiki.markup.prepare`) leaves a *hole*: its name between
:data:`HOLE_START` and :data:`HOLE_END`. Cleaning removes holes unless asked to keep them; :func:`find_holes` reports
those that stand inside a sentence, whose statement the extractor then drops.
"""

from __future__ import annotations

import re

__all__ = ["HOLE_END", "HOLE_START", "find_holes", "hole", "only_holes", "strip_holes"]

HOLE_START, HOLE_END = "\ue002", "\ue003"
"""Private-use characters around the name of an unrendered template in raw rendered text (wikitext never holds
them, like the ref placeholders of :mod:`~wikiref_dataset.wiki.markup`)."""
_HOLE = re.compile("\ue002([^\ue002\ue003]*)\ue003")
_WORD = re.compile(r"\w")
_SENTENCE_END = re.compile(r"[.!?][\"'”’)\]]*\Z")
_BRACKET_OPEN = re.compile(r"[(\[][\s,;:]*\Z")
_BRACKET_CLOSE = re.compile(r"[\s,;:]*[)\]]")


def hole(name: str) -> str:
    """The marker that an unrendered template (or a text-bearing tag such as ``<math>``) leaves in raw text."""
    return HOLE_START + name.replace(HOLE_START, "").replace(HOLE_END, "") + HOLE_END


def strip_holes(text: str) -> str:
    """``text`` without hole markers (whitespace is not normalised:
    :func:`~wikiref_dataset.wiki.plaintext.clean_text` does that)."""
    return _HOLE.sub("", text) if HOLE_START in text else text


def find_holes(text: str) -> list[str]:
    """Names of the unrendered templates that leave a hole *inside* a sentence of ``text`` (rendered with
    ``keep_holes=True``), in order.

    An unrendered template is harmless where nothing it said could be missing from the sentence: before any word of
    the text (``{{quote|...}} He then ...``: the statement starts after it), right after the end of a sentence
    (``... in 1990.{{x}} Then ...``), or alone in brackets (``Alabama ({{x}}) is``: the brackets go with it).
    Everywhere else (``the notes A{{music|flat}}4``, ``on the {{railgauge|1000}} line``, ``in {{currentyear}}
    dollars``) the template very likely carried words the sentence needs.
    """
    if HOLE_START not in text:
        return []
    names = []
    for match in _HOLE.finditer(text):
        before = strip_holes(text[: match.start()]).rstrip()
        after = strip_holes(text[match.end() :]).lstrip()
        if not _WORD.search(before) or _SENTENCE_END.search(before):
            continue
        if _BRACKET_OPEN.search(before) and _BRACKET_CLOSE.match(after):
            continue
        names.append(match.group(1))
    return names


def only_holes(text: str) -> str:
    """The hole markers of ``text``, in order, without anything else."""
    return "".join(hole(name) for name in _HOLE.findall(text))
