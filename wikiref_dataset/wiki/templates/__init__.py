"""Inline templates as a reader sees them: the renderers that :mod:`~wikiref_dataset.wiki.plaintext` calls for a
template in the running text, one module per family, and the registry it reads them from.

Modules: :mod:`.arguments` (what a renderer receives: :class:`~.arguments.TemplateArgs`), :mod:`.context` (the
language being read), :mod:`.registry` (:data:`~.registry.TEMPLATE_RENDERERS`, :func:`~.registry.template_renderer`),
:mod:`.silent` (templates that show nothing); the families: :mod:`.numbers` (numbers and units), :mod:`.dates` (dates
and ages), :mod:`.currencies` (money), :mod:`.lang` (other languages and scripts), :mod:`.links` (links and
references), :mod:`.coordinates`, :mod:`.punctuation` (punctuation, symbols, spacing), :mod:`.formatting` (text shown
as given, lists), :mod:`.ships`, :mod:`.parser_functions`. A language's own inline templates (its table's
``[inline]``) are :mod:`~wikiref_dataset.wiki.inline`'s. Nothing is imported here.
"""
