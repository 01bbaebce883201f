"""DUC baselines (LEAD, QUERY-SIM, ORACLE) on hand-made clusters with hand-computed expectations, and on the
DUC-layout fixtures."""

import math
from pathlib import Path

import pytest

from wikiref_dataset.baselines import (
    BASELINE_NAMES,
    BASELINE_RULE,
    BASELINES,
    baseline_rule,
    baseline_scores,
    baseline_selection,
    baseline_summary,
    baseline_system,
    lead,
    lead_scores,
    oracle,
    query_sim,
    query_sim_scores,
    rule_label,
    system_name,
)
from wikiref_dataset.duc.reader import locate_duc, read_duc
from wikiref_dataset.selection import ClusterSentences

DUC = Path(__file__).resolve().parents[1] / "fixtures" / "duc"


def _row(documents, query=("q",), references=("r",)):
    return {"topic_id": "D0000A", "query": list(query), "references": list(references),
            "documents": [{"docno": docno, "date": date, "headline": "", "sentences": sentences}
                          for docno, date, sentences in documents]}


LEAD_ROW = _row([
    ("APW1", "1999-07-07", ["a1 first.", "a1 second."]),          # flat 0, 1
    ("APW2", "1999-07-09", ["b first sentence.", "b second one."]),  # flat 2, 3
    ("NYT1", "", ["n only."]),                                    # flat 4: unknown date = oldest
    ("XIE1", "1999-07-09", ["x one two."]),                       # flat 5: same day as APW2, higher DOCNO
])


def test_lead_most_recent_document_first_then_the_next():
    assert lead(LEAD_ROW) == [5, 2, 3, 0, 1, 4]
    assert lead_scores(LEAD_ROW) == [-3.0, -4.0, -1.0, -2.0, -5.0, 0.0]


def test_lead_continues_into_the_next_document_only_while_short():
    assert lead(LEAD_ROW, max_words=3) == [5]  # "x one two." fills the budget
    assert lead(LEAD_ROW, max_words=5) == [5, 2]  # 3 words, then the crossing sentence of APW2


def test_query_sim_tfidf_hand_computed():
    sentences = ["Red apples grow.", "Green pears grow.", "Red cars."]
    # N = 3 sentences; df: red 2, apple 1, grow 2, green 1, pear 1, car 1; idf = ln((1 + N) / (1 + df)) + 1
    rare, common = math.log(4 / 2) + 1, math.log(4 / 3) + 1
    query = {"red": common, "apple": rare}
    first = {"red": common, "apple": rare, "grow": common}
    third = {"red": common, "car": rare}

    def cosine(a, b):
        dot = sum(value * b.get(term, 0.0) for term, value in a.items())
        return dot / math.sqrt(sum(v * v for v in a.values()) * sum(v * v for v in b.values()))

    expected = [cosine(first, query), 0.0, cosine(third, query)]
    assert expected[0] == pytest.approx(0.855468, abs=1e-6) and expected[2] == pytest.approx(0.366447, abs=1e-6)
    assert query_sim_scores(["Red apples"], sentences) == pytest.approx(expected)
    # stop words ("what", "are", "the") carry no weight; query levels are pooled
    assert query_sim_scores(["What are", "the red apples?"], sentences) == pytest.approx(expected)
    row = _row([("D1", "2000-01-01", sentences)], query=["Red apples"])
    assert query_sim(row) == [0, 2, 1]


def test_query_sim_without_query_terms():
    assert query_sim_scores(["the of"], ["Red apples.", "x"]) == [0.0, 0.0]


def test_shipped_stop_words_are_the_text_pipelines():
    """QUERY-SIM reads spaCy's English stop words from the package's copy (evaluation runs without spaCy): the copy is
    the list the project's TextPipeline uses."""
    pytest.importorskip("spacy")
    from wikiref_dataset.stopwords import english_stop_words
    from wikiref_dataset.text import default_pipeline

    assert english_stop_words() == default_pipeline().stop_words


ORACLE_ROW = _row([("D1", "2000-01-01", ["the cat sat", "on the mat"]),
                   ("D2", "2000-01-02", ["the dog barked", "cat sat on"])],
                  references=["the cat sat on the mat"])


def test_oracle_greedy_rouge2_recall_hand_computed():
    # reference bigrams: the cat, cat sat, sat on, on the, the mat. Step 1: "the cat sat", "on the mat" and
    # "cat sat on" each give 2/5, the earliest wins; step 2: "on the mat" gives 4/5 ("cat sat on" only 3/5);
    # step 3: "cat sat on" adds "sat on": 5/5; "the dog barked" adds nothing, so the search stops.
    assert oracle(ORACLE_ROW) == [0, 1, 3]
    assert oracle(ORACLE_ROW, max_words=6) == [0, 1]  # the oracle never exceeds the budget
    assert baseline_summary("oracle", ORACLE_ROW) == "the cat sat\non the mat\ncat sat on"


def test_oracle_needs_references():
    with pytest.raises(ValueError, match="D0000A: ORACLE needs reference summaries"):
        oracle(_row([("D1", "", ["a b"])], references=[]))


def test_names():
    assert list(BASELINES) == ["lead", "query-sim", "oracle"]
    assert BASELINE_NAMES == {"lead": "LEAD", "query-sim": "QUERY-SIM", "oracle": "ORACLE"}
    with pytest.raises(ValueError, match="unknown baseline 'random'"):
        baseline_summary("random", ORACLE_ROW)


# ---- under another selection rule ---------------------------------------------------------------------------------

# QUERY-SIM scores the first sentence highest (only the query's words: cosine 1) but it is 8 words long; under a 6-word
# budget the greedy rule takes it (and ROUGE's -l cuts it), ILP cannot and takes the 3-word ones.
RULE_ROW = _row([("D1", "2000-01-01", ["red apples red apples red apples red apples.", "red apples grow.",
                                       "apple harvest begins."])], query=["red apples"])


def test_the_same_baseline_under_another_rule_chooses_through_that_rule():
    from wikiref_dataset.selection import ClusterSentences, select_cluster

    sentences = ClusterSentences.from_row(RULE_ROW).sentences
    scores = query_sim_scores(RULE_ROW["query"], sentences)
    assert scores == baseline_scores("query-sim", RULE_ROW) and scores[0] == pytest.approx(1.0) == max(scores)
    assert query_sim(RULE_ROW, max_words=6) == [0]  # its own rule, the paper's greedy one
    assert query_sim(RULE_ROW, max_words=6, rule="ilp") == [1, 2] == select_cluster("ilp", sentences, scores, 6)
    assert baseline_selection("query-sim", RULE_ROW, 6, rule="ilp") == [1, 2]
    assert baseline_summary("query-sim", RULE_ROW, 6, rule="ilp") == "red apples grow.\napple harvest begins."
    assert baseline_summary("query-sim", RULE_ROW, 6) == baseline_summary("query-sim", RULE_ROW, 6, rule="duc")
    assert lead(RULE_ROW, max_words=6, rule="ilp") == select_cluster("ilp", sentences, lead_scores(RULE_ROW), 6)
    assert lead(RULE_ROW, max_words=6, rule="mmr", tradeoff=1.0) == lead(RULE_ROW, max_words=6)  # mmr at 1: by score


def test_oracle_ignores_the_rule():
    assert baseline_selection("oracle", ORACLE_ROW, rule="ilp") == oracle(ORACLE_ROW) == [0, 1, 3]
    assert baseline_rule("oracle", "ilp") == "oracle" and baseline_rule("query-sim", "ilp") == "ilp"
    with pytest.raises(ValueError, match="gives no sentence scores"):
        baseline_scores("oracle", ORACLE_ROW)


def test_row_names_say_the_rule():
    assert BASELINE_RULE == "duc"
    assert baseline_system("query-sim") == "QUERY-SIM" == system_name("QUERY-SIM", "duc")
    assert baseline_system("query-sim", "ilp") == "QUERY-SIM (ILP)"
    assert baseline_system("lead", "mmr") == "LEAD (MMR)"
    assert baseline_system("oracle", "ilp") == "ORACLE"  # no rule
    assert system_name("Q-BERT", "ilp", own_rule="ilp") == "Q-BERT"
    assert system_name("Q-BERT", "duc", own_rule="ilp") == "Q-BERT (greedy)"
    assert [rule_label(rule) for rule in ("duc", "ilp", "mmr", "oracle", "newer")] == [
        "greedy", "ILP", "MMR", "oracle", "newer"]


@pytest.mark.parametrize("call", [
    lambda: baseline_system("query-sim", "best"),
    lambda: system_name("Q-BERT", "duc", own_rule="best"),
    lambda: baseline_summary("query-sim", RULE_ROW, rule="best"),
    lambda: baseline_summary("oracle", ORACLE_ROW, rule="best"),
])
def test_an_unknown_rule_is_one_line(call):
    with pytest.raises(ValueError, match=r"^unknown selection rule 'best'; choose one of duc, mmr, ilp$"):
        call()


# ---- on the fixtures ---------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def ferry():
    rows, _ = read_duc(locate_duc(DUC / "duc2006", 2006))
    return rows[0]  # D0601A: APW (07-07, 4 sentences), NYT (07-09, 3), XIE (07-08, 3)


def test_lead_on_fixture_reads_the_most_recent_document_first(ferry):
    assert lead(ferry) == [4, 5, 6, 7, 8, 9, 0, 1, 2, 3]  # NYT, then Xinhua, then AP
    assert baseline_summary("lead", ferry, max_words=20).split("\n") == [
        "The official inquiry into the harbor ferry sinking blamed the captain, who kept full speed in thick fog.",
        "Investigators said the ferry's radar had been switched off.",
    ]


def test_query_sim_on_fixture(ferry):
    sentences = ClusterSentences.from_row(ferry).sentences
    scores = query_sim_scores(ferry["query"], sentences)
    best = max(range(len(scores)), key=scores.__getitem__)
    assert sentences[best].startswith("The official inquiry into the harbor ferry sinking")
    assert scores[sentences.index("Two passengers are still missing.")] == 0.0


def test_oracle_on_fixture_stays_within_250_words(ferry):
    from wikiref_dataset.oracle import ExtractiveOracle, OracleConfig
    from wikiref_dataset.rouge import count_words

    chosen = oracle(ferry)
    sentences = ClusterSentences.from_row(ferry).sentences
    direct = ExtractiveOracle(OracleConfig(objective="recall", max_sentences=None, max_words=250))
    assert chosen == list(direct.select(sentences, ferry["references"]).indices)
    assert sum(count_words(sentences[i]) for i in chosen) <= 250
    assert sentences[chosen[0]].startswith("PORT ELLIS (AP) _ A crowded harbor ferry sank")
