"""Cited-page acquisition for WikiRef: WARC archives (offline default) and live HTTP, HTML -> title + text.

Modules: :mod:`.urls` (URL normalization), :mod:`.warc` (WARC index), :mod:`.warc_scan` (WARC files read record by
record, recovering from damage), :mod:`.http` (guarded fetcher), :mod:`.faults` (the retry rule, faults counted),
:mod:`.extract` (trafilatura + sentences), :mod:`.captures` (which capture: nearest the citation's date),
:mod:`.commoncrawl` (Common Crawl: CDX servers, the columnar URL index, WARC records by byte range; one module per
concept), :mod:`.documents` (stage 2: inputs, sources, the fetch step, outputs, the run), :mod:`.cli` (the
``documents`` subcommand). Nothing is imported here, so that importing one module stays light.
"""
