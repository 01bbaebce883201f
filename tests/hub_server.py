"""A small Hugging Face Hub-compatible HTTP server for tests: create, upload to and download from repos on 127.0.0.1.

No pip-installable local Hub accepts pushes, so the tests start this one (stdlib ``http.server`` in a thread; blobs in
a temporary folder, repo histories in memory). It implements what huggingface_hub 2.x (httpx client, with
``HF_HUB_DISABLE_XET=1``), transformers, datasets and evaluate use to publish and load models, datasets and metrics:

=========================================================  ======================================================
``POST /api/repos/create``                                 create a model / dataset / space repo (409 if it exists)
``GET  /api/whoami-v2``                                    a fixed user
``GET  /api/{type}s/{repo}[/revision/{rev}]``              repo info (``sha``, ``siblings``; sizes with ``blobs``)
``GET  /api/{type}s/{repo}/tree/{rev}[/{path}]``           tree listing (``recursive``), one page
``POST /api/{type}s/{repo}/paths-info/{rev}``              info of given paths (form field ``paths``, repeated)
``POST /api/{type}s/{repo}/preupload/{rev}``               upload mode per file: ``lfs`` for binary/large files
``POST /{prefix}{repo}.git/info/lfs/objects/batch``        LFS batch API (basic transfer): upload hrefs
``PUT  /lfs-upload/{sha256}``                              LFS object upload (sha256 and size checked)
``POST /api/{type}s/{repo}/commit/{rev}``                  NDJSON commit: ``file`` (base64), ``lfsFile``, deletions
``HEAD|GET /{prefix}{repo}/resolve/{rev}/{path}``          download with ``ETag``, ``X-Repo-Commit``, length, and
                                                           ``X-Linked-Etag`` / ``X-Linked-Size`` for LFS files;
                                                           ``Range`` requests
=========================================================  ======================================================

``{type}`` is ``model``, ``dataset`` or ``space``; ``{prefix}`` is empty, ``datasets/`` or ``spaces/``. Revisions are
``main`` (the only branch) or a commit sha; anything else gets ``404`` with ``X-Error-Code: RevisionNotFound`` (as
``refs/convert/parquet`` or evaluate's ``v0.4.6`` tag do on a fresh Hub repo). Missing repos and files get the Hub's
``RepoNotFound`` / ``EntryNotFound`` error codes, which the clients turn into their usual exceptions. Authentication
is not checked. Usage::

    with HubServer(tmp_path) as hub:          # hub.url == "http://127.0.0.1:<free port>"
        HfApi(endpoint=hub.url).create_repo("org/name")
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, quote, unquote, urlsplit

REPO_TYPES = ("model", "dataset", "space")
URL_PREFIXES = {"model": "", "dataset": "datasets/", "space": "spaces/"}
LFS_SUFFIXES = (".safetensors", ".bin", ".pt", ".pth", ".parquet", ".arrow", ".png", ".jpg", ".jpeg", ".gz",
                ".zip", ".npy", ".npz", ".h5", ".msgpack", ".onnx", ".pkl", ".model", ".sqlite")
LFS_MIN_SIZE = 10 * 1024 * 1024
GITATTRIBUTES = "".join(f"*{suffix} filter=lfs diff=lfs merge=lfs -text\n" for suffix in LFS_SUFFIXES)


class HubError(Exception):
    """An error response: HTTP status, the Hub's ``X-Error-Code`` and a message."""

    def __init__(self, status: int, code: str | None, message: str):
        super().__init__(message)
        self.status, self.code, self.message = status, code, message


def git_blob_sha(content: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(content) + content).hexdigest()


def lfs_pointer(sha256: str, size: int) -> bytes:
    return f"version https://git-lfs.github.com/spec/v1\noid sha256:{sha256}\nsize {size}\n".encode()


@dataclass(frozen=True)
class Entry:
    """A file in a commit: its content's sha256 (blob store key), size, and whether it is stored with LFS."""

    sha256: str
    size: int
    lfs: bool
    git_oid: str  # sha1 of the git blob: the content, or the LFS pointer file

    def etag(self) -> str:
        return self.sha256 if self.lfs else self.git_oid


@dataclass
class Repo:
    repo_type: str
    repo_id: str
    private: bool
    sdk: str | None = None
    created: str = field(default_factory=lambda: time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime()))
    commits: dict[str, dict[str, Entry]] = field(default_factory=dict)
    history: list[str] = field(default_factory=list)  # commit shas, oldest first; main is the last

    @property
    def head(self) -> str:
        return self.history[-1]

    def files(self, revision: str) -> tuple[str, dict[str, Entry]]:
        sha = self.head if revision == "main" else revision
        if sha not in self.commits:
            raise HubError(404, "RevisionNotFound", f"Invalid rev id: {revision}")
        return sha, self.commits[sha]


class HubStore:
    """Repos (in memory) and blobs (content-addressed files under ``root``), behind one lock."""

    def __init__(self, root: Path):
        self.root = Path(root)
        self.blobs = self.root / "blobs"
        self.blobs.mkdir(parents=True, exist_ok=True)
        self.repos: dict[tuple[str, str], Repo] = {}
        self.lock = threading.RLock()

    # ---- blobs -------------------------------------------------------------------------------------------------

    def put_blob(self, content: bytes) -> str:
        sha256 = hashlib.sha256(content).hexdigest()
        path = self.blobs / sha256
        if not path.exists():
            temporary = path.with_name(sha256 + f".{threading.get_ident()}.tmp")
            temporary.write_bytes(content)
            temporary.replace(path)
        return sha256

    def has_blob(self, sha256: str) -> bool:
        return (self.blobs / sha256).is_file()

    def blob_path(self, sha256: str) -> Path:
        return self.blobs / sha256

    # ---- repos -------------------------------------------------------------------------------------------------

    def repo(self, repo_type: str, repo_id: str) -> Repo:
        with self.lock:
            repo = self.repos.get((repo_type, repo_id))
        if repo is None:
            raise HubError(404, "RepoNotFound", f"Repository not found: {repo_type} {repo_id}")
        return repo

    def create(self, repo_type: str, repo_id: str, private: bool, sdk: str | None) -> Repo:
        with self.lock:
            if (repo_type, repo_id) in self.repos:
                raise HubError(409, None, f"You already created this {repo_type} repo")
            repo = Repo(repo_type, repo_id, private, sdk)
            self.repos[(repo_type, repo_id)] = repo
            self._commit(repo, [{"key": "file", "value": {"path": ".gitattributes", "encoding": "base64",
                                                          "content": base64.b64encode(GITATTRIBUTES.encode()).decode()}}],
                         "initial commit")
            return repo

    def commit(self, repo: Repo, revision: str, operations: list[dict[str, Any]]) -> str:
        with self.lock:
            if revision != "main":
                raise HubError(404 if revision not in repo.commits else 400, "RevisionNotFound",
                               f"can only commit to main, not {revision}")
            header = next((op["value"] for op in operations if op.get("key") == "header"), {})
            parent = header.get("parentCommit")
            if parent and parent != repo.head:
                raise HubError(412, None, f"parent commit {parent} is not the head of main ({repo.head})")
            return self._commit(repo, [op for op in operations if op.get("key") != "header"],
                                header.get("summary", ""))

    def _commit(self, repo: Repo, operations: list[dict[str, Any]], summary: str) -> str:
        files = dict(repo.commits[repo.head]) if repo.history else {}
        for operation in operations:
            key, value = operation.get("key"), operation.get("value", {})
            path = value.get("path", "").strip("/")
            if not path:
                raise HubError(400, None, f"commit operation without a path: {operation}")
            if key == "file":
                if value.get("encoding", "base64") != "base64":
                    raise HubError(400, None, f"{path}: unsupported encoding {value.get('encoding')}")
                content = base64.b64decode(value["content"])
                files[path] = Entry(self.put_blob(content), len(content), False, git_blob_sha(content))
            elif key == "lfsFile":
                oid = value.get("oid", "")
                if not self.has_blob(oid):
                    raise HubError(400, None, f"{path}: LFS object {oid} was not uploaded")
                size = self.blob_path(oid).stat().st_size
                files[path] = Entry(oid, size, True, git_blob_sha(lfs_pointer(oid, size)))
            elif key == "deletedFile":
                if files.pop(path, None) is None:
                    raise HubError(404, "EntryNotFound", f"{path}: no such file to delete")
            elif key == "deletedFolder":
                for name in [name for name in files if name.startswith(path + "/")]:
                    del files[name]
            else:
                raise HubError(400, None, f"unknown commit operation {key!r}")
        parent = repo.head if repo.history else ""
        digest = hashlib.sha1(json.dumps([parent, summary, len(repo.history), time.time_ns(),
                                          sorted((name, entry.sha256) for name, entry in files.items())]).encode())
        sha = digest.hexdigest()
        repo.commits[sha] = files
        repo.history.append(sha)
        return sha


def tree_entry(path: str, entry: Entry) -> dict[str, Any]:
    item: dict[str, Any] = {"type": "file", "path": path, "size": entry.size, "oid": entry.git_oid}
    if entry.lfs:
        item["lfs"] = {"oid": entry.sha256, "size": entry.size, "pointerSize": len(lfs_pointer(entry.sha256,
                                                                                             entry.size))}
    return item


def folder_entry(path: str) -> dict[str, Any]:
    return {"type": "directory", "path": path, "oid": hashlib.sha1(path.encode()).hexdigest()}


def folders_of(files: dict[str, Entry]) -> set[str]:
    folders = set()
    for name in files:
        parts = name.split("/")[:-1]
        folders.update("/".join(parts[: i + 1]) for i in range(len(parts)))
    return folders


class HubRequestHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: HubHTTPServer

    def log_message(self, format: str, *args: Any) -> None:
        self.server.requests.append(f"{self.command} {self.path} -> {args[1] if len(args) > 1 else ''}")

    # ---- plumbing ------------------------------------------------------------------------------------------------

    def _body(self) -> bytes:
        return self.body

    def _read_body(self) -> bytes:
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            chunks = []
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass
                    return b"".join(chunks)
                chunks.append(self.rfile.read(size))
                self.rfile.readline()
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length else b""

    def _send(self, status: int, body: bytes = b"", headers: dict[str, str] | None = None,
              content_type: str = "application/json", head: bool = False) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        if "Content-Length" not in (headers or {}):
            self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if not head and body:
            self.wfile.write(body)

    def _json(self, value: Any, status: int = 200, headers: dict[str, str] | None = None) -> None:
        self._send(status, json.dumps(value).encode(), headers)

    def _error(self, error: HubError, head: bool = False) -> None:
        headers = {"X-Error-Message": error.message}
        if error.code:
            headers["X-Error-Code"] = error.code
        self._send(error.status, json.dumps({"error": error.message}).encode(), headers, head=head)

    def _dispatch(self, head: bool = False) -> None:
        try:
            self.body = self._read_body()  # always, so that an error answer leaves the connection usable
            split = urlsplit(self.path)
            parts = [unquote(part) for part in split.path.strip("/").split("/")] if split.path.strip("/") else []
            self.query = parse_qs(split.query)
            self._route(self.command, parts, head)
        except HubError as error:
            self._error(error, head)
        except Exception as error:  # a bug in this server: say so in the response and keep serving
            self.server.errors.append(f"{self.command} {self.path}: {error!r}")
            self._error(HubError(500, None, f"hub test server error: {error!r}"), head)

    do_GET = do_POST = do_PUT = do_DELETE = lambda self: self._dispatch()  # noqa: E731

    def do_HEAD(self) -> None:
        self._dispatch(head=True)

    # ---- routes --------------------------------------------------------------------------------------------------

    def _route(self, method: str, parts: list[str], head: bool) -> None:
        store = self.server.store
        if parts[:2] == ["api", "whoami-v2"]:
            return self._json({"type": "user", "name": "user", "fullname": "Test User", "orgs": [],
                               "auth": {"type": "access_token", "accessToken": {"role": "write"}}})
        if parts[:2] == ["api", "validate-yaml"] and method == "POST":
            return self._validate_yaml(json.loads(self._body() or b"{}").get("content", ""))
        if parts[:3] == ["api", "repos", "create"] and method == "POST":
            return self._create(json.loads(self._body() or b"{}"))
        if parts and parts[0] == "lfs-upload" and method == "PUT" and len(parts) == 2:
            return self._lfs_upload(parts[1])
        if len(parts) >= 4 and parts[0] == "api" and parts[1].rstrip("s") in REPO_TYPES and parts[1].endswith("s"):
            repo = store.repo(parts[1][:-1], f"{parts[2]}/{parts[3]}")
            return self._api(method, repo, parts[4:])
        # /{prefix}{org}/{name}.git/info/lfs/objects/batch and /{prefix}{org}/{name}/resolve/{rev}/{path}
        repo_type = "model"
        if parts and parts[0] in ("datasets", "spaces"):
            repo_type, parts = parts[0][:-1], parts[1:]
        if len(parts) >= 3 and parts[1].endswith(".git") and parts[2:] == ["info", "lfs", "objects", "batch"]:
            repo = store.repo(repo_type, f"{parts[0]}/{parts[1][:-4]}")
            return self._lfs_batch(repo, json.loads(self._body() or b"{}"))
        if len(parts) >= 5 and parts[2] == "resolve" and method in ("GET", "HEAD"):
            return self._resolve(store.repo(repo_type, f"{parts[0]}/{parts[1]}"), parts[3], "/".join(parts[4:]),
                                 head)
        raise HubError(404, None, f"hub test server: no route for {method} {self.path}")

    def _api(self, method: str, repo: Repo, rest: list[str]) -> None:
        if not rest and method == "GET":
            return self._info(repo, "main")
        if len(rest) >= 2 and rest[0] == "revision" and method == "GET":
            return self._info(repo, "/".join(rest[1:]))
        if len(rest) >= 2 and rest[0] == "tree" and method == "GET":
            return self._tree(repo, rest[1], "/".join(rest[2:]))
        if len(rest) >= 2 and rest[0] == "paths-info" and method == "POST":
            return self._paths_info(repo, "/".join(rest[1:]))
        if len(rest) >= 2 and rest[0] == "preupload" and method == "POST":
            return self._preupload(repo, "/".join(rest[1:]), json.loads(self._body() or b"{}"))
        if len(rest) >= 2 and rest[0] == "commit" and method == "POST":
            return self._commit(repo, "/".join(rest[1:]))
        raise HubError(404, None, f"hub test server: no route for {method} {self.path}")

    def _repo_url(self, repo: Repo) -> str:
        return f"{self.server.url}/{URL_PREFIXES[repo.repo_type]}{repo.repo_id}"

    def _create(self, payload: dict[str, Any]) -> None:
        repo_type = payload.get("type") or "model"
        if repo_type not in REPO_TYPES:
            raise HubError(400, None, f"unsupported repo type {repo_type!r}")
        if repo_type == "space" and not payload.get("sdk"):
            raise HubError(400, None, "a space needs an sdk")
        name, organization = payload.get("name"), payload.get("organization") or "user"
        if not name or not re.fullmatch(r"[\w.-]+", name) or not re.fullmatch(r"[\w.-]+", organization):
            raise HubError(400, None, f"invalid repo name {organization}/{name}")
        repo_id = f"{organization}/{name}"
        url = f"{self.server.url}/{URL_PREFIXES[repo_type]}{repo_id}"
        try:
            self.server.store.create(repo_type, repo_id, payload.get("visibility") == "private" or
                                     bool(payload.get("private")), payload.get("sdk"))
        except HubError as error:
            if error.status == 409:
                return self._json({"error": error.message, "url": url}, 409)
            raise
        self._json({"url": url, "name": repo_id, "id": repo_id})

    def _validate_yaml(self, content: str) -> None:
        match = re.match(r"---\r?\n(.*?)\r?\n---\r?\n", content, re.DOTALL)
        if match:
            import yaml  # installed with huggingface_hub

            try:
                metadata = yaml.safe_load(match.group(1))
            except yaml.YAMLError as error:
                return self._json({"errors": [{"message": f"invalid YAML: {error}"}]}, 400)
            if metadata is not None and not isinstance(metadata, dict):
                return self._json({"errors": [{"message": "the YAML metadata must be a mapping"}]}, 400)
        self._json({"errors": [], "warnings": []})

    def _info(self, repo: Repo, revision: str) -> None:
        sha, files = repo.files(revision)
        blobs = self.query.get("blobs", ["false"])[0].lower() in ("1", "true")
        siblings = []
        for name in sorted(files):
            sibling: dict[str, Any] = {"rfilename": name}
            if blobs:
                entry = files[name]
                sibling.update(size=entry.size, blobId=entry.git_oid)
                if entry.lfs:
                    sibling["lfs"] = {"sha256": entry.sha256, "size": entry.size,
                                      "pointerSize": len(lfs_pointer(entry.sha256, entry.size))}
            siblings.append(sibling)
        author = repo.repo_id.split("/")[0]
        info: dict[str, Any] = {"_id": hashlib.sha1(repo.repo_id.encode()).hexdigest()[:24], "id": repo.repo_id,
                                "author": author, "sha": sha, "lastModified": repo.created, "createdAt": repo.created,
                                "private": repo.private, "gated": False, "disabled": False, "downloads": 0,
                                "likes": 0, "tags": [], "siblings": siblings}
        if repo.repo_type == "model":
            info["modelId"] = repo.repo_id
        if repo.repo_type == "space":
            info.update(sdk=repo.sdk, subdomain=repo.repo_id.replace("/", "-"),
                        runtime={"stage": "NO_APP_FILE", "hardware": {"current": None, "requested": None}})
        self._json(info)

    def _tree(self, repo: Repo, revision: str, path: str) -> None:
        _, files = repo.files(revision)
        path = path.strip("/")
        recursive = self.query.get("recursive", ["false"])[0].lower() in ("1", "true")
        prefix = f"{path}/" if path else ""
        folders = folders_of(files)
        if path and path not in folders:
            raise HubError(404, "EntryNotFound", f"{path}: no such folder")
        items = []
        for folder in sorted(folders):
            if folder.startswith(prefix) and (recursive or "/" not in folder[len(prefix):]):
                items.append(folder_entry(folder))
        for name in sorted(files):
            if name.startswith(prefix) and (recursive or "/" not in name[len(prefix):]):
                items.append(tree_entry(name, files[name]))
        self._json(items)

    def _paths_info(self, repo: Repo, revision: str) -> None:
        body = self._body().decode()
        if self.headers.get("Content-Type", "").startswith("application/json"):
            paths = json.loads(body or "{}").get("paths", [])
        else:
            paths = parse_qs(body).get("paths", [])
        _, files = repo.files(revision)
        folders = folders_of(files)
        items = []
        for path in paths:
            path = path.strip("/")
            if path in files:
                items.append(tree_entry(path, files[path]))
            elif path in folders:
                items.append(folder_entry(path))
        self._json(items)

    def _preupload(self, repo: Repo, revision: str, payload: dict[str, Any]) -> None:
        _, files = repo.files(revision)
        result = []
        for item in payload.get("files", []):
            path, size = item["path"], int(item.get("size", 0))
            sample = base64.b64decode(item.get("sample", ""))
            lfs = size >= LFS_MIN_SIZE or path.lower().endswith(LFS_SUFFIXES) or b"\0" in sample
            existing = files.get(path)
            result.append({"path": path, "uploadMode": "lfs" if lfs else "regular", "shouldIgnore": False,
                           "oid": existing.git_oid if existing else None})
        self._json({"files": result, "commitOid": repo.head})

    def _lfs_batch(self, repo: Repo, payload: dict[str, Any]) -> None:
        if payload.get("operation") != "upload":
            raise HubError(400, None, "only the upload operation is supported")
        objects = []
        for item in payload.get("objects", []):
            oid, size = item["oid"], int(item["size"])
            entry: dict[str, Any] = {"oid": oid, "size": size, "authenticated": True}
            if not self.server.store.has_blob(oid):
                entry["actions"] = {"upload": {"href": f"{self.server.url}/lfs-upload/{oid}?size={size}",
                                               "header": {}}}
            objects.append(entry)
        self._send(200, json.dumps({"transfer": "basic", "objects": objects, "hash_algo": "sha256"}).encode(),
                   content_type="application/vnd.git-lfs+json")

    def _lfs_upload(self, oid: str) -> None:
        content = self._body()
        if hashlib.sha256(content).hexdigest() != oid:
            raise HubError(400, None, f"LFS upload: content does not match sha256 {oid}")
        expected = self.query.get("size")
        if expected and int(expected[0]) != len(content):
            raise HubError(400, None, f"LFS upload {oid}: {len(content)} bytes, expected {expected[0]}")
        self.server.store.put_blob(content)
        self._send(200)

    def _commit(self, repo: Repo, revision: str) -> None:
        operations = [json.loads(line) for line in self._body().decode().splitlines() if line.strip()]
        sha = self.server.store.commit(repo, revision, operations)
        self._json({"success": True, "commitOid": sha, "commitUrl": f"{self._repo_url(repo)}/commit/{sha}",
                    "pullRequestUrl": None, "hookOutput": ""})

    def _resolve(self, repo: Repo, revision: str, path: str, head: bool) -> None:
        try:
            sha, files = repo.files(revision)
        except HubError as error:
            raise HubError(404, "RevisionNotFound", error.message) from None
        entry = files.get(path)
        if entry is None:
            raise HubError(404, "EntryNotFound", f"{path}: entry not found at {revision}")
        headers = {"ETag": f'"{entry.etag()}"', "X-Repo-Commit": sha, "Accept-Ranges": "bytes",
                   "Content-Disposition": f"attachment; filename*=UTF-8''{quote(path.rsplit('/', 1)[-1])}"}
        if entry.lfs:
            headers.update({"X-Linked-Etag": f'"{entry.sha256}"', "X-Linked-Size": str(entry.size)})
        content = self.server.store.blob_path(entry.sha256).read_bytes()
        status = 200
        match = re.fullmatch(r"bytes=(\d*)-(\d*)", self.headers.get("Range", "").strip())
        if match and (match.group(1) or match.group(2)):
            if match.group(1):
                start = int(match.group(1))
                end = int(match.group(2)) if match.group(2) else len(content) - 1
            else:
                start, end = max(0, len(content) - int(match.group(2))), len(content) - 1
            end = min(end, len(content) - 1)
            if start >= len(content) and len(content):
                headers["Content-Range"] = f"bytes */{len(content)}"
                return self._send(416, b"", headers, head=head)
            headers["Content-Range"] = f"bytes {start}-{end}/{len(content)}"
            content, status = content[start:end + 1], 206
        self._send(status, content, headers, content_type="application/octet-stream", head=head)


class HubHTTPServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, store: HubStore):
        super().__init__(("127.0.0.1", 0), HubRequestHandler)
        self.store = store
        self.url = f"http://127.0.0.1:{self.server_address[1]}"
        self.requests: list[str] = []
        self.errors: list[str] = []


class HubServer:
    """The test Hub, started on 127.0.0.1 with a free port; blobs under ``root``. A context manager."""

    def __init__(self, root: str | Path):
        self.store = HubStore(Path(root))
        self._server: HubHTTPServer | None = None
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        if self._server is None:
            raise RuntimeError("the hub server is not started")
        return self._server.url

    @property
    def requests(self) -> list[str]:
        """``"METHOD path -> status"`` of every request served (for debugging a failing test)."""
        return self._server.requests if self._server else []

    @property
    def errors(self) -> list[str]:
        """Exceptions raised by this server's own code while serving (answered with 500)."""
        return self._server.errors if self._server else []

    def start(self) -> HubServer:
        self._server = HubHTTPServer(self.store)
        self._thread = threading.Thread(target=self._server.serve_forever, name="hub-server", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._thread.join(timeout=5)

    def __enter__(self) -> HubServer:
        return self.start()

    def __exit__(self, *exc_info: Any) -> None:
        self.stop()

    def files(self, repo_id: str, repo_type: str = "model", revision: str = "main") -> dict[str, bytes]:
        """The files of a repo at a revision, ``{path: content}``."""
        _, files = self.store.repo(repo_type, repo_id).files(revision)
        return {name: self.store.blob_path(entry.sha256).read_bytes() for name, entry in files.items()}

    def lfs_files(self, repo_id: str, repo_type: str = "model") -> list[str]:
        """The paths of a repo's head commit stored with LFS."""
        _, files = self.store.repo(repo_type, repo_id).files("main")
        return sorted(name for name, entry in files.items() if entry.lfs)
