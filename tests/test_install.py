"""Installing the project: a wheel built from the checkout holds every file the commands need (the project is
installed from its repository, `pip install "wikiref @ git+..."` or `pip install .`, which build such a wheel); and in
the environment `make demo` and `make test` install, every installed Python file is byte-compiled.

Where PYTHONDONTWRITEBYTECODE is set (CI, many containers), a module without its ``.pyc`` is compiled from source by
every process that imports it, and the result is thrown away. pip's ``--no-compile`` install of torch left torch's own
dependencies so (sympy, networkx, jinja2, fsspec, filelock): 2.5 s of every process that loads a model went to
compiling sympy. Skipped outside the environment the Makefile made (its ``.installed`` stamp).
"""

from __future__ import annotations

import importlib.util
import os
import sys
import sysconfig
from pathlib import Path

import pytest

STAMP = Path(sys.prefix) / ".installed"
ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("wikiref_dataset", "modeling_qbert", "trainer_scripts")


@pytest.mark.skipif(not STAMP.is_file(), reason="not the environment `make test` installs (no .installed stamp)")
def test_installed_modules_are_byte_compiled():
    purelib = sysconfig.get_paths()["purelib"]
    assert purelib.startswith(sys.prefix), purelib
    files, missing = 0, []
    for folder, _, names in os.walk(purelib):
        for name in names:
            if name.endswith(".py"):
                files += 1
                path = os.path.join(folder, name)
                if not os.path.exists(importlib.util.cache_from_source(path)):
                    missing.append(path)
    assert files > 10_000  # torch, transformers, spaCy, datasets
    # the only files left without bytecode are those this Python cannot compile (torch ships a few for newer ones)
    compiles = []
    for path in missing:
        try:
            compile(Path(path).read_bytes(), path, "exec")
        except SyntaxError:
            continue
        compiles.append(os.path.relpath(path, purelib))
    assert not compiles, f"{len(compiles)} installed modules without bytecode, e.g. {sorted(compiles)[:10]}"



def _project_files() -> list[str]:
    """The files of the checkout a wheel is built from (pyproject.toml, README.md, the packages), as git tracks them;
    every file under the package folders where git is not there."""
    import subprocess

    try:
        listed = subprocess.run(["git", "ls-files", "pyproject.toml", "README.md", *PACKAGES], cwd=ROOT,
                                capture_output=True, text=True, check=True).stdout.split()
    except (OSError, subprocess.CalledProcessError):
        listed = []
    if listed:
        return listed
    found = ["pyproject.toml", "README.md"]
    for package in PACKAGES:
        found += [path.relative_to(ROOT).as_posix() for path in sorted((ROOT / package).rglob("*"))
                  if path.is_file() and "__pycache__" not in path.parts]
    return found


@pytest.mark.skipif(importlib.util.find_spec("setuptools") is None or importlib.util.find_spec("pip") is None,
                    reason="pip wheel needs pip and setuptools in this environment (no build isolation: offline)")
def test_a_wheel_built_from_the_checkout_holds_every_file_the_commands_need(tmp_path):
    """`pip wheel . --no-deps` from a checkout, as a user installing from the repository builds it (offline: no build
    isolation, no index): the wheel holds every file of the three packages (code, the languages' tables, the embedded
    sample, the DUC metric module, the recipes, the card template), the `wikiref` command and the extras."""
    import shutil
    import subprocess
    import zipfile

    files = _project_files()
    source = tmp_path / "checkout"  # a copy: the build writes build/ and *.egg-info beside the sources
    for name in files:
        (source / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(ROOT / name, source / name)
    built = subprocess.run([sys.executable, "-m", "pip", "wheel", str(source), "--no-deps", "--no-build-isolation",
                            "--no-index", "--quiet", "--wheel-dir", str(tmp_path / "wheels")],
                           capture_output=True, text=True, timeout=300)
    assert built.returncode == 0, built.stderr[-3000:]
    (wheel,) = (tmp_path / "wheels").glob("wikiref-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        info = next(name.split("/")[0] for name in names if name.endswith(".dist-info/METADATA"))
        entry_points = archive.read(f"{info}/entry_points.txt").decode()
        metadata = archive.read(f"{info}/METADATA").decode()
    packaged = [name for name in files if name.split("/")[0] in PACKAGES]
    missing = sorted(name for name in packaged if name not in names)
    assert not missing, f"files of the packages the wheel leaves out (pyproject.toml package-data): {missing}"
    assert len(packaged) > 150 and "trainer_scripts/recipes/sentence-encoder.yaml" in names
    assert "wikiref = trainer_scripts.cli:main" in entry_points
    for extra in ("build", "cluster", "app"):
        assert f"Provides-Extra: {extra}" in metadata
    assert 'Requires-Dist: spacy<4,>=3.7; extra == "build"' in metadata
