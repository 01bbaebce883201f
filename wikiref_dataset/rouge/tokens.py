"""A summary as ROUGE-1.5.5 reads it: its lines, the ``-l`` word cut, and its tokens (stemming is ``stemmer.py``).

* reading: a text is split into lines at ``"\\n"`` only, zero-length lines are skipped, ``\\r`` stays in a line;
* ``-l N``: words counted with Perl's ``split(/\\s+/)`` (ASCII whitespace, a leading empty field counts), lines taken
  whole while the count stays below N, the first line that reaches N cut to its first fields; applied to the system
  and to every reference;
* tokens: every character other than ``[A-Za-z0-9]`` is a separator, ASCII-only lowercasing.

Also the byte tables with which the scorer tokenizes many summaries at once (:meth:`RougeScorer._number_texts`), and
the base-37 numbers that identify its tokens of up to 11 characters.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np

__all__ = ["read_lines", "count_words", "truncate_lines", "rouge_tokenize"]


# Perl's \s on a byte string: space, \t, \n, \r, \f and \v (since Perl 5.18). NBSP, U+0085, U+2028 are not.
_PERL_WHITESPACE = re.compile(r"[ \t\n\r\f\v]+")
# ROUGE replaces "-" by " - " and every other character outside [A-Za-z0-9-] by a space, then keeps only tokens that
# start with [a-z0-9]: which is the same as treating every character outside [A-Za-z0-9] as a separator. On UTF-8
# bytes one translate() does it and lowercases ASCII-only: every byte of a non-ASCII character (as in Perl, which
# reads bytes) becomes a space, so KELVIN SIGN or U+0130 never turn into ASCII letters.
_TOKEN_TABLE = bytes(c + 32 if 65 <= c <= 90 else c if 48 <= c <= 57 or 97 <= c <= 122 else 32 for c in range(256))
_LINE_WITH_LEADING_WHITESPACE = re.compile(rb"\n[ \t\r\f\v]")
_TOKEN_ONLY = re.compile(r"[a-z0-9]+")


def read_lines(text: str | Sequence[str]) -> list[str]:
    """The lines ROUGE reads from a summary: split at ``"\\n"`` only, zero-length lines dropped.

    A list of strings is one sentence per line (each may itself hold ``"\\n"``). Whitespace-only lines are kept:
    they add no word and form an empty ROUGE-L unit, as in ROUGE-1.5.5.
    """
    if isinstance(text, str):
        raw = text.split("\n")
    elif isinstance(text, Sequence):
        raw = []
        for position, sentence in enumerate(text):
            if not isinstance(sentence, str):
                raise TypeError(f"summary sentence {position} is {type(sentence).__name__}, expected str")
            raw.extend(sentence.split("\n"))
    else:
        raise TypeError(f"a summary must be a string or a list of sentence strings, got {type(text).__name__}")
    return [line for line in raw if line]


def _perl_split_words(line: str) -> list[str]:
    """``split(/\\s+/, $line)``: a leading empty field is kept, trailing empty fields are removed."""
    words = _PERL_WHITESPACE.split(line)
    while words and not words[-1]:
        words.pop()
    return words


# Characters Python's str.split() treats as whitespace and Perl's \s does not (on bytes): where none occurs, the fast
# C split gives Perl's fields, but for the leading empty field Perl keeps.
_PYTHON_ONLY_WHITESPACE = re.compile("[\x1c-\x1f\x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]")


def _line_word_count(line: str) -> int:
    r"""``scalar(split(/\s+/, $line))`` without building Perl's field list where Python's split agrees."""
    if _PYTHON_ONLY_WHITESPACE.search(line):
        return len(_perl_split_words(line))
    words = line.split()
    return len(words) + 1 if words and line[0] in " \t\n\r\f\v" else len(words)


def count_words(text: str | Sequence[str]) -> int:
    """The number of words ROUGE's ``-l`` counts in a summary (a leading-whitespace line counts one extra)."""
    return sum(_line_word_count(line) for line in read_lines(text))


def truncate_lines(lines: Sequence[str], limit: int | None) -> list[str]:
    """ROUGE's ``-l limit``: lines are kept whole while the running word count stays below ``limit``; the first line
    that would reach it is replaced by its first ``limit - count`` fields joined by single spaces, and reading stops.
    """
    if limit is None:
        return list(lines)
    kept: list[str] = []
    count = 0
    for line in lines:
        n_words = _line_word_count(line)
        if count + n_words < limit:
            kept.append(line)
            count += n_words
        else:
            kept.append(" ".join(_perl_split_words(line)[: limit - count]))
            break
    return kept


def rouge_tokenize(text: str) -> list[str]:
    """ROUGE-1.5.5's tokens of one line (unstemmed): ASCII letters and digits, lowercased ASCII-only.

    ``U.S.-led`` → ``u s led``; ``don't`` → ``don t``; ``Zürich`` → ``z rich``; ``-LRB-`` → ``lrb``.
    """
    return text.encode("utf-8", "surrogatepass").translate(_TOKEN_TABLE).decode("ascii").split()


def _summary_bytes(text: str | Sequence[str], limit: int | None) -> tuple[bytes, bool]:
    """The UTF-8 bytes ROUGE tokenizes for a summary, and whether the ``-l`` cut is still to be made on them.

    ROUGE joins the truncated lines of a summary (:func:`truncate_lines`) and no token spans two lines, so a string
    summary can be tokenized whole, empty lines and all. With a word limit, where no line starts with whitespace
    (which would add Perl's empty leading field), every whitespace-separated field is one ``-l`` word, and the kept
    text (whole lines, then the first words of the line that reaches the limit) ends right before the summary's field
    ``limit + 1``: :meth:`RougeScorer._number_texts` finds that field for many summaries at once (on UTF-8 bytes, the
    whitespace bytes are exactly Perl's ``\\s``). Other summaries are truncated line by line here.
    """
    if isinstance(text, str):
        data = text.encode("utf-8", "surrogatepass")
        if limit is None:
            return data, False
        if not data[:1].isspace() and not _LINE_WITH_LEADING_WHITESPACE.search(data):
            return data, True
    return "\n".join(truncate_lines(read_lines(text), limit)).encode("utf-8", "surrogatepass"), False


# The batch tokenizer (RougeScorer._number_texts) classifies the bytes of many summaries at once with these tables:
# Perl's \s, and the base-37 digit of a token character (1-36 for [0-9a-z], A-Z folded; 0 for every other byte, the
# bytes of non-ASCII characters included). A token of at most 11 characters is identified by its base-37 number,
# which is below 2**63; longer tokens, which are rare, are looked up as bytes.
_WHITESPACE_BYTE = np.zeros(256, dtype=bool)
_WHITESPACE_BYTE[list(b" \t\n\r\f\v")] = True
_TOKEN_ALPHABET = "0123456789abcdefghijklmnopqrstuvwxyz"
_TOKEN_DIGIT = np.zeros(256, dtype=np.uint64)
_TOKEN_DIGIT[np.frombuffer(_TOKEN_ALPHABET.encode(), dtype=np.uint8)] = np.arange(1, 37)
_TOKEN_DIGIT[np.frombuffer(_TOKEN_ALPHABET.upper().encode(), dtype=np.uint8)] = np.arange(1, 37)
_CODED_LENGTH = 11
_INVERSE_37 = pow(37, -1, 1 << 64)  # 37 is odd, so invertible modulo 2**64


def _decode_token(code: int) -> str:
    """The token whose base-37 number is ``code``."""
    characters = []
    while code:
        code, digit = divmod(code, 37)
        characters.append(_TOKEN_ALPHABET[digit - 1])
    return "".join(reversed(characters))


def _token_code(token: str) -> int:
    """The base-37 number of a token of [0-9a-z]."""
    code = 0
    for character in token:
        code = code * 37 + _TOKEN_ALPHABET.index(character) + 1
    return code


def _powers_of_37(size: int) -> tuple[np.ndarray, np.ndarray]:
    """37**j and 37**-j modulo 2**64 for j < size (uint64 products wrap modulo 2**64)."""
    forward = np.full(size, 37, dtype=np.uint64)
    inverse = np.full(size, _INVERSE_37, dtype=np.uint64)
    forward[0] = inverse[0] = 1
    np.cumprod(forward, out=forward)
    np.cumprod(inverse, out=inverse)
    return forward, inverse
