"""Does the offline report answer the question? Runs each question of a set through `cconductor run`.

    python benchmarks/bench_answers.py [--set eval|blind-odd|blind-even|company|pubmedqa] [--quick N]
                                       [--only E07,E12] [--verbose] [--keep DIR]

Sets: ``eval`` (benchmarks/eval/questions.jsonl over the eight papers), ``blind-odd`` / ``blind-even``
(benchmarks/eval/blind: paraphrases written by someone who never saw the papers; tune on odd ids only),
``company`` (the fictional company folder with archived older figures, tests/data), ``pubmedqa``
(PubMedQA-30 from ../shared/data/eval, expert yes/no/maybe labels).

A question is answered when a cited sentence of the report's ``## Answer`` section holds the answer
(the answer phrase, or for the blind set its evidence sentence) and its citation names the expected
document; for ``company`` the first cited figure must not be an outdated one; for ``pubmedqa`` the right
abstract and one of its RESULTS sentences must be cited and the decision word the Answer opens with
("Yes." / "No." / mixed or unclear = maybe) is compared with the experts'; both figures are printed for the
odd-numbered questions (tune on these), the even ones (report only) and all. An out-of-scope question passes
when no section of the report cites anything. Prints accuracy by kind and the wall and CPU time per run;
``--keep DIR`` keeps each run's session folder under DIR for reading the misses.
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

from answer_match import flat, same

ROOT = Path(__file__).resolve().parents[1]
EVAL = Path(__file__).with_name("eval")
PAPERS = ROOT / "tests" / "data" / "scientific-pdfs"
PUBMEDQA = next((p / "shared" / "data" / "eval" / "pubmedqa-30" for p in ROOT.parents[:2]
                 if (p / "shared" / "data" / "eval" / "pubmedqa-30").is_dir()), ROOT.parent / "shared")
SECTIONS = ("Answer",)
_MARKER = re.compile(r"\[(\d+(?:[,;]\s*\d+)*)(?:, p\. [\w\u2013-]+)?\]")




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
    entries = [(int(m.group(1)), flat(m.group(2))) for m in re.finditer(r"\[(\d+)\] (.*)", bib)]
    for source in graph.get("sources") or ():
        name = Path(str(source.get("local_path") or "")).name
        title = flat(str(source.get("title") or ""))[:60]
        titled = [n for n, entry in entries if title and title in entry]
        named = [n for n in titled if flat(name) in dict(entries)[n]]  # two versions share a title: the file
        if named or titled:
            numbers[name] = (named or titled)[0]
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
    names = question["document"] if isinstance(question["document"], list) else [question["document"]]
    numbers = {n for name, n in reference_numbers(markdown, session).items() if name in names}
    if question.get("label"):  # PubMedQA: the decision the Answer opens with, judged whatever it cites
        opening = flat(text)[:60]
        question["said"] = "yes" if opening.startswith("yes.") else "no" if opening.startswith("no.") else "maybe"
    if not numbers:
        return False, "expected document not in the bibliography"
    if "results" in question:  # PubMedQA: a sentence of the abstract's results section, cited from it
        hit = any(numbers & refs and _in_results(unit, question["results"]) for unit, refs in units)
        return hit, f"decision {question['said']} (experts {question['label']})" + ("" if hit else
                                                                                     ", no results sentence cited")
    if "evidence" in question:  # blind set: the evidence sentence (or a short answer) cited from the paper
        hit = any(same(unit, question["evidence"], question["answer"]) and numbers & refs for unit, refs in units)
    else:
        hit = any(flat(question["answer"]) in flat(unit) and numbers & refs for unit, refs in units)
    if question.get("outdated") and units:
        first = units[0][0].rsplit("Outdated, not the current value", 1)[0]
        if any(flat(v) in flat(first) for v in question["outdated"]):
            return False, "an outdated value is given first"
    return hit, "answered" if hit else "not in the Answer"


def results_section(abstract: str) -> str:
    """The results of a structured abstract: what follows its "RESULTS:" (or a case report's "CASE DESCRIPTION:")
    label; PubMedQA's abstracts stop there (their conclusion is the reference answer)."""
    labels = list(re.finditer(r"\b(?:[A-Z]+ )*(?:RESULTS|CASE (?:DESCRIPTION|REPORT)):", abstract))
    return abstract[labels[-1].start():] if labels else ""


def _in_results(unit: str, results: str) -> bool:
    """A cited unit is a results sentence when its last words (the sentence, after any lead) are in the results."""
    words = flat(re.sub(r"\\([\\`*_{}\[\]()#+.!<>|-])", r"\1", unit)).split()  # Markdown escapes undone
    return len(words) >= 4 and " ".join(words[-12:]) in flat(results)


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def load_set(name: str) -> tuple[list[dict[str, Any]], Path]:
    """The questions of a set (normalised: id, kind, question, document, answer...) and their folder."""
    def lines(path: Path) -> list[dict[str, Any]]:
        return [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x.strip()]

    if name == "eval":
        return [{**q, "document": q.get("paper", "")} for q in lines(EVAL / "questions.jsonl")], PAPERS
    if name.startswith("blind-"):
        odd = name == "blind-odd"
        keep = [q for q in lines(EVAL / "blind" / "paraphrased.jsonl") if (int(q["id"][1:]) % 2 == 1) == odd]
        off = [q for q in lines(EVAL / "blind" / "paraphrased-out-of-scope.jsonl")
               if (int(q["id"][1:]) % 2 == 1) == odd]
        return ([{**q, "document": q["paper"]} for q in keep]
                + [{**q, "kind": "out-of-scope", "document": ""} for q in off]), PAPERS
    if name == "company":
        return lines(ROOT / "tests" / "data" / "company-questions.jsonl"), ROOT / "tests" / "data" / "company-folder"
    if name == "pubmedqa":
        docs = PUBMEDQA / "docs"
        return [{"id": q["id"], "kind": q["expected_label"], "question": q["question"], "document": q["source_doc"],
                 "results": results_section((docs / q["source_doc"]).read_text(encoding="utf-8")),
                 "label": q["expected_label"]} for q in lines(PUBMEDQA / "questions.jsonl")], docs
    raise SystemExit(f"unknown set {name!r}: eval, blind-odd, blind-even, company or pubmedqa")


def run_one(question: dict[str, Any], workdir: Path, folder: Path) -> tuple[bool, str, float]:
    """(answered, why, wall seconds) of one `cconductor run` of the question."""
    started = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-m", "orchestrator", "run", question["question"], "--input-dir", str(folder), "--json"],
        cwd=workdir, capture_output=True, text=True, timeout=300,
    )
    elapsed = time.perf_counter() - started
    result = next((json.loads(line) for line in reversed(proc.stdout.splitlines())
                   if line.startswith("{") and '"run.result"' in line), None)
    if result is None:
        return False, f"run failed (exit {proc.returncode}): {proc.stderr.strip()[-300:]}", elapsed
    ok, why = judge(question, Path(result["session"]))
    return ok, why, elapsed


def _print_decisions(decided: list[dict[str, Any]]) -> None:
    """Both PubMedQA figures for the odd-numbered questions (the development half), the even ones and all."""
    def number(q: dict[str, Any]) -> int:
        return int(re.sub(r"\D", "", q["id"]) or 0)

    halves = {"odd": [q for q in decided if number(q) % 2 == 1], "even": [q for q in decided if number(q) % 2 == 0],
              "all": decided}
    for name, part in halves.items():
        agree = sum(q["said"] == q["label"] for q in part)
        cited = sum(bool(q.get("cited")) for q in part)
        print(f"{name:<5} decision agrees with the experts {agree:>2}/{len(part):<2}  "
              f"right abstract and results sentence cited {cited:>2}/{len(part)}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", type=int, default=0, help="run only the first N questions of each kind")
    parser.add_argument("--only", default="", help="comma-separated question ids")
    parser.add_argument("--verbose", action="store_true", help="print every question's outcome")
    parser.add_argument("--set", default="eval", help="eval, blind-odd, blind-even, company or pubmedqa")
    parser.add_argument("--keep", default="", help="keep each run's session folder under this folder")
    args = parser.parse_args()
    questions, folder = load_set(args.set)
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
            workdir = Path(args.keep or tmp) / q["id"] if args.keep else Path(tmp)
            workdir.mkdir(parents=True, exist_ok=True)
            ok, why, elapsed = run_one(q, workdir, folder)
            q["cited"] = ok
            times.append(elapsed)
            score.setdefault(q["kind"], [0, 0])
            score[q["kind"]][0] += int(ok)
            score[q["kind"]][1] += 1
            if args.verbose or not ok:
                print(f"{q['id']} {'ok  ' if ok else 'FAIL'} {elapsed:5.1f}s {q['kind']:<12} {q['question']}  ({why})",
                      flush=True)
    total = [sum(v[0] for v in score.values()), sum(v[1] for v in score.values())]
    decided = [q for q in questions if "said" in q]
    if decided:
        _print_decisions(decided)
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
