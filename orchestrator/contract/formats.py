"""The three string formats our schemas use (uri, date, date-time), checked by rules of our own.

jsonschema's own format checkers come from optional libraries (its ``format-nongpl`` extra), which
it imports with itself when they are installed: rfc3987-syntax alone builds a grammar at import
(about 0.8 s), rfc3986-validator and isoduration (with arrow) about 85 ms more, for formats our
schemas never use. So cconductor does not install them, and checks these three formats by cheap
rules that follow the RFC 3986 and RFC 3339 grammars (tests/test_schemas.py holds the cases), given
to both validators (jsonschema and jsonschema-rs) alike.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Callable, Mapping
from datetime import date, datetime
from types import MappingProxyType
from typing import Any

# RFC 3986 absolute URI: scheme ":" then only unreserved, reserved and percent-encoded characters,
# with at most one "#"; brackets only around an IPv6 host.
_URI_RE = re.compile(
    r"[A-Za-z][A-Za-z0-9+.-]*:"
    r"(?:[A-Za-z0-9\-._~!$&'()*+,;=:@/?]|%[0-9A-Fa-f]{2}|\[[0-9A-Fa-f:.]+\])*"
    r"(?:#(?:[A-Za-z0-9\-._~!$&'()*+,;=:@/?]|%[0-9A-Fa-f]{2})*)?"
)
# RFC 3339 date-time: full date, "T" (or "t"), time with seconds, optional fraction, and an offset.
_DATE_TIME_RE = re.compile(
    r"(\d{4}-\d{2}-\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(\.\d+)?([Zz]|[+-](\d{2}):(\d{2}))"
)
_DATE_RE = re.compile(r"\d{4}-\d{2}-\d{2}")


def is_uri(value: Any) -> bool:
    """An absolute URI (RFC 3986): 'https://example.org/a%20b' yes, '/relative/path' or 'a b' no."""
    return not isinstance(value, str) or _URI_RE.fullmatch(value) is not None


def is_date(value: Any) -> bool:
    """A full date (RFC 3339 full-date) that exists on the calendar."""
    if not isinstance(value, str):
        return True
    if not _DATE_RE.fullmatch(value):
        return False
    try:
        date.fromisoformat(value)
    except ValueError:
        return False
    return True


def is_date_time(value: Any) -> bool:
    """An RFC 3339 date-time with an offset; leap seconds (second 60) are accepted as RFC 3339 does."""
    if not isinstance(value, str):
        return True
    match = _DATE_TIME_RE.fullmatch(value)
    if not match or not is_date(match.group(1)):
        return False
    hour, minute, second = int(match.group(2)), int(match.group(3)), int(match.group(4))
    if hour > 23 or minute > 59 or second > 60:
        return False
    if match.group(7) is not None and (int(match.group(7)) > 23 or int(match.group(8)) > 59):
        return False
    with contextlib.suppress(ValueError):
        datetime.fromisoformat(f"{match.group(1)}T00:00:00")
        return True
    return False  # pragma: no cover - the date was checked above


#: The formats our schemas use and their one rule each (jsonschema and jsonschema-rs are given these).
FORMATS: Mapping[str, Callable[[Any], bool]] = MappingProxyType(
    {"uri": is_uri, "date": is_date, "date-time": is_date_time})


def format_checker() -> Any:
    """A FormatChecker that knows exactly the formats our schemas use."""
    from jsonschema import FormatChecker

    checker = FormatChecker(formats=())
    for name, rule in FORMATS.items():
        checker.checks(name)(rule)
    return checker
