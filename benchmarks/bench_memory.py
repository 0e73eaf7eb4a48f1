"""Retries per successful merge with the repair memory empty and filled.

Run: ``python benchmarks/bench_memory.py [--per-class N] [--seed S]``.

A recorded set of rejected-then-fixed artifacts is generated deterministically: ten defect
classes (SHACL and JSON Schema, in sources.json and claims.json), ``--per-class`` instances
each, with different ids, titles and values per instance. Every instance goes through a real
session (``Processor``: schema, merge, SHACL, retry instructions, the memory hook) and a simple
deterministic "agent" that repairs using only the retry instructions: it applies one edit to
the field the first problem points at (in place: a failed edit stays), resubmits, and reads the
new retry instructions. Without a
remembered repair it tries its edits in a fixed order; when ``known_repairs`` names an edit
kind for the problem, it tries that one first.

Figures printed:
* memory empty - every instance starts with an empty memory;
* memory filled - a training set (other ids and values, same defect classes) is replayed
  first, then the same test set with the memory it left.
Retries per successful merge = resubmissions after rejections / merges (1.0 is the minimum:
the recorded defect is always rejected once). Last, the cost of the memory itself with
``--items`` items: a lookup by signature, recording one repair, reading the file cold.
"""

from __future__ import annotations

import argparse
import contextlib
import copy
import json
import os
import random
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from orchestrator.commit.processor import Processor  # noqa: E402
from orchestrator.memory import MEMORY_DIR_ENV  # noqa: E402
from orchestrator.memory.store import MemoryStore  # noqa: E402
from orchestrator.model.layout import SessionPaths  # noqa: E402
from orchestrator.session.record import create_session  # noqa: E402

Files = dict[str, Any]
MISSING = object()


# -- the recorded set ----------------------------------------------------------------------
def _source(rng: random.Random, n: int, **fields: Any) -> dict[str, Any]:
    return {"id": f"S{n}", "type": "journal-article", "title": f"Study {rng.randrange(10**6)} of merging",
            "authors": ["Ada Lovelace"], "year": rng.randrange(1990, 2025), **fields}


def _claims(rng: random.Random, **fields: Any) -> dict[str, Any]:
    return {"claims": [{"id": f"C{rng.randrange(1000)}", "statement": "Merging is hard.", "confidence": 0.7,
                        "priority": "medium", "evidence": [{"source_id": "S1", "snippet": "merging is hard"}],
                        **fields}]}


def _doi(rng: random.Random) -> str:
    return f"10.{rng.randrange(1000, 9999)}/ABC{rng.randrange(10**5)}"


def _sources(r: random.Random, **fields: Any) -> Files:
    return {"sources.json": {"sources": [_source(r, 1, **fields)]}}


#: name -> builder of a defective artifact set (the defect is the only error).
DEFECTS: dict[str, Callable[[random.Random], Files]] = {
    "doi as URL (SHACL pattern)": lambda r: _sources(r, doi="https://doi.org/" + _doi(r)),
    "year x10 (SHACL max)": lambda r: _sources(r, year=r.randrange(1990, 2025) * 10),
    "blank title (SHACL pattern)": lambda r: _sources(r, title=" " * r.randrange(1, 4)),
    "year as string (schema type)": lambda r: _sources(r, year=str(r.randrange(1990, 2025))),
    "type capitalised (schema enum)": lambda r: _sources(r, type="Journal-Article"),
    "negative citations (schema min)": lambda r: _sources(r, citation_count=-r.randrange(1, 50)),
    "bad date (schema format)": lambda r: _sources(r, published=f"20{r.randrange(10, 24)}-13-45"),
    "unknown field (schema additional)": lambda r: _sources(r, autors=["X"]),
    "sha upper case (schema pattern)": lambda r: _sources(
        r, content_sha256="".join(r.choice("0123456789ABCDEF") for _ in range(64))),
    "confidence in percent (schema max)": lambda r: {**_sources(r),
                                                     "claims.json": _claims(r, confidence=float(r.randrange(51, 99)))},
}


def recorded_set(seed: int, per_class: int) -> list[tuple[str, Files]]:
    rng = random.Random(seed)
    return [(name, build(rng)) for _ in range(per_class) for name, build in DEFECTS.items()]


# -- the deterministic agent ---------------------------------------------------------------
def _lowered(value: Any) -> Any:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return MISSING
    if isinstance(value, float) and value > 1:
        return round(value / 100, 4)  # a percentage where a fraction belongs
    return int(str(abs(value))[:4]) if isinstance(value, int) and value > 9999 else MISSING


def _prefix_removed(value: Any) -> Any:
    if not isinstance(value, str) or "://" not in value:
        return MISSING
    return value.split("://", 1)[1].split("/", 1)[-1]


#: The agent's edits, in the fixed order it tries them without a remembered repair.
EDITS: list[tuple[str, Callable[[Any], Any]]] = [
    ("whitespace trimmed", lambda v: v.strip() if isinstance(v, str) else MISSING),
    ("case changed", lambda v: v.lower() if isinstance(v, str) else MISSING),
    ("type changed (string to integer)", lambda v: int(v) if isinstance(v, str) and v.strip().isdigit() else MISSING),
    ("prefix removed", _prefix_removed),
    ("value lowered", _lowered),
    ("value raised", lambda v: abs(v) if isinstance(v, int | float) and not isinstance(v, bool) else MISSING),
    ("replaced", lambda v: "Untitled source" if isinstance(v, str) else MISSING),
    ("removed", lambda v: MISSING if v is MISSING else None),  # None: delete the field
]


def _split(pointer: str) -> list[str]:
    return [p.replace("~1", "/").replace("~0", "~") for p in pointer.split("/")[1:]]


def _edit(files: Files, rel: str, pointer: str, edit: Callable[[Any], Any]) -> Files | None:
    """A copy of ``files`` with ``edit`` applied at ``pointer`` of ``rel``; None if it does not apply."""
    out = copy.deepcopy(files)
    name = rel.rsplit("/", 1)[-1]
    parts = _split(pointer)
    if name not in out or not parts:
        return None
    parent: Any = out[name]
    for part in parts[:-1]:
        parent = parent[int(part)] if isinstance(parent, list) else parent.get(part)
        if parent is None:
            return None
    key: Any = int(parts[-1]) if isinstance(parent, list) else parts[-1]
    value = parent[key] if isinstance(parent, list) else parent.get(key, MISSING)
    new = edit(value)
    if new is MISSING or (new == value and type(new) is type(value)):
        return None
    if new is None:
        del parent[key]
    else:
        parent[key] = new
    return out


def _first_problem(doc: dict[str, Any]) -> tuple[str, str, list[str]]:
    """(file, pointer, remembered edit kinds) of the first blocking problem."""
    candidates = [p for f in doc["files"] for p in f["problems"] if p["severity"] == "error"]
    candidates += [v for v in doc["shacl_violations"] if v["severity"] == "error"]
    problem = candidates[0]
    pointer = problem["pointer"]
    field = (problem.get("details") or {}).get("field")
    if problem.get("rule") == "schema.additionalProperties" and field:
        pointer += "/" + str(field).replace("~", "~0").replace("/", "~1")
    known = [r["repair"].rsplit(": ", 1)[-1] for k in doc.get("known_repairs", [])
             if k["file"] == problem["file"] and k["pointer"] == problem["pointer"] for r in k["repairs"]]
    return problem["file"], pointer, known


@dataclass
class Tally:
    merges: int = 0
    retries: int = 0
    failures: int = 0


def _submit(paths: SessionPaths, processor: Processor, agent: str, files: Files) -> str:
    folder = paths.agent_artifacts(agent)
    folder.mkdir(parents=True, exist_ok=True)
    for old in folder.iterdir():
        old.unlink()
    for name, data in files.items():
        (folder / name).write_text(json.dumps(data), encoding="utf-8")
    with contextlib.suppress(FileNotFoundError):
        paths.lock_error(agent).unlink()
    paths.lock(agent).touch()
    (outcome,) = [o for o in processor.process_pending([agent]) if o.agent == agent]
    return outcome.status


def repair(paths: SessionPaths, processor: Processor, agent: str, defective: Files) -> int | None:
    """Submit the defective set, then repair it from retry instructions; return the retries (None: gave up).

    Like an agent editing its files in place, each edit is made to the current files (a failed
    edit stays), at the field the first blocking problem of the latest instructions points at.
    """
    if _submit(paths, processor, agent, defective) != "rejected":
        raise SystemExit(f"{agent}: the recorded defect was not rejected; the recorded set is wrong")
    current, retries, tried = defective, 0, set()
    while retries < 2 * len(EDITS):
        doc = json.loads(paths.retry_instructions(agent).read_text(encoding="utf-8"))
        rel, pointer, known = _first_problem(doc)
        order = [e for k in known for e in EDITS if e[0] == k] + EDITS
        step = next(((kind, fixed) for kind, edit in order if (rel, pointer, kind) not in tried
                     and (fixed := _edit(current, rel, pointer, edit)) is not None), None)
        if step is None:
            return None
        tried.add((rel, pointer, step[0]))
        current = step[1]
        retries += 1
        if _submit(paths, processor, agent, current) == "merged":
            return retries
    return None


def replay(workdir: Path, label: str, cases: list[tuple[str, Files]], fresh_memory: bool) -> dict[str, Tally]:
    paths = create_session(workdir / "sessions", f"bench-memory {label}", "bench")
    processor = Processor(paths)
    tallies: dict[str, Tally] = defaultdict(Tally)
    try:
        for n, (name, files) in enumerate(cases):
            if fresh_memory:
                os.environ[MEMORY_DIR_ENV] = str(workdir / "memories" / f"{label}-{n}")
            retries = repair(paths, processor, f"agent-{n:03d}", files)
            tally = tallies[name]
            if retries is None:
                tally.failures += 1
            else:
                tally.merges += 1
                tally.retries += retries
    finally:
        processor.close()
    return tallies


def store_costs(folder: Path, items: int, repeat: int = 9) -> tuple[float, float, float]:
    """Median seconds of a lookup (SPARQL by signature), of one recorded repair, and of a cold parse."""
    import statistics

    from orchestrator.memory.signature import Signature

    store = MemoryStore(folder)
    sigs = [Signature("rule", "claims.json", f"reference.r{n}", (("at", f"claims[].f{n}"),)) for n in range(items)]
    store.record([(sig, f"claims[].f{n}: added") for n, sig in enumerate(sigs)], "bench", "2026-01-01T00:00:00Z")
    lookups, records = [], []
    for n in range(repeat):
        started = time.perf_counter()
        store.best([sigs[n].id, sigs[-n - 1].id])
        lookups.append(time.perf_counter() - started)
        started = time.perf_counter()
        store.record([(sigs[n], "claims[].x: removed")], "bench", "2026-01-01T00:00:01Z")
        records.append(time.perf_counter() - started)
    MemoryStore._cache.clear()
    started = time.perf_counter()
    store.graph()
    return statistics.median(lookups), statistics.median(records), time.perf_counter() - started


def _ratio(tallies: dict[str, Tally]) -> tuple[float, int, int, int]:
    merges = sum(t.merges for t in tallies.values())
    retries = sum(t.retries for t in tallies.values())
    return (retries / merges if merges else float("nan")), retries, merges, sum(t.failures for t in tallies.values())


@contextlib.contextmanager
def _workdir(keep: bool) -> Iterator[Path]:
    if keep:
        yield Path(tempfile.mkdtemp(prefix="bench-memory-"))
        return
    with tempfile.TemporaryDirectory(prefix="bench-memory-") as tmp:
        yield Path(tmp)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--per-class", type=int, default=4, help="instances per defect class (default 4)")
    parser.add_argument("--seed", type=int, default=12, help="seed of the test set; training uses seed+1")
    parser.add_argument("--items", type=int, default=1000, help="items of the memory whose costs are timed")
    parser.add_argument("--keep", action="store_true", help="keep the temporary sessions and memories")
    args = parser.parse_args()
    test = recorded_set(args.seed, args.per_class)
    training = recorded_set(args.seed + 1, args.per_class)
    started = time.perf_counter()
    with _workdir(args.keep) as workdir:
        empty = replay(workdir, "empty", test, fresh_memory=True)
        os.environ[MEMORY_DIR_ENV] = str(workdir / "memories" / "shared")
        replay(workdir, "training", training, fresh_memory=False)
        items = len(MemoryStore().items())
        filled = replay(workdir, "filled", test, fresh_memory=False)
        lookup, record, parse = store_costs(workdir / "memories" / "large", args.items)
        if args.keep:
            print(f"kept {workdir}")
    print(f"recorded set: {len(DEFECTS)} defect classes x {args.per_class} instances = {len(test)} agents "
          f"(training set: {len(training)} others); memory after training: {items} repair items")
    print(f"{'defect class':<36} {'empty':>8} {'filled':>8}   (retries per successful merge)")
    for name in DEFECTS:
        print(f"{name:<36} {_ratio({name: empty[name]})[0]:>8.2f} {_ratio({name: filled[name]})[0]:>8.2f}")
    for label, tallies in (("memory empty", empty), ("memory filled", filled)):
        ratio, retries, merges, failures = _ratio(tallies)
        print(f"{label:<14}: {ratio:.2f} retries per successful merge ({retries} retries, {merges} merges, "
              f"{failures} gave up)")
    print(f"memory of {args.items} items: lookup {lookup * 1000:.0f} ms, record one repair {record * 1000:.0f} ms "
          f"(median), first read {parse * 1000:.0f} ms; load average {os.getloadavg()[0]:.1f} on "
          f"{os.cpu_count()} CPUs")
    print(f"elapsed {time.perf_counter() - started:.1f} s")


if __name__ == "__main__":
    main()
