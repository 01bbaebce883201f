"""The Markdown table every section of the card prints its numbers in, and the ROUGE F1 columns that the WikiRef,
benchmark and zero-shot tables share."""

from __future__ import annotations

from collections.abc import Sequence

WIKIREF_MEASURES = (("rouge_1_f", "ROUGE-1"), ("rouge_2_f", "ROUGE-2"), ("rouge_l_f", "ROUGE-L"))


def _markdown_table(header: Sequence[str], rows: Sequence[Sequence[str]], numeric_from: int = 1) -> str:
    align = ["---" if column < numeric_from else "---:" for column in range(len(header))]
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join(align) + "|"]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)
