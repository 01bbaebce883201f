"""Parser functions that need no page data: ``{{formatnum:}}``, ``{{lc:}}``, ``{{uc:}}``, ``{{lcfirst:}}``,
``{{ucfirst:}}``, and the ParserFunctions ``{{#expr:}}`` (:mod:`~wikiref_dataset.wiki.expressions`), ``{{#if:}}``,
``{{#ifeq:}}`` and ``{{#switch:}}``. Any other parser function (``{{#invoke:}}``, ``{{#property:}}`` ...) is not
rendered (:func:`parser_function` gives ``None``)."""

from __future__ import annotations

import html
from collections.abc import Callable

from mwparserfromhell.nodes import Template

from ..expressions import ExpressionError, evaluate_expression, format_expression_result
from ..holes import HOLE_START, hole, only_holes
from .arguments import Renderer, TemplateArgs, strip_argument
from .numbers import group_thousands

__all__ = ["parser_function"]


def _function_argument(args: TemplateArgs) -> str:
    """The text after the colon of a parser function (``{{#if: x | ...}}`` → ``x``), rendered."""
    return strip_argument(args.render(args.template.name).partition(":")[2])


def _branch(args: TemplateArgs, index: int) -> str:
    """A parser function's parameter ``index`` as its branch (``a=b`` is the text ``a=b``, as in ``{{#if:}}``), ``""``
    when there is none; only the branch shown is rendered."""
    params = args.template.params
    if index >= len(params):
        return ""
    param = params[index]
    return strip_argument((args.render(param.name) + "=" if param.showkey else "") + args.render(param.value))


def _expr(args: TemplateArgs) -> str:
    """``{{#expr: 3769495/10000 round -1}}`` → ``380`` (:mod:`~wikiref_dataset.wiki.expressions`); an expression
    holding an unrendered template (a population from a data template) leaves that template's hole."""
    expression = _function_argument(args)
    if HOLE_START in expression:
        return only_holes(expression)
    try:
        return format_expression_result(evaluate_expression(html.unescape(expression).replace("−", "-")))
    except ExpressionError:  # MediaWiki shows an error message: named like any unrendered parser function
        return hole("#expr:")


def _if(args: TemplateArgs) -> str:
    """``{{#if: test | then | else}}``: ``then`` when the test shows anything."""
    return _branch(args, 0 if _function_argument(args) else 1)


def _numeric(text: str) -> float | None:
    try:
        return float(text)
    except ValueError:
        return None


def _ifeq(args: TemplateArgs) -> str:
    """``{{#ifeq: a | b | then | else}}``: ``a`` and ``b`` compared as numbers when both are, else as text."""
    left, right = _function_argument(args), _branch(args, 0)
    left_number, right_number = _numeric(left), _numeric(right)
    same = left == right if left_number is None or right_number is None else left_number == right_number
    return _branch(args, 1 if same else 2)


def _switch(args: TemplateArgs) -> str:
    """``{{#switch: x | a = 1 | b | c = 2 | #default = 3}}``: the value of the case equal to ``x`` (``b`` falls
    through to ``c``), else ``#default`` or a last case without ``=``."""
    value, default, falling = _function_argument(args), "", False
    params = args.template.params
    for index, param in enumerate(params):
        if param.showkey:
            keys = strip_argument(args.render(param.name))
            if falling or keys == value:
                return strip_argument(args.render(param.value))
            if keys == "#default":
                default = strip_argument(args.render(param.value))
        else:
            case = strip_argument(args.render(param.value))
            if index == len(params) - 1:
                default = case
            elif case == value:
                falling = True
    return default


_CONDITIONAL_FUNCTIONS: dict[str, Renderer] = {"#expr": _expr, "#if": _if, "#ifeq": _ifeq, "#switch": _switch}

_PARSER_FUNCTIONS: dict[str, Callable[[str], str]] = {
    "formatnum": group_thousands,
    "lc": str.lower,
    "uc": str.upper,
    "lcfirst": lambda text: text[:1].lower() + text[1:],
    "ucfirst": lambda text: text[:1].upper() + text[1:],
}


def parser_function(template: Template) -> Renderer | None:
    """``{{formatnum:1234}}``, ``{{lc:...}}``, ``{{uc:...}}``, ``{{lcfirst:...}}``, ``{{ucfirst:...}}``, and the
    ParserFunctions that need no page data: ``{{#expr:}}``, ``{{#if:}}``, ``{{#ifeq:}}``, ``{{#switch:}}``."""
    function = str(template.name).split(":", 1)[0].strip().lower()
    if function in _CONDITIONAL_FUNCTIONS:
        return _CONDITIONAL_FUNCTIONS[function]
    if function not in _PARSER_FUNCTIONS:
        return None
    transform = _PARSER_FUNCTIONS[function]

    def render_function(args: TemplateArgs) -> str:
        _, _, argument = args.render(template.name).partition(":")
        return transform(argument.strip())

    return render_function
