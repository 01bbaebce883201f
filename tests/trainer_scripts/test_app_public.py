"""`wikiref app` served to others (trainer_scripts/app/public.py): the rules checked directly (what the boxes load, the
refusal before anything is read, uploads only from Gradio's folder, the time limit of a request, the request and
upload limits, the queue), then the app served with `--host 0.0.0.0` inside a network namespace that holds only
loopback and driven as a visitor would through `gradio_client`: every input it must refuse, uploads over the limits,
a crowd of 40 summaries, and the page still answering."""

from __future__ import annotations

import importlib.util
import json
import os
import sys
import threading
from contextlib import contextmanager
from pathlib import Path

import pytest

from trainer_scripts.app import backend, public, ui
from trainer_scripts.app.backend import AppError

pytest.importorskip("gradio")

ROOT = Path(__file__).resolve().parents[2]
WIKIREF = Path(sys.executable).parent / "wikiref"
REFUSED = "not offered by this app"


# by its path: tests/ on sys.path would shadow the packages with the test folders of the same names
_spec = importlib.util.spec_from_file_location("loopback_namespace", ROOT / "tests" / "loopback_namespace.py")
loopback_namespace = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(loopback_namespace)


# ---- nothing read: Python's audit events while a call runs ----------------------------------------------------------

WATCHED = {"open", "os.listdir", "os.scandir", "glob.glob", "shutil.copyfile", "socket.connect", "socket.getaddrinfo"}
_seen: list[str] | None = None
_watched_thread: int | None = None


def _audit(event: str, args: tuple) -> None:
    if _seen is not None and event in WATCHED and threading.get_ident() == _watched_thread:
        _seen.append(f"{event} {args!r}"[:300])


sys.addaudithook(_audit)  # stays for the process (hooks cannot be removed); it records only inside nothing_read()


@contextmanager
def nothing_read():
    """Fails when the block (in this thread) opens, lists or globs a file or folder, or opens a network connection."""
    global _seen, _watched_thread
    _seen, _watched_thread = [], threading.get_ident()
    try:
        yield
    finally:
        seen, _seen = _seen, None
    assert not seen, f"read before refusing: {seen[:5]}"


# ---- the rules, directly --------------------------------------------------------------------------------------------

@pytest.mark.parametrize("host, is_public", [
    ("127.0.0.1", False), ("localhost", False), ("::1", False), ("127.0.0.2", False), ("LOCALHOST", False),
    ("0.0.0.0", True), ("::", True), ("192.168.1.20", True), ("myhost.example.org", True),
])
def test_only_loopback_is_the_users_own_machine(host, is_public):
    assert public.is_public_host(host) is is_public


@pytest.fixture
def folders(tmp_path, tiny_wikiref):
    """The served dataset (tiny_wikiref), another dataset folder beside it (a copy: Parquet files, never meant to be
    shown), and a symlink to that other folder inside the served one."""
    import shutil

    other = tmp_path / "duc2006"
    shutil.copytree(tiny_wikiref, other)
    link = tmp_path / "served"
    shutil.copytree(tiny_wikiref, link)
    (link / "shortcut").symlink_to(other, target_is_directory=True)
    return {"served": link, "other": other}


def _visitor_inputs(folders):
    served, other = folders["served"], folders["other"]
    return {"root": "/", "etc": "/etc", "up": "../..", "other folder": str(other), "symlink": str(served / "shortcut"),
            "dot-dot": f"{served}/../{other.name}", "hub id": "nobody/secret-data", "relative": "data",
            "newline": "/etc\n/passwd", "empty": "  "}


@pytest.mark.parametrize("name", ["root", "etc", "up", "other folder", "symlink", "dot-dot", "hub id", "relative",
                                  "newline", "empty"])
def test_the_boxes_refuse_anything_else_before_reading_it(name, folders, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    value = _visitor_inputs(folders)[name]
    allowed = public.AllowedSources(["org/qbert"], [str(folders["served"]), "org/wikiref"])
    for load, box, offered in ((backend.load_dataset, "dataset", "org/wikiref"), (backend.load_model, "model",
                                                                                 "org/qbert")):
        with nothing_read(), pytest.raises(AppError) as refused:
            load(value, allowed)
        message = str(refused.value)
        assert "\n" not in message, message
        if value.strip():
            assert message.startswith(f"{' '.join(value.split())}: {REFUSED}"), message
        else:
            assert message.startswith(f"no {box} given"), message
        assert f"its {box} box loads only" in message and offered in message  # and says what the box takes


def test_the_allowed_folder_loads_by_any_spelling_and_loads_as_recorded(folders, monkeypatch):
    served = folders["served"]
    allowed = public.AllowedSources([], [str(served)])
    monkeypatch.chdir(served.parent)
    for spelling in (str(served), f"{served}/", served.name, f"{served}/shortcut/..", f"./{served.name}/data/.."):
        assert allowed.admit(spelling, "dataset") == os.path.realpath(served)
    loaded = backend.load_dataset(f"{served}/shortcut/..", allowed)  # the kernel would read the other folder's parent
    assert loaded.folder == Path(os.path.realpath(served)) and loaded.kind == "wikiref"
    assert public.AllowedSources(["org/qbert"]).admit(" org/qbert ", "model") == "org/qbert"
    with pytest.raises(AppError, match=REFUSED):
        public.AllowedSources(["org/qbert"]).admit("org/qbert", "dataset")  # each box takes its own


def test_the_served_folders_are_recorded_by_their_real_path(folders, tmp_path):
    alias = tmp_path / "alias"
    alias.symlink_to(folders["served"], target_is_directory=True)
    allowed = public.AllowedSources.for_server("org/qbert", str(alias), allow=["org/more"])
    assert allowed.entries("dataset") == sorted([os.path.realpath(folders["served"]), "org/more"])
    assert allowed.entries("model") == ["org/more", "org/qbert"]
    assert allowed.admit(str(alias), "dataset") == os.path.realpath(folders["served"])
    with pytest.raises(AppError, match="no such folder, and not a Hub id"):
        public.AllowedSources.for_server(None, None, allow=["/no/such/folder"])


def test_uploads_are_read_only_from_the_upload_folder(tmp_path):
    uploads = tmp_path / "gradio"
    (uploads / "abc").mkdir(parents=True)
    good = uploads / "abc" / "doc.txt"
    good.write_text("the club won the game .", encoding="utf-8")
    secret = tmp_path / "secret.txt"
    secret.write_text("SECRET", encoding="utf-8")
    (uploads / "abc" / "escape.txt").symlink_to(secret)
    settings = public.PublicSettings(public.AllowedSources(), upload_folder=str(uploads), max_uploads=2,
                                     max_upload_bytes=100)
    assert backend.parse_documents("", [str(good)], public=settings) == ["the club won the game ."]
    for name in (str(secret), str(uploads / "abc" / "escape.txt"), f"{uploads}/../secret.txt", "/etc/passwd"):
        with nothing_read(), pytest.raises(AppError, match="not a file uploaded to this app"):
            backend.parse_documents("", [name], public=settings)
    with nothing_read(), pytest.raises(AppError, match="at most 2 uploads"):
        backend.parse_documents("", [str(good)] * 3, public=settings)
    big = uploads / "abc" / "big.txt"
    big.write_text("x" * 101, encoding="utf-8")
    with nothing_read(), pytest.raises(AppError, match="at most 100 at once"):
        backend.parse_documents("", [str(big)], public=settings)
    assert backend.parse_documents("", [str(secret)]) == ["SECRET"]  # on the user's own machine: any file


def test_the_limits_agree_with_what_the_app_scores():
    assert public.MAX_UPLOADS == backend.MAX_DOCUMENTS
    assert public.MAX_UPLOAD_BYTES == 4 * backend.MAX_CHARACTERS  # UTF-8: at most 4 bytes a character
    assert public.MAX_REQUEST_BYTES >= 12 * backend.MAX_CHARACTERS  # every character escaped in JSON
    with pytest.raises(ValueError, match="queue_size must be positive"):
        public.PublicSettings(public.AllowedSources(), upload_folder="/tmp", queue_size=0)


@pytest.fixture(scope="module")
def model(tiny_qbert_dir):
    return backend.load_model(str(tiny_qbert_dir))


DOCUMENTS = "the team won the game .\nthe coach of the club .\n---\nthe museum of art and history ."


def test_a_request_past_its_time_limit_stops_with_a_message(model):
    documents = backend.parse_documents(DOCUMENTS, sentences_per_line=True)
    with public.time_limit(None):
        assert backend.summarize(model, "club", documents).result["summary"]
    with public.time_limit(0), pytest.raises(public.RequestTooLong, match="went past 0 s"):
        backend.summarize(model, "club", documents)  # stopped at the model's first batch
    assert backend.summarize(model, "club", documents).result["summary"]  # the limit ends with its block
    settings = public.PublicSettings(public.AllowedSources(), upload_folder="/tmp", request_seconds=1e-9)
    handlers = ui.AppHandlers(model, public=settings)
    summary, _, _, status = handlers.summarize("club", DOCUMENTS, None, True, 250, "auto", 0.7, 300, None)
    assert summary == "" and status.startswith("**Problem:** this request went past") and "\n" not in status


def test_public_launch_and_queue_options_are_bounded(model, folders):
    dataset = backend.load_dataset(str(folders["served"]))
    local = ui.AppHandlers(model, dataset)
    assert ui.queue_options(local) == {"default_concurrency_limit": 1, "max_size": None}
    assert ui.launch_options(local) == {"allowed_paths": [str(folders["served"].resolve())]}
    settings = public.PublicSettings(public.AllowedSources([], [str(folders["served"])]), upload_folder="/tmp")
    served = ui.AppHandlers(model, dataset, public=settings)
    assert ui.queue_options(served) == {"default_concurrency_limit": 1, "max_size": public.QUEUE_SIZE}
    options = ui.launch_options(served)
    assert options["allowed_paths"] == [str(Path(os.path.realpath(folders["served"])) / "figures")]
    assert options["max_file_size"] == public.MAX_UPLOAD_BYTES
    [middleware] = options["app_kwargs"]["middleware"]
    assert middleware.cls is public.RequestLimits


def _limited_app(max_bytes=1000, max_files=2):
    from starlette.applications import Starlette
    from starlette.middleware import Middleware
    from starlette.responses import PlainTextResponse
    from starlette.routing import Route
    from starlette.testclient import TestClient

    async def echo(request):
        body = await request.body()
        return PlainTextResponse(f"{len(body)} {body[:20]!r}")

    app = Starlette(routes=[Route("/upload", echo, methods=["POST", "GET"])],
                    middleware=[Middleware(public.RequestLimits, max_bytes=max_bytes, max_files=max_files)])
    return TestClient(app)


def test_requests_over_the_limits_are_refused_before_the_app_reads_them():
    client = _limited_app()
    assert client.post("/upload", content=b"x" * 1000).text == "1000 b'xxxxxxxxxxxxxxxxxxxx'"  # handed on whole
    over = client.post("/upload", content=b"x" * 1001)
    assert over.status_code == 413 and "at most 1,000" in over.text and "\n" not in over.text.strip()
    streamed = client.post("/upload", content=iter([b"x" * 600, b"x" * 600]))  # no Content-Length: counted
    assert streamed.status_code == 413
    files = [("files", (f"{k}.txt", b"a")) for k in range(3)]
    assert client.post("/upload", files=files[:2]).status_code == 200
    refused = client.post("/upload", files=files)
    assert refused.status_code == 413 and "3 files" in refused.text and "at most 2" in refused.text
    assert client.get("/upload").status_code == 200


def test_the_space_is_always_served_as_public():
    from trainer_scripts.app.space import space_files

    app = space_files("org/demo", "org/qbert", "org/wikiref")["app.py"].decode()
    assert "public=True" in app and "allow=ALLOW" in app


def test_a_bad_allow_entry_stops_the_command_in_one_line(capsys):
    from trainer_scripts.cli import main

    assert main(["app", "--host", "0.0.0.0", "--allow", "/no/such/folder", "--quiet"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "/no/such/folder: no such folder, and not a Hub id" in err[0], err


# ---- served to others: --host 0.0.0.0 in a loopback-only namespace, driven through gradio_client --------------------

PORT = 7860  # the namespace is fresh: nothing else listens in it
VISITOR_ENV = {key: value for key, value in os.environ.items() if not key.lower().endswith("_proxy")}
VISITOR_ENV.update({"NO_PROXY": "127.0.0.1,localhost", "HF_HUB_OFFLINE": "1", "GRADIO_ANALYTICS_ENABLED": "False",
                    "PYTHONPATH": str(ROOT)})


@pytest.fixture(scope="module")
def public_app(tiny_qbert_dir, tiny_wikiref, duc_years):
    """`wikiref app --host 0.0.0.0 --model … --dataset … --allow DUC2007` in a network namespace holding only `lo`;
    yields the server (to run visitors in its namespace) and what it serves."""
    reason = loopback_namespace.unavailable()
    if reason:
        pytest.skip(f"the app is served to others only inside a loopback-only network namespace: {reason}")
    if not WIKIREF.is_file():
        pytest.skip("the wikiref script is not installed next to this Python")
    command = [str(WIKIREF), "app", "--model", str(tiny_qbert_dir), "--dataset", str(tiny_wikiref), "--allow",
               duc_years[2007], "--host", "0.0.0.0", "--port", str(PORT)]
    with loopback_namespace.LoopbackServer(command, env=VISITOR_ENV) as server:
        line = server.wait_for("serving on ", timeout=300)
        assert line.startswith(f"serving on http://0.0.0.0:{PORT}/"), line
        assert any("served to others" in text for text in server.output), server.tail()
        yield {"server": server, "url": f"http://127.0.0.1:{PORT}/", "dataset": str(tiny_wikiref),
               "allowed": duc_years[2007], "hidden": duc_years[2006], "model": str(tiny_qbert_dir)}


def visit(app, script: str, *arguments, timeout: float = 300) -> dict:
    """Run ``script`` (Python; it prints one JSON line last) as a visitor in the server's namespace."""
    done = app["server"].run([sys.executable, "-c", script, app["url"], *arguments], timeout=timeout, env=VISITOR_ENV)
    assert done.returncode == 0, f"visitor failed:\n{done.stderr[-3000:]}\nserver:\n{app['server'].tail()}"
    return json.loads(done.stdout.strip().splitlines()[-1])


LOAD_EVERYTHING = r'''
import json, sys, time
from gradio_client import Client
url, plan = sys.argv[1], json.loads(sys.argv[2])
client = Client(url, verbose=False)
out = {"model": {}, "dataset": {}, "seconds": {}}
for box, api in (("model", "/load_model"), ("dataset", "/load_dataset")):
    for name, value in plan["refused"].items():
        start = time.monotonic()
        out[box][name] = client.predict(value, api_name=api)[-1]
        out["seconds"][f"{box} {name}"] = time.monotonic() - start
out["allowed"] = client.predict(plan["allowed"], api_name="/load_dataset")[0]
out["reloaded"] = client.predict(plan["reload"], api_name="/load_dataset")[-1]
out["search"] = client.predict("train", "", 1, api_name="/search")[1]
print(json.dumps(out))
'''


@pytest.fixture(scope="module")
def visitor_loads(public_app):
    dataset = public_app["dataset"]
    refused = {"root": "/", "etc": "/etc", "up": "../..", "hidden DUC year": public_app["hidden"],
               "dot-dot": f"{public_app['allowed']}/../{Path(public_app['hidden']).name}",
               "hub id": "nobody/any-dataset", "the model in the dataset box": public_app["model"]}
    plan = {"refused": refused, "allowed": f"{public_app['allowed']}/data/..", "reload": dataset}
    return refused, visit(public_app, LOAD_EVERYTHING, json.dumps(plan), timeout=240)


@pytest.mark.parametrize("name", ["root", "etc", "up", "hidden DUC year", "dot-dot", "hub id"])
@pytest.mark.parametrize("box", ["model", "dataset"])
def test_served_the_boxes_refuse_any_other_path_or_hub_id_in_one_line(visitor_loads, box, name):
    refused, seen = visitor_loads
    status = seen[box][name]
    assert status.startswith("**Problem:** ") and REFUSED in status and "\n" not in status, status
    assert refused[name] in status and f"its {box} box loads only" in status
    assert seen["seconds"][f"{box} {name}"] < 60  # refused at once, not after a walk of the file system


def test_served_the_allowed_entries_load_and_nothing_else_replaced_them(visitor_loads, public_app):
    _, seen = visitor_loads
    assert REFUSED in seen["dataset"]["the model in the dataset box"]
    assert os.path.realpath(public_app["allowed"]) in seen["allowed"] and "duc" in seen["allowed"]  # --allow
    assert seen["reloaded"].startswith("loaded ") and seen["search"] == "page 1 of 1"


LIMITS = r'''
import json, socket, sys
import httpx
from gradio_client import Client, handle_file
url, plan = sys.argv[1], json.loads(sys.argv[2])
api = url.rstrip("/") + "/gradio_api"
out = {}
with httpx.Client(timeout=120) as http:
    # a server file named as if it had been uploaded
    data = ["club", "", [{"path": plan["secret"], "meta": {"_type": "gradio.FileData"}}], True, 250, "auto", 0.7, 300,
            None]
    event = http.post(api + "/call/summarize", json={"data": data}).json()["event_id"]
    out["server_file"] = http.get(api + f"/call/summarize/{event}").text
    big = http.post(api + "/upload", files=[("files", ("big.txt", b"a" * (plan["max_file"] + 1)))])
    out["big_file"] = [big.status_code, big.text]
    many = http.post(api + "/upload", files=[("files", (f"{k}.txt", b"a")) for k in range(plan["max_files"] + 1)])
    out["many_files"] = [many.status_code, many.text]
# a body declared over the limit: answered from its headers, before any of it is sent
with socket.create_connection(("127.0.0.1", int(url.split(":")[2].strip("/"))), timeout=60) as raw:
    raw.sendall(b"POST /gradio_api/upload HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: multipart/form-data; "
                b"boundary=x\r\nContent-Length: %d\r\n\r\n" % (plan["max_request"] + 1))
    reply = b""
    while b"\r\n\r\n" not in reply:
        chunk = raw.recv(4096)
        if not chunk:
            break
        reply += chunk
    out["big_request"] = reply.split(b"\r\n")[0].decode()
client = Client(url, verbose=False)
summary, _, _, status = client.predict("club", "", [handle_file(plan["upload"])], True, 250, "auto", 0.7, 300, None,
                                       api_name="/summarize")
out["uploaded"] = [summary, status]
print(json.dumps(out))
'''


def test_served_uploads_are_bounded_and_only_uploads_are_read(public_app, tmp_path):
    secret = tmp_path / "secret.txt"
    secret.write_text("SECRET-7f3a the museum of art .", encoding="utf-8")
    upload = tmp_path / "mine.txt"
    upload.write_text("the team won the game .\nthe coach of the club .", encoding="utf-8")
    plan = {"secret": str(secret), "upload": str(upload), "max_file": public.MAX_UPLOAD_BYTES,
            "max_files": public.MAX_UPLOADS, "max_request": public.MAX_REQUEST_BYTES}
    seen = visit(public_app, LIMITS, json.dumps(plan), timeout=240)
    assert "event: error" in seen["server_file"] and "SECRET" not in seen["server_file"], seen["server_file"]
    assert seen["big_file"][0] == 413 and "maximum allowed size" in seen["big_file"][1], seen["big_file"]
    assert seen["many_files"][0] == 413 and f"at most {public.MAX_UPLOADS}" in seen["many_files"][1]
    assert seen["big_request"].split()[1] == "413", seen["big_request"]
    summary, status = seen["uploaded"]
    assert summary and "sentences chosen" in status, status  # a visitor's own upload still works


CROWD = r'''
import json, sys, time
import httpx
from gradio_client import Client
from gradio_client.utils import QueueError
url, count, budget = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
documents = "the team won the game .\nthe coach of the club .\n---\nthe museum of art and history ."
# One client (one session) per visitor, as a crowd of browsers arrives. One client submitting every job shares one
# event stream among them, and gradio_client 2.7 cancels a job it registers on that stream just as the server closes
# it (the session's last event done): a CancelledError that no server could prevent.
visitors = [Client(url, verbose=False, max_workers=4) for _ in range(count)]
start = time.monotonic()
jobs = [visitor.submit("club", documents, None, True, 250, "auto", 0.7, 300, None, api_name="/summarize")
        for visitor in visitors]
outcomes = []
for job in jobs:
    try:
        summary, _, _, status = job.result(timeout=max(1.0, budget - (time.monotonic() - start)))
        outcomes.append("summary" if summary and "sentences chosen" in status else f"other: {status}")
    except QueueError as error:
        outcomes.append(f"queue: {error}")
    except Exception as error:
        outcomes.append(f"error: {type(error).__name__}: {error}")
seconds = time.monotonic() - start
page = httpx.get(url, timeout=60)
rows, pages, _ = Client(url, verbose=False).predict("train", "", 1, api_name="/search")
print(json.dumps({"outcomes": outcomes, "seconds": seconds, "page": [page.status_code, "gradio" in page.text.lower()],
                  "search": [len(rows["data"]), pages]}))
'''


def test_served_a_crowd_gets_summaries_or_the_queues_message_and_the_page_still_answers(public_app):
    seen = visit(public_app, CROWD, "40", "240", timeout=300)
    outcomes = seen["outcomes"]
    assert len(outcomes) == 40
    strays = [outcome for outcome in outcomes if outcome != "summary" and not outcome.startswith("queue: Queue is full")]
    assert not strays, strays
    assert outcomes.count("summary") >= 1 and seen["seconds"] < 240
    assert seen["page"] == [200, True] and seen["search"] == [12, "page 1 of 1"]
    print(f"crowd of 40: {outcomes.count('summary')} summaries, {40 - outcomes.count('summary')} told the queue is "
          f"full, in {seen['seconds']:.1f} s")
