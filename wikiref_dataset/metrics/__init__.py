"""`evaluate` metric modules of the project.

``DUC_ROUGE_PATH`` is the folder ``evaluate.load`` takes for the DUC ROUGE metric (works offline).
"""

from pathlib import Path

DUC_ROUGE_PATH = str(Path(__file__).resolve().parent / "duc_rouge")

__all__ = ["DUC_ROUGE_PATH"]
