"""Money: amounts with their currency as a reader sees them (``{{US$|5 million}}`` → ``US$5 million``,
``{{currency|1000|USD}}``, ``{{format price}}``); amounts are never converted."""

from __future__ import annotations

from .arguments import Renderer, TemplateArgs

__all__ = ["RENDERERS"]

_CURRENCY_SYMBOLS = {
    "us$": "US$", "usd": "US$", "us dollar": "US$", "$": "$", "£": "£", "gbp": "£", "€": "€", "eur": "€",
    "euro": "€", "¥": "¥", "jpy": "¥", "yen": "¥", "inr": "₹", "₹": "₹", "indian rupee": "₹", "cad": "CA$",
    "ca$": "CA$", "aud": "A$", "a$": "A$", "nzd": "NZ$", "nz$": "NZ$", "hkd": "HK$", "hk$": "HK$", "sgd": "S$",
    "cny": "CN¥", "rmb": "CN¥", "chf": "CHF ", "sek": "SEK ", "nok": "NOK ", "dkk": "DKK ", "rub": "₽",
    "krw": "₩", "brl": "R$", "mxn": "Mex$", "zar": "R", "try": "₺", "ils": "₪", "php": "₱", "pkr": "Rs ",
    "ngn": "₦", "egp": "E£", "aed": "AED ",
}  # fmt: skip


def _currency_symbol(symbol: str) -> Renderer:
    def render_currency(args: TemplateArgs) -> str:
        amount = args.pos(1)
        return f"{symbol}{amount}" if amount else symbol.strip()

    return render_currency


def _currency(args: TemplateArgs) -> str:
    """``{{currency|1000|USD}}`` → ``US$1000``."""
    amount, code = args.pos(1), args.pos(2) or args.get("type")
    if not code:
        return amount
    symbol = _CURRENCY_SYMBOLS.get(code.lower())
    return f"{symbol}{amount}" if symbol else f"{amount} {code}"


def _format_price(args: TemplateArgs) -> str:
    value = args.pos(1).replace(",", "")
    try:
        number = float(value)
    except ValueError:
        return args.pos(1)
    for threshold, word in ((1e12, "trillion"), (1e9, "billion"), (1e6, "million")):
        if abs(number) >= threshold:
            return f"{number / threshold:.3g} {word}"
    return f"{number:,.0f}" if number == int(number) else f"{number:,.2f}"


# Currency templates of the form {{US$|amount}}: template name → symbol.
_CURRENCY_TEMPLATES = {"us$": "US$", "usd": "US$", "£": "£", "gbp": "£", "€": "€", "eur": "€", "¥": "¥",
                       "jpy": "¥", "inr": "₹", "₹": "₹", "cad": "CA$", "ca$": "CA$", "aud": "A$", "a$": "A$",
                       "nzd": "NZ$", "hkd": "HK$", "sgd": "S$", "cny": "CN¥", "rmb": "CN¥", "chf": "CHF "}


RENDERERS: tuple[tuple[Renderer, tuple[str, ...]], ...] = (
    (_currency, ("currency",)),
    (_format_price, ("format price", "formatprice")),
    *((_currency_symbol(symbol), (name,)) for name, symbol in _CURRENCY_TEMPLATES.items()),
)
"""The rendered money templates: (renderer, the canonical names it renders)."""
