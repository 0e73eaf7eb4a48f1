"""The four scholarly APIs on 127.0.0.1, answering from recorded real responses.

:class:`FakeScholarly` serves ``shared/data/scholarly-api-responses`` (OpenAlex, Crossref,
Semantic Scholar, arXiv) over real HTTP, each API under its own path prefix, so agent processes
reach it through the providers' base-URL override (``CCONDUCTOR_PROVIDER_BASE_URL_<NAME>``, see
``agents.providers.http_config``); :meth:`FakeScholarly.env` gives those variables.

What a request gets:

* a search whose query contains every term of a recorded search's query (``machine learning AND
  public health`` for OpenAlex, ``ecology`` for Crossref, ``turing`` for Semantic Scholar,
  ``testing`` for arXiv) gets the recorded records, up to the page size asked for. OpenAlex
  records that also contain the request's other terms come first (recorded order otherwise), so
  different questions about the recorded topic see different papers first;
* any other search gets no records, in the API's own empty-result shape (arXiv: the recorded
  empty feed);
* a look-up (DOI, arXiv id, paper id) gets the recorded record if there is one, else the API's
  ``404``;
* anything else is a ``404`` and is listed in :attr:`FakeScholarly.unexpected`.

Every request is kept in :attr:`FakeScholarly.requests`. Nothing here reaches the network.
"""

from __future__ import annotations

import contextlib
import json
import re
import threading
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, unquote, urlsplit

import yaml

from tests.helpers.data import SCHOLARLY_RESPONSES
from tests.helpers.local_http import QuietHandler, serve_local

DATA = SCHOLARLY_RESPONSES
PROVIDERS = ("openalex", "crossref", "semanticscholar", "arxiv")
#: The query of each recorded search (OpenAlex's from anapaulagomes/peneira's test, the others from the URLs).
RECORDED_QUERIES = {
    "openalex": "machine learning AND public health",
    "crossref": "ecology",
    "semanticscholar": "turing",
    "arxiv": "testing",
}
_OPERATORS = frozenset({"and", "or", "not", "andnot", "all", "ti", "abs", "au"})
_ENTRY = re.compile(r"<entry>.*?</entry>\s*", re.S)


def terms(query: str) -> set[str]:
    """Lowercase words of a query, without boolean operators and field prefixes."""
    return {w for w in re.findall(r"[a-z0-9]+", query.lower()) if w not in _OPERATORS}


@dataclass(frozen=True)
class Answer:
    status: int
    body: bytes
    content_type: str = "application/json"


@dataclass
class Seen:
    provider: str
    path: str
    params: dict[str, str]
    status: int
    records: int  # how many records the answer carried (0 for a miss or a 404)


def _json(status: int, data: Any) -> Answer:
    return Answer(status, json.dumps(data).encode("utf-8"))


def _cassette(name: str) -> list[tuple[str, int, str]]:
    """(uri, status, body) of a vcrpy cassette whose bodies are plain text."""
    data = yaml.safe_load((DATA / name).read_text(encoding="utf-8"))
    return [
        (i["request"]["uri"], i["response"]["status"]["code"], i["response"]["body"]["string"])
        for i in data["interactions"]
    ]


def _abstract(work: Mapping[str, Any]) -> str:
    index = work.get("abstract_inverted_index") or {}
    return " ".join(word for word, places in index.items() for _ in places)


def _prefix_match(term: str, words: set[str]) -> bool:
    return any(w.startswith(term) for w in words)


@dataclass
class FakeScholarly:
    data: Path = DATA
    requests: list[Seen] = field(default_factory=list)
    unexpected: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._lock = threading.Lock()
        self.openalex = json.loads((self.data / "openalex" / "works_search_ml_public_health.json").read_text())
        crossref = json.loads((self.data / "crossref" / "test_works_query.responses.json").read_text())
        self.crossref_search = crossref[0]["body"]
        self.crossref_works: dict[str, Any] = {}
        for name in ("test_works_with_one_id.responses.json", "test_works_with_many_ids.responses.json"):
            for item in json.loads((self.data / "crossref" / name).read_text()):
                message = item["body"]["message"]
                self.crossref_works[str(message["DOI"]).lower()] = item["body"]
        self.s2_search = json.loads(_cassette("semanticscholar/test_search_paper.yaml")[0][2])
        self.s2_papers: dict[str, Any] = {}
        for uri, _, body in _cassette("semanticscholar/test_get_paper.yaml"):
            recorded_id = unquote(urlsplit(uri).path).split("/paper/", 1)[1].lower()
            self.s2_papers[recorded_id] = self.s2_papers["doi:" + recorded_id] = json.loads(body)
        paper = json.loads((self.data / "semanticscholar" / "Paper.json").read_text())
        self.s2_papers[str(paper["paperId"]).lower()] = paper
        self.s2_papers["doi:" + str(paper["externalIds"]["DOI"]).lower()] = paper
        self.arxiv: dict[str, str] = {}  # "search" or a sorted comma list of ids -> recorded feed
        for path in sorted((self.data / "arxiv").glob("*.json")):
            recorded = json.loads(path.read_text())
            params = dict(parse_qsl(urlsplit(recorded["url"]).query, keep_blank_values=True))
            if recorded["status_code"] != 200:
                continue
            key = "search" if params.get("search_query") else ",".join(sorted(params["id_list"].split(",")))
            self.arxiv[key] = recorded["body"]
        self.arxiv_empty = self.arxiv["0000.0000"]

    # -- the APIs ----------------------------------------------------------------------------
    def answer(self, provider: str, path: str, params: dict[str, str]) -> tuple[Answer, int]:
        route = getattr(self, f"_{provider}", None)
        found = route(path, params) if route else None
        if found is None:
            self.unexpected.append(f"{provider} {path} {params}")
            return _json(404, {"error": f"the fake serves no {path!r} for {provider!r}"}), 0
        return found

    def _matches(self, provider: str, query: str) -> bool:
        return terms(RECORDED_QUERIES[provider]) <= terms(query)

    def _openalex(self, path: str, params: dict[str, str]) -> tuple[Answer, int] | None:
        works = self.openalex["results"]
        select = [k for k in params.get("select", "").split(",") if k]

        def shown(work: Mapping[str, Any]) -> dict[str, Any]:
            return {k: v for k, v in work.items() if not select or k in select}

        if path == "/works" and "search" in params:
            size = int(params.get("per_page") or params.get("per-page") or 25)
            hits = []
            if self._matches("openalex", params["search"]):
                extra = terms(params["search"]) - terms(RECORDED_QUERIES["openalex"])

                def rank(item: tuple[int, Mapping[str, Any]]) -> tuple[int, int]:
                    words = set(re.findall(r"[a-z0-9]+", f"{item[1].get('title')} {_abstract(item[1])}".lower()))
                    return (-sum(_prefix_match(t, words) for t in extra), item[0])

                hits = [w for _, w in sorted(enumerate(works), key=rank)][:size]
            meta = {**self.openalex["meta"], "count": len(hits), "per_page": size}
            return _json(200, {"meta": meta, "results": [shown(w) for w in hits], "group_by": []}), len(hits)
        if path.startswith("/works/doi:"):
            doi = path.removeprefix("/works/doi:").lower()
            work = next((w for w in works if str(w.get("doi") or "").lower().endswith(doi)), None)
            if work is None:
                return _json(404, {"error": "NotFoundError", "message": f"doi:{doi} not found"}), 0
            return _json(200, shown(work)), 1
        return None

    def _crossref(self, path: str, params: dict[str, str]) -> tuple[Answer, int] | None:
        if path == "/works" and "query" in params:
            body = json.loads(json.dumps(self.crossref_search))
            items = body["message"]["items"] if self._matches("crossref", params["query"]) else []
            body["message"]["items"] = items[: int(params.get("rows") or 20)]
            body["message"]["total-results"] = len(body["message"]["items"])
            return _json(200, body), len(body["message"]["items"])
        if path.startswith("/works/"):
            work = self.crossref_works.get(path.removeprefix("/works/").lower())
            if work is None:
                return Answer(404, b"Resource not found.", "text/plain"), 0
            return _json(200, work), 1
        return None

    def _semanticscholar(self, path: str, params: dict[str, str]) -> tuple[Answer, int] | None:
        if path == "/graph/v1/paper/search":
            found = self.s2_search["data"] if self._matches("semanticscholar", params.get("query", "")) else []
            offset, limit = int(params.get("offset") or 0), int(params.get("limit") or 100)
            page = found[offset : offset + limit]
            body: dict[str, Any] = {"total": len(found), "offset": offset, "data": page}
            if offset + limit < len(found):
                body["next"] = offset + limit
            return _json(200, body), len(page)
        if path.startswith("/graph/v1/paper/") and not path.endswith(("/references", "/citations")):
            wanted = path.removeprefix("/graph/v1/paper/").lower()
            paper = self.s2_papers.get(wanted)
            if paper is None:
                return _json(404, {"error": f"Paper with id {wanted} not found"}), 0
            return _json(200, paper), 1
        return None

    def _arxiv(self, path: str, params: dict[str, str]) -> tuple[Answer, int] | None:
        if path != "/api/query":
            return None
        if params.get("search_query"):
            body = self.arxiv["search"] if self._matches("arxiv", params["search_query"]) else self.arxiv_empty
        else:
            key = ",".join(sorted(i.split("v")[0] for i in params.get("id_list", "").split(",") if i))
            body = self.arxiv.get(key, self.arxiv_empty)
        entries = _ENTRY.findall(body)
        keep = int(params.get("max_results") or 10)
        if len(entries) > keep:  # the recorded feed, cut to the page size asked for
            tail = body.rfind("</feed>")
            body = body[: body.find("<entry>")] + "".join(entries[:keep]) + body[tail:]
        return Answer(200, body.encode("utf-8"), "application/atom+xml"), min(len(entries), keep)

    # -- HTTP ------------------------------------------------------------------------------------
    def handle(self, target: str) -> Answer:
        parts = urlsplit(target)
        provider, _, rest = unquote(parts.path).lstrip("/").partition("/")
        params = dict(parse_qsl(parts.query, keep_blank_values=True))
        with self._lock:
            if provider not in PROVIDERS:
                self.unexpected.append(target)
                answer, records = _json(404, {"error": f"unknown provider prefix in {target!r}"}), 0
            else:
                answer, records = self.answer(provider, "/" + rest, params)
            self.requests.append(Seen(provider, "/" + rest, params, answer.status, records))
        return answer

    @contextlib.contextmanager
    def serve(self) -> Iterator[str]:
        """Listen on 127.0.0.1 (a free port); yields the base URL, e.g. ``http://127.0.0.1:4242``."""
        fake = self

        class Handler(QuietHandler):
            def do_GET(self) -> None:
                answer = fake.handle(self.path)
                self.send(answer.status, {"content-type": answer.content_type}, answer.body)

        with serve_local(Handler) as base_url:
            yield base_url

    @staticmethod
    def env(base_url: str) -> dict[str, str]:
        """The environment that points every provider of an agent process at this server."""
        return {f"CCONDUCTOR_PROVIDER_BASE_URL_{p.upper()}": f"{base_url}/{p}" for p in PROVIDERS}
