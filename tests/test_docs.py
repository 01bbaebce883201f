"""The documentation a reader needs lives in the repository.

Package code, docstrings, dataset and model cards and the README must not point at files a user never has (the
test-data folder beside the checkout) nor cite papers by the project's internal numbers; every ``docs/`` page the
README links to must exist.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("wikiref_dataset", "modeling_qbert", "trainer_scripts")
TOP_LEVEL = ("README.md", "model_card.md", "benchmarks/README.md")
SUFFIXES = {".py", ".md", ".txt", ".yaml", ".yml", ".json", ".sh", ".toml", ".cfg", ".jinja", ".j2"}
FORBIDDEN = re.compile(r"shared/|paper 00", re.IGNORECASE)


def _checked_files() -> list[Path]:
    files = [ROOT / name for name in TOP_LEVEL if (ROOT / name).is_file()]
    for folder in (*PACKAGES, "examples", "docs"):
        for path in sorted((ROOT / folder).rglob("*")):
            if path.is_file() and path.suffix in SUFFIXES and "__pycache__" not in path.parts:
                if path.stat().st_size < 2_000_000:  # source, templates and cards, not data files
                    files.append(path)
    return files


def test_no_pointer_to_files_outside_the_repository():
    hits = []
    for path in _checked_files():
        for number, line in enumerate(path.read_text(encoding="utf-8", errors="replace").splitlines(), 1):
            if FORBIDDEN.search(line):
                hits.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()}")
    assert not hits, "references to shared/ or 'paper 00N' (cite the docs page or the paper by authors):\n" + "\n".join(
        hits)


def test_docs_linked_from_readme_exist():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    links = re.findall(r"\]\((docs/[^)#\s]+)", readme)
    assert {"docs/rouge.md", "docs/wikiref_build.md", "docs/psg2sum.md", "docs/aquamuse.md"} <= set(links)
    missing = [link for link in links if not (ROOT / link).is_file()]
    assert not missing, f"README links to missing docs pages: {missing}"


@pytest.mark.parametrize("page", ["rouge.md", "wikiref_build.md", "psg2sum.md", "aquamuse.md"])
def test_docs_page_cites_its_paper_by_title(page):
    text = " ".join((ROOT / "docs" / page).read_text(encoding="utf-8").split())  # titles may wrap
    titles = {
        "rouge.md": "ROUGE: A Package for Automatic Evaluation of Summaries",
        "wikiref_build.md": "Transforming Wikipedia into Augmented Data for Query-Focused Summarization",
        "psg2sum.md": "Learning to Summarize Passages: Mining Passage-Summary Pairs from Wikipedia Revision Histories",
        "aquamuse.md": "AQuaMuSe: Automatically Generating Datasets for Query-Based Multi-Document Summarization",
    }
    assert titles[page] in text
    for link in re.findall(r"\]\(([^)#\s:]+\.md)", text):  # relative links between pages resolve
        assert (ROOT / "docs" / link).is_file(), link
