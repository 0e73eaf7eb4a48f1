"""Plain-text helpers for the offline backend: normalisation and sentences.

Words, stopwords and stems are :mod:`orchestrator.model.terms`'s, as everywhere else.

Everything here is deterministic and dependency-free. Normalisation is applied to the stored
page text itself (before hashing), so snippets cut from sentences or passages are verbatim
slices of the stored text and the evidence verifier can find them again.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

__all__ = [
    "dehyphenate_pages",
    "join_wrapped_lines",
    "normalize_chars",
    "normalize_page",
    "normalize_pages",
    "normalize_ws",
    "sentence_spans",
    "split_sentences",
    "wordlist",
]


def wordlist(text: str) -> list[str]:
    """Whitespace-separated words; keeps long constant lists readable in the source."""
    return text.split()


_LIGATURES = {
    "\ufb00": "ff",
    "\ufb01": "fi",
    "\ufb02": "fl",
    "\ufb03": "ffi",
    "\ufb04": "ffl",
    "\ufb05": "st",
    "\ufb06": "st",
}
# Soft hyphen, zero-width characters and the BOM carry no text; drop them.
_INVISIBLE = dict.fromkeys(map(ord, "\u00ad\u200b\u200c\u200d\u2060\ufeff"), None)
_SPACES = dict.fromkeys(
    map(
        ord, "\u00a0\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u202f\u205f\u3000\t\v"
    ),
    " ",
)
_CHAR_TABLE: dict[int, str | None] = {
    **{ord(k): v for k, v in _LIGATURES.items()},
    **_INVISIBLE,
    **_SPACES,
    ord("\f"): "\n",
    ord("\r"): "\n",
    ord("\u2028"): "\n",
    ord("\u2029"): "\n\n",
}

_WORD_RE = re.compile(r"[^\W\d_]+")


def normalize_chars(text: str) -> str:
    """Replace ligatures, odd spaces and invisible characters; never adds or merges lines."""
    return text.replace("\r\n", "\n").translate(_CHAR_TABLE)


def normalize_ws(text: str) -> str:
    """Collapse all whitespace (newlines included) to single spaces and strip."""
    return " ".join(text.split())


def normalize_page(text: str) -> str:
    """Character clean-up plus tidy whitespace, keeping line structure (no form feeds remain)."""
    text = normalize_chars(text)
    text = re.sub(r"[ ]+", " ", text)
    text = re.sub(r" *\n *", "\n", text)
    text = re.sub(r"\n{3,}", "\n\n", text)
    return text.strip()


def normalize_pages(pages: Sequence[str], *, dehyphenate: bool = True) -> tuple[str, ...]:
    """The one normalisation applied to stored page texts (so it happens before hashing)."""
    cleaned = [normalize_page(p) for p in pages]
    return tuple(dehyphenate_pages(cleaned) if dehyphenate else cleaned)


# --- de-hyphenation ------------------------------------------------------------------------

_SUFFIXES = frozenset(
    wordlist(
        """
    al ally ance ances ate ated ates ation ations ed ence ences er ers es ful ible ibility ies ing
    ings ion ions ise ised ism ist ists ity ive ization ize ized izes less ly ment ments ness ous
    tion tions ture tures
        """
    )
)
_BREAK_RE = re.compile(r"(\w+)-\n(\S+)(?:[ \t]+)?")
_PAIR_RE = re.compile(r"(?=(?<![^\W\d_])([^\W\d_]+)-([^\W\d_]+))")


class _Vocabulary:
    """Words and hyphenated pairs seen inline in a document, to decide line-break hyphens."""

    def __init__(self, texts: Iterable[str]) -> None:
        inline = [_BREAK_RE.sub(" ", t) for t in texts]
        self.words = {w.casefold() for t in inline for w in _WORD_RE.findall(t)}
        self.pairs = {(a.casefold(), b.casefold()) for t in inline for a, b in _PAIR_RE.findall(t)}

    def keep_hyphen(self, left: str, right: str) -> bool:
        """True when ``left-\\nright`` is a compound ("long-form"), False for a split word."""
        lw = (_WORD_RE.findall(left) or [""])[-1]
        rm = _WORD_RE.match(right)
        rw = rm.group() if rm else ""
        if not lw or not rw or not left[-1].isalpha() or not right[0].isalpha():
            return True  # "COVID-19", "1-\nmethyl": digits around the hyphen are never syllables
        a, b = lw.casefold(), rw.casefold()
        if a + b in self.words:
            return False
        if (a, b) in self.pairs or not rw[0].islower():
            return True
        if len(b) < 3 or b in _SUFFIXES:
            return False
        # "automatically-detected": an adverb in -ly before the hyphen is a whole word
        return (a in self.words and b in self.words) or (len(a) >= 5 and a.endswith("ly"))


def dehyphenate_pages(pages: Sequence[str]) -> list[str]:
    """Undo PDF line-break hyphenation ("informa-\\ntion" -> "information").

    The decision uses the document's own vocabulary: a joined form seen elsewhere wins, then a
    hyphenated form seen elsewhere, then "both halves are words" keeps the hyphen. The line
    break moves after the rejoined word so the line structure survives.
    """
    vocab = _Vocabulary(pages)

    def fix(m: re.Match[str]) -> str:
        left, right = m.group(1), m.group(2)
        joined = left + ("-" if vocab.keep_hyphen(left, right) else "") + right
        end = m.end()
        at_line_end = end >= len(m.string) or m.string[end] == "\n"
        return joined if at_line_end else joined + "\n"

    out = []
    for page in pages:
        for _ in range(8):  # a word may swallow the next break ("a-\nb-\nc"): repeat until stable
            fixed = _BREAK_RE.sub(fix, page)
            if fixed == page:
                break
            page = fixed
        out.append(page)
    return out


def join_wrapped_lines(lines: Sequence[str], context: Sequence[str] = ()) -> str:
    """Join wrapped lines (e.g. a title block) into one line, de-hyphenating like the pages."""
    text = "\n".join(normalize_chars(line).strip() for line in lines if line.strip())
    vocab = _Vocabulary([text, *context])

    def fix(m: re.Match[str]) -> str:
        left, right = m.group(1), m.group(2)
        return left + ("-" if vocab.keep_hyphen(left, right) else "") + right + " "

    return normalize_ws(_BREAK_RE.sub(fix, text))


# --- sentences -------------------------------------------------------------------------


_ABBREVIATIONS = frozenset(
    wordlist(
        """
    al approx apr aug ca cf ch chap co corp dec dept dr ed eds eg eq eqs esp est et feb fig figs
    ibid ie inc incl jan jr jul jun lt ltd mar max min mr mrs ms mt no nos nov oct op p pp prof ref
    refs resp sec secs sect sep sept sr st suppl tab univ viz vol vols vs
        """
    )
)
# A full stop, closing quotes/brackets and an optional "[12]" citation, before a capital or digit.
_TERMINATOR_RE = re.compile(
    r"[.!?]+[\"'\u201d\u2019)\]]*(?:\s?\[\d+(?:\s*[,\u2013-]\s*\d+)*\])?"
    r"(?=\s+[\"'\u201c\u2018(\[]?[A-Z0-9])"
)
#: "21. 03": a decimal that text extraction cut with a space (tables); no sentence starts with "03".
_SPLIT_DECIMAL_RE = re.compile(r"\d\. 0\d")
_PREV_WORD_RE = re.compile(r"([A-Za-z][A-Za-z.]*)\.$")
_BULLET_RE = re.compile(r"(?:[-*+•▪◦]|\d{1,2}[.)])\s+\S")
_NUMBERED_HEADING_RE = re.compile(r"\d+(?:\.\d+)*\.?\s+[A-Z][^.!?]*")
#: A footnote line: its number glued to its first word ("7We assume ...", "2https://...").
_FOOTNOTE_RE = re.compile(r"(?:\d{1,2}|[*\u2020\u2021\u00a7])(?=[A-Z][a-z]|https?:)")
_MAX_SENTENCE = 800


def _is_abbreviation(text: str, dot: int) -> bool:
    """True when the '.' at ``dot`` ends an abbreviation, an initial or a list number."""
    m = _PREV_WORD_RE.search(text, max(0, dot - 40), dot + 1)
    if m:
        word = m.group(1).casefold().replace(".", "")
        if word in _ABBREVIATIONS or (len(m.group(1)) == 1 and m.group(1).isupper()):
            return True
        if len(word) <= 3 and "." in m.group(1):  # "e.g.", "i.e.", "U.S."
            return True
    line_start = text.rfind("\n", 0, dot) + 1
    return text[line_start:dot].strip().isdigit()  # "2. Methods" at a line start


def _line_breaks(text: str) -> list[int]:
    """Offsets where a sentence must end whatever the punctuation: blank lines, headings, bullets."""
    lines = text.split("\n")
    lengths = sorted(len(x.strip()) for x in lines if x.strip())
    typical = lengths[len(lengths) // 2] if lengths else 0
    cuts: list[int] = []
    pos = 0
    for i, line in enumerate(lines):
        s = line.strip()
        nxt = lines[i + 1].strip() if i + 1 < len(lines) else ""
        if not s or _BULLET_RE.match(s):
            cuts.append(pos)  # a numbered heading ("3. Results") is a bullet too: it is also cut after, below
        if s and (foot := _FOOTNOTE_RE.match(line)) is not None:
            cuts.extend((pos, pos + foot.end()))  # the marker alone, then the footnote's own sentence
        elif s:
            short = len(s) <= 60 and len(s.split()) <= 8 and len(s) <= 0.6 * typical
            heading = (
                (short or (_NUMBERED_HEADING_RE.fullmatch(s) is not None and len(s.split()) <= 8))
                and s[-1] not in ".,;:!?-\u2013"
                and (s[0].isupper() or s[0].isdigit())
                and (not nxt or nxt[0].isupper() or nxt[0].isdigit())
            )
            if heading:
                cuts.extend((pos, pos + len(line)))
        pos += len(line) + 1
    return cuts


def _trim(text: str, start: int, end: int) -> tuple[int, int] | None:
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return (start, end) if end > start else None


def _split_long(text: str, start: int, end: int) -> list[tuple[int, int]]:
    """Cut over-long runs (tables, reference lists) at line breaks, else at spaces."""
    out: list[tuple[int, int]] = []
    while end - start > _MAX_SENTENCE:
        window = text[start : start + _MAX_SENTENCE]
        cut = window.rfind("\n", _MAX_SENTENCE // 3)
        if cut < 0:
            cut = window.rfind(" ", _MAX_SENTENCE // 3)
        cut = start + (cut if cut > 0 else _MAX_SENTENCE)
        span = _trim(text, start, cut)
        if span:
            out.append(span)
        start = cut
    span = _trim(text, start, end)
    if span:
        out.append(span)
    return out


def sentence_spans(text: str) -> list[tuple[int, int]]:
    """Sentence boundaries as (start, end) offsets into ``text`` (so slices stay verbatim).

    Handles abbreviations (e.g., et al., Fig.), initials, decimals, bracketed citations after
    the full stop ("shown.[12] Next"), and line-level structure (blank lines, headings, bullets).
    """
    cuts = set(_line_breaks(text))
    for m in _TERMINATOR_RE.finditer(text):
        dot = m.start()
        if text[dot] == "." and (_is_abbreviation(text, dot) or _SPLIT_DECIMAL_RE.match(text, dot - 1)):
            continue
        cuts.add(m.end())
    spans: list[tuple[int, int]] = []
    start = 0
    for cut in sorted(cuts | {len(text)}):
        if cut > start:
            spans.extend(_split_long(text, start, cut))
            start = cut
    return spans


def split_sentences(text: str) -> list[str]:
    """Sentences with whitespace normalised (for display and phrase extraction)."""
    return [normalize_ws(text[a:b]) for a, b in sentence_spans(text)]


