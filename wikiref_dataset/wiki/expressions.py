"""The expressions of MediaWiki's ``{{#expr:}}`` parser function, evaluated without page data.

``{{#expr: 3769495/10000 round -1}}`` shows ``380``: editors compute densities, shares and rounded figures in the
text. :func:`evaluate_expression` evaluates the grammar of the ParserFunctions extension
(``mediawiki.org/wiki/Help:Extension:ParserFunctions##expr``): numbers, ``e`` and ``pi``; ``+ - * / div mod fmod ^``;
``round`` (``x round n``: to ``n`` decimals, half away from zero); ``e`` between numbers (``2e3``); ``= != <> < > <= >=
and or not`` (true is 1, false 0); ``abs trunc floor ceil sqrt exp ln sin cos tan asin acos atan``; brackets. The
precedences are the extension's: unary minus binds tightest (``-2^2`` is 4), then the functions and ``not``, ``^``,
``* / mod``, ``+ -``, ``round``, comparisons, ``and``, ``or``; binary operators group to the left. The result is
written as the extension writes it (:func:`format_expression_result`): ``380``, ``0.33333333333333``.

Why this is written here. No library fits: ``eval`` (as WikiExtractor uses it) would run any Python an article
holds; ``simpleeval`` and ``asteval`` read Python's grammar, in which ``x round -1``, ``7 mod 2`` or ``1 <> 2`` are
errors; mwlib's ``expr`` module does this but mwlib installs some twenty packages (reportlab, a Cython-built timelib,
an HTTP server ...); wikitextprocessor evaluates ``#expr`` only inside its whole expander (Lua runtime and page
database). The evaluator is a precedence-climbing parser of about a hundred lines: it only computes numbers, bounds
the text it reads, and reports anything it does not know as :class:`ExpressionError`.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable

__all__ = ["ExpressionError", "evaluate_expression", "format_expression_result"]

MAX_EXPRESSION_CHARS = 1000
"""Longer expressions are not evaluated (an article's arithmetic is short; this bounds the recursion)."""

_TOKEN = re.compile(r"\s*(?:(\d+(?:\.\d*)?|\.\d+)|([a-z]+)|(<=|>=|<>|!=|[-+*/^()=<>]))", re.IGNORECASE)


class ExpressionError(ValueError):
    """An expression that MediaWiki would answer with an error (or that is too long to evaluate here)."""


def _round(value: float, digits: float) -> float:
    """PHP's ``round``: half away from zero, to ``digits`` decimals (negative: tens, hundreds ...)."""
    places = int(digits)
    scale = 10.0 ** places
    scaled = abs(value) * scale
    rounded = math.floor(scaled + 0.5)
    if abs(scaled - round(scaled)) < 1e-9 * max(1.0, scaled):  # a float such as 2.675 * 100 = 267.49999
        rounded = math.floor(round(scaled, 9) + 0.5)
    return math.copysign(rounded / scale, value)


def _int(value: float) -> int:
    return int(value)  # PHP's (int): truncated towards zero


def _mod(left: float, right: float) -> float:
    if _int(right) == 0:
        raise ExpressionError("division by zero")
    return float(math.fmod(_int(left), _int(right)))


def _divide(left: float, right: float) -> float:
    if right == 0:
        raise ExpressionError("division by zero")
    return left / right


def _fmod(left: float, right: float) -> float:
    if right == 0:
        raise ExpressionError("division by zero")
    return math.fmod(left, right)


_BINARY: dict[str, tuple[int, Callable[[float, float], float]]] = {
    "or": (2, lambda a, b: float(bool(a) or bool(b))),
    "and": (3, lambda a, b: float(bool(a) and bool(b))),
    "=": (4, lambda a, b: float(a == b)),
    "!=": (4, lambda a, b: float(a != b)),
    "<>": (4, lambda a, b: float(a != b)),
    "<": (4, lambda a, b: float(a < b)),
    ">": (4, lambda a, b: float(a > b)),
    "<=": (4, lambda a, b: float(a <= b)),
    ">=": (4, lambda a, b: float(a >= b)),
    "round": (5, _round),
    "+": (6, lambda a, b: a + b),
    "-": (6, lambda a, b: a - b),
    "*": (7, lambda a, b: a * b),
    "/": (7, _divide),
    "div": (7, _divide),
    "mod": (7, _mod),
    "fmod": (7, _fmod),
    "^": (8, lambda a, b: math.pow(a, b)),
    "e": (10, lambda a, b: a * math.pow(10, b)),
}
_UNARY: dict[str, tuple[int, Callable[[float], float]]] = {
    "-": (10, lambda a: -a),
    "+": (10, lambda a: a),
    "not": (9, lambda a: float(not a)),
    "abs": (9, abs),
    "trunc": (9, lambda a: float(math.trunc(a))),
    "floor": (9, lambda a: float(math.floor(a))),
    "ceil": (9, lambda a: float(math.ceil(a))),
    "sqrt": (9, math.sqrt),
    "exp": (9, math.exp),
    "ln": (9, math.log),
    "sin": (9, math.sin),
    "cos": (9, math.cos),
    "tan": (9, math.tan),
    "asin": (9, math.asin),
    "acos": (9, math.acos),
    "atan": (9, math.atan),
}
_CONSTANTS = {"pi": math.pi, "e": math.e}


def _tokens(expression: str) -> list[str]:
    tokens, position = [], 0
    expression = expression.rstrip()
    while position < len(expression):
        match = _TOKEN.match(expression, position)
        if not match:
            raise ExpressionError(f"unrecognised text {expression[position:position + 10]!r}")
        tokens.append(match.group(match.lastindex).lower())
        position = match.end()
    return tokens


class _Parser:
    def __init__(self, tokens: list[str]):
        self.tokens, self.index = tokens, 0

    def peek(self) -> str | None:
        return self.tokens[self.index] if self.index < len(self.tokens) else None

    def take(self) -> str:
        token = self.peek()
        if token is None:
            raise ExpressionError("the expression ends too early")
        self.index += 1
        return token

    def operand(self) -> float:
        token = self.take()
        if token[0].isdigit() or token[0] == ".":
            return float(token)
        if token == "(":
            value = self.expression(0)
            if self.take() != ")":
                raise ExpressionError("unclosed bracket")
            return value
        if token in _UNARY:
            precedence, function = _UNARY[token]
            return function(self.expression(precedence))
        if token in _CONSTANTS:
            return _CONSTANTS[token]
        raise ExpressionError(f"unexpected {token!r}")

    def expression(self, floor: int) -> float:
        value = self.operand()
        while (token := self.peek()) in _BINARY and _BINARY[token][0] > floor:
            self.index += 1
            precedence, function = _BINARY[token]
            value = function(value, self.expression(precedence))
        return value


def evaluate_expression(expression: str) -> float:
    """The value of a ``{{#expr:}}`` expression (see the module docstring); an :class:`ExpressionError` for one that
    MediaWiki would not evaluate either (unknown words, unbalanced brackets, division by zero ...). An empty
    expression is an error here (MediaWiki shows nothing)."""
    if len(expression) > MAX_EXPRESSION_CHARS:
        raise ExpressionError("expression too long")
    tokens = _tokens(expression)
    if not tokens:
        raise ExpressionError("empty expression")
    parser = _Parser(tokens)
    try:
        value = parser.expression(0)
    except (OverflowError, ValueError, ZeroDivisionError) as error:
        raise ExpressionError(str(error)) from error
    if parser.peek() is not None:
        raise ExpressionError(f"unexpected {parser.peek()!r}")
    if math.isnan(value) or math.isinf(value):
        raise ExpressionError("not a finite number")
    return value


def format_expression_result(value: float) -> str:
    """A value as ``{{#expr:}}`` writes it: whole numbers without a decimal point (``380``, ``-2``), others with up
    to 14 significant digits (``0.33333333333333``), very large or small ones in exponent form (``1.0E+20``)."""
    if value == int(value) and abs(value) < 1e15:
        return str(int(value))
    text = f"{value:.14G}"
    if "E" in text:
        mantissa, exponent = text.split("E")
        return f"{mantissa if '.' in mantissa else mantissa + '.0'}E{exponent[0]}{int(exponent[1:])}"
    return text
