"""Showing a run as it happens: a live terminal table, plain lines, or JSON events.

Fed by the event log (every state change is an event), so what the user sees is
exactly what ``events.jsonl`` records.
"""

from __future__ import annotations

import json
import sys
import time
from typing import Any, TextIO

from orchestrator.session.costs import total_cost_usd

_SHOWN = {"run.started", "run.resumed", "phase.started", "iteration.started", "agent.dispatched", "agent.finished",
          "merge.committed", "merge.rejected", "agent.retrying", "agent.gave_up", "agent.failed",
          "gate.evaluated", "report.written", "run.finished", "model.retry_wait", "model.warning", "run.interrupted",
          "ingest.skipped", "research.stopped"}


def warning_lines(event: dict[str, Any]) -> list[str]:
    """One line per SHACL or check warning of a merge: where, and what."""
    lines = []
    for warning in (event.get("data") or {}).get("warnings") or ():
        if isinstance(warning, dict):
            where = f"{warning.get('file') or ''}{(' ' + warning['pointer']) if warning.get('pointer') else ''}"
            message = " ".join(str(warning.get("message", "")).split())
            lines.append(f"  warning: {where}: {message}")
    return lines


class PlainProgress:
    def __init__(self, stream: TextIO = sys.stdout):
        self.stream = stream
        self.started = time.monotonic()

    def __call__(self, event: dict[str, Any]) -> None:
        if event["type"] in _SHOWN:
            elapsed = time.monotonic() - self.started
            print(f"[{elapsed:6.1f}s] {event['message']}", file=self.stream, flush=True)
            for line in warning_lines(event):
                print(line, file=self.stream, flush=True)

    def close(self) -> None:
        pass


class JsonProgress:
    def __init__(self, stream: TextIO = sys.stdout):
        self.stream = stream

    def __call__(self, event: dict[str, Any]) -> None:
        print(json.dumps(event, ensure_ascii=False), file=self.stream, flush=True)

    def close(self) -> None:
        pass


class LiveProgress:
    """A rich live view: agents with their state and attempts, the run's totals, and the latest events.

    Every line is cut to the terminal's width (never wrapped), so the view stays readable at 80 columns.
    """

    TIMELINE = 6

    def __init__(self, session_root: Any, console: Any = None, *, start: bool = True):
        from rich.console import Console
        from rich.live import Live

        self.session_root = session_root
        self.console = console or Console()
        self.started = time.monotonic()
        self.agents: dict[str, dict[str, Any]] = {}
        self.phase = "-"
        self.iteration = 1
        self.claims = 0
        self.sources = 0
        self.last = ""
        self.timeline: list[str] = []
        self.live = Live(self._render(), console=self.console, refresh_per_second=4, transient=False)
        if start:
            self.live.start()

    def _render(self) -> Any:
        from rich.console import Group
        from rich.table import Table
        from rich.text import Text

        def line(text: str, style: str = "") -> Text:
            return Text(text, style=style, no_wrap=True, overflow="ellipsis")

        title = line(f"phase {self.phase} · iteration {self.iteration} · {len(self.agents)} agents · "
                     f"{self.sources} sources · {self.claims} claims · "
                     f"{time.monotonic() - self.started:.0f}s · ${total_cost_usd(self.session_root):.2f}", "bold")
        table = Table(box=None, pad_edge=False, expand=False)
        table.add_column("agent", no_wrap=True, overflow="ellipsis", max_width=40)
        table.add_column("state", no_wrap=True, overflow="ellipsis", max_width=12)
        table.add_column("attempt", justify="right", no_wrap=True, max_width=7)
        for name, info in sorted(self.agents.items()):
            table.add_row(name, info["state"], str(info.get("attempt", "")))
        events = [line(f"  {text}", "dim") for text in self.timeline[-self.TIMELINE:]]
        return Group(title, table, *events)

    def __call__(self, event: dict[str, Any]) -> None:
        kind, data = event["type"], event.get("data", {})
        agent = data.get("agent")
        states = {"agent.dispatched": "running", "merge.committed": "merged", "merge.rejected": "rejected",
                  "agent.retrying": "retrying", "agent.gave_up": "gave up", "agent.failed": "failed"}
        if kind in states and agent:
            entry = self.agents.setdefault(agent, {})
            entry["state"] = states[kind]
            if "attempt" in data:
                entry["attempt"] = data["attempt"]
        if kind == "phase.started":
            self.phase, self.iteration = data.get("phase", "-"), data.get("iteration", 1)
        if kind == "merge.committed":
            self._count()
        if kind in _SHOWN:
            self.last = event["message"]
            elapsed = time.monotonic() - self.started
            self.timeline.append(f"[{elapsed:5.0f}s] {' '.join(str(event['message']).split())}")
            self.timeline += warning_lines(event)
        self.live.update(self._render())

    def _count(self) -> None:
        try:
            stats = json.loads((self.session_root / "knowledge-graph.json").read_text()).get("stats", {})
        except (OSError, ValueError):
            return
        self.claims, self.sources = stats.get("claims_count", 0), stats.get("sources_count", 0)

    def close(self) -> None:
        self.live.stop()


def make_progress(mode: str, session_root: Any) -> Any:
    """``mode`` is quiet, json, live or plain; live falls back to plain when not on a terminal."""
    if mode == "quiet":
        return None
    if mode == "json":
        return JsonProgress()
    if mode == "live" and sys.stdout.isatty():
        return LiveProgress(session_root)
    return PlainProgress()
