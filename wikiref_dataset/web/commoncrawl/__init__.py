"""Common Crawl (or any CDX-indexed web archive) as a source of cited pages: look each URL up in an index, choose
the capture, read its WARC record by byte range. One concept per module:

* :mod:`.config`: where and how to ask (:class:`CommonCrawlConfig`, Common Crawl's servers, the HTTP session);
* :mod:`.indexed_capture`: one capture as an index lists it (:class:`IndexedCapture`), and the SURT keys an index
  lists a URL under;
* :mod:`.cdx`: per URL, on a CDX index server (:class:`CdxServer`; small builds);
* :mod:`.columnar`: all URLs at once, joined with Common Crawl's columnar URL index in DuckDB (:class:`ColumnarIndex`;
  full builds);
* :mod:`.index_join`: that join split among tasks by index file, its captures filed per fetch task
  (:class:`CaptureTable`, :func:`join_index_share`);
* :mod:`.record_reader`: a WARC record read by byte range, over HTTP or from a local folder (:class:`WarcRecordReader`);
* :mod:`.resolve`: a cited URL resolved to an archived page: looked up, the capture nearest the citation's date
  chosen, captured redirects followed, the record read; one outcome per URL (:class:`CommonCrawl`, :data:`OUTCOMES`).

Their public names are importable from here (``from wikiref_dataset.web.commoncrawl import CommonCrawl``).
"""

from .cdx import CdxServer, IndexLookupError, IndexUnavailableError, is_loopback_host
from .columnar import ColumnarIndex, IndexFiles, index_files, url_keys_table
from .config import COMMON_CRAWL_DATA, COMMON_CRAWL_INDEX, CommonCrawlConfig
from .index_join import CaptureTable, file_key_ranges, files_for_keys, index_shares, join_index_share
from .indexed_capture import IndexedCapture, surt_key
from .record_reader import ArchivedResponse, WarcRecordReader
from .resolve import OUTCOMES, CaptureRequest, CommonCrawl, CrawlResult

__all__ = [
    "COMMON_CRAWL_DATA", "COMMON_CRAWL_INDEX", "OUTCOMES", "CaptureRequest", "CdxServer", "ColumnarIndex",
    "CaptureTable", "CommonCrawl", "CommonCrawlConfig", "CrawlResult", "IndexFiles", "IndexLookupError",
    "IndexUnavailableError", "IndexedCapture", "ArchivedResponse", "WarcRecordReader", "file_key_ranges",
    "files_for_keys", "index_files", "index_shares", "is_loopback_host", "join_index_share", "surt_key",
    "url_keys_table",
]  # fmt: skip
