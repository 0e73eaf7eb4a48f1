"""Does the right passage come back, in whose words, and is nothing returned when nothing answers?

    python benchmarks/bench_retrieval.py [--k 5] [--modes lexical,semantic,fused] [--verbose]

Measures the offline retriever (agents/offline/retrieval.py) directly, without a run, per ranking
mode (BM25 alone, static embeddings alone, both fused):

- eval set (benchmarks/eval/questions.jsonl): the answer phrase in a top-k unit of the right paper, per kind;
- out-of-scope honesty: benchmarks/eval/out_of_scope.txt over the papers and over the PubMedQA abstracts
  (nothing returned is right);
- PubMedQA-30 (../shared/data/eval/pubmedqa-30, expert-labelled, MIT): the right abstract first, one of its
  RESULTS sentences in the top 3, and the yes / no / unclear decision (agents/offline/stance.py) on the
  quoted sentences against the experts' yes / no / maybe (mixed and unclear count as maybe);
- the fictional company folder (tests/data/company-folder): the current value first, from the right
  document, and never an outdated value first.

Also prints the time to build each index (documents are read from the user cache after the first run).
"""

from __future__ import annotations

import argparse
import json
import os
import time
from collections import Counter
from pathlib import Path
from typing import Any

from answer_match import flat, same

from agents.offline.corpus import Corpus
from agents.offline.ingest import ingest_dirs
from agents.offline.retrieval import Retriever
from agents.offline.stance import decide
from agents.offline.textindex import PassageIndex

ROOT = Path(__file__).resolve().parents[1]
EVAL = ROOT / "benchmarks" / "eval"
PAPERS = ROOT / "tests" / "data" / "scientific-pdfs"
PUBMEDQA = next((p / "shared" / "data" / "eval" / "pubmedqa-30" for p in ROOT.parents[:2]
                 if (p / "shared" / "data" / "eval" / "pubmedqa-30").is_dir()), ROOT.parent / "shared")
COMPANY = ROOT / "tests" / "data" / "company-folder"
LABEL = {"yes": "yes", "no": "no", "mixed": "maybe", "unclear": "maybe"}






def _corpus(folder: Path) -> tuple[Retriever, dict[str, str], float]:
    started = time.perf_counter()
    docs = ingest_dirs([folder]).documents
    retriever = Retriever(Corpus({d.id: d for d in docs}, PassageIndex.build(docs)))
    names = {d.id: Path(str(d.source.get("local_path"))).name for d in docs}
    return retriever, names, time.perf_counter() - started


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--k", type=int, default=5)
    parser.add_argument("--modes", default="lexical,semantic,fused")
    parser.add_argument("--verbose", action="store_true")
    args = parser.parse_args()
    papers, paper_names, t_papers = _corpus(PAPERS)
    company, company_names, t_company = _corpus(COMPANY)
    pubmed = _corpus(PUBMEDQA / "docs") if PUBMEDQA.is_dir() else None
    print(f"index build: papers {t_papers:.1f} s, company {t_company:.1f} s"
          + (f", PubMedQA {pubmed[2]:.1f} s" if pubmed else "") + f"; load average {os.getloadavg()[0]:.1f}")
    questions = _lines(EVAL / "questions.jsonl")
    off = [q.strip() for q in (EVAL / "out_of_scope.txt").read_text(encoding="utf-8").splitlines() if q.strip()]
    for mode in args.modes.split(","):
        score: dict[str, list[int]] = {}
        for q in questions:
            found = papers.search(q["question"], limit=args.k, mode=mode)
            if q["kind"] == "out-of-scope":
                ok = not found
            else:
                ok = any(flat(q["answer"]) in flat(a.sentence.statement) and paper_names[a.sentence.source_id]
                         == q["paper"] for a in found)
            score.setdefault(q["kind"], [0, 0])[0] += ok
            score[q["kind"]][1] += 1
            if args.verbose and not ok:
                print(f"  {mode} miss {q['id']} {q['question']}")
        kinds = ", ".join(f"{k} {h}/{n}" for k, (h, n) in sorted(score.items()))
        honest = sum(not papers.search(q, limit=args.k, mode=mode) for q in off)
        print(f"{mode:>8} eval top-{args.k}: {kinds}; out-of-scope over the papers {honest}/{len(off)} declined")
        if pubmed:
            retriever, names, _ = pubmed
            first = results = agree = declined = 0
            matrix: Counter[tuple[str, str]] = Counter()
            for q in _lines(PUBMEDQA / "questions.jsonl"):
                found = retriever.search(q["question"], limit=6, mode=mode)
                best = [a for a in found if found and a.sentence.source_id == found[0].sentence.source_id]
                first += bool(found) and names[found[0].sentence.source_id] == q["source_doc"]
                results += any(names[a.sentence.source_id] == q["source_doc"] and a.section == "results"
                               for a in found[:3])
                results_said = [a for a in best if a.section == "results"]  # as the report decides (answer_lead)
                label = LABEL[decide(q["question"], [a.sentence.flat for a in results_said or best])]
                agree += label == q["expected_label"]
                matrix[(q["expected_label"], label)] += 1
            declined = sum(not retriever.search(q, limit=args.k, mode=mode) for q in off)
            print(f"{'':>8} PubMedQA-30: right abstract first {first}/30, a RESULTS sentence of it in the top 3 "
                  f"{results}/30, decision agrees with the experts {agree}/30 "
                  f"({', '.join(f'{e}->{g} {n}' for (e, g), n in sorted(matrix.items()))}); "
                  f"out-of-scope {declined}/{len(off)} declined")
        blind = _lines(EVAL / "blind" / "paraphrased.jsonl")
        blind_off = _lines(EVAL / "blind" / "paraphrased-out-of-scope.jsonl")
        for parity in ("odd", "even"):
            picked = [q for q in blind if (int(q["id"][1:]) % 2 == 1) == (parity == "odd")]
            hits: dict[str, list[int]] = {}
            for q in picked:
                found = papers.search(q["question"], limit=args.k, mode=mode)
                ok = any(paper_names[a.sentence.source_id] == q["paper"]
                         and same(a.sentence.flat, q["evidence"], q["answer"]) for a in found)
                hits.setdefault(q["kind"], [0, 0])[0] += ok
                hits[q["kind"]][1] += 1
                if args.verbose and not ok and parity == "odd":
                    print(f"  {mode} blind miss {q['id']} {q['question']}")
            off_picked = [q for q in blind_off if (int(q["id"][1:]) % 2 == 1) == (parity == "odd")]
            declined = sum(not papers.search(q["question"], limit=args.k, mode=mode) for q in off_picked)
            total = sum(h for h, _ in hits.values())
            print(f"{'':>8} blind paraphrases, {parity} ids: evidence in the top {args.k} {total}/{len(picked)} "
                  f"({', '.join(f'{k} {h}/{n}' for k, (h, n) in sorted(hits.items()))}); out-of-scope "
                  f"{declined}/{len(off_picked)} declined")
        right = outdated = 0
        company_qs = _lines(ROOT / "tests" / "data" / "company-questions.jsonl")
        for q in company_qs:
            found = company.search(q["question"], limit=3, mode=mode)
            if q["kind"] == "out-of-scope":
                right += not found
                continue
            docs = q["document"] if isinstance(q["document"], list) else [q["document"]]
            top = found[0] if found else None
            right += bool(top and flat(q["answer"]) in flat(top.sentence.statement)
                          and company_names[top.sentence.source_id] in docs)
            outdated += bool(top and any(flat(v) in flat(top.sentence.statement) for v in q["outdated"]))
        print(f"{'':>8} company folder: {right}/{len(company_qs)} right first, an outdated value first {outdated} "
              "time(s)")


if __name__ == "__main__":
    main()
