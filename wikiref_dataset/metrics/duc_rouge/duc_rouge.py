"""DUC ROUGE: ROUGE-1.5.5 with the official DUC 2005-2007 settings, as an `evaluate` metric.

A thin wrapper: all the scoring is ``wikiref_dataset.rouge`` (the project's one ROUGE engine). Loadable offline with
``evaluate.load("<path to this folder>")`` (``wikiref_dataset.metrics.DUC_ROUGE_PATH``) or used as a class
(``DucRouge()``). evaluate scans this file's import lines and refuses names that are not installed packages, so the
imports stay one per line.
"""

import datasets
import evaluate

from wikiref_dataset.rouge import RougeConfig
from wikiref_dataset.rouge import RougeScorer
from wikiref_dataset.rouge import load_stopwords

_CITATION = """\
@inproceedings{lin-2004-rouge,
    title = "{ROUGE}: A Package for Automatic Evaluation of Summaries",
    author = "Lin, Chin-Yew",
    booktitle = "Text Summarization Branches Out",
    year = "2004",
    pages = "74--81",
}
"""

_DESCRIPTION = """\
ROUGE as the official ROUGE-1.5.5 Perl script computes it, with the DUC 2005-2007 settings as defaults
(`-n 2 -x -m -2 4 -u -c 95 -r 1000 -f A -p 0.5 -t 0 -l 250`): ROUGE-1, ROUGE-2 and ROUGE-SU4 recall, precision and
F with 95% bootstrap confidence intervals, reproducing the script's per-item scores and printed averages exactly
(same tokenizer, Porter stemmer with WordNet 2.0 exceptions, 250-word truncation of summaries and references,
multi-reference rule, skip-bigram+unigram SU4 and drand48 bootstrap). No Perl needed.
"""

_KWARGS_DESCRIPTION = """
Args:
    predictions (`list` of `str`): system summaries; "\\n" separates sentences (ROUGE-L units).
    references (`list` of `list` of `str`, or `list` of `str`): the reference summaries of each prediction.
    max_n (`int`, defaults to 2): -n.
    rouge_l (`bool`, defaults to False): compute ROUGE-L (ROUGE's -x turns it off).
    stem (`bool`, defaults to True): -m.
    skip_distance (`int` or None, defaults to 4): -2; None disables ROUGE-S/SU.
    skip_unigrams (`bool`, defaults to True): -u.
    confidence (`float`, defaults to 95): -c.
    resamples (`int`, defaults to 1000): -r.
    scoring (`str`, defaults to "A"): -f ("A" model average, "B" best model).
    alpha (`float`, defaults to 0.5): -p.
    word_limit (`int` or None, defaults to 250): -l.
    stopwords (`str` path or iterable, optional): -s with this stop-word list.
    rouge_args (`str`, optional): ROUGE-1.5.5 options instead of the keyword arguments, e.g. "-n 4 -m -x".
    return_per_item (`bool`, defaults to False): also return the per-item scores.
Returns:
    `{metric}_{recall|precision|f}` and `..._ci_low`/`..._ci_high` for each measure (rouge_1, rouge_2, rouge_su4, ...),
    the bootstrap averages ROUGE-1.5.5 prints; with `return_per_item`, `per_item`: one dict per prediction.
Examples:
    >>> duc_rouge = evaluate.load("path/to/duc_rouge")
    >>> results = duc_rouge.compute(predictions=["the cat sat"], references=[["a cat sat", "the cat was sitting"]])
    >>> round(results["rouge_2_recall"], 5)
"""


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class DucRouge(evaluate.Metric):
    """ROUGE-1.5.5-exact ROUGE with the official DUC settings."""

    def _info(self) -> evaluate.MetricInfo:
        return evaluate.MetricInfo(
            description=_DESCRIPTION,
            citation=_CITATION,
            inputs_description=_KWARGS_DESCRIPTION,
            features=[
                datasets.Features(
                    {"predictions": datasets.Value("string"), "references": datasets.Sequence(datasets.Value("string"))}
                ),
                datasets.Features({"predictions": datasets.Value("string"), "references": datasets.Value("string")}),
            ],
            codebase_urls=["https://github.com/andersjo/pyrouge/tree/master/tools/ROUGE-1.5.5"],
            reference_urls=["https://aclanthology.org/W04-1013/"],
        )

    def _compute(
        self,
        predictions,
        references,
        max_n=2,
        rouge_l=False,
        stem=True,
        skip_distance=4,
        skip_unigrams=True,
        confidence=95.0,
        resamples=1000,
        scoring="A",
        alpha=0.5,
        word_limit=250,
        stopwords=None,
        rouge_args=None,
        return_per_item=False,
    ):
        if rouge_args is not None:
            config = RougeConfig.from_args(rouge_args)
        else:
            if isinstance(stopwords, str):
                stopwords = load_stopwords(stopwords)
            config = RougeConfig(max_n=max_n, rouge_l=rouge_l, stem=stem, skip_distance=skip_distance,
                                 skip_unigrams=skip_unigrams, confidence=confidence, resamples=resamples,
                                 scoring=scoring, alpha=alpha, word_limit=word_limit,
                                 stopwords=frozenset(stopwords) if stopwords is not None else None)
        references = [[reference] if isinstance(reference, str) else list(reference) for reference in references]
        result = RougeScorer(config).evaluate(list(predictions), references)
        output = result.to_dict()
        if return_per_item:
            output["per_item"] = [
                {metric: {"recall": score.recall, "precision": score.precision, "f": score.f}
                 for metric, score in item.items()}
                for item in result.per_item
            ]
        return output
