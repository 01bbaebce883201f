"""All cited URLs looked up at once, joined with Common Crawl's columnar URL index (:class:`ColumnarIndex`; full
builds).

The index is Parquet files with the columns ``url_surtkey, url, fetch_time, fetch_status, fetch_redirect,
content_mime_type, content_mime_detected, warc_filename, warc_record_offset, warc_record_length`` and the hive
partitions ``crawl=``/``subset=``, joined in DuckDB with the cited URLs keyed as the index keys them: their SURT (the
``surt`` package, the Internet Archive canonicalizer Common Crawl's indexer follows; :func:`url_keys_table`). Local
copies are read by DuckDB's own Parquet reader; remote files (``http(s)://``, ``s3://``) through fsspec as a pyarrow
dataset that DuckDB scans (no DuckDB extension to download). A remote scan still reads every row group's key column:
for a whole crawl, copy the index first. :func:`index_files` lists the files of an index location one by one, so
that the join can be split among tasks by file (:mod:`~wikiref_dataset.web.commoncrawl.index_join`).
"""

from __future__ import annotations

import gzip
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..captures import iso_utc
from .config import COMMON_CRAWL_DATA, is_remote
from .indexed_capture import IndexedCapture, capture_order, lookup_keys

__all__ = ["ColumnarIndex", "IndexFiles", "index_files", "url_keys_table"]


class ColumnarIndex:
    """Common Crawl's columnar URL index (Parquet), joined with many URLs at once in DuckDB.

    Args:
        location (`str`): see :attr:`CommonCrawlConfig.cc_index`.
        crawls (`Sequence[str]`): keep only these crawls' rows (needs a ``crawl`` column or ``crawl=`` folders).
        data_prefix (`str`): what the paths of a ``.paths`` listing are relative to.
        files (`Sequence[str]`, *optional*): read only these of the index's files (a task's share, or the files
            whose key range holds the URLs looked up); by default all of them (:func:`index_files`).

    Raises:
        FileNotFoundError: `location` names no Parquet file.
        ValueError: the files lack the columns of the index (the message lists them), or `crawls` are given and
            the index has no crawl column.
    """

    REQUIRED = ("url_surtkey", "url", "fetch_time", "fetch_status", "warc_filename", "warc_record_offset",
                "warc_record_length")
    OPTIONAL = ("fetch_redirect", "content_mime_detected", "content_mime_type", "crawl", "subset")

    def __init__(self, location: str, crawls: Sequence[str] = (), data_prefix: str = COMMON_CRAWL_DATA,
                 files: Sequence[str] | None = None) -> None:
        import duckdb

        self.location = location
        self.crawls = tuple(crawls)
        self.queries = 0
        self.files_scanned = 0  # index files read by the joins so far (a file read by two joins counts twice)
        if files is None:
            listed = index_files(location, self.crawls, data_prefix)
        else:  # a share of a listing: remote and partition base as index_files gives them
            first = files[0] if files else ""
            listed = IndexFiles(list(files), is_remote(first), _hive_base(first) if is_remote(first) else "")
        self.files = list(listed.files)
        self._con = duckdb.connect()
        self._con.execute("SET TimeZone = 'UTC'")  # fetch_time is a UTC instant; print it as one
        if not self.files:  # a share without a file: every lookup finds nothing
            self._source, self._params, self._columns = "", [], set(self.REQUIRED)
            return
        if listed.remote:
            import pyarrow.dataset as ds

            self._con.register("cc_index", ds.dataset(
                self.files, format="parquet", filesystem=_arrow_filesystem(self.files[0]),
                partitioning=ds.HivePartitioning.discover(infer_dictionary=False),
                partition_base_dir=listed.hive_base or None))  # fmt: skip
            self._source, self._params = "cc_index", []
        else:
            self._source = "read_parquet(?, hive_partitioning = true, union_by_name = true)"
            self._params = [self.files]
        try:
            columns = {row[0] for row in self._con.execute(f"DESCRIBE SELECT * FROM {self._source}",
                                                           self._params).fetchall()}
        except duckdb.Error as error:
            raise ValueError(f"{location}: cannot read the columnar index ({error})") from None
        missing = [name for name in self.REQUIRED if name not in columns]
        if missing:
            raise ValueError(f"{location}: not a Common Crawl columnar URL index: no column {', '.join(missing)}")
        if self.crawls and "crawl" not in columns:
            raise ValueError(f"{location}: the index has no crawl column (or crawl=... folders), so crawls "
                             f"{list(self.crawls)} cannot be selected")
        self._columns = columns

    def close(self) -> None:
        self._con.close()

    def captures_many(self, urls: Iterable[str]) -> dict[str, list[IndexedCapture]]:
        """Every capture of each URL (keyed by its SURT, and by the SURT of its normalized form), in one join."""
        unique = list(dict.fromkeys(urls))
        result: dict[str, list[IndexedCapture]] = {url: [] for url in unique}  # a URL without a SURT: no capture
        for _, wanted_url, capture in self.join(url_keys_table(unique)):
            result[wanted_url].append(capture)
        for captures in result.values():
            captures.sort(key=capture_order)
        return result

    def join(self, wanted: Any) -> list[tuple[int | None, str, IndexedCapture]]:
        """(bucket, wanted URL, capture) of every capture of the wanted URLs, in one join. `wanted` is a pyarrow
        table with the columns ``wanted`` and ``key`` (:func:`url_keys_table`), and optionally ``bucket``, or a
        list of Parquet files of such tables (:class:`CitedUrlKeys`' output: DuckDB reads them, no row in Python)."""
        if not self.files:
            return []
        if isinstance(wanted, list):
            if not wanted:
                return []
            relation, wanted_params = "read_parquet(?, union_by_name = true)", [wanted]
            has_bucket = True
        else:
            if wanted.num_rows == 0:
                return []
            self._con.register("wanted", wanted)
            relation, wanted_params = "wanted", []
            has_bucket = "bucket" in wanted.column_names

        def column(name: str, cast: str = "VARCHAR") -> str:
            return f"CAST(i.{name} AS {cast})" if name in self._columns else f"CAST(NULL AS {cast})"

        mime = (f"COALESCE({column('content_mime_detected')}, {column('content_mime_type')})")
        where = ""
        params = [*self._params, *wanted_params]
        if self.crawls:
            where = "WHERE i.crawl IN (SELECT UNNEST(?))"
            params.append(list(self.crawls))
        bucket = "CAST(w.bucket AS INTEGER)" if has_bucket else "CAST(NULL AS INTEGER)"
        query = (f"SELECT DISTINCT {bucket}, w.wanted, i.url, "
                 f"strftime(CAST(i.fetch_time AS TIMESTAMP), '%Y%m%d%H%M%S'), CAST(i.fetch_status AS INTEGER), "
                 f"{mime}, i.warc_filename, CAST(i.warc_record_offset AS BIGINT), "
                 f"CAST(i.warc_record_length AS BIGINT), {column('fetch_redirect')}, {column('crawl')} "
                 f"FROM {self._source} AS i JOIN {relation} AS w ON i.url_surtkey = w.key {where}")
        try:
            rows = self._con.execute(query, params).fetchall()
        finally:
            if relation == "wanted":
                self._con.unregister("wanted")
        self.queries += 1
        self.files_scanned += len(self.files)
        return [(row_bucket, wanted_url, IndexedCapture(
                    url=url, timestamp=iso_utc(fetched) or str(fetched), status=status, mime=mime_type,
                    filename=filename or "", offset=offset, length=length, redirect=redirect or None, crawl=crawl))
                for row_bucket, wanted_url, url, fetched, status, mime_type, filename, offset, length, redirect, crawl
                in rows]  # fmt: skip


def url_keys_table(urls: Iterable[str], bucket: int | None = None) -> Any:
    """The pyarrow table (``wanted``, ``key``[, ``bucket``]) a join takes: each URL with the SURT keys it is
    looked up by (its own and its normalized form's); a URL without a SURT has no row (it has no capture)."""
    import pyarrow as pa

    wanted: list[str] = []
    keys: list[str | None] = []
    for url in dict.fromkeys(urls):
        for key in lookup_keys(url) or [None]:  # without a key: listed (looked up), never matched
            wanted.append(url)
            keys.append(key)
    columns: dict[str, Any] = {"wanted": pa.array(wanted, pa.string()), "key": pa.array(keys, pa.string())}
    if bucket is not None:
        columns["bucket"] = pa.array([bucket] * len(wanted), pa.int32())
    return pa.table(columns)


@dataclass(frozen=True)
class IndexFiles:
    """The Parquet files of a columnar index, as :func:`index_files` lists them.

    Args:
        files (`list[str]`): paths or URLs, sorted; only the named crawls' when their folders (``crawl=``) say so.
        remote (`bool`): read through fsspec (``http(s)://``, ``s3://``) rather than from local disk.
        hive_base (`str`): the folder the ``crawl=``/``subset=`` partition folders hang from ("" when none).
    """

    files: list[str]
    remote: bool
    hive_base: str


def index_files(location: str, crawls: Sequence[str] = (), data_prefix: str = COMMON_CRAWL_DATA) -> IndexFiles:
    """Every Parquet file of a `cc_index` location (see :attr:`CommonCrawlConfig.cc_index`), one by one, so that a
    join can be split among tasks by file.

    Raises:
        FileNotFoundError: `location` names no Parquet file (of `crawls`, when the files are in crawl folders).
    """
    lowered = location.lower()
    if lowered.endswith((".paths", ".paths.gz")):
        lines = _read_listing(location)
        files = [line if "://" in line or line.startswith("/") else f"{data_prefix.rstrip('/')}/{line}"
                 for line in lines if line.lower().endswith(".parquet")]
        base = _hive_base(files[0]) if files else ""
        remote = bool(files) and is_remote(files[0])
    elif is_remote(location):
        files = _remote_glob(location) if any(char in location for char in "*?[") else [location]
        base = _hive_base(location)
        remote = True
    else:
        path = Path(location.removeprefix("file://"))
        if path.is_dir():
            files = sorted(str(file) for file in path.rglob("*.parquet") if file.is_file())
            if not files:
                raise FileNotFoundError(f"{location}: no Parquet file in this folder")
            base = str(path)
        elif path.is_file():
            files, base = [str(path)], ""
        elif any(char in location for char in "*?["):
            import glob

            files, base = sorted(glob.glob(location, recursive=True)), ""
            if not files:
                raise FileNotFoundError(f"{location}: no file matches")
        else:
            raise FileNotFoundError(f"{location}: no such file or folder")
        remote = False
    if crawls and files and all("crawl=" in file for file in files):  # the partition folders say which crawl
        files = [file for file in files if any(f"crawl={crawl}/" in file for crawl in crawls)]
    if not files:
        raise FileNotFoundError(f"{location}: names no Parquet file" + (f" of crawls {list(crawls)}" if crawls else ""))
    return IndexFiles(sorted(files), remote, base)


def _hive_base(path: str) -> str:
    """The folder a path's ``crawl=`` partition folders hang from ("" when it has none)."""
    return path.split("/crawl=", 1)[0] + "/" if "/crawl=" in path else ""


def _read_listing(location: str) -> list[str]:
    if is_remote(location):
        import fsspec

        with fsspec.open(location, "rb", compression="infer") as handle:
            data = handle.read()
    else:
        opener: Callable[..., Any] = gzip.open if location.lower().endswith(".gz") else open
        try:
            with opener(location, "rb") as handle:
                data = handle.read()
        except OSError as error:
            raise FileNotFoundError(f"{location}: cannot read the listing ({error})") from None
    return [line.strip() for line in data.decode("utf-8").splitlines() if line.strip()]


def _remote_filesystem(url: str) -> Any:
    """fsspec's file system for `url`'s protocol, or a ValueError saying which package it needs."""
    import fsspec

    protocol = url.split("://", 1)[0].lower()
    try:
        return fsspec.filesystem(protocol)
    except ImportError as error:
        raise ValueError(f"{url}: reading {protocol}:// needs a package that is not installed ({error}); "
                         "or give the https://data.commoncrawl.org/ URLs (a cc-index-table.paths.gz listing)") from None


def _remote_glob(location: str) -> list[str]:
    import fsspec

    _remote_filesystem(location)
    fs, _, paths = fsspec.get_fs_token_paths(location)
    protocol = location.split("://", 1)[0]
    files = [path if "://" in path else f"{protocol}://{path}" for path in sorted(paths)]
    if not files:
        raise FileNotFoundError(f"{location}: no file matches")
    return files


def _arrow_filesystem(url: str) -> Any:
    from pyarrow.fs import FSSpecHandler, PyFileSystem

    return PyFileSystem(FSSpecHandler(_remote_filesystem(url)))
