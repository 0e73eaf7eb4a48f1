"""Download an open-access PDF safely, cache it by content hash, and extract its pages.

PDF links come from third-party metadata and, through agents, from model output, so the URL is
untrusted: only http(s), no credentials in the URL, and every address the host resolves to (at
each redirect too) must be a public one, or we could be steered at cloud metadata endpoints or
services on the local network (SSRF). Bodies are streamed under a size cap and a deadline and
must start like a PDF. The bytes are stored as ``<sha256>.pdf`` in the user cache folder; the text
comes from ``agents.offline.ingest.ingest_file`` so its pages and ``content_sha256`` follow the
source-text store convention. Residual risk: the name is resolved again by the HTTP stack, so a
DNS answer that changes between our check and the connection (rebinding) is not caught.
"""

from __future__ import annotations

import hashlib
import ipaddress
import json
import socket
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urljoin, urlsplit

import httpx2
import platformdirs

from agents.offline.ingest import Document, ingest_file
from agents.providers.errors import ProviderError, ProviderUnavailable
from agents.providers.http import HttpClient, shared_client
from orchestrator.session.atomic import atomic_write_bytes, atomic_write_text

MAX_BYTES = 25 * 1024 * 1024
TIME_LIMIT = 60.0
MAX_REDIRECTS = 5
_PDF_TYPES = ("application/pdf", "application/x-pdf", "application/octet-stream", "binary/octet-stream",
              "application/download", "application/force-download")
Resolver = Callable[[str, int], Sequence[str]]


class PdfFetchError(ProviderError):
    """A PDF could not be fetched or read; the message says why and what to try.

    Every failure of :meth:`PdfFetcher.fetch` is one of these, so a caller trying several links
    needs one ``except``; ``status`` carries the HTTP status when the server refused.
    """


class PdfHostUnavailable(PdfFetchError, ProviderUnavailable):
    """The host cannot be reached (``skipped`` when that was already known in this run)."""


class UnsafeUrlError(PdfFetchError):
    """Refused before any request: scheme, credentials or a non-public address."""


class PdfTooLargeError(PdfFetchError):
    pass


class NotPdfError(PdfFetchError):
    pass


@dataclass(frozen=True)
class FetchedPdf:
    url: str
    final_url: str  # after redirects
    sha256: str  # of the PDF bytes (the cache key); ``document.content_sha256`` is of the text
    path: Path
    size: int
    document: Document
    from_cache: bool = False

    @property
    def pages(self) -> tuple[str, ...]:
        return self.document.pages


def system_resolver(host: str, port: int) -> list[str]:
    return sorted({str(info[4][0]) for info in socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)})


def _public(address: str) -> bool:
    ip = ipaddress.ip_address(address.split("%", 1)[0])
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    if isinstance(ip, ipaddress.IPv6Address) and ip.sixtofour is not None and not _public(str(ip.sixtofour)):
        return False  # 6to4 addresses carry an IPv4 address that must be public too
    return ip.is_global and not (ip.is_private or ip.is_loopback or ip.is_link_local or ip.is_multicast
                                 or ip.is_reserved or ip.is_unspecified)


def check_url(url: str, resolver: Resolver | None = system_resolver) -> str:
    """Raise :class:`UnsafeUrlError` unless ``url`` is http(s) and its host is public; return the host.

    With ``resolver=None`` only the URL itself is checked (no DNS), e.g. before a cache look-up.
    """
    parts = urlsplit(url)
    if parts.scheme.lower() not in ("http", "https"):
        raise UnsafeUrlError(f"refusing to fetch {url!r}: only http and https URLs are allowed "
                             f"(got {parts.scheme or 'no'} scheme); use the paper's web PDF link", url=url)
    if parts.username or parts.password:
        raise UnsafeUrlError(f"refusing to fetch {url!r}: URLs with credentials are not allowed", url=url)
    host = (parts.hostname or "").rstrip(".").lower()
    if not host:
        raise UnsafeUrlError(f"refusing to fetch {url!r}: the URL has no host", url=url)
    try:
        ipaddress.ip_address(host)
        addresses: Sequence[str] = [host]
    except ValueError:
        if host == "localhost" or host.endswith((".localhost", ".local", ".internal")):
            raise UnsafeUrlError(f"refusing to fetch {url!r}: {host} is a local name", url=url) from None
        if resolver is None:
            return host
        try:
            addresses = resolver(host, parts.port or (443 if parts.scheme == "https" else 80))
        except OSError as exc:
            raise PdfFetchError(f"cannot resolve {host} ({exc}); check the URL or the network",
                                url=url) from None
    bad = [a for a in addresses if not _public(a)]
    if bad or not addresses:
        raise UnsafeUrlError(f"refusing to fetch {url!r}: {host} resolves to a private, loopback, "
                             f"link-local or reserved address ({', '.join(bad) or 'none'}); only public "
                             "hosts may be fetched", url=url)
    return host


class PdfFetcher:
    """Fetches through :class:`HttpClient` (rate limits, offline skipping) with the checks above."""

    def __init__(self, client: HttpClient | None = None, *, cache_dir: Path | None = None,
                 max_bytes: int = MAX_BYTES, time_limit: float = TIME_LIMIT,
                 max_redirects: int = MAX_REDIRECTS, resolver: Resolver = system_resolver,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.client = client or shared_client()
        self.cache_dir = cache_dir or platformdirs.user_cache_path("cconductor") / "pdf"
        self.max_bytes, self.time_limit, self.max_redirects = max_bytes, time_limit, max_redirects
        self.resolver, self._clock = resolver, clock

    def _index(self, url: str) -> Path:
        return self.cache_dir / "urls" / f"{hashlib.sha256(url.encode()).hexdigest()}.json"

    def cached(self, url: str) -> tuple[Path, str] | None:
        """The stored PDF for ``url`` and the URL it finally came from, if it was fetched before."""
        try:
            entry = json.loads(self._index(url).read_text(encoding="utf-8"))
            path = self.cache_dir / f"{entry['sha256']}.pdf"
            return (path, str(entry.get("final_url") or url)) if path.is_file() else None
        except (OSError, ValueError, KeyError, TypeError):
            return None

    def fetch(self, url: str) -> FetchedPdf:
        """Download (or reuse) the PDF at ``url`` and extract its pages; raises :class:`PdfFetchError`."""
        check_url(url, None)  # cheap checks first; hosts are resolved per hop when downloading
        hit = self.cached(url)
        if hit is not None:
            return self._read(url, hit[1], hit[0], from_cache=True)
        final_url, data = self._download(url)
        sha = hashlib.sha256(data).hexdigest()
        path = self.cache_dir / f"{sha}.pdf"
        if not path.is_file():
            atomic_write_bytes(path, data, durable=False)
        index = json.dumps({"sha256": sha, "final_url": final_url})
        atomic_write_text(self._index(url), index, durable=False)
        return self._read(url, final_url, path, from_cache=False)

    def _download(self, url: str) -> tuple[str, bytes]:
        deadline = self._clock() + self.time_limit
        current = url
        for _hop in range(self.max_redirects + 1):
            check_url(current, self.resolver)
            remaining = deadline - self._clock()
            if remaining <= 0:
                raise self._too_slow(url)
            try:
                with self.client.stream(current, provider=urlsplit(current).hostname or "web",
                                        timeout=remaining,
                                        headers={"Accept": "application/pdf,*/*;q=0.5"}) as response:
                    status = response.status_code
                    if status in (301, 302, 303, 307, 308) and response.headers.get("location"):
                        current = urljoin(current, response.headers["location"])
                        continue
                    if status != 200:
                        raise PdfFetchError(f"fetching {current} failed with HTTP {status}; the PDF may have "
                                            "moved or need a subscription, try another pdf_url",
                                            url=current, status=status)
                    return current, self._body(url, response, deadline)
            except ProviderUnavailable as exc:
                if isinstance(exc, PdfFetchError):
                    raise
                raise PdfHostUnavailable(str(exc), provider=exc.provider, url=current,
                                         skipped=exc.skipped) from exc
        raise PdfFetchError(f"refusing to follow more than {self.max_redirects} redirects from {url}",
                            url=url)

    def _too_slow(self, url: str) -> PdfFetchError:
        return PdfFetchError(f"fetching {url} took longer than {self.time_limit:.0f} s; retry later", url=url)

    def _too_large(self, url: str, size: int | None = None) -> PdfTooLargeError:
        what = f"is {size / 1e6:.1f} MB, over" if size is not None else "exceeds"
        return PdfTooLargeError(f"{url} {what} the {self.max_bytes / 1e6:.1f} MB limit; raise max_bytes if "
                                "this PDF is really needed", url=url)

    def _body(self, url: str, response: httpx2.Response, deadline: float) -> bytes:
        headers = response.headers
        content_type = str(headers.get("content-type", "")).split(";")[0].strip().lower()
        if content_type and content_type not in _PDF_TYPES:
            raise NotPdfError(f"{url} is not a PDF (the server sent {content_type}, probably a landing "
                              "page); look for a direct PDF link", url=url)
        declared = headers.get("content-length")
        if declared and declared.isdigit() and int(declared) > self.max_bytes:
            raise self._too_large(url, int(declared))
        chunks, size = [], 0
        for chunk in response.iter_bytes():
            size += len(chunk)
            if size > self.max_bytes:
                raise self._too_large(url)
            if self._clock() > deadline:
                raise self._too_slow(url)
            chunks.append(chunk)
        data = b"".join(chunks)
        if b"%PDF-" not in data[:1024]:
            raise NotPdfError(f"{url} did not return a PDF (no %PDF- header; starts with {data[:20]!r}); "
                              "look for a direct PDF link", url=url)
        return data

    def _read(self, url: str, final_url: str, path: Path, *, from_cache: bool) -> FetchedPdf:
        try:
            document = ingest_file(path)
        except ValueError as exc:
            raise PdfFetchError(f"{url} was downloaded but cannot be read: {exc}; try another pdf_url",
                                url=url) from None
        # the cache file is not a document the agent was given: drop local_path, record the link
        source = {k: v for k, v in document.source.items() if k != "local_path"}
        source["pdf_url"] = url
        document = Document(source=source, pages=document.pages)
        return FetchedPdf(url, final_url, path.stem, path, path.stat().st_size, document, from_cache)


def fetch_pdf(url: str, *, client: HttpClient | None = None, max_bytes: int = MAX_BYTES,
              time_limit: float = TIME_LIMIT, resolver: Resolver = system_resolver) -> FetchedPdf:
    """One-shot helper: ``PdfFetcher(client, ...).fetch(url)`` with the default cache folder."""
    return PdfFetcher(client, max_bytes=max_bytes, time_limit=time_limit, resolver=resolver).fetch(url)
