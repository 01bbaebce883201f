"""Output folders: what makes a dataset folder the project wrote safe to load and safe to replace.

One set of rules for every writer (``wikiref build``, ``wikiref psg2sum``, ``wikiref aquamuse``, ``wikiref duc
convert``):

1. **Content-addressed data files.** ``datasets`` caches a local folder whose card has a ``configs:`` block under
   ``<cache>/<folder name>/<config name>/0.0.0/<hash>``, and that hash covers the card's YAML only: the unresolved
   ``data_files`` *patterns* (``data/train-*.parquet``) and ``dataset_info``, never the folder's path nor its files'
   content or modification time (``datasets.load.LocalDatasetModuleFactory.get_module`` hashes the
   ``DataFilesPatternsDict`` of each config; ``BuilderConfig.create_config_id`` adds no suffix when
   ``load_dataset`` gets no config keyword). Two folders of the same name and card shape, anywhere on disk, share one
   cache entry, and the later one loads the earlier one's rows. So each Parquet file is named after its own sha256
   (``data/train-00000-of-00001-<16 hex>.parquet``, the shape older ``push_to_hub`` versions wrote) and the card
   names the files exactly: the cache key changes with the content, and only with it, for whoever loads the folder
   however (``load_dataset(folder)``, a split, a copy of the folder, the Hub).
2. **Staging and publication.** A build writes its folder under a temporary sibling (``.<name>.partial``) and
   renames it into place at the end (:func:`publish_folder`): an interrupted build leaves the previous complete
   folder, or none; never a half-written one.
3. **Ownership.** A manifest (``.wikiref-folder.json``: the kind of build and every file written) says what the
   project wrote. A folder that holds anything else is not written into without ``overwrite``; even then, files the
   project did not write are kept.

:func:`load_dataset_folder` is how the project's own commands load a folder: ``datasets.load_dataset`` and a check
that the rows it returned are the rows of the files the card names (which also catches folders written before
rule 1, by reloading their files through the Parquet builder, whose cache key includes file modification times).
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import shutil
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["FolderState", "KINDS", "MANIFEST", "OutputFolderError", "build_id", "check_output_folder", "content_addressed",
           "card_data_files", "content_key", "empty_build_reason", "finish_build", "inspect_folder", "is_published", "load_dataset_folder", "publish_folder", "read_parquet_rows",
           "staging_folder",
           "work_folder"]

logger = logging.getLogger(__name__)

MANIFEST = ".wikiref-folder.json"
"""The manifest file of every folder the project publishes."""
KINDS = ("wikiref", "psg2sum", "aquamuse", "duc", "qfs")
_STAGING_MARK = ".wikiref-staging"


class OutputFolderError(ValueError):
    """An output folder cannot be used or replaced; the message names the folder and the problem."""


def work_folder(output_dir: str | os.PathLike, work_dir: str | os.PathLike | None = None) -> Path:
    """Where a build keeps its intermediate, resumable state: ``work_dir``, or ``<output_dir>.work`` beside the output
    folder (never inside it: the output folder holds a complete build or nothing)."""
    if work_dir:
        return Path(work_dir)
    output = Path(output_dir)
    return output.with_name(output.name + ".work")


def is_published(output_dir: str | os.PathLike, build_id: str) -> bool:
    """Whether ``output_dir`` holds the published build ``build_id`` (see :func:`publish_folder`'s ``record``)."""
    manifest = Path(output_dir) / MANIFEST
    try:
        return json.loads(manifest.read_text(encoding="utf-8")).get("build_id") == build_id
    except (OSError, ValueError, AttributeError):
        return False


def build_id(folder: str | os.PathLike) -> str:
    """The identity of a staged build: a digest of every file's relative path and content."""
    root = Path(folder)
    digest = hashlib.sha256()
    for name in _files(root):
        if name not in (MANIFEST, _STAGING_MARK):
            _hash_file(root / name, digest.update, name.encode() + b"\0")
    return digest.hexdigest()[:16]


def _hash_file(path: Path, update: Any, prefix: bytes = b"") -> None:
    """Feed ``prefix`` and the file's bytes, 1 MiB at a time, to ``update`` (a hashlib object's ``update``)."""
    update(prefix)
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            update(block)


def content_addressed(path: Path, stem: str) -> Path:
    """Rename the file at ``path`` to ``<stem>-<first 16 hex of its sha256><suffix>`` in the same folder."""
    digest = hashlib.sha256()
    _hash_file(path, digest.update)
    target = path.with_name(f"{stem}-{digest.hexdigest()[:16]}{''.join(path.suffixes[-1:])}")
    os.replace(path, target)
    return target


@dataclass
class FolderState:
    """What an output path holds: ``exists``; ``kind`` of the project's build there (``None``: no manifest);
    ``owned``: files its manifest lists; ``foreign``: files the project did not write (relative paths)."""

    path: Path
    exists: bool = False
    kind: str | None = None
    owned: list[str] = field(default_factory=list)
    foreign: list[str] = field(default_factory=list)


def _files(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file() or p.is_symlink())


def inspect_folder(path: str | os.PathLike) -> FolderState:
    """Read ``path``'s manifest (if any) and sort its files into the project's and the others."""
    folder = Path(path)
    if not folder.exists() and not folder.is_symlink():
        return FolderState(folder)
    if not folder.is_dir():
        raise OutputFolderError(f"{folder}: exists and is not a folder; choose another output folder")
    state = FolderState(folder, exists=True)
    manifest = folder / MANIFEST
    listed: set[str] = set()
    if manifest.is_file():
        try:
            record = json.loads(manifest.read_text(encoding="utf-8"))
            state.kind = str(record["kind"])
            listed = set(record["files"]) | {MANIFEST}
        except (ValueError, KeyError, TypeError) as err:
            raise OutputFolderError(f"{manifest}: unreadable manifest ({err}); move the folder away or delete it") \
                from err
    for name in _files(folder):
        (state.owned if name in listed else state.foreign).append(name)
    return state


def _refusal(state: FolderState, kind: str) -> str | None:
    """Why ``kind`` may not be published over ``state`` without ``overwrite`` (``None``: it may)."""
    if state.kind is not None and state.kind != kind:
        return f"{state.path} holds a {state.kind} build, not a {kind} one"
    if state.foreign:
        shown = ", ".join(state.foreign[:3]) + (f" and {len(state.foreign) - 3} more" if len(state.foreign) > 3 else "")
        what = "a previous build and files it did not write" if state.kind else "files this project did not write"
        return f"{state.path} holds {what} ({shown})"
    return None


def check_output_folder(path: str | os.PathLike, kind: str, overwrite: bool = False) -> FolderState:
    """Fail early (before hours of work) when ``path`` cannot receive a ``kind`` build.

    Accepted: no folder, an empty folder, or a previous ``kind`` build holding only the files it wrote. Anything
    else needs ``overwrite`` (and even then, files the project did not write are kept).

    Raises:
        OutputFolderError: ``path`` is a file, or holds something else and ``overwrite`` is false.
    """
    if kind not in KINDS:
        raise ValueError(f"unknown folder kind {kind!r}; kinds: {KINDS}")
    state = inspect_folder(path)
    reason = _refusal(state, kind)
    if reason and not overwrite:
        raise OutputFolderError(f"{reason}; choose another output folder, or pass --overwrite to write the {kind} "
                                "build into it (files the project did not write are kept)")
    return state


def staging_folder(path: str | os.PathLike) -> Path:
    """A new, empty staging folder beside ``path`` (same file system, so publication is a rename); a stale one left
    by an interrupted run is removed first."""
    target = Path(path)
    staging = target.parent / f".{target.name}.partial"
    if staging.exists():
        if not ((staging / _STAGING_MARK).is_file() or (staging / MANIFEST).is_file()):
            raise OutputFolderError(f"{staging}: exists and was not made by this project; move it away")
        shutil.rmtree(staging)
    staging.mkdir(parents=True)
    (staging / _STAGING_MARK).write_text("", encoding="utf-8")
    return staging


def publish_folder(staging: Path, path: str | os.PathLike, kind: str, overwrite: bool = False,
                   record: Mapping[str, Any] | None = None) -> str:
    """Move the finished ``staging`` folder to ``path`` and write its manifest (``kind``, every file, the
    :func:`build_id`, ``record``); returns the build id.

    A previous ``kind`` build (only files it wrote) is replaced by two renames, so ``path`` always holds one complete
    build or, for an instant, nothing. With ``overwrite``, a folder holding other things is written into file by file:
    the new files replace same-named ones, the previous build's other files are removed, nothing else is touched.

    Raises:
        OutputFolderError: as :func:`check_output_folder` (the folder may have changed since the build started).
    """
    target = Path(path)
    state = check_output_folder(target, kind, overwrite)
    (staging / _STAGING_MARK).unlink(missing_ok=True)
    files = _files(staging)
    identity = build_id(staging)
    manifest = {"kind": kind, "files": files, "build_id": identity, **(record or {})}
    (staging / MANIFEST).write_text(json.dumps(manifest, indent=1, sort_keys=True), encoding="utf-8")
    previous = target.parent / f".{target.name}.previous"
    if previous.exists():  # left by a run killed between the two renames below
        _remove_owned(previous)
    if not state.exists:
        target.parent.mkdir(parents=True, exist_ok=True)
        os.replace(staging, target)
        return identity
    if not _refusal(state, kind):
        os.replace(target, previous)
        os.replace(staging, target)
        _remove_owned(previous)
        return identity
    # overwrite of a folder holding other things: file by file, manifest last
    new = set(files)
    for name in files:
        destination = target / name
        destination.parent.mkdir(parents=True, exist_ok=True)
        os.replace(staging / name, destination)
    for name in state.owned:
        if name not in new and name != MANIFEST:
            (target / name).unlink(missing_ok=True)
    os.replace(staging / MANIFEST, target / MANIFEST)
    shutil.rmtree(staging)
    _prune_empty(target)
    return identity


def _remove_owned(folder: Path) -> None:
    """Delete the files ``folder``'s manifest lists (then empty subfolders); anything else stays, with a warning."""
    state = inspect_folder(folder)
    for name in state.owned:
        (folder / name).unlink(missing_ok=True)
    _prune_empty(folder)
    if folder.exists() and any(folder.iterdir()):
        logger.warning("%s: kept %d file(s) this project did not write", folder, len(state.foreign))
    elif folder.exists():
        folder.rmdir()


def _prune_empty(folder: Path) -> None:
    for sub in sorted((p for p in folder.rglob("*") if p.is_dir()), key=lambda p: len(p.parts), reverse=True):
        if not any(sub.iterdir()):
            sub.rmdir()


def finish_build(staging: Path, output_dir: str | os.PathLike, kind: str, work: Path, record: Mapping[str, Any],
                 empty_reason: str | None, overwrite: bool = False) -> dict[str, Any]:
    """The end every build shares. A build that kept examples (``empty_reason`` ``None``) gets ``build.json``
    (``record``) and is published as ``output_dir``; one that kept none is discarded. ``work/build.json`` always
    gets the record, with the published ``build_id`` or the ``empty_reason`` (the closing summary and a rerun read
    it). Returns that record."""
    record = dict(record)
    if empty_reason is None:
        (staging / "build.json").write_text(json.dumps(record, indent=1, default=str), encoding="utf-8")
        record["build_id"] = publish_folder(staging, output_dir, kind, overwrite)
    else:
        shutil.rmtree(staging)
        record["empty_reason"] = empty_reason
    (work / "build.json").write_text(json.dumps(record, indent=1, default=str), encoding="utf-8")
    return record


def empty_build_reason(start: tuple[str, int], drops: Mapping[str, int]) -> str:
    """The one-line reason a build kept nothing: what it started from and its filters, tightest first."""
    label, total = start
    ranked = sorted(((count, name) for name, count in drops.items() if count), reverse=True)
    if not total:
        return f"no example kept: {label}: 0"
    if not ranked:
        return f"no example kept from {total:,} {label}"
    count, name = ranked[0]
    others = "; then " + ", ".join(f"{n} {c:,}" for c, n in ranked[1:4]) if len(ranked) > 1 else ""
    return (f"no example kept from {total:,} {label}: the tightest filter is '{name}', which dropped {count:,} "
            f"({100 * count / total:.0f}%){others}")


# ---- loading -------------------------------------------------------------------------------------------------------


def card_data_files(folder: Path) -> dict[str, list[Path]]:
    """Split -> files named by the default config of the card's ``configs:`` block."""
    import yaml

    text = (folder / "README.md").read_text(encoding="utf-8")
    if not text.startswith("---"):
        return {}
    header = yaml.safe_load(text.split("---", 2)[1]) or {}
    configs = header.get("configs") or []
    chosen = next((c for c in configs if c.get("default")), configs[0] if configs else {})
    data_files = chosen.get("data_files") or []
    if isinstance(data_files, str | list) and not (data_files and isinstance(data_files, list)
                                                   and isinstance(data_files[0], dict)):
        data_files = [{"split": "train", "path": data_files}]
    result: dict[str, list[Path]] = {}
    for entry in data_files:
        patterns = entry["path"] if isinstance(entry["path"], list) else [entry["path"]]
        result[entry["split"]] = sorted(p for pattern in patterns for p in folder.glob(pattern))
    return result


def content_key(folder: str | os.PathLike) -> str:
    """A key that changes whenever the data files the card of ``folder`` names change: their names (content
    addressed), sizes and modification times (for folders written before content-addressed names)."""
    digest = hashlib.sha256()
    for split, files in sorted(card_data_files(Path(folder)).items()):
        for path in files:
            info = path.stat()
            digest.update(f"{split}\0{path.name}\0{info.st_size}\0{info.st_mtime_ns}\n".encode())
    return digest.hexdigest()[:16]


def read_parquet_rows(files: Iterable[Path], error: type[Exception]) -> list[dict[str, Any]]:
    """The rows of a folder's Parquet files as Python objects, in file order, read with pyarrow alone (no `datasets`
    import, no cache written): how the evaluation reads converted DUC years and benchmarks.

    Raises:
        error: a file is not readable Parquet (the message names it).
    """
    import pyarrow.parquet as pq

    rows: list[dict[str, Any]] = []
    for file in files:
        try:
            rows += pq.ParquetFile(file).read().to_pylist()  # not read_table: its pyarrow.dataset imports pandas
        except (OSError, ValueError) as problem:  # pyarrow's ArrowInvalid is a ValueError
            raise error(f"{file}: not a readable Parquet file ({' '.join(str(problem).split())})") from None
    return rows


def load_dataset_folder(path: str | os.PathLike, split: str | None = None, **kwargs: Any) -> Any:
    """``datasets.load_dataset(path, split=split, **kwargs)`` for a folder the project wrote, checked against the
    files the card names: a split whose row count differs (a stale cache entry of an earlier folder with the same
    name, possible only for folders written before content-addressed file names) is reloaded from the files with the
    Parquet builder, whose cache key includes their modification times. A Hub id is loaded as is."""
    import datasets

    folder = Path(path)
    if not folder.is_dir():
        return datasets.load_dataset(str(path), split=split, **kwargs)
    loaded = datasets.load_dataset(str(folder), split=split, **kwargs)
    files = card_data_files(folder) if (folder / "README.md").is_file() else {}
    if not files:
        return loaded
    import pyarrow.parquet as pq

    def rows(name: str) -> int:
        return sum(pq.ParquetFile(f).metadata.num_rows for f in files.get(name, []))

    by_split = {split: loaded} if split is not None else dict(loaded)
    stale = [name for name, part in by_split.items() if name in files and part.num_rows != rows(name)]
    if not stale:
        return loaded
    logger.warning("%s: the datasets cache returned other rows than the folder's files for %s (an entry of an earlier "
                   "folder named %r); reading the files themselves", folder, ", ".join(stale), folder.name)
    kwargs.pop("download_mode", None)
    reread = datasets.load_dataset("parquet", data_files={name: [str(f) for f in files[name]] for name in by_split},
                                   split=split, **kwargs)
    return reread

