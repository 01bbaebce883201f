"""AQuaMuSe (paper 004): query-based multi-document summarization examples mined from Natural Questions long answers
and a web corpus by sentence-embedding matches, in an abstractive and an extractive variant; and a reader for the
released AQuaMuSe files.

Modules: ``questions`` (NQ reader and filter), ``corpus`` (C4/CCNet jsonl, WET, WARC readers), ``embedding`` (sentence
encoder, faiss index), ``matching`` (θ thresholds, document scores, top K, recall, the two variants), ``steps``
(the corpus side as datatrove steps), ``dataset`` (splits, Table 1, coverage/density, folders + cards), ``build``
(the whole build), ``released`` (TFRecord / tf.train.Example reader), ``cli`` (``wikiref aquamuse``).
Heavy libraries (faiss, sentence-transformers) are imported where used.
"""

from .matching import AQuaMuSeExample, MatchingConfig
from .questions import Question, QuestionConfig, QuestionReader

__all__ = ["AQuaMuSeExample", "MatchingConfig", "Question", "QuestionConfig", "QuestionReader"]
