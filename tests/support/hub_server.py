"""A small Hugging Face Hub stand-in for the tests: the real huggingface_hub client (and
Keras's ``hf://`` support) talk to it over HTTP on 127.0.0.1.

It implements exactly the endpoints huggingface_hub 2.4.0 calls for create_repo,
upload_folder, hf_hub_download, snapshot_download and list_repo_files (as that client's
``HfApi`` and ``file_download`` modules build their URLs), in memory:

    POST /api/repos/create                         create (409 if it exists)
    POST /api/validate-yaml                        model-card front matter check
    POST /api/models/<repo>/preupload/<rev>        every file uploads as "regular"
    POST /api/models/<repo>/commit/<rev>           NDJSON: header, file (base64), deleted*
    GET  /api/models/<repo>[/revision/<rev>]       repo info: sha + siblings
    GET  /api/models/<repo>/tree/<rev>[/<path>]    listing (?recursive), git blob oids
    HEAD|GET /<repo>/resolve/<rev>/<path>          file + X-Repo-Commit, ETag, length
    GET  /api/agent-harnesses                      (asked once per process for the
                                                   user agent) an empty registry

Every commit is an immutable snapshot with a unique 40-hex id; ``main`` follows the
latest. Requests it does not implement get a 501 and are recorded in ``unhandled`` so
a test can assert the client needed nothing else. A new repo starts with one commit
holding ``.gitattributes``, as on the Hub.
"""

from __future__ import annotations

import base64
import hashlib
import itertools
import json
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, unquote, urlsplit

GITATTRIBUTES = b"*.h5 filter=lfs diff=lfs merge=lfs -text\n"


def git_blob_oid(content: bytes) -> str:
    """The git object id of a file (what the Hub reports as a regular file's oid)."""
    return hashlib.sha1(b"blob %d\0" % len(content) + content).hexdigest()


@dataclass
class Repo:
    commits: dict[str, dict[str, bytes]] = field(default_factory=dict)  # sha -> files
    branches: dict[str, str] = field(default_factory=dict)  # "main" -> sha

    def resolve(self, revision: str) -> str | None:
        if revision in self.branches:
            return self.branches[revision]
        return revision if revision in self.commits else None


class HubState:
    """All repos, guarded by one lock (the server is threaded)."""

    def __init__(self) -> None:
        self.repos: dict[str, Repo] = {}
        self.lock = threading.Lock()
        self.requests: list[tuple[str, str, str | None]] = []  # method, path, auth header
        self.unhandled: list[str] = []
        self._counter = itertools.count()

    def commit(self, repo: Repo, branch: str, files: dict[str, bytes], message: str) -> str:
        parent = repo.branches.get(branch, "")
        listing = sorted((path, git_blob_oid(data)) for path, data in files.items())
        seed = json.dumps([parent, listing, message, next(self._counter)]).encode()
        sha = hashlib.sha1(seed).hexdigest()
        repo.commits[sha] = dict(files)
        repo.branches[branch] = sha
        return sha


class _Handler(BaseHTTPRequestHandler):
    server: HubServer

    def log_message(self, *args) -> None:  # keep test output quiet
        pass

    # ----------------------------------------------------------------- plumbing
    def _reply(
        self, status: int, body: bytes | dict | list = b"", headers: dict | None = None
    ) -> None:
        if not isinstance(body, bytes):
            body = json.dumps(body).encode()
            headers = {"Content-Type": "application/json", **(headers or {})}
        self.send_response(status)
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def _error(self, status: int, code: str, headers: dict | None = None) -> None:
        self._reply(status, {"error": code}, {"X-Error-Code": code, **(headers or {})})

    def _body(self) -> bytes:
        return self.rfile.read(int(self.headers.get("Content-Length", 0)))

    def _route(self) -> None:
        state = self.server.state
        url = urlsplit(self.path)
        parts = url.path.strip("/").split("/")  # still %-quoted: a quoted "/" stays in one part
        query = parse_qs(url.query)
        with state.lock:
            state.requests.append((self.command, self.path, self.headers.get("Authorization")))
            handled = self._dispatch(state, parts, query)
            if not handled:
                state.unhandled.append(f"{self.command} {self.path}")
        if not handled:
            self._reply(501, {"error": f"not implemented: {self.command} {url.path}"})

    do_GET = do_HEAD = do_POST = _route

    def _dispatch(self, state: HubState, parts: list[str], query: dict) -> bool:
        method = self.command
        if method == "POST" and parts == ["api", "repos", "create"]:
            self._create(state, json.loads(self._body()))
        elif method == "GET" and parts == ["api", "agent-harnesses"]:
            self._reply(200, {"standardEnvVars": [], "harnesses": {}})
        elif method == "POST" and parts == ["api", "validate-yaml"]:
            self._body()
            self._reply(200, {"errors": [], "warnings": []})
        elif parts[:2] == ["api", "models"] and len(parts) >= 4:
            repo_id = f"{parts[2]}/{parts[3]}"
            action, rest = (parts[4], parts[5:]) if len(parts) > 4 else ("revision", ["main"])
            repo = state.repos.get(repo_id)
            if repo is None:
                self._error(404, "RepoNotFound")
            elif method == "POST" and action == "preupload":
                self._preupload(repo, unquote(rest[0]), json.loads(self._body()))
            elif method == "POST" and action == "commit":
                self._commit(state, repo, repo_id, unquote(rest[0]), self._body())
            elif method == "GET" and action == "revision":
                self._info(repo, repo_id, unquote(rest[0]))
            elif method == "GET" and action == "tree":
                recursive = query.get("recursive", ["false"])[0].lower() in ("1", "true")
                self._tree(
                    repo, unquote(rest[0]), "/".join(unquote(p) for p in rest[1:]), recursive
                )
            else:
                return False
        elif method in ("GET", "HEAD") and len(parts) >= 5 and parts[2] == "resolve":
            self._resolve(
                state, f"{parts[0]}/{parts[1]}", unquote(parts[3]), unquote("/".join(parts[4:]))
            )
        else:
            return False
        return True

    # ----------------------------------------------------------------- endpoints
    def _create(self, state: HubState, payload: dict) -> None:
        repo_id = f"{payload['organization']}/{payload['name']}"
        if repo_id in state.repos:
            self._reply(
                409, {"error": "You already created this model repo", "url": self._url(repo_id)}
            )
            return
        repo = state.repos[repo_id] = Repo()
        state.commit(repo, "main", {".gitattributes": GITATTRIBUTES}, "initial commit")
        self._reply(200, {"url": self._url(repo_id)})

    def _preupload(self, repo: Repo, revision: str, payload: dict) -> None:
        sha = repo.resolve(revision)
        current = repo.commits.get(sha, {})
        files = []
        for entry in payload["files"]:
            known = current.get(entry["path"])
            files.append(
                {
                    "path": entry["path"],
                    "uploadMode": "regular",
                    "shouldIgnore": False,
                    "oid": git_blob_oid(known) if known is not None else None,
                }
            )
        self._reply(200, {"files": files})

    def _commit(self, state: HubState, repo: Repo, repo_id: str, branch: str, body: bytes) -> None:
        if branch not in repo.branches:
            self._error(404, "RevisionNotFound")
            return
        files = dict(repo.commits[repo.branches[branch]])
        message = ""
        for line in body.splitlines():
            item = json.loads(line)
            key, value = item["key"], item["value"]
            if key == "header":
                message = value["summary"]
            elif key == "file":
                files[value["path"]] = base64.b64decode(value["content"])
            elif key == "deletedFile":
                files.pop(value["path"], None)
            elif key == "deletedFolder":
                prefix = value["path"].rstrip("/") + "/"
                files = {p: d for p, d in files.items() if not p.startswith(prefix)}
            else:  # lfsFile / copies: never requested, since preupload answers "regular"
                self._reply(400, {"error": f"unsupported commit operation {key!r}"})
                return
        sha = state.commit(repo, branch, files, message)
        self._reply(200, {"commitUrl": f"{self._url(repo_id)}/commit/{sha}", "commitOid": sha})

    def _info(self, repo: Repo, repo_id: str, revision: str) -> None:
        sha = repo.resolve(revision)
        if sha is None:
            self._error(404, "RevisionNotFound")
            return
        siblings = [{"rfilename": path} for path in sorted(repo.commits[sha])]
        self._reply(
            200,
            {"id": repo_id, "modelId": repo_id, "sha": sha, "private": False, "siblings": siblings},
        )

    def _tree(self, repo: Repo, revision: str, folder: str, recursive: bool) -> None:
        sha = repo.resolve(revision)
        if sha is None:
            self._error(404, "RevisionNotFound")
            return
        prefix = f"{folder.strip('/')}/" if folder.strip("/") else ""
        entries: dict[str, dict] = {}
        for path, data in sorted(repo.commits[sha].items()):
            if not path.startswith(prefix):
                continue
            relative = path[len(prefix) :].split("/")
            for depth in range(1, len(relative)):  # the folders on the way
                sub = prefix + "/".join(relative[:depth])
                if recursive or depth == 1:
                    entries.setdefault(sub, {"type": "directory", "oid": "0" * 40, "path": sub})
            if recursive or len(relative) == 1:
                entries[path] = {
                    "type": "file",
                    "oid": git_blob_oid(data),
                    "size": len(data),
                    "path": path,
                }
        self._reply(200, list(entries.values()))

    def _resolve(self, state: HubState, repo_id: str, revision: str, path: str) -> None:
        repo = state.repos.get(repo_id)
        if repo is None:
            self._error(404, "RepoNotFound")
            return
        sha = repo.resolve(revision)
        if sha is None:
            self._error(404, "RevisionNotFound")
            return
        data = repo.commits[sha].get(path)
        if data is None:
            self._error(404, "EntryNotFound", {"X-Repo-Commit": sha})
            return
        headers = {
            "X-Repo-Commit": sha,
            "ETag": f'"{git_blob_oid(data)}"',
            "Content-Type": "application/octet-stream",
        }
        self._reply(200, data, headers)

    def _url(self, repo_id: str) -> str:
        return f"{self.server.url}/{repo_id}"


class HubServer(ThreadingHTTPServer):
    """``with HubServer() as hub: ...``: serves on a free port of 127.0.0.1 (or ``port``)
    in a thread."""

    daemon_threads = True

    def __init__(self, port: int = 0) -> None:
        super().__init__(("127.0.0.1", port), _Handler)
        self.state = HubState()
        self.url = f"http://127.0.0.1:{self.server_address[1]}"
        self._thread = threading.Thread(target=self.serve_forever, args=(0.05,), daemon=True)

    def __enter__(self) -> HubServer:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.shutdown()
        self.server_close()
        self._thread.join()

    # ------------------------------------------------------------ test helpers
    def files(self, repo_id: str, revision: str = "main") -> dict[str, bytes]:
        """The files of a repo at a revision, as stored."""
        repo = self.state.repos[repo_id]
        return repo.commits[repo.resolve(revision)]


def main(argv: list[str] | None = None) -> int:
    """``python -m tests.support.hub_server [--port N]``: serve an empty in-memory Hub on
    127.0.0.1 until interrupted, for dry runs of ``keras-gated publish`` / ``pull``
    (from the source checkout's root). Point a client at it with the variables printed."""
    import argparse
    import time

    parser = argparse.ArgumentParser(
        prog="python -m tests.support.hub_server",
        description="A local Hub-protocol server (in memory) for publish/pull dry runs.")
    parser.add_argument("--port", type=int, default=0,
                        help="port on 127.0.0.1 (default: a free one)")
    args = parser.parse_args(argv)
    with HubServer(args.port) as server:
        print(f"serving a local Hub at {server.url} (Ctrl-C stops it; nothing is kept)")
        print(f"in another shell: export HF_ENDPOINT={server.url} HF_TOKEN=dry-run "
              "HF_HOME=$(mktemp -d)", flush=True)
        try:
            while True:
                time.sleep(3600)
        except KeyboardInterrupt:
            pass
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
