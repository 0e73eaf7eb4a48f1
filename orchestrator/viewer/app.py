"""The viewer's web application (Starlette): one page, its static files, and a read-only JSON API.

Every route reads; none writes. Requests whose Host header is not the address the viewer was
started on are refused (a DNS-rebinding page cannot read sessions through the browser), the
page may load only its own scripts and styles (Content-Security-Policy), and every JSON answer
and streamed event passes :func:`orchestrator.model.redact.redact` on its way out, so an API key
that found its way into a session file is not shown. Blocking reads run in Starlette's thread
pool; the live stream polls the files (no lock, no watcher thread per page).
"""

from __future__ import annotations

import functools
from collections.abc import AsyncIterator, Callable, MutableMapping
from pathlib import Path
from typing import Any

import anyio
import orjson
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.middleware import Middleware
from starlette.middleware.trustedhost import TrustedHostMiddleware
from starlette.requests import Request
from starlette.responses import FileResponse, Response, StreamingResponse
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp, Receive, Scope, Send

from orchestrator.model.errors import CconductorError, SessionNotFound
from orchestrator.model.layout import SessionPaths
from orchestrator.model.redact import redact
from orchestrator.viewer import agents, evidence, explorer, overview, pages, report, state, timeline
from orchestrator.viewer.files import session_folder
from orchestrator.viewer.lookup import GraphIndex, graph_index

STATIC = Path(__file__).resolve().parent / "static"
CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
       "font-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'")
HEADERS = {"content-security-policy": CSP, "x-content-type-options": "nosniff", "referrer-policy": "no-referrer",
           "x-frame-options": "DENY", "cross-origin-resource-policy": "same-origin"}
POLL = 0.25
HEARTBEAT = 15.0


class SafeJSON(Response):
    media_type = "application/json"

    def render(self, content: Any) -> bytes:
        return redact(orjson.dumps(content, default=str).decode("utf-8")).encode("utf-8")


class SecurityHeaders:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def with_headers(message: MutableMapping[str, Any]) -> None:
            if message["type"] == "http.response.start":
                present = {k.lower() for k, _ in message.get("headers", [])}
                extra = [(k.encode(), v.encode()) for k, v in HEADERS.items() if k.encode() not in present]
                if scope["path"].startswith("/api/") and b"cache-control" not in present:
                    extra.append((b"cache-control", b"no-store"))
                message["headers"] = [*message.get("headers", []), *extra]
            await send(message)

        await self.app(scope, receive, with_headers)


def _problem(status: int, message: str) -> SafeJSON:
    return SafeJSON({"error": message}, status_code=status)


Handler = Callable[[Request, SessionPaths], Any]


class Viewer:
    """The routes over one sessions folder."""

    def __init__(self, sessions_dir: Path, stopping: Callable[[], bool]) -> None:
        self.sessions_dir = sessions_dir
        self.stopping = stopping  # the server is shutting down: open streams end instead of being cancelled

    def paths(self, request: Request) -> SessionPaths:
        return session_folder(self.sessions_dir, request.path_params["sid"])

    def api(self, handler: Handler) -> Callable[[Request], Any]:
        """A session route: the folder looked up by name, reads in a worker thread, errors as JSON."""

        @functools.wraps(handler)
        async def endpoint(request: Request) -> Response:
            try:
                paths = await run_in_threadpool(self.paths, request)
                result = await run_in_threadpool(handler, request, paths)
            except SessionNotFound as exc:
                return _problem(404, str(exc))
            except CconductorError as exc:
                return _problem(409, str(exc))
            except Exception as exc:  # a page gets a sentence, never a traceback
                return _problem(500, f"the viewer could not read this ({type(exc).__name__}: {exc})")
            if isinstance(result, Response):
                return result
            if result is None:
                return _problem(404, "not found in this session's committed graph")
            return SafeJSON(result)

        return endpoint

    async def index(self, request: Request) -> Response:
        return FileResponse(STATIC / "index.html", media_type="text/html; charset=utf-8",
                            headers={"cache-control": "no-store"})

    async def sessions(self, request: Request) -> Response:
        rows = await run_in_threadpool(state.sessions_rows, self.sessions_dir)
        return SafeJSON({"sessions_dir": str(self.sessions_dir), "sessions": rows})

    # -- session routes (run in a worker thread) --------------------------------------------
    @staticmethod
    def overview(request: Request, paths: SessionPaths) -> Any:
        return overview.overview(paths)

    @staticmethod
    def summary(request: Request, paths: SessionPaths) -> Any:
        return {**overview.summary_of(paths), "graph_warning": graph_index(paths).warning,
                "damaged": state.damaged(paths)}

    @staticmethod
    def agents(request: Request, paths: SessionPaths) -> Any:
        return {"agents": agents.agents_overview(paths), "damaged": state.damaged(paths)}

    @staticmethod
    def agent(request: Request, paths: SessionPaths) -> Any:
        return agents.agent_detail(paths, request.query_params.get("name", ""))

    @staticmethod
    def events(request: Request, paths: SessionPaths) -> Any:
        count = min(max(_int(request.query_params.get("count"), 200), 1), 2000)
        before = _int(request.query_params.get("before"), -1)
        batch = timeline.read_last(paths, count, None if before < 0 else before)
        return {"events": batch.events, "start": batch.start, "end": batch.end}

    @staticmethod
    def report(request: Request, paths: SessionPaths) -> Any:
        return report.report_document(paths)

    @staticmethod
    def claim(request: Request, paths: SessionPaths) -> Any:
        return evidence.claim_detail(paths, graph_index(paths), paths.root.name, request.query_params.get("id", ""))

    @staticmethod
    def page(request: Request, paths: SessionPaths) -> Any:
        """The page an evidence item cites: image address, size and the marks to draw on it."""
        index = graph_index(paths)
        found = index.item(request.query_params.get("claim", ""))
        if found is None or found[0] != "claims":
            return None
        items = [e for e in found[1].get("evidence") or () if isinstance(e, dict)]
        number = _int(request.query_params.get("evidence"), -1)
        if not 0 <= number < len(items):
            return None
        item = items[number]
        source = index.source(str(item.get("source_id")))
        pdf = evidence.pdf_path(source) if source else None
        page = evidence.evidence_page(item)
        if pdf is None or not page:
            return _problem(404, "no PDF page to show for this evidence (the panel's text view has the passage)")
        count = pages.page_count(pdf)
        if page > count:
            return _problem(404, f"the source's PDF has {count} pages; the evidence cites page {page}")
        marks = pages.page_marks(pdf, page, item)
        return {"graph_warning": index.warning,
                "page": page, "pages": count, "source_id": source["id"] if source else None,
                "image": f"/api/sessions/{paths.root.name}/page.png?source={_q(source['id'])}&page={page}"
                if source else None,
                "marks": [m.to_json() for m in marks],
                "located": bool(marks),
                "why": None if marks else "the quoted passage was not found in this page's text layer "
                "(a scanned page, or text the PDF draws as images); the text view shows it"}

    @staticmethod
    def page_png(request: Request, paths: SessionPaths) -> Any:
        source = graph_index(paths).source(request.query_params.get("source", ""))
        pdf = evidence.pdf_path(source) if source else None
        page = _int(request.query_params.get("page"), 0)
        if pdf is None or page < 1:
            return None
        try:
            data = pages.rendered_page(pdf, page)
        except IndexError as exc:
            return _problem(404, str(exc))
        return Response(data, media_type="image/png", headers={"cache-control": "private, max-age=3600"})

    @staticmethod
    def graph(request: Request, paths: SessionPaths) -> Any:
        q, index = request.query_params, graph_index(paths)
        return _flagged(index, explorer.list_items(index, q.get("kind", "claims"), q.get("agent") or None,
                                                   q.get("q"), max(0, _int(q.get("offset"), 0))))

    @staticmethod
    def node(request: Request, paths: SessionPaths) -> Any:
        index = graph_index(paths)
        return _flagged(index, explorer.node(index, request.query_params.get("id", "")))

    async def stream(self, request: Request) -> Response:
        """Server-sent events: each new line of events.jsonl, and 'changed' when a view, the session or a lock did."""
        try:
            paths = await run_in_threadpool(self.paths, request)
        except SessionNotFound as exc:
            return _problem(404, str(exc))
        except CconductorError as exc:
            return _problem(409, str(exc))
        start = _int(request.headers.get("last-event-id") or request.query_params.get("from"), -1)
        if start < 0:  # where the stream starts: a bad events.jsonl is a 409 now rather than an empty stream
            try:
                start = (await run_in_threadpool(timeline.read_last, paths, 0)).end
            except CconductorError as exc:
                return _problem(409, str(exc))
        return StreamingResponse(self._events(request, paths, start), media_type="text/event-stream",
                                 headers={"cache-control": "no-store", "x-accel-buffering": "no"})

    async def _events(self, request: Request, paths: SessionPaths, start: int) -> AsyncIterator[str]:
        offset = start if start >= 0 else (await run_in_threadpool(timeline.read_last, paths, 0)).end
        marks = await run_in_threadpool(state.change_marks, paths)
        yield f"retry: 2000\nevent: hello\ndata: {orjson.dumps({'offset': offset}).decode()}\n\n"
        quiet, problem = 0.0, None
        while not self.stopping() and not await request.is_disconnected():
            gone = await run_in_threadpool(_gone, self.sessions_dir, paths)
            if gone:  # nothing more will come: say so and end (the page stops reconnecting)
                yield f"event: gone\ndata: {_data({'error': gone})}\n\n"
                return
            try:
                batch = await run_in_threadpool(timeline.read_after, paths, offset, 1 << 20)
            except CconductorError as exc:  # events.jsonl replaced by a FIFO, a folder, a link: said once per change
                if str(exc) != problem:
                    problem = str(exc)
                    yield f"event: problem\ndata: {_data({'error': problem})}\n\n"
                batch = timeline.Batch([], offset, offset)
            else:
                problem = None
            for event in batch.events:
                yield f"id: {event['next']}\nevent: event\ndata: {redact(orjson.dumps(event).decode())}\n\n"
            offset = batch.end
            now = await run_in_threadpool(state.change_marks, paths)
            if now != marks:
                changed = sorted(k for k in now if now[k] != marks.get(k))
                marks = now
                yield f"event: changed\ndata: {orjson.dumps({'parts': changed}).decode()}\n\n"
            elif not batch.events:
                quiet += POLL
                if quiet >= HEARTBEAT:
                    quiet = 0.0
                    yield ": still here\n\n"
            await anyio.sleep(POLL)


def _gone(sessions_dir: Path, paths: SessionPaths) -> str | None:
    """Why a streamed session will send nothing more (its folder or session.json deleted), or None."""
    try:
        session_folder(sessions_dir, paths.root.name)
    except SessionNotFound:
        return (f"session {paths.root.name} is no longer in {sessions_dir} (its folder or session.json was deleted "
                "or moved): the live view has stopped; the session list shows the sessions there are")
    except CconductorError:
        return None  # there, but its session.json damaged: the pages say so
    return None


def _data(value: dict[str, Any]) -> str:
    return redact(orjson.dumps(value).decode())


def _flagged(index: GraphIndex, result: dict[str, Any] | None) -> dict[str, Any] | None:
    """A graph-derived answer with why the view file is not what it shows (None: the ledger vouches for it)."""
    return None if result is None else {**result, "graph_warning": index.warning}


def _int(value: str | None, default: int) -> int:
    try:
        return int(value) if value is not None else default
    except ValueError:
        return default


def _q(value: str) -> str:
    from urllib.parse import quote

    return quote(value, safe="")


def create_app(sessions_dir: Path, allowed_hosts: list[str],
               stopping: Callable[[], bool] = lambda: False) -> Starlette:
    viewer = Viewer(sessions_dir, stopping)
    session_routes = [
        ("overview", viewer.overview), ("summary", viewer.summary), ("agents", viewer.agents), ("agent", viewer.agent),
        ("events", viewer.events), ("report", viewer.report), ("claim", viewer.claim), ("page", viewer.page),
        ("page.png", viewer.page_png), ("graph", viewer.graph), ("node", viewer.node),
    ]
    routes = [
        Route("/", viewer.index),
        Route("/api/sessions", viewer.sessions),
        Route("/api/sessions/{sid}/stream", viewer.stream),
        *(Route(f"/api/sessions/{{sid}}/{name}", viewer.api(handler)) for name, handler in session_routes),
        Mount("/static", StaticFiles(directory=STATIC), name="static"),
    ]
    middleware = [Middleware(SecurityHeaders), Middleware(TrustedHostMiddleware, allowed_hosts=allowed_hosts)]
    return Starlette(routes=routes, middleware=middleware)
