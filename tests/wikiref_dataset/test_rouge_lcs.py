"""The union-LCS marking of ROUGE-L against the plain full-table DP it shortcuts (row skipping, accumulate)."""

import random

import pytest

from wikiref_dataset.rouge import _union_lcs_marks


def _full_table_marks(reference_unit, system_units):
    """ROUGE-1.5.5's DP written out: every cell, explicit direction codes, backtrack from the corner."""
    m = len(reference_unit)
    marks = [False] * m
    for unit in system_units:
        n = len(unit)
        c = [[0] * (n + 1) for _ in range(m + 1)]
        b = [[None] * (n + 1) for _ in range(m + 1)]
        for i in range(1, m + 1):
            for j in range(1, n + 1):
                if reference_unit[i - 1] == unit[j - 1]:
                    c[i][j], b[i][j] = c[i - 1][j - 1] + 1, "diagonal"
                elif c[i - 1][j] >= c[i][j - 1]:
                    c[i][j], b[i][j] = c[i - 1][j], "up"
                else:
                    c[i][j], b[i][j] = c[i][j - 1], "left"
        i, j = m, n
        while i > 0 and j > 0:
            if b[i][j] == "diagonal":
                marks[i - 1] = True
                i, j = i - 1, j - 1
            elif b[i][j] == "up":
                i -= 1
            else:
                j -= 1
    return marks


@pytest.mark.parametrize("seed", range(300))
def test_union_lcs_marks_equal_full_table(seed):
    rng = random.Random(seed)
    vocabulary = [chr(ord("a") + k) for k in range(rng.randint(2, 8))]
    reference_unit = [rng.choice(vocabulary) for _ in range(rng.randint(0, 15))]
    system_units = [[rng.choice(vocabulary) for _ in range(rng.randint(0, 15))] for _ in range(rng.randint(1, 4))]
    assert _union_lcs_marks(reference_unit, system_units) == _full_table_marks(reference_unit, system_units)


def test_union_of_two_system_lines():
    # reference "a b c d e"; system lines "a b x" and "d e": each line's LCS covers part, the union covers a b d e.
    assert _union_lcs_marks(list("abcde"), [list("abx"), list("de")]) == [True, True, False, True, True]
