"""What every ``wikiref`` subcommand shares: how it is declared, its common options, and how it ends.

One convention for all subcommands (``wikiref_dataset.cli`` and ``trainer_scripts.cli`` register them):

* :func:`add_subcommand` declares one with a one-paragraph description, a runnable example under its options, and the
  common options (:func:`add_common_options`): ``-q/--quiet`` (no progress bars or stage headers; each command's help
  says what it hides there), ``-v/--verbose`` (more log lines; ``-vv`` debug) and ``--debug`` (an error shows its
  traceback). datatrove's console logs (each task's pipeline, its statistics tables) are shown only with ``-v`` (and
  not ``-q``): by default a command that runs datatrove stages prints its own short summary, and the logs and
  statistics stay in the run's logs folder (:data:`DATATROVE_VERBOSE_HELP`).
* :func:`dispatch` runs the chosen subcommand and turns what it raises into one line on stderr and an exit status:
  ``wikiref <command>: error: <what>`` and 2 for a bad command line or bad input (:class:`CliError`, ``ValueError``,
  a missing or unreadable file, a dump that cannot be read), 1 for a run that failed (:class:`RunFailed`,
  ``RuntimeError``, anything unexpected), 130 for an interrupt (``interrupted; rerun the same command to resume``).
  A usage error (unknown option, missing argument) is the same one line, exit 2 (:class:`ArgumentParser`). A command
  that needs a package of an extra that is not installed (the dataset builders' spaCy, datatrove, ...: a core install
  has only the model, training and DUC evaluation) says which, with the install line (``pip install
  "wikiref[build]"``: :data:`MODULE_EXTRAS`), exit 1.

Imports only the standard library: the ``wikiref`` command builds every subcommand's parser on each call.
"""

from __future__ import annotations

import argparse
import logging
import os
import shutil
import sys
import textwrap
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .process.disk import describe_disk_full, disk_full, free_space

if TYPE_CHECKING:
    from .process.lifetime import Interrupts

__all__ = ["DATATROVE_VERBOSE_HELP", "MODULE_EXTRAS", "QUIET_HELP", "VERBOSE_HELP", "ArgumentParser", "CliError",
           "RunFailed", "add_common_options", "add_split_arguments", "add_subcommand", "check_input_files",
           "check_run_folder", "cleaned_up_on_input_error", "deprecated_alias", "dispatch", "missing_extra", "one_line",
           "one_line_errors", "warn"]

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_INTERRUPTED, EXIT_BROKEN_PIPE = 0, 1, 2, 130, 141

MODULE_EXTRAS: dict[str, str] = {
    **dict.fromkeys(("spacy", "spacy_lookups_data", "thinc", "mwparserfromhell", "mwxml", "datatrove", "trafilatura",
                     "lxml", "lxml_html_clean", "warcio", "sentence_splitter", "sentence_transformers", "faiss",
                     "google_crc32c", "cdx_toolkit", "duckdb", "surt", "protego"), "build"),
    "ray": "cluster",
    "py7zr": "history7z",
}
"""Top-level modules of the optional extras (pyproject.toml) -> the extra that installs them: the dataset builders
(``build``), the Ray executor (``cluster``), 7z history dumps (``history7z``)."""


def one_line_errors(parser: Any) -> Any:
    """Make ``parser`` (an `argparse.ArgumentParser`) report a bad command line as one line on stderr and exit 2,
    instead of argparse's usage block (hundreds of lines with every `TrainingArguments` option)."""

    def error(message: str) -> None:
        parser.exit(2, f"{parser.prog}: error: {' '.join(str(message).split())} (see --help)\n")

    parser.error = error
    return parser


class CliError(Exception):
    """A bad command line or bad input, named in the message: one line on stderr, exit status 2."""


class RunFailed(Exception):
    """A run that went through its inputs but failed (a task failed, nothing was kept): one line, exit status 1."""


class HelpFormatter(argparse.HelpFormatter):
    """Fills prose paragraphs to the terminal's width but keeps indented lines (examples) as written."""

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        blocks = []
        for block in textwrap.dedent(text).strip("\n").split("\n\n"):
            if block.startswith(" "):
                blocks.append("\n".join(indent + line for line in block.splitlines()))
            else:
                blocks.append(textwrap.fill(" ".join(block.split()), width, initial_indent=indent,
                                            subsequent_indent=indent))
        return "\n\n".join(blocks)


class ArgumentParser(argparse.ArgumentParser):
    """argparse's parser with the ``wikiref`` convention for a bad command line: one line
    (``wikiref build: error: the following arguments are required: --out (see wikiref build --help)``), exit 2.
    Subcommand parsers created from it (``add_subparsers().add_parser``) are of this class too."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", HelpFormatter)
        super().__init__(*args, **kwargs)

    def format_help(self) -> str:
        # the common options ("messages", declared first by add_subcommand) read best after the command's own
        self._action_groups.sort(key=lambda group: group.title == "messages")
        return super().format_help()

    def parse_known_args(self, args: Sequence[str] | None = None,  # type: ignore[override]
                         namespace: Any = None) -> tuple[argparse.Namespace, list[str]]:
        """argparse's, with every long option taken in both spellings (``--duc_dirs`` and ``--duc-dirs``)."""
        tokens = list(sys.argv[1:] if args is None else args)
        return super().parse_known_args(either_spelling(tokens, option_strings(self)), namespace)

    def parse_args(self, args: Sequence[str] | None = None, namespace: Any = None) -> argparse.Namespace:  # type: ignore[override]
        parsed, extras = self.parse_known_args(args, namespace)
        if extras:  # argparse reports them from the top-level parser: name the subcommand instead
            name = getattr(parsed, "command_name", None)
            prog = f"{self.prog} {name}" if name else self.prog
            self.exit(EXIT_USAGE, f"{prog}: error: unrecognized arguments: {' '.join(extras)} (see {prog} --help)\n")
        return parsed

    def error(self, message: str) -> None:  # type: ignore[override]
        for action in self._actions:  # a bare group command (``wikiref duc``): name its subcommands, not a dest
            if isinstance(action, argparse._SubParsersAction) and message == (
                    f"the following arguments are required: {action.metavar or action.dest}"):
                message = f"give a subcommand: {', '.join(action.choices)}"
        self.exit(EXIT_USAGE, f"{self.prog}: error: {one_line(message)} (see {self.prog} --help)\n")


def option_strings(parser: argparse.ArgumentParser) -> set[str]:
    """Every option string ``parser`` and its subcommands (recursively) declare."""
    names: set[str] = set()
    for action in parser._actions:
        names.update(action.option_strings)
        if isinstance(action, argparse._SubParsersAction):
            for sub in set(action.choices.values()):
                names |= option_strings(sub)
    return names


_SPELLINGS = str.maketrans("-_", "_-")


def either_spelling(tokens: Sequence[str], known: set[str]) -> list[str]:
    """``tokens`` with each long option a parser does not know in the spelling given (``--duc-dirs``) written in the
    one it knows (``--duc_dirs``), ``=value`` kept: every command takes both spellings, as the training scripts'
    ``HfArgumentParser`` does. Tokens after ``--`` are left as they are."""
    spelled = []
    for position, token in enumerate(tokens):
        if token == "--":
            return spelled + list(tokens[position:])
        if token.startswith("--") and len(token) > 2:
            name, equals, value = token.partition("=")
            other = "--" + name[2:].translate(_SPELLINGS)
            if name not in known and other in known:
                token = other + equals + value
        spelled.append(token)
    return spelled


QUIET_HELP = "no progress bars or stage headers; the closing summary and errors are still printed"
"""The ``-q`` help of a command that declares no other (``quiet_help`` of :func:`add_subcommand`)."""

VERBOSE_HELP = "more log lines on stderr (-vv: debug)"
"""The ``-v`` help of a command that declares no other (``verbose_help`` of :func:`add_subcommand`)."""

DATATROVE_VERBOSE_HELP = ("more log lines on stderr, datatrove's included: each task's pipeline and statistics tables "
                          "(by default they stay in the logs folder, with stats.json; -vv: debug)")
"""The ``-v`` help of the commands that run datatrove stages (``build``, ``statements``, ``documents``, ...)."""


def add_common_options(parser: argparse.ArgumentParser, quiet: bool = True, quiet_help: str = QUIET_HELP,
                       verbose_help: str = VERBOSE_HELP) -> None:
    """``-q/--quiet`` (unless the command declares its own: ``quiet=False``), ``-v/--verbose``, ``--debug``; the help
    of ``-q`` and ``-v`` says what they change in this command."""
    group = parser.add_argument_group("messages")
    if quiet:
        group.add_argument("-q", "--quiet", action="store_true", help=quiet_help)
    group.add_argument("-v", "--verbose", action="count", default=0, help=verbose_help)
    group.add_argument("--debug", action="store_true", help="show the traceback of an error")


def add_subcommand(commands: argparse._SubParsersAction, name: str, *, help: str, description: str,
                   example: str | Sequence[str], func: Callable[[argparse.Namespace], int], resumable: bool = False,
                   quiet: bool = True, quiet_help: str = QUIET_HELP, verbose_help: str = VERBOSE_HELP,
                   writes: Sequence[str] = ()) -> argparse.ArgumentParser:
    """Register ``name`` on ``commands`` with ``help`` (its line in the command list), ``description`` (one
    paragraph), ``example`` (one or more runnable command lines, shown under the options) and the common options;
    ``func(args)`` runs it and returns the exit status. ``resumable``: an interrupted run resumes when rerun (the
    interrupt message says so). ``quiet=False``: the command declares its own ``--quiet``. ``quiet_help`` and
    ``verbose_help``: what ``-q`` hides and ``-v`` adds in this command. ``writes``: the option
    destinations that name the folders the command writes (``("out", "work")``); :func:`dispatch` locks them for the
    whole run (one writer per folder; the ``work`` of a build defaults to ``OUT.work``), and ``--wait`` is added."""
    examples = [example] if isinstance(example, str) else list(example)
    parser = commands.add_parser(name, help=help, description=description,
                                 epilog=("example:\n\n" if len(examples) == 1 else "examples:\n\n")
                                 + "\n".join(f"  {line}" for line in examples),
                                 formatter_class=HelpFormatter)
    add_common_options(parser, quiet=quiet, quiet_help=quiet_help, verbose_help=verbose_help)
    if writes:
        parser.add_argument_group("concurrency").add_argument(
            "--wait", action="store_true",
            help="when another run is writing the same folder, wait for it to end (default: stop with exit 2, "
                 "naming that run)")
    parser.set_defaults(func=func, command_name=parser.prog.split(" ", 1)[-1], resumable=resumable,
                        written_folders=tuple(writes))
    return parser


def written_folders(args: argparse.Namespace) -> list[str]:
    """The folders a parsed command writes (see ``writes`` of :func:`add_subcommand`): the values of those options,
    and ``OUT.work`` when the command has a ``work`` option left unset."""
    folders = []
    dests = getattr(args, "written_folders", ())
    for dest in dests:
        value = getattr(args, dest, None)
        if value:
            folders.append(os.fspath(value))
    if "work" in dests and not getattr(args, "work", None) and getattr(args, "out", None):
        from .process.folders import work_folder  # the standard library only, as this module

        folders.append(os.fspath(work_folder(args.out)))
    return folders


def deprecated_alias(new: str, note: str | None = None) -> type[argparse.Action]:
    """An argparse action for an old option spelling: stores like ``new`` (the same ``dest``), prints a one-line note
    on stderr once. Declare it with ``help=argparse.SUPPRESS`` (hidden from ``--help``)."""

    class DeprecatedAlias(argparse.Action):
        def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: Any,
                     option_string: str | None = None) -> None:
            if not getattr(namespace, f"_noted_{self.dest}", False):
                print(f"{parser.prog}: note: {option_string} is now {note or new}", file=sys.stderr)
                setattr(namespace, f"_noted_{self.dest}", True)
            if self.nargs == 0:
                setattr(namespace, self.dest, True if self.const is None else self.const)
            elif isinstance(values, list) and isinstance(getattr(namespace, self.dest, None), list):
                setattr(namespace, self.dest, [*getattr(namespace, self.dest), *values])
            else:
                setattr(namespace, self.dest, values)

    return DeprecatedAlias


def add_split_arguments(parser: argparse.ArgumentParser | argparse._ArgumentGroup, items: str, default: str) -> None:
    """The split options of the build commands: ``--validation-size`` and ``--test-size`` (``items`` in each split;
    ``default`` says what an unset one means), ``--seed``; the old ``--dev-size`` still fills ``validation``."""
    parser.add_argument("--validation-size", type=int, default=None, metavar="N",
                        help=f"{items} in the validation split (default: {default})")
    parser.add_argument("--dev-size", dest="validation_size", type=int, action=deprecated_alias("--validation-size"),
                        help=argparse.SUPPRESS)
    parser.add_argument("--test-size", type=int, default=None, metavar="N",
                        help=f"{items} in the test split (default: {default})")
    parser.add_argument("--seed", type=int, default=42, help="split seed (default 42)")


def check_input_files(paths: Sequence[str | Path], what: str) -> list[str]:
    """``paths`` as strings, each an existing file; else :class:`CliError` naming the first bad one."""
    for path in map(Path, paths):
        if path.is_dir():
            raise CliError(f"{path}: is a folder, not a {what}")
        if not path.is_file():
            raise CliError(f"{path}: no such {what}")
    return [str(path) for path in paths]


def check_run_folder(path: str | Path, owned: Sequence[str], overwrite: bool = False) -> None:
    """The ``--out`` folder of a stage command (``statements``, ``documents``), which writes into it directly and
    resumes there: refused (:class:`CliError`) when it is a file, or when it holds anything whose top-level name
    matches none of the ``owned`` glob patterns (what the command writes), unless ``overwrite``."""
    folder = Path(path)
    if folder.exists() and not folder.is_dir():
        raise CliError(f"{folder}: exists and is not a folder; choose another output folder")
    if overwrite or not folder.is_dir():
        return
    foreign = sorted(entry.name for entry in folder.iterdir()
                     if not any(entry.match(pattern) for pattern in owned))
    if foreign:
        shown = ", ".join(foreign[:3]) + (f" and {len(foreign) - 3} more" if len(foreign) > 3 else "")
        raise CliError(f"{folder} holds files this command did not write ({shown}); choose another output folder, "
                       "or pass --overwrite to write into it (nothing of yours is deleted)")


@contextmanager
def cleaned_up_on_input_error(*paths: str | Path) -> Iterator[None]:
    """Within this block, a bad-input error (one that exits 2) removes those of ``paths`` that did not exist when it
    began: a run refused for its input leaves nothing behind (a work folder it created, say). Anything else (an
    interrupt, a failed task) keeps them: the same command resumes from them."""
    new = [Path(path) for path in paths if not Path(path).exists()]
    try:
        yield
    except _user_errors():
        for path in new:
            shutil.rmtree(path, ignore_errors=True)
        raise


def warn(args: argparse.Namespace, message: str) -> None:
    """One warning line on stderr: ``wikiref <command>: warning: <message>``."""
    print(f"wikiref {args.command_name}: warning: {one_line(message)}", file=sys.stderr)


def one_line(message: object) -> str:
    """``message`` on one line (an exception's text may hold line breaks)."""
    return " ".join(str(message).split())


def _describe(error: BaseException) -> str:
    if isinstance(error, OSError) and error.filename is not None and error.strerror:
        return f"{error.filename}: {error.strerror[0].lower()}{error.strerror[1:]}"
    if isinstance(error, KeyError):
        return f"missing {error}"
    return str(error) or type(error).__name__


def _user_errors() -> tuple[type[BaseException], ...]:
    # a DumpError can only come from a loaded dump reader (which needs mwxml, the build extra: not imported here)
    dump = sys.modules.get(f"{__package__}.wiki.dump")
    dump_errors = (dump.DumpError,) if dump is not None and hasattr(dump, "DumpError") else ()
    return (CliError, ValueError, *dump_errors, FileNotFoundError, FileExistsError, NotADirectoryError,
            IsADirectoryError, PermissionError)


def missing_extra(error: BaseException) -> str | None:
    """The one-line message for ``error`` when it is the import of a package of an optional extra that is not installed
    (``spacy`` -> ``... pip install "wikiref[build]"``), else ``None``."""
    if not isinstance(error, ModuleNotFoundError) or not error.name:
        return None
    extra = MODULE_EXTRAS.get(error.name.split(".")[0])
    if extra is None:
        return None
    what = {"build": "the dataset builders' packages", "cluster": "the Ray cluster executor",
            "history7z": "the 7z reader of history dumps"}.get(extra, f"the {extra} extra")
    return f"this needs {what}, not installed here (no module {error.name!r}): pip install \"wikiref[{extra}]\""


def _configure_logging(verbose: int) -> None:
    """Warnings and errors on stderr (``-v``: info, ``-vv``: debug). Where logging is configured already (a program
    embedding the command, pytest), only this project's loggers are changed, and only with ``-v``."""
    level = logging.DEBUG if verbose >= 2 else logging.INFO if verbose == 1 else logging.WARNING
    if logging.getLogger().handlers:
        if verbose:
            for name in ("wikiref_dataset", "trainer_scripts", "modeling_qbert"):
                logging.getLogger(name).setLevel(level)
        return
    logging.basicConfig(level=level, format="%(levelname)s: %(message)s")
    if verbose < 2:  # other libraries' info lines only with -vv
        for name in ("urllib3", "filelock", "fsspec", "datasets", "huggingface_hub", "matplotlib", "PIL", "httpx"):
            logging.getLogger(name).setLevel(logging.WARNING)


def dispatch(parser: argparse.ArgumentParser, argv: Sequence[str] | None = None) -> int:
    """Parse ``argv`` with ``parser`` and run the chosen subcommand; returns its exit status (see the module's
    docstring: 0 done, 1 a failed run, 2 a bad command line or input, 130 interrupted). ``--debug`` lets the error
    through with its traceback."""
    args = parser.parse_args(argv)
    name = getattr(args, "command_name", None) or getattr(args, "command", None) or parser.prog
    debug = getattr(args, "debug", False)
    _configure_logging(getattr(args, "verbose", 0))
    from .process.lifetime import end_children_with_this_process, end_helpers, stop_on_interrupt

    end_children_with_this_process()  # workers, the executor's manager and fork server end with this process
    with stop_on_interrupt(f"wikiref {name}") as interrupts:  # an interrupt lost in a fork hook is raised again
        try:
            status = _run_command(args, name, debug, interrupts)
        except KeyboardInterrupt:  # outside the command's own handling (before it started, or as it returned)
            if debug:
                raise
            _say_interrupted(args, name)
            status = EXIT_INTERRUPTED
        interrupts.handled = True
    if interrupts.received is not None or status == EXIT_INTERRUPTED:
        end_helpers()  # one an interrupt caught starting up (a datatrove manager) would keep this process alive
    return status


def _say_interrupted(args: argparse.Namespace, name: str) -> None:
    hint = "; rerun the same command to resume" if getattr(args, "resumable", False) else ""
    newline = "\n" if sys.stderr.isatty() else ""  # after the terminal's ^C
    print(f"{newline}wikiref {name}: interrupted{hint}", file=sys.stderr)


def _datatrove_logs(args: argparse.Namespace) -> bool:
    """Whether datatrove's console logs are shown: with ``-v`` and without ``-q``. By default a command's own summary
    says what a run did, and datatrove's per-task pipelines and statistics tables (a few hundred lines for the
    4-page sample) stay in the logs folder."""
    return getattr(args, "verbose", 0) >= 1 and not getattr(args, "quiet", False)


def _run_command(args: argparse.Namespace, name: str, debug: bool, interrupts: Interrupts) -> int:
    """Run the parsed subcommand under its folder locks; turn what it raises into one line and an exit status."""
    from .process.console import datatrove_console
    from .process.locks import FolderLocked, folder_locks

    folders = written_folders(args)
    free_at_start = {folder: free_space(folder) for folder in folders}
    try:
        try:
            with folder_locks(folders, command=f"wikiref {name}", wait=getattr(args, "wait", False),
                              slurm_chain=getattr(args, "executor", None) == "slurm"), \
                    datatrove_console(logs=_datatrove_logs(args)):
                return args.func(args)
        except Exception as error:
            full = disk_full(error)
            if full is None or debug:
                raise
            raise RunFailed(describe_disk_full(full, free_at_start)) from None
    except FolderLocked as error:
        if debug:
            raise
        print(f"wikiref {name}: error: {one_line(error)}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        interrupts.handled = True  # stopping: no need to raise it again
        if debug:
            raise
        _say_interrupted(args, name)
        return EXIT_INTERRUPTED
    except BrokenPipeError:  # stdout closed by its reader (`| head`): stop quietly, as other commands do
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_BROKEN_PIPE
    except RunFailed as error:
        if debug:
            raise
        print(f"wikiref {name}: error: {one_line(error)}", file=sys.stderr)
        return EXIT_FAILED
    except _user_errors() as error:
        if debug:
            raise
        print(f"wikiref {name}: error: {one_line(_describe(error))}", file=sys.stderr)
        return EXIT_USAGE
    except RuntimeError as error:  # a stage whose tasks did not all finish (a cluster task failed)
        if debug:
            raise
        print(f"wikiref {name}: error: {one_line(error)}; rerun the same command to redo the unfinished tasks",
              file=sys.stderr)
        return EXIT_FAILED
    except Exception as error:  # a missing package of an extra, else a bug: say what, and how to see where
        if debug:
            raise
        missing = missing_extra(error)
        if missing is not None:
            print(f"wikiref {name}: error: {missing}", file=sys.stderr)
            return EXIT_FAILED
        print(f"wikiref {name}: error: {type(error).__name__}: {one_line(_describe(error))} (unexpected; rerun with "
              "--debug for the traceback)", file=sys.stderr)
        return EXIT_FAILED
