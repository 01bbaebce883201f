"""The files of a Hub Space that runs the app (``push_to_hub.py --space_repo org/name``).

A Gradio Space installs what ``requirements.txt`` names and runs ``app.py``. This project is not installed there, so
the Space carries its code: the Python files of ``wikiref_dataset``, ``modeling_qbert`` and ``trainer_scripts`` and
the package data the app reads (the stop-word list and WordNet exceptions of the ROUGE engine, the language tables of
the sentence splitter), in their package layout beside ``app.py``, which imports them from there. The app then loads
the pushed model and dataset by their Hub ids, exactly as ``wikiref app --model org/qbert --dataset org/wikiref``
does on a machine.
"""

from __future__ import annotations

from pathlib import Path

PACKAGES = ("wikiref_dataset", "modeling_qbert", "trainer_scripts")
ROOT = Path(__file__).resolve().parents[2]
PACKAGE_DATA = ("wikiref_dataset/data/*.txt", "wikiref_dataset/data/*.tsv", "wikiref_dataset/data/languages/*.toml",
                "wikiref_dataset/metrics/duc_rouge/*.md", "trainer_scripts/recipes/*.yaml", "trainer_scripts/model_card.md")
"""Package data the app's code paths read (not the embedded sample: the Space loads its data from the Hub)."""
REQUIREMENTS = ("torch", "transformers>=5.0,<6", "datasets>=4.0", "huggingface_hub>=1.0", "safetensors>=0.4",
                "numpy>=1.24", "scipy>=1.9", "tqdm>=4.66", "gradio>=5.0", "spacy>=3.7,<4", "spacy-lookups-data>=1.0.5")
"""What the app imports: the core of the package, Gradio, and spaCy for splitting pasted text into sentences."""

APP = '''"""The Space's entry point, written by push_to_hub.py --space_repo: the wikiref app with the model and dataset
below (their Hub ids), served as the Space expects (all interfaces, port 7860) and, whatever the address, as an app
served to others: the boxes load only these two and QFS_APP_ALLOW's comma-separated Hub ids, with bounded uploads,
requests and queue."""

import os

from trainer_scripts.app.ui import serve

MODEL = os.environ.get("QFS_APP_MODEL", {model!r})
DATASET = os.environ.get("QFS_APP_DATASET", {dataset!r})
ALLOW = [item.strip() for item in os.environ.get("QFS_APP_ALLOW", "").split(",") if item.strip()]

if __name__ == "__main__":
    serve(MODEL, DATASET, host=os.environ.get("GRADIO_SERVER_NAME", "0.0.0.0"),
          port=int(os.environ.get("GRADIO_SERVER_PORT", "7860")), allow=ALLOW, public=True,
          on_ready=lambda url: print(f"serving on {{url}}", flush=True))
'''


def readme(repo_id: str, model_repo: str | None, dataset_repo: str | None) -> str:
    """The Space card: Gradio front matter (the SDK, ``app.py``, the linked model and dataset) and what it shows."""
    import gradio

    front = ["---", f"title: {repo_id.split('/')[-1]}", "emoji: 📝", "colorFrom: blue", "colorTo: green",
             "sdk: gradio", f"sdk_version: {gradio.__version__}", "app_file: app.py", "pinned: false"]
    if model_repo:
        front += ["models:", f"- {model_repo}"]
    if dataset_repo:
        front += ["datasets:", f"- {dataset_repo}"]
    front += ["license: apache-2.0", "---", ""]
    body = f"""# {repo_id.split('/')[-1]}: query-focused summarization with Q-BERT

Try the Q-BERT model {f'[`{model_repo}`](https://huggingface.co/{model_repo})' if model_repo else ''} and explore
the dataset {f'[`{dataset_repo}`](https://huggingface.co/datasets/{dataset_repo})' if dataset_repo else ''}:

- **Summarize**: a query and documents (pasted, uploaded or a dataset example) give the extractive summary the model's
  pipeline chooses, with every sentence shaded by its score; the scores download as JSON.
- **Compare**: Q-BERT beside QUERY-SIM, LEAD and ORACLE on a cluster with reference summaries, each with its
  ROUGE-1/2/SU4 (the official DUC settings; a benchmark's own scoring for QMSum, SQuALITY and Debatepedia).
- **Explore**: search the dataset's examples, see each one's query, summary, document with the oracle's sentences
  highlighted and its provenance, and the dataset card.

The Space carries the code of the project that made the model (WikiRef / Q-BERT, Zhu et al. 2022, "Transforming
Wikipedia into Augmented Data for Query-Focused Summarization"); the same app runs locally with
`wikiref app --model {model_repo or 'MODEL'} --dataset {dataset_repo or 'DATASET'}`.
"""
    return "\n".join(front) + body


def space_files(repo_id: str, model_repo: str | None, dataset_repo: str | None) -> dict[str, bytes]:
    """``{path in the Space: content}``: ``app.py``, ``requirements.txt``, ``README.md`` and the project's code and
    package data."""
    files: dict[str, bytes] = {
        "app.py": APP.format(model=model_repo or "", dataset=dataset_repo or "").encode("utf-8"),
        "requirements.txt": ("\n".join(REQUIREMENTS) + "\n").encode("utf-8"),
        "README.md": readme(repo_id, model_repo, dataset_repo).encode("utf-8"),
    }
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            if "__pycache__" not in path.parts and "sample" not in path.relative_to(ROOT / package).parts:
                files[path.relative_to(ROOT).as_posix()] = path.read_bytes()
    for pattern in PACKAGE_DATA:
        for path in sorted(ROOT.glob(pattern)):
            files[path.relative_to(ROOT).as_posix()] = path.read_bytes()
    return files


__all__ = ["space_files", "readme", "PACKAGES", "PACKAGE_DATA", "REQUIREMENTS"]
