"""Open-access PDF download: SSRF guard, redirects, size and time limits, PDF check, cache, text.

A mock transport serves a real article PDF from shared/data/scientific-pdfs; host names resolve
through an injected table, so there is no DNS and no network.
"""

from __future__ import annotations

import hashlib
import socket
from collections.abc import Iterator
from pathlib import Path

import httpx2
import pytest

from agents.offline.ingest import ingest_file
from agents.providers import (
    HttpClient,
    HttpConfig,
    NotPdfError,
    PdfFetcher,
    PdfFetchError,
    PdfHostUnavailable,
    PdfTooLargeError,
    ProviderUnavailable,
    UnsafeUrlError,
    check_url,
)
from orchestrator.contract.schemas import SchemaRegistry
from tests.helpers.data import PAPERS

PDF = PAPERS / "j-trauma-manag-outcomes-2010-4-1.pdf"
HOSTS = {
    "papers.example.org": ["93.184.216.34"],
    "cdn.example.net": ["151.101.1.1", "2a04:4e42::485"],
    "evil.example.com": ["127.0.0.1"],
    "rebind.example.com": ["93.184.216.34", "10.0.0.7"],
    "metadata.example.com": ["169.254.169.254"],
}


def resolver(host: str, port: int) -> list[str]:
    if host not in HOSTS:
        raise OSError(f"[Errno -2] Name or service not known: {host}")
    return HOSTS[host]


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now += seconds


@pytest.fixture(autouse=True)
def _offline(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_network(*args: object, **kwargs: object) -> None:
        raise AssertionError(f"a test tried to reach the network: {args}")

    monkeypatch.setattr(socket, "getaddrinfo", no_network)
    monkeypatch.setattr(socket, "create_connection", no_network)


@pytest.fixture
def pdf_bytes() -> bytes:
    if not PDF.is_file():
        pytest.fail(f"shared PDF {PDF} is missing; shared/ sits beside the project")
    return PDF.read_bytes()


class Server:
    """Routes by path; records every request the transport receives."""

    def __init__(self, pdf: bytes, clock: Clock) -> None:
        self.pdf, self.clock = pdf, clock
        self.requests: list[str] = []

    def chunks(self, count: int, size: int, tick: float = 0.0) -> Iterator[bytes]:
        yield b"%PDF-1.4\n"
        for _ in range(count):
            self.clock.now += tick
            yield b"0" * size

    def __call__(self, request: httpx2.Request) -> httpx2.Response:
        self.requests.append(str(request.url))
        path = request.url.path
        routes = {
            "/paper.pdf": lambda: httpx2.Response(
                200, headers={"content-type": "application/pdf"}, content=self.pdf
            ),
            "/copy.pdf": lambda: httpx2.Response(
                200, headers={"content-type": "application/pdf"}, content=self.pdf
            ),
            "/redirect": lambda: httpx2.Response(
                302, headers={"location": "https://cdn.example.net/file.pdf"}
            ),
            "/file.pdf": lambda: httpx2.Response(
                200, headers={"content-type": "application/octet-stream"}, content=self.pdf
            ),
            "/to-private": lambda: httpx2.Response(302, headers={"location": "http://10.0.0.5/x.pdf"}),
            "/to-loopback-name": lambda: httpx2.Response(
                301, headers={"location": "http://evil.example.com/x"}
            ),
            "/to-file": lambda: httpx2.Response(302, headers={"location": "file:///etc/passwd"}),
            "/loop": lambda: httpx2.Response(302, headers={"location": "/loop"}),
            "/landing": lambda: httpx2.Response(
                200,
                headers={"content-type": "text/html; charset=utf-8"},
                content=b"<html><body>Download the PDF here</body></html>",
            ),
            "/fake.pdf": lambda: httpx2.Response(
                200, headers={"content-type": "application/pdf"}, content=b"<html>not really a pdf</html>"
            ),
            "/endless": lambda: httpx2.Response(200, content=self.chunks(1000, 64 * 1024)),
            "/slow": lambda: httpx2.Response(200, content=self.chunks(10, 1024, tick=30.0)),
            "/broken.pdf": lambda: httpx2.Response(
                200, content=b"%PDF-1.4\nthis is not a real PDF body\n%%EOF"
            ),
        }
        if path in routes:
            return routes[path]()
        return httpx2.Response(404, content=b"not found")


@pytest.fixture
def setup(pdf_bytes: bytes, tmp_path: Path) -> tuple[PdfFetcher, Server]:
    clock = Clock()
    server = Server(pdf_bytes, clock)
    client = HttpClient(
        HttpConfig(cache=False, shared_rate_limit=False),
        transport=httpx2.MockTransport(server),
        clock=clock,
        sleep=clock.sleep,
    )
    fetcher = PdfFetcher(
        client,
        cache_dir=tmp_path / "pdf",
        resolver=resolver,
        clock=clock,
        max_bytes=2 * 1024 * 1024,
        time_limit=60,
    )
    return fetcher, server


def test_fetches_a_real_pdf_and_extracts_its_pages(
    setup: tuple[PdfFetcher, Server], pdf_bytes: bytes
) -> None:
    fetcher, server = setup
    fetched = fetcher.fetch("https://papers.example.org/paper.pdf")
    assert fetched.sha256 == hashlib.sha256(pdf_bytes).hexdigest() and fetched.size == len(pdf_bytes)
    assert (
        fetched.path == fetcher.cache_dir / f"{fetched.sha256}.pdf" and fetched.path.read_bytes() == pdf_bytes
    )
    assert fetched.pages == ingest_file(PDF).pages and len(fetched.pages) == 4
    assert "deep venous thrombosis" in fetched.pages[0]
    source = fetched.document.source
    assert source["title"].startswith("Complications related to deep venous thrombosis prophylaxis in trauma")
    assert (
        source["doi"] == "10.1186/1752-2897-4-1"
        and source["pdf_url"] == "https://papers.example.org/paper.pdf"
    )
    assert "local_path" not in source and source["content_sha256"] == fetched.document.content_sha256
    assert SchemaRegistry.default().validate_artifact("sources.json", {"sources": [source]}, "x") == []
    assert not fetched.from_cache and server.requests == ["https://papers.example.org/paper.pdf"]


def test_cache_is_content_addressed_and_reused(setup: tuple[PdfFetcher, Server]) -> None:
    fetcher, server = setup
    first = fetcher.fetch("https://papers.example.org/paper.pdf")
    again = fetcher.fetch("https://papers.example.org/paper.pdf")
    assert again.from_cache and again.pages == first.pages and len(server.requests) == 1
    copy = fetcher.fetch("https://papers.example.org/copy.pdf")  # same bytes, another URL: one stored file
    assert copy.path == first.path and len(list(fetcher.cache_dir.glob("*.pdf"))) == 1


def test_follows_redirects_to_public_hosts(setup: tuple[PdfFetcher, Server]) -> None:
    fetcher, server = setup
    fetched = fetcher.fetch("https://papers.example.org/redirect")
    assert fetched.final_url == "https://cdn.example.net/file.pdf" and len(fetched.pages) == 4
    assert fetcher.fetch("https://papers.example.org/redirect").final_url == fetched.final_url  # from cache
    assert server.requests == ["https://papers.example.org/redirect", "https://cdn.example.net/file.pdf"]


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1/x",
        "http://10.0.0.1/",
        "http://192.168.1.20/paper.pdf",
        "http://169.254.169.254/latest/",
        "http://[::1]/x.pdf",
        "http://[2002:7f00:1::]/x",
        "http://[::ffff:127.0.0.1]/x",
        "http://0.0.0.0/",
        "http://224.0.0.1/x",
        "http://localhost/x.pdf",
        "http://evil.example.com/x.pdf",
        "http://rebind.example.com/x.pdf",
        "http://metadata.example.com/",
        "file:///etc/passwd",
        "ftp://papers.example.org/paper.pdf",
        "gopher://papers.example.org/",
        "https://user:secret@papers.example.org/paper.pdf",
        "papers.example.org/x.pdf",
    ],
)
def test_unsafe_urls_are_refused_before_any_request(setup: tuple[PdfFetcher, Server], url: str) -> None:
    fetcher, server = setup
    with pytest.raises(UnsafeUrlError, match="refusing to fetch"):
        fetcher.fetch(url)
    assert server.requests == []


@pytest.mark.parametrize(
    ("path", "reason"),
    [
        ("/to-private", "10.0.0.5"),
        ("/to-loopback-name", "evil.example.com"),
        ("/to-file", "only http and https"),
    ],
)
def test_redirects_to_unsafe_targets_are_refused(
    setup: tuple[PdfFetcher, Server], path: str, reason: str
) -> None:
    fetcher, server = setup
    with pytest.raises(UnsafeUrlError, match=reason):
        fetcher.fetch(f"https://papers.example.org{path}")
    assert len(server.requests) == 1  # the redirect target was never requested


def test_redirect_chains_are_capped(setup: tuple[PdfFetcher, Server]) -> None:
    fetcher, server = setup
    with pytest.raises(PdfFetchError, match="more than 5 redirects"):
        fetcher.fetch("https://papers.example.org/loop")
    assert len(server.requests) == 6


def test_oversize_bodies_are_refused(setup: tuple[PdfFetcher, Server], tmp_path: Path) -> None:
    fetcher, _ = setup
    with pytest.raises(PdfTooLargeError, match=r"exceeds the 2\.1 MB limit"):
        fetcher.fetch("https://papers.example.org/endless")  # streamed, no Content-Length
    small = PdfFetcher(fetcher.client, cache_dir=tmp_path / "small", resolver=resolver, max_bytes=100_000)
    with pytest.raises(PdfTooLargeError, match=r"is 0\.2 MB, over the 0\.1 MB limit"):
        small.fetch("https://papers.example.org/paper.pdf")  # refused on its Content-Length
    assert not list((tmp_path / "small").glob("*.pdf")) and not list(fetcher.cache_dir.glob("*.pdf"))


def test_time_limit(setup: tuple[PdfFetcher, Server]) -> None:
    fetcher, _ = setup
    with pytest.raises(PdfFetchError, match="took longer than 60 s"):
        fetcher.fetch("https://papers.example.org/slow")


@pytest.mark.parametrize(
    ("path", "error", "message"),
    [
        ("/landing", NotPdfError, "server sent text/html"),
        ("/fake.pdf", NotPdfError, "no %PDF- header"),
        ("/broken.pdf", PdfFetchError, "cannot be read"),
        ("/missing.pdf", PdfFetchError, "HTTP 404"),
    ],
)
def test_non_pdf_bodies_are_refused(
    setup: tuple[PdfFetcher, Server], path: str, error: type[Exception], message: str
) -> None:
    fetcher, _ = setup
    with pytest.raises(error, match=message):
        fetcher.fetch(f"https://papers.example.org{path}")


def test_unreachable_host_is_reported_and_then_skipped(tmp_path: Path) -> None:
    calls: list[str] = []

    def refuse(request: httpx2.Request) -> httpx2.Response:
        calls.append(str(request.url))
        raise httpx2.ConnectError("[Errno 111] Connection refused", request=request)

    clock = Clock()
    client = HttpClient(
        HttpConfig(cache=False, shared_rate_limit=False),
        transport=httpx2.MockTransport(refuse),
        clock=clock,
        sleep=clock.sleep,
    )
    fetcher = PdfFetcher(client, cache_dir=tmp_path, resolver=resolver, clock=clock)
    with pytest.raises(PdfHostUnavailable, match="cannot be reached"):
        fetcher.fetch("https://papers.example.org/paper.pdf")
    with pytest.raises(PdfFetchError) as info:  # one except clause catches every fetch failure
        fetcher.fetch("https://papers.example.org/other.pdf")
    assert isinstance(info.value, ProviderUnavailable) and info.value.skipped and len(calls) == 1


def test_check_url_returns_the_host_and_resolves_names() -> None:
    assert check_url("https://CDN.example.net./a.pdf", resolver) == "cdn.example.net"
    assert check_url("http://evil.example.com/x", None) == "evil.example.com"  # no DNS without a resolver
    with pytest.raises(PdfFetchError, match="cannot resolve"):
        check_url("https://unknown.example/x.pdf", resolver)
