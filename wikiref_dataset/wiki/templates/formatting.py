"""Templates that show their arguments as given: formatting (``{{nowrap}}``, ``{{small}}``, ``{{abbr}}``, ``{{sup}}``
...), lists (``{{hlist}}``), sort keys (``{{sort}}``, ``{{sortname}}``), and the renderers that pick an argument
(:func:`first`, :func:`second`, :func:`last`, :func:`first_or_text`, :func:`joined`) which the other families use."""

from __future__ import annotations

from .arguments import Renderer, TemplateArgs

__all__ = ["RENDERERS", "first", "first_or_text", "joined", "last", "second", "superscript_template"]


def first(args: TemplateArgs) -> str:
    return args.pos(1)


def second(args: TemplateArgs) -> str:
    return args.pos(2)


def last(args: TemplateArgs) -> str:
    values = [value for value in args.positionals() if value]
    return values[-1] if values else ""


def first_or_text(args: TemplateArgs) -> str:
    return args.pos(1) or args.get("text")


def joined(separator: str) -> Renderer:
    def render_joined(args: TemplateArgs) -> str:
        return separator.join(value for value in args.positionals() if value)

    return render_joined


def superscript_template(args: TemplateArgs) -> str:
    """``{{sup|x}}``; in running text :func:`~wikiref_dataset.wiki.plaintext.superscript` also looks at the text
    before it."""
    return args.pos(1)


def _sortname(args: TemplateArgs) -> str:
    return " ".join(value for value in (args.pos(1), args.pos(2)) if value)


def _sort(args: TemplateArgs) -> str:
    return args.pos(2) or args.pos(1)


def _as_is(args: TemplateArgs) -> str:
    return joined("")(args)


def _hlist(args: TemplateArgs) -> str:
    return ", ".join(value for value in args.positionals() if value)


RENDERERS: tuple[tuple[Renderer, tuple[str, ...]], ...] = (
    # the text argument of a formatting template
    (first_or_text, (
        "nowrap", "nobr", "nobreak", "no wrap", "small", "smaller", "big", "larger", "large", "huge", "em",
        "strong", "noitalic", "nobold", "highlight", "serif", "sans-serif", "mono", "code", "kbd", "samp", "var",
        "varserif", "mvar", "math", "tmath", "sub", "sc", "smallcaps", "small caps", "small-caps", "vanchor",
        "visible anchor", "tooltip", "abbr", "abbrlink", "abbr link", "flag", "flagcountry", "flagu", "flag country",
        "nts", "keypress", "bold", "italic", "bolditalic", "underline", "font", "mxt", "tq", "xt", "chem2", "center",
        "centre", "lower", "upper", "not a typo", "notatypo", "as written", "proper name", "typo", "unicode", "span",
        "nq", "noquote",
    )),
    (superscript_template, ("sup",)),
    (second, ("color", "colour", "font color", "audio")),
    (last, ("resize",)),
    (_as_is, ("sic", "chem")),
    (joined(" "), ("linktext", "gaps")),
    (_hlist, ("hlist", "flatlist", "plainlist", "ubl", "unbulleted list", "ublist", "bulleted list", "blist",
              "ordered list", "collapsible list", "cslist", "comma separated entries", "vunblist")),
    (_sortname, ("sortname",)),
    (_sort, ("sort",)),
)  # fmt: skip
"""The rendered formatting templates: (renderer, the canonical names it renders)."""
