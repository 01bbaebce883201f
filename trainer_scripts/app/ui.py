"""The page: three tabs over :mod:`.backend` (Summarize, Compare, Explore), and :func:`serve`.

Each tab's button calls one function of :class:`AppHandlers`; every handler returns a ``status`` text as its last
output, where a problem with the input (:class:`~.backend.AppError`) is written in one line, so the page never shows
a traceback and keeps serving. The handlers are also the app's API (``gradio_client``: ``/summarize``, ``/compare``,
``/search``, ``/example``, ``/use_example``, ``/load_model``, ``/load_dataset``).

One model and one dataset are loaded for the whole server (they are shared by every visitor: this is a local tool and
a demo Space, not a multi-tenant service); loading another replaces them. Served to others (:func:`serve` on a host
beyond loopback, or in a Space), the handlers follow :mod:`.public`: the boxes load only the allowed sources, uploads
come only from Gradio's upload folder, a request has a time limit, and the queue, uploads and requests are bounded.
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from . import backend
from .backend import AppError
from .public import AllowedSources, PublicSettings, RequestLimits, is_public_host, time_limit

logger = logging.getLogger(__name__)

TITLE = "Query-focused summarization with Q-BERT"
DEFAULT_PORT = 7860


def _status(error: AppError | None = None, note: str = "") -> str:
    return f"**Problem:** {error}" if error is not None else note


class AppHandlers:
    """The loaded model and dataset, and what each button does with them; ``public``: the rules of an app served to
    others (:class:`~.public.PublicSettings`), ``None`` on the user's own machine."""

    def __init__(self, model: backend.LoadedModel | None = None, dataset: backend.LoadedDataset | None = None,
                 public: PublicSettings | None = None):
        self.model, self.dataset, self.public = model, dataset, public

    @property
    def allowed(self) -> AllowedSources | None:
        """What the Model and Dataset boxes may load (``None``: anything)."""
        return self.public.sources if self.public else None

    def _time_limit(self) -> contextlib.AbstractContextManager[None]:
        return time_limit(self.public.request_seconds) if self.public else contextlib.nullcontext()

    # -- loading ---------------------------------------------------------------------------------------------------

    def load_model(self, source: str) -> tuple[str, str]:
        try:
            self.model = backend.load_model(source, self.allowed)
        except AppError as error:
            return self.model_text(), _status(error)
        return self.model_text(), _status(note=f"loaded {self.model.source}")

    def model_text(self) -> str:
        return self.model.describe() if self.model else "No model loaded: give a Q-BERT folder or Hub id above."

    def load_dataset(self, source: str) -> tuple[Any, ...]:
        try:
            self.dataset = backend.load_dataset(source, self.allowed)
        except AppError as error:
            return (*self._dataset_outputs(), _status(error))
        return (*self._dataset_outputs(), _status(note=f"loaded {self.dataset.source} ({self.dataset.kind})"))

    def dataset_text(self) -> str:
        if self.dataset is None:
            return "No dataset loaded: give a dataset folder or Hub id above."
        sizes = ", ".join(f"{name} {len(rows):,}" for name, rows in self.dataset.splits.items())
        return f"`{self.dataset.source}`: {self.dataset.kind} ({sizes})"

    def _dataset_outputs(self) -> tuple[Any, ...]:
        import gradio as gr

        splits = self.dataset.split_names() if self.dataset else []
        first = splits[0] if splits else None
        card_text, figures = backend.card(self.dataset) if self.dataset else ("", [])
        dropped = backend.dropped_statements(self.dataset) if self.dataset else []
        return (self.dataset_text(), gr.update(choices=splits, value=first), gr.update(choices=splits, value=first),
                gr.update(choices=splits, value=first), card_text, figures, dropped)

    # -- Summarize ---------------------------------------------------------------------------------------------------

    def summarize(self, query: str, documents: str, files: list[str] | None, sentences_per_line: bool,
                  max_words: float, selection: str, tradeoff: float | None, candidates: float | None,
                  threshold: float | None) -> tuple[str, str, str | None, str]:
        try:
            if self.model is None:
                raise AppError("no model loaded: load a Q-BERT folder or Hub id first")
            parsed = backend.parse_documents(documents, files or [], sentences_per_line, self.public)
            start = time.perf_counter()
            with self._time_limit():
                view = backend.summarize(self.model, query, parsed, int(max_words or 250), selection or "auto",
                                         tradeoff if selection == "mmr" else None,
                                         candidates if selection == "ilp" else None,
                                         threshold if selection == "wikiref" else None)
        except AppError as error:
            return "", "", None, _status(error)
        seconds = time.perf_counter() - start
        note = (f"{len(view.result['selected'])} of {len(view.result['sentences'])} sentences chosen from "
                f"{len(parsed)} document(s) with the {view.result['selection']} rule in {seconds:.1f} s")
        return view.result["summary"], view.html, view.json_path, note

    def use_example(self, split: str, index: float) -> tuple[str, str, bool, str]:
        try:
            if self.dataset is None:
                raise AppError("no dataset loaded: load a dataset folder or Hub id first")
            query, documents = backend.example_input(self.dataset, split, int(index or 0))
        except AppError as error:
            return "", "", True, _status(error)
        return query, documents, True, _status(note=f"example {int(index or 0)} of {split}: one sentence per line")

    # -- Compare -----------------------------------------------------------------------------------------------------

    def compare(self, split: str, index: float) -> tuple[list[list[str]], str, str, str]:
        try:
            if self.model is None:
                raise AppError("no model loaded: load a Q-BERT folder or Hub id first")
            if self.dataset is None or self.dataset.kind not in ("duc", "benchmark"):
                raise AppError("Compare needs a converted DUC year or benchmark (rows with reference summaries): load "
                               "one in the Dataset box")
            row = backend.example(self.dataset, split, int(index or 0))["row"]
            with self._time_limit():
                result = backend.compare(self.model, row)
        except AppError as error:
            return [], "", "", _status(error)
        settings = f"ROUGE {result['value']} ×100; {result['settings']}"
        return result["table"], settings, result["html"], _status(note=f"topic {row.get('topic_id', '')}")

    # -- Explore -----------------------------------------------------------------------------------------------------

    def search(self, split: str, text: str, page: float) -> tuple[list[list[Any]], str, str]:
        try:
            if self.dataset is None:
                raise AppError("no dataset loaded: load a dataset folder or Hub id first")
            rows, pages = backend.search(self.dataset, split, text, int(page or 1))
        except AppError as error:
            return [], "", _status(error)
        return rows, f"page {min(max(1, int(page or 1)), pages)} of {pages}", ""

    def example(self, split: str, index: float) -> tuple[str, str, str]:
        try:
            if self.dataset is None:
                raise AppError("no dataset loaded: load a dataset folder or Hub id first")
            shown = backend.example(self.dataset, split, int(index or 0))
        except AppError as error:
            return "", "", _status(error)
        return shown["markdown"], shown["html"], ""


def build_app(handlers: AppHandlers) -> Any:
    """The Gradio ``Blocks`` of the app."""
    import gradio as gr

    splits = handlers.dataset.split_names() if handlers.dataset else []
    first = splits[0] if splits else None
    with gr.Blocks(title=TITLE, delete_cache=(handlers.public.cache_seconds,) * 2 if handlers.public else None) as app:
        gr.Markdown(f"# {TITLE}\nScore every sentence of a set of documents for a query with Q-BERT, compare it with "
                    "the DUC baselines, and explore a built dataset.")
        with gr.Row():
            model_box = gr.Textbox(label="Model (folder or Hub id)", value=handlers.model.source if handlers.model
                                   else "", scale=3)
            model_button = gr.Button("Load model", scale=1, elem_id="load-model-button")
            dataset_box = gr.Textbox(label="Dataset (folder or Hub id)", elem_id="dataset-box", value=handlers.dataset.source
                                     if handlers.dataset else "", scale=3)
            dataset_button = gr.Button("Load dataset", scale=1, elem_id="load-dataset-button")
        with gr.Row():
            model_info = gr.Markdown(handlers.model_text())
            dataset_info = gr.Markdown(handlers.dataset_text())
        load_status = gr.Markdown(elem_id="load-status")

        with gr.Tab("Summarize", id="summarize"):
            with gr.Row():
                with gr.Column(scale=2):
                    query = gr.Textbox(label="Query (levels on separate lines or separated by ' > ')", lines=2,
                                       elem_id="query")
                    documents = gr.Textbox(label=f"Documents (a line holding only {backend.DOCUMENT_SEPARATOR} "
                                           "separates two)", lines=12, elem_id="documents")
                    files = gr.File(label="or upload .txt files (one document each)", file_count="multiple",
                                    file_types=[".txt"], type="filepath")
                    per_line = gr.Checkbox(label="one sentence per line", value=False)
                with gr.Column(scale=1):
                    max_words = gr.Number(label="word budget", value=250, precision=0, minimum=1)
                    selection = gr.Dropdown(list(backend.SELECTIONS), value="auto", label="selection rule")
                    tradeoff = gr.Slider(0, 1, value=0.7, step=0.05, label="MMR trade-off (mmr)")
                    candidates = gr.Number(label="ILP candidates (ilp)", value=300, precision=0, minimum=1)
                    threshold = gr.Number(label="score threshold (wikiref; empty: the model's)", value=None, elem_id="threshold")
                    with gr.Row():
                        example_split = gr.Dropdown(splits, value=first, label="dataset split")
                        example_index = gr.Number(label="example", value=0, precision=0, minimum=0)
                    example_button = gr.Button("Use this dataset example", elem_id="use-example-button")
            summarize_button = gr.Button("Summarize", variant="primary", elem_id="summarize-button")
            summary_status = gr.Markdown(elem_id="summary-status")
            summary = gr.Textbox(label="Summary", lines=6, elem_id="summary")
            download = gr.File(label="scores and chosen sentences (JSON)")
            shaded = gr.HTML(label="Documents, shaded by score (outlined: chosen)")
        with gr.Tab("Compare", id="compare"):
            gr.Markdown("Q-BERT, QUERY-SIM, LEAD and ORACLE on one cluster of a converted DUC year or benchmark, each "
                        "scored against the reference summaries, each row with the rule that chose its sentences: "
                        "when the model's rule is not the paper's greedy one, the baselines are also shown under it "
                        "(QUERY-SIM (ILP)) and the model under the greedy rule (Q-BERT (greedy)).")
            with gr.Row():
                compare_split = gr.Dropdown(splits, value=first, label="split")
                compare_index = gr.Number(label="cluster (row)", value=0, precision=0, minimum=0)
                compare_button = gr.Button("Compare", variant="primary", elem_id="compare-button")
            compare_status = gr.Markdown()
            compare_table = gr.Dataframe(headers=backend.COMPARE_HEADERS, interactive=False)
            compare_settings = gr.Markdown()
            compare_html = gr.HTML()
        with gr.Tab("Explore", id="explore"):
            with gr.Row():
                explore_split = gr.Dropdown(splits, value=first, label="split")
                search_text = gr.Textbox(label="search the queries")
                page = gr.Number(label="page", value=1, precision=0, minimum=1)
                search_button = gr.Button("Search", elem_id="search-button")
            page_info = gr.Markdown()
            results = gr.Dataframe(headers=["example", "query", "summary"], interactive=False)
            with gr.Row():
                explore_index = gr.Number(label="example", value=0, precision=0, minimum=0)
                show_button = gr.Button("Show example", elem_id="show-button")
            explore_status = gr.Markdown()
            example_markdown = gr.Markdown()
            example_html = gr.HTML()
            card_text, figures = backend.card(handlers.dataset) if handlers.dataset else ("", [])
            with gr.Accordion("Dataset card", open=False):
                card_markdown = gr.Markdown(card_text)
                gallery = gr.Gallery(value=figures, label="figures", columns=3)
            with gr.Accordion("Statements the build dropped, with the filter that dropped each", open=False):
                dropped = gr.Dataframe(value=backend.dropped_statements(handlers.dataset) if handlers.dataset else [],
                                       headers=["filter", "query", "statement", "cited URL"], interactive=False)

        model_button.click(handlers.load_model, [model_box], [model_info, load_status], api_name="load_model")
        dataset_button.click(handlers.load_dataset, [dataset_box],
                             [dataset_info, example_split, compare_split, explore_split, card_markdown, gallery,
                              dropped, load_status], api_name="load_dataset")
        summarize_button.click(handlers.summarize, [query, documents, files, per_line, max_words, selection, tradeoff,
                                                    candidates, threshold],
                               [summary, shaded, download, summary_status], api_name="summarize")
        example_button.click(handlers.use_example, [example_split, example_index],
                             [query, documents, per_line, summary_status], api_name="use_example")
        compare_button.click(handlers.compare, [compare_split, compare_index],
                             [compare_table, compare_settings, compare_html, compare_status], api_name="compare")
        search_button.click(handlers.search, [explore_split, search_text, page], [results, page_info, explore_status],
                            api_name="search")
        show_button.click(handlers.example, [explore_split, explore_index],
                          [example_markdown, example_html, explore_status], api_name="example")
    return app


def serve(model: str | None = None, dataset: str | None = None, host: str = "127.0.0.1", port: int = DEFAULT_PORT,
          on_ready: Callable[[str], None] | None = None, block: bool = True, allow: Sequence[str] = (),
          public: bool | None = None) -> Any:
    """Load ``model`` and ``dataset`` (folders or Hub ids; either may be missing) and serve the app on
    ``host:port``.

    Served to others (``public``; by default when ``host`` is not a loopback address, and a Space passes ``True``), the
    app follows :mod:`.public`: the Model and Dataset boxes load only ``model``, ``dataset`` and the ``allow`` entries
    (folders or Hub ids), uploads and requests are bounded, a request has a time limit and the queue a size. On
    127.0.0.1 the boxes load any folder or Hub id.

    Raises:
        AppError: ``model`` or ``dataset`` cannot be loaded, or an ``allow`` entry is neither a folder nor a Hub id
            (the command says so in one line before serving).
    """
    settings = None
    if is_public_host(host) if public is None else public:
        from gradio.utils import get_upload_folder

        settings = PublicSettings(AllowedSources.for_server(model, dataset, allow), upload_folder=get_upload_folder())
    allowed = settings.sources if settings else None
    handlers = AppHandlers(backend.load_model(model, allowed) if model else None,
                           backend.load_dataset(dataset, allowed) if dataset else None, public=settings)
    app = build_app(handlers)
    app.queue(**queue_options(handlers))
    app.launch(server_name=host, server_port=port, prevent_thread_lock=True, quiet=True, show_error=False,
               **launch_options(handlers))
    url = f"http://{host}:{app.server_port}/"
    if on_ready is not None:
        on_ready(url)
    if block:
        app.block_thread()
    return app


def queue_options(handlers: AppHandlers) -> dict[str, Any]:
    """Gradio's queue: one model, so each event's requests run one after another; served to others, at most
    ``queue_size`` wait and the next are told the queue is full, so a crowd meets a message, not a dead server."""
    return {"default_concurrency_limit": 1, "max_size": handlers.public.queue_size if handlers.public else None}


def launch_options(handlers: AppHandlers) -> dict[str, Any]:
    """What Gradio's ``launch`` gets besides the address: the folders it may serve files from (the loaded dataset's
    folder on the user's machine; only the allowed datasets' figures when served to others) and, served to others,
    the largest upload and the :class:`~.public.RequestLimits` middleware."""
    settings = handlers.public
    if settings is None:
        folder = handlers.dataset.folder if handlers.dataset else None
        return {"allowed_paths": [str(Path(folder).resolve())] if folder else []}
    from starlette.middleware import Middleware

    limits = Middleware(RequestLimits, max_bytes=settings.max_request_bytes, max_files=settings.max_uploads)
    return {"allowed_paths": settings.served_folders(), "max_file_size": settings.max_upload_bytes,
            "app_kwargs": {"middleware": [limits]}}


__all__ = ["AppHandlers", "build_app", "serve", "queue_options", "launch_options", "TITLE", "DEFAULT_PORT"]
