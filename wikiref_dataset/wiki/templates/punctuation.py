"""Punctuation, symbols and spacing written as templates: dashes (``{{ndash}}``, ``{{snd}}``), spaces (``{{nbsp}}``),
quotes, signs (``{{plusminus}}``, ``{{times}}``), music accidentals (``{{music|flat}}``) and angle brackets."""

from __future__ import annotations

from .arguments import Renderer, TemplateArgs, unrendered

__all__ = ["RENDERERS"]


def _constant(text: str) -> Renderer:
    def render_constant(args: TemplateArgs) -> str:
        return text

    return render_constant


def _nbsp(args: TemplateArgs) -> str:
    count = args.pos(1)
    return " " * (int(count) if count.isdigit() and int(count) < 20 else 1)


_MUSIC_SYMBOLS = {"flat": "♭", "b": "♭", "sharp": "♯", "#": "♯", "natural": "♮", "doubleflat": "𝄫", "bb": "𝄫",
                  "doublesharp": "𝄪", "x": "𝄪"}


def _music(args: TemplateArgs) -> str:
    """``{{music|flat}}`` → ``♭`` (accidentals; other music symbols are holes)."""
    return _MUSIC_SYMBOLS.get(args.pos(1).lower()) or unrendered(args)


def _angle_brackets(args: TemplateArgs) -> str:
    return f"⟨{args.pos(1)}⟩"


RENDERERS: tuple[tuple[Renderer, tuple[str, ...]], ...] = (
    (_music, ("music",)),
    (_angle_brackets, ("angbr", "angle bracket", "angle brackets")),
    (_constant("'"), ("'", "apostrophe")),
    (_constant("'s"), ("'s",)),
    (_constant("a.k.a."), ("aka",)),
    (_constant("/"), ("slash",)),
    (_constant("-"), ("nbhyph", "non-breaking hyphen")),
    (_constant("'\""), ("' \"", "'\"")),
    (_constant("\"'"), ("\" '", "\"'")),
    (_constant("\""), ("\"",)),
    (_constant(" – "), ("snd", "spnd", "sndash", "spaced ndash", "spaced en dash", "snds")),
    (_constant("–"), ("ndash", "en dash", "endash", "–", "dash")),
    (_constant("—"), ("mdash", "em dash", "emdash", "—")),
    (_constant(" —"), ("mdashb", "spaced mdash", "spmdash")),
    (_constant(" "), ("thinsp", "thin space", "hair space", "hairsp", "spaces", "space", "sp", "break", "br")),
    (_nbsp, ("nbsp", "nbs")),
    (_constant(" · "), ("·", "dot", "middot")),
    (_constant(" • "), ("bull", "bullet", "•")),
    (_constant(","), (",",)),
    (_constant("="), ("=", "equals")),
    (_constant("|"), ("!", "pipe")),
    (_constant("ʻ"), ("okina", "ʻ")),
    (_constant("′"), ("prime",)),
    (_constant("±"), ("plusminus", "+-", "pm")),
    (_constant("×"), ("times",)),
    (_constant("−"), ("minus", "−")),
    (_constant(""), ("shy", "zwsp", "wbr", "zwj", "zwnj")),
)  # fmt: skip
"""The rendered punctuation, symbol and spacing templates: (renderer, the canonical names it renders)."""
