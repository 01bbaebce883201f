"""Templates of text in another language or script: the text they show, never the language's name (``{{lang}}``,
``{{lang-xx}}``, ``{{nihongo}}``, ``{{zh}}``, ``{{wikt-lang}}``, ``{{lit}}``, ``{{transl}}``, IPA and respellings)."""

from __future__ import annotations

from .arguments import Renderer, TemplateArgs, unrendered
from .formatting import first, first_or_text, last, second

__all__ = ["PREFIX_RENDERERS", "RENDERERS"]


def _lang(args: TemplateArgs) -> str:
    """``{{lang|fr|texte}}`` → ``texte`` (the text, not the language name)."""
    return args.pos(2) or args.get("text")


def _lang_prefixed(args: TemplateArgs) -> str:
    """``{{lang-fr|texte}}`` → ``texte``."""
    return args.pos(1) or args.get("text")


def _nihongo(args: TemplateArgs) -> str:
    """``{{nihongo|Tokyo|東京|Tōkyō}}`` → ``Tokyo`` (the English form; the script form when there is none)."""
    return args.pos(1) or args.pos(2)


def _wikt_lang(args: TemplateArgs) -> str:
    """``{{wikt-lang|fr|mot}}`` → ``mot`` (the displayed form, argument 3, when given); not the language code."""
    return args.pos(3) or args.pos(2)


def _literally(args: TemplateArgs) -> str:
    """``{{lit|small river}}`` → ``lit. 'small river'`` (several meanings joined with "or")."""
    meanings = [value for value in args.positionals() if value]
    return "lit. " + " or ".join(f"'{meaning}'" for meaning in meanings) if meanings else "lit."


def _chinese(args: TemplateArgs) -> str:
    """``{{zh|c=中国|p=Zhōngguó}}`` → ``中国; Zhōngguó`` (the forms, without their labels)."""
    forms = [args.get(key) for key in ("t", "s", "c", "p", "w", "j", "cy", "y", "poj", "tl")]
    return "; ".join(form for form in forms if form) or unrendered(args)


def _respell(args: TemplateArgs) -> str:
    return "-".join(value for value in args.positionals() if value)


RENDERERS: tuple[tuple[Renderer, tuple[str, ...]], ...] = (
    (first_or_text, ("nastaliq", "ipa", "ipa-all", "ipa2", "ipa3", "polytonic", "script/arabic")),
    (_wikt_lang, ("wikt-lang",)),
    (_literally, ("lit", "literally", "literal translation")),
    (_chinese, ("zh",)),
    (second, ("script", "native name", "native phrase", "rtl-lang")),
    (_lang, ("lang", "lang2", "language", "langx")),
    (last, ("transl", "transliteration", "translit")),
    (_nihongo, ("nihongo", "nihongo2", "nihongo3", "nihongo foot")),
    (_respell, ("respell",)),
)
"""The rendered templates of other languages and scripts: (renderer, the canonical names it renders)."""

PREFIX_RENDERERS: tuple[tuple[str, Renderer], ...] = (
    ("lang-", _lang_prefixed),
    ("ipa-", first),
)
"""Templates recognised by a prefix of their canonical name: "lang-fr", "ipa-de"."""
