"""`wikiref app` (trainer_scripts/app/): its logic called directly, then the app served by the `wikiref` command in a
fresh process on 127.0.0.1 and driven through `gradio_client`, bad input included, and a real headless browser
(Debian's chromium through selenium) running one summarization through the page's controls."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from trainer_scripts.app import backend
from trainer_scripts.app.backend import AppError

pytest.importorskip("gradio")

ROOT = Path(__file__).resolve().parents[2]
WIKIREF = Path(sys.executable).parent / "wikiref"


@pytest.fixture(scope="module")
def model(tiny_qbert_dir):
    return backend.load_model(str(tiny_qbert_dir))


@pytest.fixture(scope="module")
def wikiref(demo_wikiref):
    return backend.load_dataset(str(demo_wikiref))


# ---- the logic ------------------------------------------------------------------------------------------------------

def test_the_summary_is_the_registered_pipelines(model, tiny_qbert_dir):
    """Same input, same options: the app's summary and scores are what `pipeline("query-focused-summarization")`
    gives (the call `wikiref summarize` makes)."""
    from transformers import pipeline

    import modeling_qbert

    documents = backend.parse_documents("the team won the game .\nthe coach of the club .\n---\n"
                                        "the museum of art and history .\nthe king of the north .",
                                        sentences_per_line=True)
    view = backend.summarize(model, "club > season", documents, max_words=8, selection="duc")
    direct = pipeline(modeling_qbert.TASK, model=str(tiny_qbert_dir))(
        query=["club", "season"], documents=documents, selection="duc", max_words=8)
    assert view.result == direct
    assert json.loads(Path(view.json_path).read_text(encoding="utf-8"))["summary"] == direct["summary"]
    assert view.html.count("qfs-chosen") == len(direct["selected"]) > 0
    assert view.html.count("<h4>Document") == 2


@pytest.mark.parametrize("call, message", [
    (lambda: backend.parse_query("  \n "), "the query is empty"),
    (lambda: backend.parse_documents("\n---\n  "), "no documents"),
    (lambda: backend.parse_documents("x" * (backend.MAX_CHARACTERS + 1)), f"at most {backend.MAX_CHARACTERS:,}"),
    (lambda: backend.parse_documents("\n---\n".join(["a"] * (backend.MAX_DOCUMENTS + 1))),
     f"at most {backend.MAX_DOCUMENTS}"),
    (lambda: backend.load_model("no/such-model-here"), "no/such-model-here: cannot be reached on the Hub"),
    (lambda: backend.load_model("/no/such/folder"), "no such folder"),
    (lambda: backend.load_dataset("no/such-dataset-here"), "no/such-dataset-here: cannot be reached on the Hub"),
    (lambda: backend.load_dataset(""), "no dataset given"),
])
def test_bad_input_is_one_clear_message(call, message, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(AppError, match=message.replace("(", r"\(").replace(".", r"\.")):
        call()


def test_a_folder_of_the_wrong_kind_is_named(demo_wikiref, tiny_qbert_dir, tmp_path):
    with pytest.raises(AppError, match=r"not a model folder \(no config.json\); pass a saved Q-BERT folder"):
        backend.load_model(str(demo_wikiref))
    with pytest.raises(AppError, match="not a dataset folder"):
        backend.load_dataset(str(tiny_qbert_dir))
    bert = tmp_path / "bert"
    bert.mkdir()
    (bert / "config.json").write_text('{"model_type": "bert"}')
    with pytest.raises(AppError, match="model_type 'bert', not 'qbert'"):
        backend.load_model(str(bert))
    upload = tmp_path / "latin1.txt"
    upload.write_bytes("caf\xe9".encode("latin-1"))
    with pytest.raises(AppError, match="latin1.txt: not UTF-8 text"):
        backend.parse_documents("", [upload])


def test_explore_a_wikiref_build(wikiref, demo_wikiref):
    assert wikiref.kind == "wikiref" and wikiref.split_names() == ["train", "validation", "test"]
    rows, pages = backend.search(wikiref, "train", "LAKE varnholm")
    assert pages == 1 and rows and all("lake varnholm" in query.lower() for _, query, _ in rows)
    everything, _ = backend.search(wikiref, "train", "")
    assert len(everything) == len(wikiref.rows("train"))
    shown = backend.example(wikiref, "train", rows[0][0])
    row = wikiref.rows("train")[rows[0][0]]
    assert row["summary"] in shown["markdown"] and row["url"] in shown["markdown"]
    assert shown["html"].count('class="oracle"') == sum(row["oracle_label"]) > 0
    text, figures = backend.card(wikiref)
    assert "# WikiRef" in text.splitlines()[:3] and "configs:" not in text  # the card, without its front matter
    assert figures and all(Path(path).suffix == ".png" for path in figures)
    dropped = backend.dropped_statements(wikiref)
    assert dropped and {line[0].split(" ")[0] for line in dropped} <= {"length", "missing", "oracle", "unigram_recall"}
    assert any(line[2] and line[1] for line in dropped), "statements shown with their query"
    with pytest.raises(AppError, match="no example 999"):
        backend.example(wikiref, "train", 999)


def test_a_dataset_example_is_summarized_on_its_own_sentences(model, wikiref):
    query, text = backend.example_input(wikiref, "train", 0)
    row = wikiref.rows("train")[0]
    assert query == " > ".join(row["query"])
    assert backend.parse_documents(text, sentences_per_line=True) == [list(row["document"])]


def test_compare_on_a_duc_cluster_uses_the_evaluations_summaries(model, duc_years):
    from trainer_scripts.duc_evaluation import baseline_summaries, model_summaries

    duc = backend.load_dataset(duc_years[2006])
    assert duc.kind == "duc"
    split = duc.split_names()[0]
    row = duc.rows(split)[0]
    result = backend.compare(model, row)
    assert [line[0] for line in result["table"]] == list(backend.SYSTEMS)  # a model of the paper's greedy rule
    assert result["headers"] == ["system", "rule", "ROUGE-1", "ROUGE-2", "ROUGE-SU4"]
    assert [line[1] for line in result["table"]] == ["greedy", "greedy", "greedy", "oracle"]
    assert result["summaries"]["Q-BERT"] == model_summaries(model.pipeline, [row])[row["topic_id"]]
    assert result["summaries"]["LEAD"] == baseline_summaries("lead", [row])[row["topic_id"]]
    from wikiref_dataset.rouge import rouge

    lead = rouge([result["summaries"]["LEAD"]], [list(row["references"])]).averages
    assert result["table"][2][2:] == [f"{100 * lead[m].recall:.2f}" for m in ("rouge_1", "rouge_2", "rouge_su4")]
    assert "-l 250" in result["settings"] and "Reference summaries" in result["html"]
    with pytest.raises(AppError, match="no reference summaries"):
        backend.compare(model, {**row, "references": []})


def test_compare_shows_the_baselines_under_the_models_rule(tiny_qbert_dir, duc_years, tmp_path, monkeypatch):
    """A model saved with the ILP rule: Compare shows QUERY-SIM and LEAD under ILP beside their greedy rows and the
    model under the greedy rule (from the same scores), each row naming its rule; ILP is replaced by a rule that takes
    the lowest-scored sentence, so the ILP rows show they went through it (every rule takes every sentence of the tiny
    fixture clusters)."""
    from trainer_scripts.duc_evaluation import baseline_summaries, model_summaries
    from wikiref_dataset import selection

    folder = tmp_path / "ilp-qbert"
    shutil.copytree(tiny_qbert_dir, folder)
    config = json.loads((folder / "config.json").read_text())
    (folder / "config.json").write_text(json.dumps({**config, "cluster_selection": "ilp"}))
    monkeypatch.setattr(selection, "select_ilp", lambda sentences, scores, max_words=250, **settings: [
        min(range(len(scores)), key=lambda index: (scores[index], -index))])
    ilp_model = backend.load_model(str(folder))
    duc = backend.load_dataset(duc_years[2006])
    row = duc.rows(duc.split_names()[0])[0]
    result = backend.compare(ilp_model, row)
    assert [line[:2] for line in result["table"]] == [
        ["Q-BERT", "ILP"], ["Q-BERT (greedy)", "greedy"], ["QUERY-SIM", "greedy"], ["QUERY-SIM (ILP)", "ILP"],
        ["LEAD", "greedy"], ["LEAD (ILP)", "ILP"], ["ORACLE", "oracle"]]
    summaries = result["summaries"]
    assert summaries["QUERY-SIM (ILP)"] == baseline_summaries("query-sim", [row], rule="ilp")[row["topic_id"]]
    assert summaries["QUERY-SIM (ILP)"].count("\n") == 0 != summaries["QUERY-SIM"].count("\n")  # one sentence
    assert summaries["Q-BERT (greedy)"] == model_summaries(ilp_model.pipeline, [row], rule="duc")[row["topic_id"]]
    assert result["rules"]["Q-BERT"] == "ilp" and "QUERY-SIM (ILP)" in result["html"]


PSG2SUM_ROW = {"id": "p1", "page_id": 12, "title": "Anarchism", "revision_id": 7, "parent_revision_id": 6,
               "timestamp": "2003-01-02T00:00:00Z", "passage": "A passage. It has two sentences.",
               "passage_sentences": ["A passage.", "It has two sentences."], "summary": "A lead sentence.",
               "score": 0.75}
AQUAMUSE_ROW = {"id": "a1", "query": "who founded the club", "target": "The club was founded in 1900.",
                "target_sentences": ["The club was founded in 1900."],
                "documents": [{"url": "https://example.org/club", "text": "The club was founded in 1900.\nIt won.",
                               "score": 0.9}],
                "matches": [{"document": 0, "document_sentence": 0, "answer_sentence": 0, "score": 1.0}],
                "summary_recall": 1.0}
DEBATEPEDIA_ROW = {"topic_id": "d1", "benchmark": "debatepedia", "query": ["is the club good"],
                   "documents": [{"docno": "d1", "date": "", "headline": "",
                                  "sentences": ["the club won the game .", "the coach of the team .",
                                                "the museum of art ."]}],
                   "references": ["the club won the game"]}


@pytest.mark.parametrize("kind, row, shown", [
    ("psg2sum", PSG2SUM_ROW, ("Anarchism", "A lead sentence.", "revision_id", "It has two sentences.")),
    ("aquamuse", AQUAMUSE_ROW, ("who founded the club", "founded in 1900", "https://example.org/club")),
    ("benchmark", DEBATEPEDIA_ROW, ("is the club good", "the club won the game", "the museum of art")),
])
def test_every_dataset_kind_is_found_shown_and_usable_as_input(kind, row, shown):
    assert backend.dataset_kind(set(row)) == kind
    dataset = backend.LoadedDataset("rows", kind, {"train": [row]})
    page = backend.example(dataset, "train", 0)
    for text in shown:
        assert text in page["markdown"] + page["html"], text
    query, documents = backend.example_input(dataset, "train", 0)
    assert query and backend.parse_documents(documents, sentences_per_line=True)
    assert backend.search(dataset, "train", query.split()[0].upper())[0][0][0] == 0


def test_compare_on_a_benchmark_row_uses_its_own_scoring_and_budget(model):
    from wikiref_dataset.qfs.scoring import scoring_for

    result = backend.compare(model, DEBATEPEDIA_ROW)
    scoring = scoring_for("debatepedia")
    assert result["value"] == "F1" and result["settings"] == scoring.describe()
    assert all(len(summary.split()) <= scoring.budget(DEBATEPEDIA_ROW) for summary in result["summaries"].values())
    assert all(line[4] == "—" for line in result["table"])  # the benchmark is scored without ROUGE-SU4


def test_a_dataset_of_another_kind_is_refused_by_name():
    with pytest.raises(AppError, match="not a WikiRef, PSG2SUM, AQuaMuSe, DUC or benchmark dataset .columns: a, b"):
        backend.dataset_kind({"a", "b"}, "folder")


# ---- served: a fresh process, gradio_client, a browser --------------------------------------------------------------

@pytest.fixture(scope="module")
def served(tiny_qbert_dir, demo_wikiref, tmp_path_factory):
    """`wikiref app --model … --dataset … --port 0` in its own process; yields the URL it prints."""
    if not WIKIREF.is_file():
        pytest.skip("the wikiref script is not installed next to this Python")
    log = tmp_path_factory.mktemp("app") / "app.log"
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "GRADIO_ANALYTICS_ENABLED": "False", "NO_PROXY": "127.0.0.1,localhost"}
    started = time.perf_counter()
    with open(log, "w") as handle:
        process = subprocess.Popen([str(WIKIREF), "app", "--model", str(tiny_qbert_dir), "--dataset",
                                    str(demo_wikiref), "--port", "0"], stdout=handle, stderr=subprocess.STDOUT,
                                   env=env, start_new_session=True)
    try:
        url = None
        while url is None and time.perf_counter() - started < 180:
            time.sleep(0.3)
            text = log.read_text()
            found = [line for line in text.splitlines() if line.startswith("serving on ")]
            if found:
                url = found[0].split()[2]
            elif process.poll() is not None:
                pytest.fail(f"the app stopped (exit {process.returncode}):\n{text[-3000:]}")
        assert url is not None, log.read_text()[-3000:]
        assert url.startswith("http://127.0.0.1:")
        yield url
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(timeout=30)


@pytest.fixture(scope="module")
def client(served):
    from gradio_client import Client

    return Client(served, verbose=False)


def test_served_app_summarizes_like_the_pipeline(client, model, wikiref):
    query, documents, per_line, status = client.predict("train", 0, api_name="/use_example")
    assert per_line is True and "example 0 of train" in status
    summary, shaded, download, status = client.predict(query, documents, None, True, 250, "auto", 0.7, 300, None,
                                                       api_name="/summarize")
    expected = backend.summarize(model, query, backend.parse_documents(documents, sentences_per_line=True))
    assert summary == expected.result["summary"] and "qfs-chosen" in shaded
    assert json.loads(Path(download).read_text(encoding="utf-8"))["selected"] == expected.result["selected"]
    assert status.startswith("1 of ") or "sentences chosen" in status


@pytest.mark.parametrize("endpoint, arguments, message", [
    ("/summarize", ("", "some text .", None, False, 250, "auto", 0.7, 300, None), "the query is empty"),
    ("/summarize", ("club", "", None, False, 250, "auto", 0.7, 300, None), "no documents"),
    ("/summarize", ("club", "x" * (backend.MAX_CHARACTERS + 10), None, False, 250, "auto", 0.7, 300, None),
     f"at most {backend.MAX_CHARACTERS:,}"),
    ("/compare", ("train", 0), "Compare needs a converted DUC year or benchmark"),
    ("/example", ("train", 10_000), "no example 10000"),
])
def test_served_bad_input_is_a_message_and_the_server_goes_on(client, endpoint, arguments, message):
    result = client.predict(*arguments, api_name=endpoint)
    assert "**Problem:** " in result[-1] and message in result[-1]
    rows, page, status = client.predict("train", "", 1, api_name="/search")  # still serving
    assert rows["data"] and page.startswith("page 1 of")


def test_served_loading_a_wrong_folder_or_an_unreachable_hub_id_says_so(client, tiny_qbert_dir, demo_wikiref):
    info, status = client.predict(str(demo_wikiref), api_name="/load_model")
    assert "not a model folder (no config.json)" in status and "Q-BERT from" in info  # the loaded model stays
    outputs = client.predict(str(tiny_qbert_dir), api_name="/load_dataset")
    assert "not a dataset folder" in outputs[-1]
    outputs = client.predict("nobody/no-such-dataset", api_name="/load_dataset")
    assert "cannot be reached on the Hub" in outputs[-1]
    info, status = client.predict("nobody/no-such-model", api_name="/load_model")
    assert "cannot be reached on the Hub" in status


def _browser():
    chromium, driver = shutil.which("chromium"), shutil.which("chromedriver")
    if not (chromium and driver):
        pytest.skip("no headless browser here: Debian's chromium and chromium-driver are not installed (.ci/run "
                    "installs them with apt)")
    pytest.importorskip("selenium")
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for argument in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=1280,1600",
                     "--no-proxy-server"):
        options.add_argument(argument)
    return webdriver.Chrome(service=Service(driver), options=options)


def test_a_browser_runs_a_summarization_through_the_page(served, model, tmp_path):
    from PIL import Image
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as when
    from selenium.webdriver.support.ui import WebDriverWait

    browser = _browser()
    try:
        browser.get(served)
        wait = WebDriverWait(browser, 120)
        query = wait.until(when.presence_of_element_located((By.CSS_SELECTOR, "#query textarea")))
        query.send_keys("club")
        browser.find_element(By.CSS_SELECTOR, "#documents textarea").send_keys(
            "the team won the game . the coach of the club .\n---\nthe museum of art and history .")
        browser.find_element(By.CSS_SELECTOR, "#summarize-button").click()
        summary = wait.until(lambda driver: driver.find_element(By.CSS_SELECTOR, "#summary textarea")
                             .get_attribute("value") or None)
        expected = backend.summarize(model, "club", ["the team won the game . the coach of the club .",
                                                     "the museum of art and history ."])
        assert summary == expected.result["summary"]
        shot = tmp_path / "page.png"
        browser.save_screenshot(str(shot))
    finally:
        browser.quit()
    image = Image.open(shot).convert("L")
    low, high = image.getextrema()
    assert image.size[0] >= 800 and high - low > 100, "the screenshot is blank"
    assert sum(1 for count in image.resize((128, 160)).histogram() if count) > 20, "the screenshot holds no page"


def test_quiet_serves_without_loading_lines_or_bars(tiny_qbert_dir, tmp_path):
    """`wikiref app -q --model DIR` in its own process, as a user starts it: the model loads without the 'loading'
    line or transformers' "Loading weights" bar; the address served is still printed."""
    if not WIKIREF.is_file():
        pytest.skip("the wikiref script is not installed next to this Python")
    log = tmp_path / "app.log"
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "GRADIO_ANALYTICS_ENABLED": "False", "NO_PROXY": "127.0.0.1,localhost"}
    with open(log, "w") as handle:
        process = subprocess.Popen([str(WIKIREF), "app", "-q", "--model", str(tiny_qbert_dir), "--port", "0"],
                                   stdout=handle, stderr=subprocess.STDOUT, env=env, start_new_session=True)
    try:
        started = time.perf_counter()
        while "serving on " not in log.read_text() and time.perf_counter() - started < 180:
            assert process.poll() is None, log.read_text()[-3000:]
            time.sleep(0.3)
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(timeout=30)
    text = log.read_text()
    assert "serving on http://127.0.0.1:" in text, text[-3000:]
    assert "Loading weights" not in text and "loading " not in text, text[-3000:]
