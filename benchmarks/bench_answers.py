"""Does the offline report answer the question? Runs each eval question through `cconductor run`.

    python benchmarks/bench_answers.py [--quick N] [--only E07,E12] [--verbose]

Questions: benchmarks/eval/questions.jsonl (kind, question, expected paper file, page, answer phrase).
A question is answered when a cited sentence in the report's "Answer" or "Key Findings" section holds
the answer phrase (case and spacing ignored) and its citation marker names the expected paper. An
out-of-scope question passes when no section of the report cites anything. Prints accuracy by kind and the wall
time of each run (the target is under 30 s per run on a 2-core machine).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
PAPERS = ROOT.parent / "shared" / "data" / "scientific-pdfs"
QUESTIONS = Path(__file__).with_name("eval") / "questions.jsonl"
SECTIONS = ("Answer", "Key Findings")
_MARKER = re.compile(r"\[(\d+(?:[,;]\s*\d+)*)(?:, p\. [\w\u2013-]+)?\]")


def _flat(text: str) -> str:
    text = text.replace("\u2019", "'").replace("\u2018", "'").replace("\u201c", '"').replace("\u201d", '"')
    return " ".join(text.replace("*", "").split()).casefold()


def sections(markdown: str) -> dict[str, str]:
    """Level-2 headings -> their text."""
    out: dict[str, str] = {}
    for part in re.split(r"(?m)^## ", markdown)[1:]:
        heading, _, body = part.partition("\n")
        out[heading.strip()] = body
    return out


def cited_units(text: str) -> list[tuple[str, set[int]]]:
    """(text before a citation marker, reference numbers of the marker), in reading order."""
    units: list[tuple[str, set[int]]] = []
    last = 0
    for m in _MARKER.finditer(text):
        units.append((text[last : m.start()], {int(n) for n in re.split(r"[,;]\s*", m.group(1))}))
        last = m.end()
    return units


def reference_numbers(markdown: str, session: Path) -> dict[str, int]:
    """Paper file name -> its number in the report's bibliography (via the graph's source titles)."""
    graph = json.loads((session / "knowledge-graph.json").read_text(encoding="utf-8"))
    bib = sections(markdown).get("Bibliography", "")
    numbers: dict[str, int] = {}
    for source in graph.get("sources") or ():
        name = Path(str(source.get("local_path") or "")).name
        title = _flat(str(source.get("title") or ""))[:60]
        for m in re.finditer(r"\[(\d+)\] (.*)", bib):
            if title and title in _flat(m.group(2)):
                numbers[name] = int(m.group(1))
    return numbers


def judge(question: dict[str, Any], session: Path) -> tuple[bool, str]:
    markdown = (session / "mission-report.md").read_text(encoding="utf-8")
    parts = sections(markdown)
    text = "\n".join(parts.get(s, "") for s in SECTIONS)
    units = cited_units(text)
    if question["kind"] == "out-of-scope":  # nothing anywhere in the report may be cited as an answer
        prose = "\n".join(body for heading, body in parts.items() if heading != "Bibliography")
        cited = cited_units(prose)
        return not cited, f"{len(cited)} cited sentence(s) in the report"
    number = reference_numbers(markdown, session).get(question["paper"])
    phrase = _flat(question["answer"])
    if number is None:
        return False, "expected paper not in the bibliography"
    hit = any(phrase in _flat(unit) and number in refs for unit, refs in units)
    if hit:
        return True, "answered"
    anywhere = phrase in _flat(text)
    return False, "phrase present, other paper cited" if anywhere else "phrase missing"


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run_one(question: dict[str, Any], workdir: Path) -> tuple[bool, str, float]:
    """(answered, why, wall seconds) of one `cconductor run` of the question."""
    started = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-m", "orchestrator", "run", question["question"], "--mission", "academic-research",
         "--input-dir", str(PAPERS), "--json"],
        cwd=workdir, capture_output=True, text=True, timeout=300,
    )
    elapsed = time.perf_counter() - started
    result = next((json.loads(line) for line in reversed(proc.stdout.splitlines())
                   if line.startswith("{") and '"run.result"' in line), None)
    if result is None:
        return False, f"run failed (exit {proc.returncode}): {proc.stderr.strip()[-300:]}", elapsed
    ok, why = judge(question, Path(result["session"]))
    return ok, why, elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", type=int, default=0, help="run only the first N questions of each kind")
    parser.add_argument("--only", default="", help="comma-separated question ids")
    parser.add_argument("--verbose", action="store_true", help="print every question's outcome")
    args = parser.parse_args()
    questions = [json.loads(line) for line in QUESTIONS.read_text(encoding="utf-8").splitlines() if line.strip()]
    if args.only:
        wanted = set(args.only.split(","))
        questions = [q for q in questions if q["id"] in wanted]
    elif args.quick:
        per_kind: dict[str, int] = {}
        kept = []
        for q in questions:
            per_kind[q["kind"]] = per_kind.get(q["kind"], 0) + 1
            if per_kind[q["kind"]] <= args.quick:
                kept.append(q)
        questions = kept
    score: dict[str, list[int]] = {}
    times: list[float] = []
    cpu_before = _children_cpu()
    with tempfile.TemporaryDirectory(prefix="bench-answers-") as tmp:
        for q in questions:
            ok, why, elapsed = run_one(q, Path(tmp))
            times.append(elapsed)
            score.setdefault(q["kind"], [0, 0])
            score[q["kind"]][0] += int(ok)
            score[q["kind"]][1] += 1
            if args.verbose or not ok:
                print(f"{q['id']} {'ok  ' if ok else 'FAIL'} {elapsed:5.1f}s {q['kind']:<12} {q['question']}  ({why})",
                      flush=True)
    total = [sum(v[0] for v in score.values()), sum(v[1] for v in score.values())]
    for kind, (hits, n) in sorted(score.items()):
        print(f"{kind:<13} {hits:>3}/{n:<3} {100 * hits / n:5.1f}%")
    print(f"{'all':<13} {total[0]:>3}/{total[1]:<3} {100 * total[0] / max(1, total[1]):5.1f}%")
    if times:
        cpu = (_children_cpu() - cpu_before) / len(times)
        print(f"wall time per run: mean {sum(times) / len(times):.1f} s, max {max(times):.1f} s, "
              f"{len(times)} run(s); CPU time per run (all processes) {cpu:.1f} s; load average "
              f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")


if __name__ == "__main__":
    main()
