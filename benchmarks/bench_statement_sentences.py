"""Do WikiRef statements end their sentences, in every language? Statements per URL ref, the share that ends with
sentence-final punctuation, the share that starts mid-sentence and the refs lost to unrendered templates, per real
dump excerpt.

For each excerpt (the English pages-articles sample and the twelve multilingual mini-dumps of
``../shared/realdata/wikipedia_dump/``), ``StatementExtractor`` runs with the language's defaults, and again with
``include_bare_urls`` (what ``--bare-urls`` keeps). Per language it prints:

* ``URL refs``: the refs of the wikitext whose content holds an ``http(s)://`` link (what a statement can be
  built from), counted on the raw text;
* ``kept``: statements kept with the language's defaults (bare links kept where its table says so), and with
  ``--bare-urls``;
* ``kept / URL ref``: the share of URL refs that give a statement (defaults);
* ``sentence-final``: the share of kept statements whose text ends with sentence-final punctuation (``.!?``,
  ``。．！？``), closing quotes and brackets allowed after it;
* ``mid-sentence start``: the share that starts with a lowercase letter or with ``, ; :``, ``、，；：``;
* ``unrendered drops``: the statements dropped because an inline template the language's table cannot render stands
  inside a sentence (``dropped_unrendered_template``), as a share of all refs, and the templates by name.

The two shares are what "the statement is a whole sentence" means for a summary; the drops say how much of it the
template tables lose. The baseline is an earlier revision: ``--before REV`` (a git worktree of that revision, the same
measures) or ``--before-json FILE`` (what ``--json`` printed there); the table then shows both, the ratio of
statements per URL ref and the differences of the shares, per language. ``--templates`` counts the templates that
stand inside sentences of prose in each excerpt, by name, with what the language's tables do with them (rendered,
silent, unrendered): how the frequent inline templates of ``docs/languages.md`` were found.

    .venv/bin/python benchmarks/bench_statement_sentences.py              # about a minute on 2 cores
    .venv/bin/python benchmarks/bench_statement_sentences.py --before HEAD~1
    .venv/bin/python benchmarks/bench_statement_sentences.py --examples de --show 20   # statements to hand-check
    .venv/bin/python benchmarks/bench_statement_sentences.py --changed en --show 20    # what whole sentences change
    .venv/bin/python benchmarks/bench_statement_sentences.py --templates fr pt --show 30  # templates inside sentences
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
DUMPS = Path(__file__).resolve().parents[2] / "shared" / "realdata" / "wikipedia_dump"
SENTENCE_FINAL = re.compile(r"[.!?。．！？][\"'”’»」』）)\]】〕]*$")
MID_SENTENCE = re.compile(r"^[,;:、，；：]")
REF = re.compile(r"<ref(?:\s[^>]*)?(?<!/)>(.*?)</ref\s*>", re.S | re.I)  # a ref with content (not <ref name=x />)
URL = re.compile(r"https?://", re.I)
TARGET = 0.8  # the share of statements that end their sentence, in every language
DROP_TARGET = 0.03  # the share of refs dropped for an unrendered template, at most, in every language


def excerpts() -> dict[str, Path]:
    """Language code -> the real dump excerpt of that language (only those present)."""
    found = {}
    english = DUMPS / "enwiki-pages-articles-sample.xml.bz2"
    if english.is_file():
        found["en"] = english
    for path in sorted((DUMPS / "multilingual").glob("*wiki-minidump.xml.bz2")):
        found[path.name.split("wiki-", 1)[0]] = path
    return found


def is_sentence_final(text: str) -> bool:
    return bool(SENTENCE_FINAL.search(text.strip()))


def starts_mid_sentence(text: str) -> bool:
    stripped = text.lstrip()
    if not stripped:
        return False
    first = stripped[0]
    return bool(MID_SENTENCE.match(stripped)) or (first.isalpha() and first.islower())


CONFIGURATIONS = {"default": None, "bare_urls": True}  # name -> include_bare_urls (None: the language's default)


def _config(language: str, bare: bool | None) -> Any:
    """The extractor's settings; a revision from before the languages chose (``--before``) takes ``False`` for the
    default."""
    from wikiref_dataset.wiki.statements import StatementConfig

    try:
        return StatementConfig(language=language, include_bare_urls=bare)
    except ValueError:
        return StatementConfig(language=language, include_bare_urls=bool(bare))


def measure(language: str, dump: Path) -> tuple[dict[str, Any], dict[str, list[str]]]:
    """The measures of one excerpt with each configuration (the dump read once), and the kept statements' texts."""
    from wikiref_dataset.wiki.dump import iter_pages
    from wikiref_dataset.wiki.statements import StatementExtractor

    extractors = {name: StatementExtractor(_config(language, bare)) for name, bare in CONFIGURATIONS.items()}
    texts: dict[str, list[str]] = {name: [] for name in extractors}
    url_refs = 0
    for page in iter_pages(dump):
        for name, extractor in extractors.items():
            texts[name] += [statement.text for statement in extractor.extract(page)]
        url_refs += sum(1 for content in REF.findall(page.text) if URL.search(content))
    measures = {name: {"statements": len(kept), "url_refs": url_refs, "refs": extractors[name].stats["refs"],
                       "unrendered": extractors[name].stats["dropped_unrendered_template"],
                       "sentence_final": sum(map(is_sentence_final, kept)),
                       "mid_sentence": sum(map(starts_mid_sentence, kept)),
                       "counts": dict(sorted(extractors[name].stats.items()))} for name, kept in texts.items()}
    return {"dump": dump.name, **measures}, texts


def changed(language: str, dump: Path, show: int) -> None:
    """What the whole-sentence rule changes in one excerpt: the statements kept with ``whole_sentences`` off and on
    (the language's other defaults), paired by statement id; prints the counts and ``show`` changed pairs."""
    from dataclasses import replace

    from wikiref_dataset.wiki.dump import iter_pages
    from wikiref_dataset.wiki.statements import StatementExtractor

    whole = _config(language, None)
    extractors = {"fragments": StatementExtractor(replace(whole, whole_sentences=False)),
                  "whole": StatementExtractor(whole)}
    kept: dict[str, dict[str, str]] = {name: {} for name in extractors}
    for page in iter_pages(dump):
        for name, extractor in extractors.items():
            kept[name].update((statement.id, statement.text) for statement in extractor.extract(page))
    before, after = kept["fragments"], kept["whole"]
    pairs = [(key, before[key], after[key]) for key in before if key in after and before[key] != after[key]]
    gone = [key for key in before if key not in after]
    print(f"{language}: {len(before):,} statements with fragments, {len(after):,} with whole sentences; "
          f"{len(pairs):,} changed, {len(gone):,} gone (their sentence went to a later ref), "
          f"{len(set(after) - set(before)):,} new; unchanged {len(before) - len(pairs) - len(gone):,}")
    for key, old, new in pairs[:show]:
        print(f"- {key}\n  before: {old}\n  after:  {new}")


def run(languages: list[str] | None) -> dict[str, Any]:
    found = excerpts()
    return {language: measure(language, dump)[0] for language, dump in found.items()
            if not languages or language in languages}


def percent(part: int, whole: int) -> str:
    return f"{100 * part / whole:.0f}%" if whole else "-"


def _drops(measures: dict[str, Any]) -> int:
    """Statements dropped for an unrendered template (also read from the counts of an older ``--json``)."""
    return measures.get("unrendered", measures.get("counts", {}).get("dropped_unrendered_template", 0))


def _refs(measures: dict[str, Any]) -> int:
    return measures.get("refs", measures.get("counts", {}).get("refs", 0))


def _unrendered_names(measures: dict[str, Any]) -> str:
    names = {key.split("/", 1)[1]: count for key, count in measures.get("counts", {}).items()
             if key.startswith("unrendered_template/")}
    return ", ".join(f"{name} ×{count}" for name, count in sorted(names.items(), key=lambda item: -item[1]))


def table(results: dict[str, Any], before: dict[str, Any] | None = None) -> str:
    """The measures per language; with ``before``, both revisions side by side, the ratio of statements per URL ref
    and the differences of the shares (in percentage points)."""
    if before:
        header = ["language", "URL refs", "refs", "kept before", "kept", "kept / URL ref before", "after", "ratio",
                  "sentence-final before", "after", "difference", "unrendered drops before", "after",
                  "unrendered templates left"]
    else:
        header = ["language", "URL refs", "kept", "kept --bare-urls", "kept / URL ref", "sentence-final",
                  "mid-sentence start", "unrendered drops", "unrendered templates"]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for language, entry in results.items():
        default, bare = entry["default"], entry["bare_urls"]
        if not before:
            cells = [language, str(default["url_refs"]), str(default["statements"]), str(bare["statements"]),
                     percent(default["statements"], default["url_refs"]),
                     percent(default["sentence_final"], default["statements"]),
                     percent(default["mid_sentence"], default["statements"]),
                     f"{_drops(default)} ({_share(_drops(default), _refs(default))})", _unrendered_names(default)]
        else:
            old = (before.get(language) or {}).get("default") or {}
            old_kept, kept, url_refs = old.get("statements", 0), default["statements"], default["url_refs"]
            ratio = f"{kept / old_kept:.2f}×" if old_kept else "-"
            final_old = old.get("sentence_final", 0) / old_kept if old_kept else 0.0
            final_new = default["sentence_final"] / kept if kept else 0.0
            cells = [language, str(url_refs), str(_refs(default)), str(old_kept), str(kept),
                     percent(old_kept, old.get("url_refs", url_refs)), percent(kept, url_refs), ratio,
                     percent(old.get("sentence_final", 0), old_kept), percent(default["sentence_final"], kept),
                     f"{100 * (final_new - final_old):+.0f} pt",
                     f"{_drops(old)} ({_share(_drops(old), _refs(old))})",
                     f"{_drops(default)} ({_share(_drops(default), _refs(default))})", _unrendered_names(default)]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def _share(part: int, whole: int) -> str:
    return f"{100 * part / whole:.1f}%" if whole else "-"


def inline_templates(language: str, dump: Path) -> list[tuple[str, int, str, str]]:
    """The templates that stand inside sentences of prose in one excerpt, most frequent first: (folded name, count,
    what the language's tables do with it: ``rendered``, ``silent`` or ``unrendered``, one use as written).

    Prose is every section the extractor reads (the language's non-prose sections skipped); a template stands inside a
    sentence when it is written on one line and its line holds words besides it (an infobox, a navbox or a table
    row does not). The templates nested in it count too (``{{formatnum:{{#expr:…}}}}``)."""
    from collections import Counter

    import mwparserfromhell
    from mwparserfromhell.nodes import Template, Text

    from wikiref_dataset.wiki.dump import iter_pages
    from wikiref_dataset.wiki.inline import language_templates
    from wikiref_dataset.wiki.languages import wiki_language
    from wikiref_dataset.wiki.markup import prepare, split_sections
    from wikiref_dataset.wiki.plaintext import canonical_template_name, is_silent_template, template_renderer

    table_language = wiki_language(language)
    skip = set(table_language.skip_sections)
    counts: Counter = Counter()
    example: dict[str, Any] = {}
    for page in iter_pages(dump):
        skipping = None
        for section in split_sections(prepare(page.text).text):
            if section.level:
                heading = " ".join(section.title.split()).lower().strip()
                if skipping is not None and section.level <= skipping:
                    skipping = None
                if skipping is None and heading in skip:
                    skipping = section.level
            if skipping is not None:
                continue
            nodes = mwparserfromhell.parse(section.body).nodes
            for index, node in enumerate(nodes):
                if not isinstance(node, Template) or "\n" in str(node).strip():
                    continue
                start = index
                while start > 0 and "\n" not in str(nodes[start - 1]):
                    start -= 1
                end = index
                while end + 1 < len(nodes) and "\n" not in str(nodes[end + 1]):
                    end += 1
                line = "".join(str(other) for other in nodes[start:end + 1] if isinstance(other, Text))
                line += str(nodes[start - 1]).rsplit("\n", 1)[-1] if start > 0 else ""
                line += str(nodes[end + 1]).split("\n", 1)[0] if end + 1 < len(nodes) else ""
                if not re.search(r"\w", line):
                    continue
                for template in mwparserfromhell.parse(str(node)).filter_templates():
                    name = canonical_template_name(str(template.name))
                    name = name.split(":", 1)[0] + ":" if ":" in name else name
                    counts[name] += 1
                    example.setdefault(name, template)
    rows = []
    with language_templates(table_language):
        for name, count in counts.most_common():
            template = example[name]
            if template_renderer(template, canonical_template_name(str(template.name))) is not None:
                status = "rendered"
            elif is_silent_template(name) and name not in table_language.hole_templates:
                status = "silent"
            else:
                status = "unrendered"
            rows.append((name, count, status, " ".join(str(template).split())[:80]))
    return rows


def run_before(revision: str, languages: list[str] | None) -> dict[str, Any]:
    """The same measures from a git worktree of ``revision`` (this script run there with its code)."""
    with tempfile.TemporaryDirectory() as folder:
        worktree = Path(folder) / "before"
        subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", str(worktree), revision], check=True,
                       capture_output=True)
        try:
            argv = [sys.executable, str(Path(__file__).resolve()), "--json"]  # that revision's code: PYTHONPATH
            argv += ["--languages", *languages] if languages else []
            done = subprocess.run(argv, capture_output=True, text=True, check=True,
                                  env={**os.environ, "PYTHONPATH": str(worktree)})
            return json.loads(done.stdout)
        finally:
            subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(worktree)],
                           capture_output=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--languages", nargs="+", help="only these language codes (default: every excerpt present)")
    parser.add_argument("--before", metavar="REV", help="also measure a git revision and show both")
    parser.add_argument("--before-json", metavar="FILE", type=Path,
                        help="the baseline's measures, as --json printed them at an earlier revision")
    parser.add_argument("--templates", action="store_true",
                        help="count the templates inside sentences of prose, by name, per language (--show: how many)")
    parser.add_argument("--examples", metavar="LANG", help="print kept statements of one language to hand-check")
    parser.add_argument("--changed", metavar="LANG",
                        help="print what the whole-sentence rule changes in one language (against --fragments)")
    parser.add_argument("--show", type=int, default=10, help="with --examples or --changed: how many (default 10)")
    parser.add_argument("--bare-urls", action="store_true", help="with --examples: as --bare-urls keeps them")
    parser.add_argument("--json", action="store_true", help="print the measures as JSON")
    parser.add_argument("--quick", action="store_true", help="smoke run: German and Japanese only")
    args = parser.parse_args(argv)
    found = excerpts()
    if not found:
        print(f"bench_statement_sentences: no dump excerpts under {DUMPS}; nothing to measure")
        return 0
    if args.examples:
        if args.examples not in found:
            parser.error(f"--examples: no excerpt for {args.examples!r} (have: {', '.join(found)})")
        _, texts = measure(args.examples, found[args.examples])
        for text in texts["bare_urls" if args.bare_urls else "default"][:args.show]:
            flags = ("" if is_sentence_final(text) else " [no final punctuation]") + (
                " [starts mid-sentence]" if starts_mid_sentence(text) else "")
            print(f"- {text}{flags}")
        return 0
    if args.changed:
        if args.changed not in found:
            parser.error(f"--changed: no excerpt for {args.changed!r} (have: {', '.join(found)})")
        changed(args.changed, found[args.changed], args.show)
        return 0
    if args.quick and not args.languages:
        args.languages = ["de", "ja"]
    if args.templates:
        for language, dump in found.items():
            if args.languages and language not in args.languages:
                continue
            rows = inline_templates(language, dump)
            print(f"{language}: {sum(row[1] for row in rows):,} templates inside sentences, {len(rows)} names; "
                  f"{sum(row[1] for row in rows if row[2] == 'unrendered'):,} unrendered")
            for name, count, status, written in rows[:args.show]:
                print(f"  {count:5d}  {status:10s}  {name:32s}  {written}")
        return 0
    results = run(args.languages)
    if args.json:
        print(json.dumps(results))
        return 0
    before = run_before(args.before, args.languages) if args.before else None
    if args.before_json:
        before = json.loads(args.before_json.read_text(encoding="utf-8"))
    print(table(results, before))
    measured = {language: entry["default"] for language, entry in results.items() if entry["default"]["statements"]}
    shares = {language: entry["sentence_final"] / entry["statements"] for language, entry in measured.items()}
    below = sorted(language for language, share in shares.items() if share < TARGET)
    print(f"RESULT bench_statement_sentences: sentence-final statements, {len(shares) - len(below)} of {len(shares)} "
          f"languages at >= {TARGET:.0%}" + (f" (below: {', '.join(below)})" if below else ""))
    drops = {language: _drops(entry["default"]) / _refs(entry["default"]) for language, entry in results.items()
             if _refs(entry["default"])}
    over = sorted(language for language, share in drops.items() if share > DROP_TARGET)
    print(f"RESULT bench_statement_sentences: unrendered-template drops, {len(drops) - len(over)} of {len(drops)} "
          f"languages at <= {DROP_TARGET:.0%} of refs" + (f" (above: {', '.join(over)})" if over else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
