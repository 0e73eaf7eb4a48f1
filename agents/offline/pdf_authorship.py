"""A PDF's title and authors from its first page, by font size and the shape of names.

Metadata in the document information dictionary is trusted only when it agrees with the first
page, since publishers often leave template titles and tool names there.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from agents.offline.text import normalize_chars, normalize_ws, wordlist
from orchestrator.model.terms import search_words

MARKERS = "*\u2217†‡§¶‖#☯♠♢♡♣♦♥✉\u204e"
_PARTICLES = frozenset(
    wordlist(
        """
    al bin da de del della den der di dos du el la le ten ter van von y zu
        """
    )
)
ABSTRACT_RE = re.compile(r"(?i)^(?:abstract|summary|a b s t r a c t)\s*[.:—-]?\s*(.*)$")
_SECTION_RE = re.compile(r"(?i)^(?:\d+\.?\s*)?(?:introduction|background)$")
_HEADER_RE = re.compile(
    r"(?i)https?://|www\.|@|\bdoi\b|\b10\.\d{4,9}/|\bissn\b|proceedings of|\bvol(?:ume)?\.?\s*\d|\bpp\.|"
    r"\bpages?\s+\d|©|\(c\)|copyright|\breceived\b|\baccepted\b|\bpublished\b|\bsubmitted\b|"
    r"available online|citation:|journal homepage|corresponding author|academic editor|"
    r"creative commons|licen[cs]e|\barticle id\b|publishing corporation|\d{4}\s*,\s*\d+\s*:\s*\d+"
)
_LABEL_RE = re.compile(
    r"(?i)(?:(?:original|research|review|short|brief|clinical|technical|case|full|regular|invited|"
    r"systematic)\s+)*(?:article|paper|report|communication|note|study|letter|review|editorial|"
    r"commentary|perspective|methodology|protocol|research)s?"
)
_AUTHOR_STOP_RE = re.compile(
    r"(?i)@|https?://|www\.|\b(?:universit|institut|department|dept\b|school\b|college\b|laborator|"
    r"faculty|hospital|cent(?:er|re)\b|abstract\b|correspond|received\b|keywords)"
)



def _is_label(line: str) -> bool:
    if re.match(r"(?:[A-Za-z] ){3,}[A-Za-z]\b", line):  # "R E S E A R C H  A R T I C L E"
        return True
    core = re.sub(r"(?i)\bopen\s+access\b", "", line).strip(" |-\u2013:")
    return not core or _LABEL_RE.fullmatch(core) is not None


def _title_candidate(line: str, continuation: bool = False) -> bool:
    letters = sum(ch.isalpha() for ch in line)
    if continuation:
        return letters > 0 and not _is_label(line) and not _HEADER_RE.search(line)
    return (
        letters >= 8
        and len(line.split()) >= 2
        and len(line) <= 250
        and not _is_label(line)
        and not _HEADER_RE.search(line)
    )


def _body_size(lines: Sequence[tuple[str, float | None]]) -> float:
    """Character-weighted median font size: the running text's size."""
    weighted = sorted((s, len(t)) for t, s in lines if s)
    half, acc = sum(w for _, w in weighted) / 2, 0
    for size, w in weighted:
        acc += w
        if acc >= half:
            return size
    return 0.0


def title_line_run(lines: Sequence[tuple[str, float | None]]) -> list[int]:
    stop = next((i for i, (t, _) in enumerate(lines) if ABSTRACT_RE.match(t) or _SECTION_RE.match(t)), None)
    stop = min(stop if stop is not None else len(lines), 40)
    cands = [i for i in range(stop) if _title_candidate(lines[i][0])]
    sized = [i for i in cands if lines[i][1]]
    if sized:
        top = max(float(lines[i][1] or 0) for i in sized)
        if top >= 1.15 * _body_size(lines):
            run = [next(i for i in sized if abs(float(lines[i][1] or 0) - top) <= 0.5)]
            while (
                run[-1] + 1 < stop
                and len(run) < 5
                and abs(float(lines[run[-1] + 1][1] or 0) - top) <= 0.5
                and _title_candidate(lines[run[-1] + 1][0], continuation=True)
            ):
                run.append(run[-1] + 1)
            return run
    if not cands:
        return []
    run = [cands[0]]  # no font sizes to go by: the first substantial line, plus obvious wraps
    while (
        run[-1] + 1 < stop
        and len(run) < 3
        and lines[run[-1] + 1][0][:1].islower()
        and _title_candidate(lines[run[-1] + 1][0], continuation=True)
    ):
        run.append(run[-1] + 1)
    return run


def _fix_case(token: str) -> str:
    """'DOUGLAS' -> 'Douglas' (some journals print surnames in capitals); initials stay."""
    if token.isupper() and sum(ch.isalpha() for ch in token) > 2:
        return re.sub(r"[^\W\d_]+", lambda m: m.group().capitalize(), token)
    return token


def _is_name(toks: Sequence[str]) -> bool:
    ok = all(
        t in _PARTICLES or (t[0].isupper() and all(ch.isalpha() or ch in ".-'\u2019" for ch in t))
        for t in toks
    )
    return 2 <= len(toks) <= 5 and ok and any(any(ch.islower() for ch in t) for t in toks)


def _parse_names(text: str, separators: str = r"\||,|;|&|\band\b") -> list[str]:
    """Names from an author line; any piece that is not name-shaped rejects the whole line."""
    text = re.sub(r"\s*\{?\bet al\.?\}?", "", text)
    text = re.sub(rf"[{re.escape(MARKERS)}\d]+", "|", text)
    names: list[str] = []
    for piece in re.split(rf"\s*(?:{separators})\s*", text):
        piece = normalize_ws(piece)
        if not piece:
            continue
        if " " not in piece:  # "CharlesMunthali": pypdf lost the space
            piece = re.sub(r"(?<=[a-z]{2})(?=[A-Z][a-z])", " ", piece)
        toks = [_fix_case(t) for t in piece.split()]
        if not _is_name(toks):
            return []
        if " ".join(toks) not in names:
            names.append(" ".join(toks))
    return names


def authors_on_page(lines: Sequence[tuple[str, float | None]], start: int) -> list[str]:
    buf: list[str] = []
    for line, _ in lines[start : start + 4]:
        if (
            not line
            or _AUTHOR_STOP_RE.search(line)
            or _is_label(line)
            or re.match(rf"[\d{re.escape(MARKERS)}]\s?[^\W\d_]", line)
        ):
            break
        buf.append(line)
    return _parse_names(" ".join(buf))


def authors_from_metadata(value: str) -> list[str]:
    value = re.sub(r"\s*\{?\bet al\.?\}?", "", normalize_ws(value))
    if not value:
        return []
    return _parse_names(value, r";" if ";" in value else r",|;|&|\band\b")


def title_from_metadata(value: str, first_page: str) -> str:
    """The metadata title if it is plausible and printed on the first page, else ''."""
    title = normalize_ws(normalize_chars(value))
    letters = sum(ch.isalpha() for ch in title)
    if (
        not 8 <= len(title) <= 400
        or letters < 0.6 * len(title.replace(" ", ""))
        or len(title.split()) < 2
        or re.search(r"(?i)\.(?:pdf|docx?|tex|dvi|indd|qxd|e?ps)\b|microsoft|untitled|template", title)
    ):
        return ""
    words = [w for w in search_words(title) if len(w) >= 3 and w.isalpha()]
    on_page = set(search_words(first_page))
    return title if words and sum(w in on_page for w in words) >= 0.8 * len(words) else ""
