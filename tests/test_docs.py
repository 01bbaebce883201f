"""The documentation a reader needs lives in the repository.

Package code, docstrings, dataset and model cards and the README must not point at files a user never has (the
test-data folder beside the checkout) nor cite papers by the project's internal numbers; the README fits on a page and
links every ``docs/`` page; every relative link in the README and the docs pages resolves. (That the pages' commands
and code run as written is tests/test_readme.py's part.)
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


GUIDES = ("building.md", "training.md", "experiments.md", "evaluation.md", "publishing.md")
REFERENCE = ("wikiref_build.md", "psg2sum.md", "aquamuse.md", "rouge.md", "layout.md")
PAGES = ("README.md", *sorted(f"docs/{path.name}" for path in (ROOT / "docs").glob("*.md")))
WIKIREF = "Transforming Wikipedia into Augmented Data for Query-Focused Summarization"
TITLES = {
    "rouge.md": "ROUGE: A Package for Automatic Evaluation of Summaries",
    "wikiref_build.md": WIKIREF,
    "psg2sum.md": "Learning to Summarize Passages: Mining Passage-Summary Pairs from Wikipedia Revision Histories",
    "aquamuse.md": "AQuaMuSe: Automatically Generating Datasets for Query-Based Multi-Document Summarization",
    "building.md": WIKIREF,
    "training.md": WIKIREF,
    "experiments.md": WIKIREF,
    "evaluation.md": WIKIREF,
}


def _links(text: str) -> list[str]:
    """The targets of the Markdown links of ``text`` (inline ``[text](target)``), code spans and blocks left out."""
    text = re.sub(r"^([ \t]*)```.*?^\1```", "", text, flags=re.S | re.M)
    text = re.sub(r"`[^`\n]*`", "", text)
    return re.findall(r"\]\(<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\)", text)


def _anchors(text: str) -> set[str]:
    """The anchors GitHub gives the headings of a Markdown page (lower case, punctuation dropped, blanks to '-')."""
    text = re.sub(r"^([ \t]*)```.*?^\1```", "", text, flags=re.S | re.M)
    anchors: set[str] = set()
    for heading in re.findall(r"^#{1,6}[ \t]+(.+?)[ \t#]*$", text, re.M):
        slug = re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")
        anchor, n = slug, 1
        while anchor in anchors:
            anchor, n = f"{slug}-{n}", n + 1
        anchors.add(anchor)
    return anchors


def test_readme_fits_on_a_page():
    """What a newcomer needs: what this is, the two commands, the five ways it is used, where to read more; the rest
    lives in docs/."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) <= 150
    quick_start = readme.split("## Quick start", 1)[1].split("\n## ", 1)[0]
    commands = re.search(r"^```bash\n(.*?)^```", quick_start, re.S | re.M).group(1)
    assert [line.split()[:2] for line in commands.splitlines()] == [["make", "demo"], ["make", "test"]]
    for heading in ("## Quick start", "## The five ways it is used", "## Where to read more"):
        assert heading in readme, heading
    for way in ("load_dataset", "trainer_scripts/pretrain_wikiref.py", "accelerate launch trainer_scripts/finetune_duc.py",
                "wikiref duc evaluate", "trainer_scripts/push_to_hub.py"):
        assert way in readme, way


def test_docs_linked_from_readme_exist():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    links = {link.split("#")[0] for link in _links(readme)}
    pages = {f"docs/{path.name}" for path in (ROOT / "docs").glob("*.md")}
    assert {f"docs/{page}" for page in (*GUIDES, *REFERENCE)} <= pages
    assert not pages - links, f"docs pages the README does not link to: {sorted(pages - links)}"
    assert "benchmarks/README.md" in links


@pytest.mark.parametrize("page", PAGES)
def test_relative_links_resolve(page):
    """Every relative link of the page points at a file or folder of the checkout, and an anchor at a heading."""
    path = ROOT / page
    broken = []
    for link in _links(path.read_text(encoding="utf-8")):
        if re.match(r"[a-z][a-z0-9+.-]*:", link, re.I):  # https:, mailto:: not a file of the checkout
            continue
        target, _, anchor = link.partition("#")
        resolved = (path.parent / target).resolve() if target else path
        if not resolved.exists() or ROOT not in (resolved, *resolved.parents):
            broken.append(link)
        elif anchor and resolved.suffix == ".md" and anchor not in _anchors(resolved.read_text(encoding="utf-8")):
            broken.append(f"{link} (no such heading)")
    assert not broken, f"{page}: broken links {broken}"


def test_link_check_sees_links_and_anchors():
    text = "# The `wikiref` command\n\nSee [b](b.md#x) and [here](#the-wikiref-command); `[c](d.md)` is code.\n"
    assert _links(text) == ["b.md#x", "#the-wikiref-command"]
    assert _anchors(text) == {"the-wikiref-command"}
    assert _anchors("## What happens on bad input\n## DUC 2005–2007\n") == {"what-happens-on-bad-input", "duc-20052007"}


@pytest.mark.parametrize("page", sorted(TITLES))
def test_docs_page_cites_its_paper_by_title(page):
    text = " ".join((ROOT / "docs" / page).read_text(encoding="utf-8").split())  # titles may wrap
    assert TITLES[page] in text


def test_experiments_page_keeps_the_runner_section():
    """docs/experiments.md documents the experiments runner under this heading."""
    text = (ROOT / "docs" / "experiments.md").read_text(encoding="utf-8")
    assert re.search(r"^## Running the paper's experiments$", text, re.M)


def test_one_install_story():
    """Every install line of the pages, the card template and the code's messages tells the same story: the project
    is not on a package index, so it is installed from its repository (``"wikiref @ git+URL"``, ``"wikiref[extra] @
    git+URL"``) or a checkout (``pip install .``, ``".[extra]"``); ``"wikiref[extra]"`` alone adds an extra to an
    installed wikiref (pip keeps the installed one and fetches only the extra's packages). A bare ``pip install
    wikiref`` would fetch another project, or nothing."""
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        import tomli as tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    repository, extras = project["urls"]["Repository"], set(project["optional-dependencies"])
    url = re.escape(repository)
    allowed = rf"wikiref(\[(?P<a>[\w,{{}}]+)\])? @ git\+{url}|\.(\[(?P<b>[\w,]+)\])?|wikiref\[(?P<c>[\w,{{}}]+)\]"
    sources = [ROOT / "README.md", ROOT / "Makefile", *sorted((ROOT / "docs").glob("*.md"))]
    sources += [path for package in PACKAGES for path in sorted((ROOT / package).rglob("*"))
                if path.suffix in (".py", ".md") and "__pycache__" not in path.parts]
    wrong, seen = [], 0
    for path in sources:
        text = path.read_text(encoding="utf-8").replace('\\"', '"')
        quoted = r"(?P<quote>[\"'])(?P<quoted>[^\"'\n]*)(?P=quote)"
        for match in re.finditer(rf"pip install (?:-\S+ )*(?:{quoted}|(?P<bare>[^\s`\"')]+))", text):
            argument = match.group("quoted") if match.group("quote") else match.group("bare")
            if "wikiref" not in argument and not argument.startswith("."):
                continue  # another package (spacy, gradio, ...)
            seen += 1
            found = re.fullmatch(allowed, argument)
            named = {name for group in "abc" if found and found.group(group) for name in found.group(group).split(",")}
            if found is None or not named - {"{extra}"} <= extras:
                wrong.append(f"{path.relative_to(ROOT)}: pip install {argument}")
    assert seen >= 10 and not wrong, "install lines off the story:\n" + "\n".join(wrong)


def recipe_table() -> str:
    """docs/training.md's table of the shipped recipes, made from the recipe files: one row per option a recipe sets
    (``-`` where it leaves the script's default), one column per recipe and stage."""
    from trainer_scripts.recipes import STAGES, available_recipes, format_setting, load_recipe

    recipes = [load_recipe(name) for name in available_recipes()]
    columns = [(recipe, stage) for recipe in recipes for stage in STAGES]
    options = list(dict.fromkeys(option for recipe, stage in columns for option in recipe.settings(stage)))
    stage_names = {"pretrain": "pre-training", "finetune": "fine-tuning"}
    lines = ["| option | " + " | ".join(f"`{recipe.name}`: {stage_names[stage]}" for recipe, stage in columns) + " |",
             "|---" * (len(columns) + 1) + "|"]
    for option in options:
        cells = [f"`{format_setting(recipe.settings(stage)[option])}`" if option in recipe.settings(stage) else "-"
                 for recipe, stage in columns]
        lines.append(f"| `--{option}` | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def test_the_training_page_states_the_recipes_as_the_files_define_them():
    """The recipe table of docs/training.md is the recipe files' (it cannot drift from them: a changed recipe fails
    here with the table to paste), the selection rule among its rows; the prose names each recipe's settings as
    the files give them, and no longer calls the paper's settings the defaults of every run."""
    from trainer_scripts.recipes import load_recipe

    text = (ROOT / "docs" / "training.md").read_text(encoding="utf-8")
    table = recipe_table()
    assert table in text, f"docs/training.md's recipe table differs from the recipe files; it reads:\n{table}"
    assert "| `--selection` |" in table
    encoder = load_recipe("sentence-encoder").settings("finetune")
    paper = load_recipe("paper").settings("finetune")
    scripts = text.split("## Training scripts", 1)[1].split("### Recipes", 1)[0]
    assert (f"encoder lr {encoder['learning_rate']:.0e}".replace("e-0", "e-") in scripts
            and f"batches of {encoder['per_device_train_batch_size']} windows" in scripts
            and f"{encoder['num_train_epochs']} epoch and the `{encoder['selection']}` selection rule" in scripts)
    assert (f"lr {paper['learning_rate']:.0e}".replace("e-0", "e-") in scripts
            and f"{paper['num_train_epochs']} epochs of {paper['per_device_train_batch_size']} windows" in scripts)
    assert "as defaults (Adam lr 3e-5" not in text
