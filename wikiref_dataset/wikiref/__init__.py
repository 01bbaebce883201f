"""The WikiRef build: statements (``wiki/``) joined to their cited pages (``web/``), curated (filters, oracle labels,
document-disjoint splits, :mod:`.curation`) and written as a loadable dataset folder (:mod:`.dataset`), as datatrove
stages (:mod:`.build`); :mod:`.cli` holds the ``wikiref build`` parser."""
