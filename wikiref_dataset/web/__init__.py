"""Cited-page acquisition for WikiRef: WARC archives (offline default) and live HTTP, HTML -> title + text.

Modules: :mod:`.urls` (URL normalization), :mod:`.warc` (WARC index), :mod:`.http` (guarded fetcher),
:mod:`.extract` (trafilatura + sentences), :mod:`.captures` (which capture: nearest the citation's date),
:mod:`.commoncrawl` (Common Crawl: CDX servers, the columnar URL index, WARC records by byte range),
:mod:`.documents` (the datatrove stage), :mod:`.cli` (the ``documents`` subcommand). Nothing is imported here, so that importing one module stays light.
"""
