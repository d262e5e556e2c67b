"""A Hugging Face Hub on 127.0.0.1 for the push tests: the endpoints huggingface_hub's HfApi calls to create a dataset
repository, look it up, check a card's YAML, commit (preupload, ndjson commit), store large files (the LFS batch API
and its PUTs) and tag, as huggingface_hub 1.x sends them (hf_api.py, _commit_api.py, lfs.py). Point a command at it
with its env(): HF_ENDPOINT, a token, and HF_HUB_DISABLE_XET=1 (with hf_xet, huggingface_hub sends large files to
Xet storage, a protocol of its own that this server does not speak; the preupload, commit and tag calls are the
same either way).

It keeps what it was sent, for the tests to read: each repository's files, commits and tags, and every LFS upload
(repository, sha256) in order. fail_upload=(repo_id, n) answers the n-th upload to that repository 507, once (not a
status huggingface_hub retries), as a push cut off halfway."""

import base64
import hashlib
import json
import re
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import yaml

TOKEN = "hf_fake_token_for_tests"
LFS_MIN_SIZE = 10 * 1024 * 1024  # the Hub's rule of thumb: binary files, and text files above 10 MB, go to LFS


def git_blob_sha1(content: bytes) -> str:
    """The oid the Hub gives a regular file (git's blob hash): what huggingface_hub compares a local file with."""
    return hashlib.sha1(b"blob %d\0" % len(content) + content).hexdigest()


@dataclass
class Repo:
    private: bool
    files: dict[str, tuple[str, bytes]] = field(default_factory=dict)  # path -> (upload mode, content)
    commits: list[dict] = field(default_factory=list)  # {"oid", "summary", "paths"}
    tags: dict[str, str] = field(default_factory=dict)
    lfs: dict[str, bytes] = field(default_factory=dict)  # sha256 -> content, stored whether committed or not

    @property
    def head(self) -> str:
        return self.commits[-1]["oid"] if self.commits else "0" * 40

    def remote_oid(self, path: str) -> str | None:
        if path not in self.files:
            return None
        mode, content = self.files[path]
        return hashlib.sha256(content).hexdigest() if mode == "lfs" else git_blob_sha1(content)


class FakeHub:
    def __init__(self, fail_upload: tuple[str, int] | None = None):
        self.repos: dict[str, Repo] = {}
        self.uploads: list[tuple[str, str]] = []  # (repo_id, sha256) of every LFS upload stored, in order
        self.fail_upload = fail_upload
        self._puts: dict[str, int] = {}
        self.lock = threading.Lock()
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_port}"
        self._thread = threading.Thread(target=self.server.serve_forever, name="fake-hub", daemon=True)

    def __enter__(self) -> "FakeHub":
        self._thread.start()
        return self

    def __exit__(self, *_exc) -> None:
        self.server.shutdown()
        self.server.server_close()

    def env(self) -> dict[str, str]:
        """What a command's environment needs to push here."""
        return {"HF_ENDPOINT": self.url, "HF_TOKEN": TOKEN, "HF_HUB_OFFLINE": "0", "HF_HUB_DISABLE_XET": "1",
                "HF_HUB_DISABLE_TELEMETRY": "1", "HF_HUB_DISABLE_PROGRESS_BARS": "1"}

    def file(self, repo_id: str, path: str) -> bytes:
        return self.repos[repo_id].files[path][1]


def _handler(hub: FakeHub):
    routes = [
        ("POST", r"/api/repos/create", "create_repo"),
        ("POST", r"/api/validate-yaml", "validate_yaml"),
        ("GET", r"/api/datasets/(?P<repo>[^/]+/[^/]+)(?:/revision/(?P<rev>[^/]+))?", "repo_info"),
        ("POST", r"/api/datasets/(?P<repo>[^/]+/[^/]+)/preupload/(?P<rev>[^/]+)", "preupload"),
        ("POST", r"/api/datasets/(?P<repo>[^/]+/[^/]+)/commit/(?P<rev>[^/]+)", "commit"),
        ("POST", r"/api/datasets/(?P<repo>[^/]+/[^/]+)/tag/(?P<rev>[^/]+)", "create_tag"),
        ("DELETE", r"/api/datasets/(?P<repo>[^/]+/[^/]+)/tag/(?P<tag>[^/]+)", "delete_tag"),
        ("POST", r"/datasets/(?P<repo>[^/]+/[^/]+)\.git/info/lfs/objects/batch", "lfs_batch"),
        ("PUT", r"/lfs-upload/(?P<repo>[^/]+/[^/]+)/(?P<oid>[0-9a-f]{64})", "lfs_put"),
    ]

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # huggingface_hub's client keeps connections open

        def log_message(self, *_args) -> None:
            pass

        def do_GET(self):
            self._route("GET")

        def do_POST(self):
            self._route("POST")

        def do_PUT(self):
            self._route("PUT")

        def do_DELETE(self):
            self._route("DELETE")

        def _route(self, method: str) -> None:
            body = self._body()
            path = self.path.split("?", 1)[0]
            for verb, pattern, name in routes:
                match = re.fullmatch(pattern, path)
                if verb == method and match:
                    if name != "lfs_put" and self.headers.get("authorization") != f"Bearer {TOKEN}":
                        return self._send(401, {"error": "Invalid credentials in Authorization header"})
                    with hub.lock:
                        return getattr(self, name)(body, **match.groupdict())
            self._send(404, {"error": f"fake hub: no route for {method} {path}"})

        def _body(self) -> bytes:
            if self.headers.get("transfer-encoding", "").lower() == "chunked":
                chunks = []
                while (size := int(self.rfile.readline().split(b";")[0], 16)) > 0:
                    chunks.append(self.rfile.read(size))
                    self.rfile.readline()
                while self.rfile.readline() not in (b"\r\n", b"\n", b""):  # trailers
                    pass
                return b"".join(chunks)
            return self.rfile.read(int(self.headers.get("content-length") or 0))

        def _send(self, status: int, payload, headers: dict | None = None) -> None:
            data = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            for key, value in (headers or {}).items():
                self.send_header(key, value)
            self.end_headers()
            self.wfile.write(data)

        def _repo(self, repo_id: str) -> Repo | None:
            repo = hub.repos.get(repo_id)
            if repo is None:
                self._send(404, {"error": "Repository not found"}, {"X-Error-Code": "RepoNotFound"})
            return repo

        def create_repo(self, body: bytes) -> None:
            request = json.loads(body)
            assert request["type"] == "dataset", request
            repo_id = f"{request['organization']}/{request['name']}"
            if repo_id in hub.repos:
                return self._send(409, {"error": "You already created this dataset repo",
                                        "url": f"{hub.url}/datasets/{repo_id}"})
            hub.repos[repo_id] = Repo(private=bool(request.get("private")) or request.get("visibility") == "private")
            self._send(200, {"url": f"{hub.url}/datasets/{repo_id}"})

        def validate_yaml(self, body: bytes) -> None:
            content = json.loads(body)["content"]
            front = re.match(r"---\n(.*?)\n---\n", content, re.S)
            try:
                if front is None:
                    raise yaml.YAMLError("no YAML front matter")
                yaml.safe_load(front.group(1))
            except yaml.YAMLError as err:
                return self._send(400, {"errors": [{"message": str(err)}]})
            self._send(200, {"errors": [], "warnings": []})

        def repo_info(self, body: bytes, repo: str, rev: str | None) -> None:
            if (found := self._repo(repo)) is not None:
                self._send(200, {"id": repo, "sha": found.head, "private": found.private,
                                 "siblings": [{"rfilename": path} for path in sorted(found.files)]})

        def preupload(self, body: bytes, repo: str, rev: str) -> None:
            if (found := self._repo(repo)) is None:
                return
            files = []
            for entry in json.loads(body)["files"]:
                binary = b"\0" in base64.b64decode(entry["sample"])
                files.append({"path": entry["path"], "shouldIgnore": False, "oid": found.remote_oid(entry["path"]),
                              "uploadMode": "lfs" if binary or entry["size"] >= LFS_MIN_SIZE else "regular"})
            self._send(200, {"files": files})

        def lfs_batch(self, body: bytes, repo: str) -> None:
            if (found := self._repo(repo)) is None:
                return
            objects = []
            for entry in json.loads(body)["objects"]:
                answer = {"oid": entry["oid"], "size": entry["size"]}
                if entry["oid"] not in found.lfs:  # stored already: no action, the client skips it
                    answer["actions"] = {"upload": {"href": f"{hub.url}/lfs-upload/{repo}/{entry['oid']}"}}
                objects.append(answer)
            self._send(200, {"transfer": "basic", "objects": objects})

        def lfs_put(self, body: bytes, repo: str, oid: str) -> None:
            hub._puts[repo] = hub._puts.get(repo, 0) + 1
            if hub.fail_upload == (repo, hub._puts[repo]):
                hub.fail_upload = None
                return self._send(507, {"error": "fake hub: this upload fails (a push cut off halfway)"})
            if hashlib.sha256(body).hexdigest() != oid:
                return self._send(400, {"error": "content does not match its sha256"})
            hub.repos[repo].lfs[oid] = body
            hub.uploads.append((repo, oid))
            self._send(200, {})

        def commit(self, body: bytes, repo: str, rev: str) -> None:
            if (found := self._repo(repo)) is None:
                return
            lines = [json.loads(line) for line in body.splitlines() if line.strip()]
            header, operations = lines[0], lines[1:]
            assert header["key"] == "header", header
            changed = {}
            for operation in operations:
                value = operation["value"]
                if operation["key"] == "file":
                    changed[value["path"]] = ("regular", base64.b64decode(value["content"]))
                elif operation["key"] == "lfsFile":
                    if value["oid"] not in found.lfs:
                        return self._send(400, {"error": f"LFS object {value['oid']} of {value['path']} was never "
                                                         "uploaded"})
                    changed[value["path"]] = ("lfs", found.lfs[value["oid"]])
                else:
                    return self._send(400, {"error": f"fake hub: operation {operation['key']} not supported"})
            found.files.update(changed)
            oid = hashlib.sha1(f"{found.head}{sorted(changed)}{len(found.commits)}".encode()).hexdigest()
            found.commits.append({"oid": oid, "summary": header["value"]["summary"], "paths": sorted(changed)})
            self._send(200, {"commitUrl": f"{hub.url}/datasets/{repo}/commit/{oid}", "commitOid": oid,
                             "pullRequestUrl": None})

        def create_tag(self, body: bytes, repo: str, rev: str) -> None:
            if (found := self._repo(repo)) is None:
                return
            tag = json.loads(body)["tag"]
            if tag in found.tags:
                return self._send(409, {"error": f"Tag {tag} already exists"})
            found.tags[tag] = found.head
            self._send(200, {})

        def delete_tag(self, body: bytes, repo: str, tag: str) -> None:
            if (found := self._repo(repo)) is None:
                return
            if found.tags.pop(tag, None) is None:
                return self._send(404, {"error": f"Invalid rev id: {tag}"}, {"X-Error-Code": "RevisionNotFound"})
            self._send(200, {})

    return Handler
