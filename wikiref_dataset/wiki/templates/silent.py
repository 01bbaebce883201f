"""Silent templates: the templates that show no words of the running text (inline cleanup tags, footnote marks,
pronunciation asides, icons, layout and navigation), dropped without a hole (:data:`SILENT_TEMPLATES`,
:func:`is_silent_template`)."""

from __future__ import annotations

from .context import LANGUAGE_TEMPLATES

__all__ = ["SILENT_TEMPLATES", "is_silent_template"]

SILENT_TEMPLATES = frozenset({
    # inline cleanup and maintenance tags: a reader sees a bracketed note, not words of the sentence
    "citation needed", "cn", "fact", "cite needed", "citeneeded", "citation required", "cn-needed", "refneeded",
    "clarify", "clarification needed", "when", "who", "whom", "by whom", "which", "which?", "where", "where?",
    "why", "why?", "how", "how?", "what", "dubious", "dubious discuss", "disputed inline", "according to whom",
    "vague", "weasel inline", "weasel word", "peacock term", "peacock inline", "verify source", "verify credibility",
    "failed verification", "better source", "better source needed",
    "unreliable source?", "unreliable source", "unreliable medical source", "self-published inline",
    "self-published source", "primary source inline", "third-party inline", "non-primary source needed",
    "full", "full citation", "page needed", "pages needed", "year needed", "date missing", "page missing",
    "update inline", "update after", "out of date", "outdated", "original research inline", "or", "or inline",
    "syn", "synthesis inline", "lopsided", "non sequitur", "example needed", "definition needed", "specify",
    "elucidate", "expand acronym", "explain", "further explanation needed", "qualify evidence", "nonspecific",
    "importance inline", "irrelevant citation", "inappropriate person", "sic?", "says who", "speculation inline",
    "time frame", "dead link", "deadlink", "cbignore", "bots", "citation not found", "not in citation given",
    "request quotation", "rquote", "quote needed", "attribution needed", "medical citation needed",
    "contradict inline", "contradictory inline", "fv", "pov statement", "npov inline", "neutrality inline",
    "ambiguous", "huh", "awkward", "incomprehensible inline", "typo help inline", "spelling?",
    "pronunciation needed", "ipa needed", "translation needed", "transliteration needed", "circular reference",
    "dated info", "when?", "refimprove", "more citations needed", "unreferenced", "citation style",
    "refimprove section", "more citations needed section", "unreferenced section", "update", "expand section",
    "inflation-fn", "inflation/fn", "inflation-year/fn",
    # footnotes, note marks and the page numbers that follow a citation (the statement walker handles refs)
    "efn", "efn-ua", "efn-lr", "efn-la", "efn-lg", "efn-ur", "refn", "notetag", "nb", "note label", "ref label",
    "cref", "cnote", "cnote2", "ref", "note", "fn", "fnb", "r", "rp", "sfn", "sfnp", "sfnm", "sfnmp", "sfnref",
    "notelist", "reflist", "refbegin", "refend", "references", "notelist-ua", "notelist-lr", "page number",
    # pronunciation in IPA-for-English, audio, icons and images: asides that leave no word out of the sentence
    "ipac-en", "ipac-ga", "ipac-es", "ipac-fr", "ipac-de", "ipac-it", "ipac-pl", "ipac-ar", "ipac-cmn", "ipac-yue",
    "ipac-ja", "ipac-ru", "ipac-hu", "ipac-nl", "ipac-pt", "ipac-sv", "ipac-nb", "pronunciation", "listen",
    "flagicon", "flag icon", "flagdeco", "flagicon image", "country flag icon", "in lang", "en icon", "fr icon",
    "de icon", "es icon", "ru icon", "it icon", "ja icon", "zh icon", "ar icon", "pt icon", "languageicon",
    "increase", "decrease", "steady", "up", "down",
    # layout, navigation and page-level templates
    "anchor", "anchors", "visible anchor end", "clear", "clr", "-", "clear left", "clear right",
    "nowrap begin", "nowrap end", "nobr begin", "nobr end", "endflatlist", "endplainlist", "end",
    "main", "main article", "see also", "further", "further information", "details", "for", "about", "redirect",
    "distinguish", "other uses", "hatnote", "selfref", "self reference", "portal", "portal bar", "commons",
    "commons category", "wiktionary", "wikiquote", "wikisource", "sister project links", "authority control",
    "taxonbar", "coord missing", "short description", "italic title", "lowercase title", "toc", "toc limit",
    "tocright", "toc right", "compact toc", "multiple image", "double image", "wide image", "panorama", "image",
    "col-begin", "col-end", "col-break", "div col", "div col end", "columns-list", "quote box", "pull quote",
    "rquote box", "sidebar", "stack", "stack begin", "stack end", "sticky header",
    "defaultsort", "displaytitle", "good article", "featured article", "featured list", "engvarb",
    "spoken wikipedia", "pp", "pp-semi", "pp-move", "pp-protected", "pp-vandalism", "pp-semi-indef",
    "pp-move-indef", "pp-pc1", "pp-sock", "pp-dispute", "pp-template",
})  # fmt: skip
"""Templates that render no words of the running text and are dropped silently (no hole): inline cleanup tags,
footnote marks, pronunciation asides, icons, and layout or navigation templates. Besides these, names ending with
``" needed"`` or ``" inline"`` and names starting with ``infobox``, ``navbox``, ``pp-``, ``use `` (``{{use dmy
dates}}``), ``ipac-`` or ``flagicon`` are silent. Any other template that
:data:`~wikiref_dataset.wiki.templates.registry.TEMPLATE_RENDERERS` does not render leaves a hole
(:func:`~wikiref_dataset.wiki.holes.find_holes`)."""

_SILENT_SUFFIXES = (" needed", " inline")
_SILENT_PREFIXES = ("infobox", "navbox", "pp-", "use ", "ipac-", "flagicon", "campaignbox", "s-", "taxobox",
                    "automatic taxobox", "speciesbox", "good article", "featured", "wikiproject")


def is_silent_template(name: str) -> bool:
    """Whether the template of canonical ``name`` renders no words of the running text (see
    :data:`SILENT_TEMPLATES`, and the language's silent templates within
    :func:`~wikiref_dataset.wiki.inline.language_templates`); parser functions count by their function
    (``defaultsort:X`` → ``defaultsort``)."""
    if ":" in name:
        name = name.split(":", 1)[0].strip()
    language = LANGUAGE_TEMPLATES.get()
    if not language.english:
        return name in language.silent or name in SILENT_TEMPLATES
    return name in SILENT_TEMPLATES or name.endswith(_SILENT_SUFFIXES) or name.startswith(_SILENT_PREFIXES)
