"""Acceptance: `cconductor run --backend anthropic` end to end through the real SDK, with no network.

A fake Messages API on 127.0.0.1 acts like a careful researcher: it works out from each request
(the output tool, the system prompt, ``tool_choice``, the conversation so far) which agent it
talks to and answers as that agent would. The planner gets a plan; each researcher searches the
scholarly providers (``search_papers``), reads the real paper metadata in the tool result, stores
abstracts (``fetch_paper_metadata``) and quotes them verbatim; the fact-checker searches the
stored texts and scores every claim; the synthesis writes an outline citing the verified claims.
The providers inside the agent processes are served the recorded real API responses by
:class:`tests.fake_scholarly.FakeScholarly` through the providers' base-URL override. A
``sitecustomize`` guard in every process of the run refuses and logs any connection that is not
to 127.0.0.1, so a stray request fails the test instead of reaching the network.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import signal
import string
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from orchestrator.run.definitions import load_definitions
from orchestrator.session.events import read_events
from tests import fake_anthropic as fa
from tests.fake_scholarly import FakeScholarly

KEY = "sk-ant-test-SECRET-e2e-123"
QUESTION = "How is machine learning used in public health?"
BASE_TERMS = ["machine learning", "public health"]
#: (id, question, focus keywords, priority): the plan the fake planner submits.
PLAN = [
    ("Q1", "How is machine learning used for public health surveillance?", ["surveillance"], "high"),
    (
        "Q2",
        "What fairness, equity and bias concerns does machine learning raise in public health?",
        ["fairness", "equity", "bias"],
        "high",
    ),
    ("Q3", "How well does machine learning predict health outcomes?", ["predict"], "medium"),
]
PAPERS_PER_RESEARCHER = 5
MAX_MODEL_CALLS = 40  # the fake answers at most this many requests, then fails the test
RUN_TIMEOUT = 150.0
ROLES = {
    "submit_plan": "research-planner",
    "submit_research": "academic-researcher",
    "submit_assessment": "fact-checker",
    "submit_synthesis": "synthesis-agent",
}
NETWORK_GUARD = r'''
"""Test guard (written by tests/test_claude_mission.py): no connection except to this machine."""
import os
import socket

_LOG = os.environ.get("CCONDUCTOR_TEST_NETWORK_LOG")
_LOCAL = {"127.0.0.1", "::1", "localhost", b"127.0.0.1", b"localhost", None}
if os.environ.get("CCONDUCTOR_TEST_GUARDED"):
    with open(os.environ["CCONDUCTOR_TEST_GUARDED"], "a", encoding="utf-8") as guarded:
        guarded.write(f"{os.getpid()} {os.environ.get('CCONDUCTOR_TASK', '-')}\n")


def _refuse(what, target):
    if _LOG:
        with open(_LOG, "a", encoding="utf-8") as log:
            log.write(f"pid {os.getpid()}: {what} {target!r}\n")
    raise OSError(f"network access refused by the test guard: {what} {target!r}")


def _guarded(original, what):
    def call(self, address, *args, **kwargs):
        if self.family in (socket.AF_INET, socket.AF_INET6) and address[0] not in _LOCAL:
            _refuse(what, address)
        return original(self, address, *args, **kwargs)
    return call


_getaddrinfo = socket.getaddrinfo


def _resolve(host, *args, **kwargs):
    if host not in _LOCAL:
        _refuse("getaddrinfo", host)
    return _getaddrinfo(host, *args, **kwargs)


socket.socket.connect = _guarded(socket.socket.connect, "connect")
socket.socket.connect_ex = _guarded(socket.socket.connect_ex, "connect_ex")
socket.getaddrinfo = _resolve
'''


# -- the fake researcher behind the Messages API ------------------------------------------------

_ALPHABET = string.ascii_letters + string.digits


def ident(prefix: str, seed: str, length: int = 22) -> str:
    """An id shaped like the recorded ones (msg_01..., toolu_01..., req_011C...), fixed by ``seed``."""
    digest = hashlib.sha256(seed.encode("utf-8")).digest()
    return prefix + "".join(_ALPHABET[b % len(_ALPHABET)] for b in digest[:length])


def first_text(request: fa.Body) -> str:
    content = request["messages"][0]["content"]
    return content if isinstance(content, str) else "\n".join(b.get("text", "") for b in content)


def lines_after(text: str, header: str) -> list[str]:
    """The ``- `` lines of the block that starts with ``header``."""
    block = text.split(header, 1)[1].split("\n\n", 1)[0] if header in text else ""
    return [line for line in block.splitlines() if line.startswith("- ")]


SEARCH_RESULT = re.compile(
    r"^- (?P<title>.*) \((?P<year>[^;]*); (?P<authors>.*?)\) venue=(?P<venue>.*) doi=(?P<doi>\S+) "
    r"arxiv_id=(?P<arxiv>\S+) paper_id=(?P<pid>\S+) open_pdf=\S+$"
)
STORED = re.compile(r"stored as source_id=(\S+) \(title and abstract, 1 page\):\n(.*?)\n</untrusted-data>", re.S)
PREPRINT_DOI = re.compile(r"^-$|^10\.(48550|31219)/|preprints\.|ssrn")


@dataclass
class Call:
    role: str
    request_id: str
    usage: dict[str, Any]


@dataclass
class ResearcherModel:
    """Answers each Messages API request the way the agent behind it expects a model to."""

    prompts: dict[str, str] = field(default_factory=dict)
    calls: list[Call] = field(default_factory=list)
    only: tuple[str, ...] = ()  # roles allowed to call (empty: all)

    def __post_init__(self) -> None:
        definitions = load_definitions()
        self.prompts = {role: definitions[role].system_prompt().strip() for role in ROLES.values()}
        self._lock = threading.Lock()

    def __call__(self, request: fa.Body) -> fa.Reply:
        tools = request.get("tools") or []
        role = ROLES.get(tools[-1]["name"] if tools else "", "")
        assert role, f"a request without a known output tool: {[t.get('name') for t in tools]}"
        assert not self.only or role in self.only, f"{role} called the model, but only {self.only} may"
        assert request["system"][0]["text"] == self.prompts[role], f"{role}: not its system prompt"
        assert request["system"][0]["cache_control"]["type"] == "ephemeral"
        content = getattr(self, role.replace("-", "_"))(request)
        if (request.get("output_config") or {}).get("format"):  # structured output: the answer is JSON text
            [answer] = [b for b in content if b["type"] == "tool_use" and b["name"] == tools[-1]["name"]]
            content = [fa.text(json.dumps(answer["input"]))]
        seed = json.dumps(request, sort_keys=True)
        for n, block in enumerate(content):
            if block["type"] == "tool_use":
                block["id"] = ident("toolu_01", f"{seed}#{n}")
        stop = "tool_use" if any(b["type"] == "tool_use" for b in content) else "end_turn"
        cached = (len(json.dumps(request["system"])) + len(json.dumps(tools))) // 4
        first_turn = len(request["messages"]) == 1
        use = fa.usage(
            max(1, len(seed) // 4 - cached),
            len(json.dumps(content)) // 4 + 25,
            cache_read=0 if first_turn else cached,
            cache_write=cached if first_turn else 0,
        )
        body = fa.message(content, stop, model=request["model"], use=use)
        body["id"] = ident("msg_01", seed)
        request_id = ident("req_011C", seed, 20)
        with self._lock:
            self.calls.append(Call(role, request_id, use))
        return fa.Reply(200, body, {"request-id": request_id})

    # -- the agents ------------------------------------------------------------------------------
    def research_planner(self, request: fa.Body) -> list[fa.Body]:
        assert request["tool_choice"] == {"type": "tool", "name": "submit_plan"}
        assert len(request["messages"]) == 1, "the planner's plan was rejected and re-asked"
        asked = re.search(r"^Research question: (.*)$", first_text(request), re.M)
        assert asked and asked.group(1) == QUESTION
        questions = [
            {"id": qid, "question": q, "priority": p, "keywords": [*BASE_TERMS, *focus]} for qid, q, focus, p in PLAN
        ]
        plan = {
            "query": QUESTION,
            "sub_questions": questions,
            "strategy": "Search the scholarly indexes per sub-question and quote the abstracts.",
        }
        return [fa.tool_use("submit_plan", plan)]

    def academic_researcher(self, request: fa.Body) -> list[fa.Body]:
        brief = first_text(request)
        (line,) = lines_after(brief, "Sub-questions:")
        found = re.match(r"^- (\S+): (.*) \(keywords: (.*)\)$", line)
        assert found, line
        question_id, keywords = found.group(1), found.group(3).split(", ")
        if len(request["messages"]) == 1:
            assert request["tool_choice"] == {"type": "auto"}
            names = {t["name"] for t in request["tools"]}
            assert {
                "search_papers",
                "fetch_paper_metadata",
                "fetch_open_access_pdf",
                "search_passages",
                "read_source_page",
            } <= names, names
            return [
                fa.text("I will search the scholarly indexes first."),
                fa.tool_use("search_papers", {"query": " ".join(keywords), "limit": 10}),
            ]
        results = fa.tool_results(request)
        assert results and not any(r.get("is_error") for r in results), f"a tool failed: {results}"
        if results[0]["content"].startswith('<untrusted-data tool="search_papers">'):
            chosen = self._choose(results[0]["content"])
            assert chosen, f"no usable paper in the search results:\n{results[0]['content'][:3000]}"
            return [
                fa.text("These papers look relevant; I will store their abstracts."),
                *(fa.tool_use("fetch_paper_metadata", {"identifier": doi}) for doi in chosen),
            ]
        stored = [m for r in results for m in STORED.findall(r["content"])]
        assert len(stored) == len(results), f"not every fetch stored a source: {results}"
        claims = []
        for n, (source_id, page) in enumerate(stored, 1):
            claims.append(
                {
                    "id": f"C{n}",
                    "statement": quote(page),
                    "confidence": 0.8,
                    "priority": "high" if n == 1 else "medium",
                    "sub_question_id": question_id,
                    "evidence": [{"source_id": source_id, "snippet": quote(page), "locator": {"page": 1}}],
                }
            )
        # No "sources": the fetched records are written as they are (the tools never show a source's type,
        # which sources.json requires and which would then replace the provider's).
        return [fa.tool_use("submit_research", {"claims": claims})]

    @staticmethod
    def _choose(listing: str) -> list[str]:
        """DOIs of the best-ranked results that look like published papers with an abstract."""
        lines = listing.splitlines()
        chosen: list[str] = []
        for i, line in enumerate(lines):
            entry = SEARCH_RESULT.match(line)
            abstract = i + 1 < len(lines) and lines[i + 1].startswith("  abstract: ")
            if entry and abstract and entry["venue"] != "-" and not PREPRINT_DOI.search(entry["doi"]):
                chosen.append(entry["doi"])
        return chosen[:PAPERS_PER_RESEARCHER]

    def fact_checker(self, request: fa.Body) -> list[fa.Body]:
        brief = first_text(request)
        claims: list[tuple[str, list[str], str]] = []
        for line in brief.splitlines():
            if (head := re.match(r"^- (\S+) \[", line)) is not None:
                claims.append((head.group(1), [], ""))
            elif (ev := re.match(r'^\s+evidence (\S+) p\.1 \(verified\): "(.*)"$', line)) is not None:
                claims[-1][1].append(ev.group(1))
                claims[-1] = (claims[-1][0], claims[-1][1], claims[-1][2] or ev.group(2))
        assert claims and all(sources for _, sources, _ in claims), f"claims without verified evidence:\n{brief}"
        if len(request["messages"]) == 1:
            words = " ".join(claims[0][2].split()[:8])
            return [
                fa.text("Let me look for corroboration."),
                fa.tool_use("search_passages", {"query": words, "limit": 3}),
            ]
        (result,) = fa.tool_results(request)
        assert result["content"].startswith('<untrusted-data tool="search_passages">'), result
        assert f"source_id={claims[0][1][0]} page=1" in result["content"], result["content"][:2000]
        scores = [
            {
                "claim_id": cid,
                "confidence": 0.9,
                "status": "single-source",
                "supporting_source_ids": sources,
                "rationale": "The snippet is quoted verbatim from the paper's abstract (page 1).",
            }
            for cid, sources, _ in claims
        ]
        return [fa.tool_use("submit_assessment", {"confidence_scores": scores})]

    def synthesis_agent(self, request: fa.Body) -> list[fa.Body]:
        # the research tier (Sonnet 5.5) refuses forced tool use: the synthesis comes as structured output
        assert request["tool_choice"] == {"type": "none"}
        assert request["output_config"]["format"]["schema"]["properties"]["report_outline"]
        assert len(request["messages"]) == 1, "the synthesis was rejected and re-asked"
        brief = first_text(request)
        claims = []
        for line in lines_after(brief, "Verified claims ("):
            found = re.match(r"^- (\S+) \[sub-question (\S+); .*?\]: (.*)$", line)
            assert found, line
            claims.append(found.groups())
        questions = [tuple(line[2:].split(": ", 1)) for line in lines_after(brief, "Sub-questions:")]
        sections = re.search(r"^Required report sections \(use these exact headings\): (.*)$", brief, re.M)
        assert claims and questions and sections
        by_question = {qid: [c for c, q, _ in claims if q == qid] for qid, _ in questions}

        def cite(ids: list[str]) -> str:
            return "[" + "; ".join(f"@{i}" for i in ids) + "]"

        findings = [
            {
                "statement": f"{text} The literature answers this with {len(by_question[qid])} verified claim(s).",
                "claim_ids": by_question[qid],
                "importance": "high",
            }
            for qid, text in questions
            if by_question[qid]
        ]
        coverage = [
            {
                "sub_question_id": qid,
                "status": "covered" if by_question[qid] else "missing",
                "claim_ids": by_question[qid],
            }
            for qid, _ in questions
        ]
        every = [c for c, _, _ in claims]
        text = {
            "Abstract": f"Machine learning supports public health surveillance, raises fairness questions and "
            f"predicts health outcomes {cite(every[:3])}.",
            "Introduction": f"The question was split into {len(questions)} sub-questions and answered from "
            "peer-reviewed abstracts.",
            "Key Findings": " ".join(f"{statement} {cite([c])}" for c, _, statement in claims),
            "Research Gaps": "No sub-question was left without a verified claim.",
            "Quality Assessment": "Every claim quotes its source verbatim and was checked by the fact-checker.",
            "Methodology": "Papers were found with search_papers and their abstracts stored before quoting.",
            "Conclusion": f"The recorded literature covers all three sub-questions {cite(every[-2:])}.",
        }
        outline = {
            "title": "Machine learning in public health",
            "summary": f"A review of {len(set(every))} verified claims {cite(every[:2])}.",
            "sections": [
                {"heading": h, "paragraphs": [{"text": text[h]}] if h in text else []}
                for h in sections.group(1).split(", ")
            ],
        }
        return [
            fa.tool_use("submit_synthesis", {"key_findings": findings, "coverage": coverage, "report_outline": outline})
        ]


def quote(page: str) -> str:
    """The first full sentence of the abstract (the page is the title, a blank line, the abstract),
    without a leading JATS tag such as ``<title>BACKGROUND</title>`` (what is left is still verbatim)."""
    abstract = page.split("\n\n", 1)[-1]
    sentences = re.split(r"(?<=[.!?])\s+(?=[A-Z])", " ".join(abstract.split()))
    plain = [re.sub(r"^.*>\s*", "", s) for s in sentences]
    return next((s for s in plain if 60 <= len(s) <= 400), sentences[0][:400])


# -- running the command -------------------------------------------------------------------------


@dataclass
class Run:
    returncode: int
    stdout: str
    stderr: str
    seconds: float
    root: Path | None = None

    @property
    def result(self) -> dict[str, Any]:
        data: dict[str, Any] = json.loads(self.stdout.splitlines()[-1])
        return data


def base_env(tmp: Path) -> dict[str, str]:
    """A hermetic environment: own HOME and XDG folders, no keys, no proxies, the network guard."""
    guard = tmp / "netguard"
    guard.mkdir(parents=True, exist_ok=True)
    (guard / "sitecustomize.py").write_text(NETWORK_GUARD, encoding="utf-8")
    home = tmp / "home"
    dropped = ("ANTHROPIC_", "CCONDUCTOR_", "SEMANTIC_SCHOLAR_", "OPENALEX_")
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(dropped) and "proxy" not in k.lower() and k != "PYTHONPATH"
    }
    env.update(
        HOME=str(home),
        XDG_CONFIG_HOME=str(home / "config"),
        XDG_CACHE_HOME=str(home / "cache"),
        XDG_DATA_HOME=str(home / "data"),
        XDG_STATE_HOME=str(home / "state"),
        CCONDUCTOR_SESSIONS_DIR=str(tmp / "sessions"),
        CCONDUCTOR_TEST_NETWORK_LOG=str(tmp / "network-attempts.log"),
        CCONDUCTOR_TEST_GUARDED=str(tmp / "guarded-processes.log"),
        NO_PROXY="127.0.0.1,localhost",
        no_proxy="127.0.0.1,localhost",
        PYTHONPATH=os.pathsep.join([str(guard), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep),
    )
    return env


def cconductor(args: list[str], env: dict[str, str], timeout: float = RUN_TIMEOUT) -> Run:
    """Run the command in its own process group; on a timeout the whole group is killed."""
    started = time.monotonic()
    process = subprocess.Popen(
        [sys.executable, "-m", "orchestrator.cli", *args],
        env=env,
        text=True,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
        stdin=subprocess.DEVNULL,
    )
    try:
        stdout, stderr = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        stdout, stderr = process.communicate()
        pytest.fail(f"cconductor {' '.join(args)} did not finish within {timeout:.0f} s:\n{stderr[-3000:]}")
    run = Run(process.returncode, stdout, stderr, time.monotonic() - started)
    sessions = Path(env["CCONDUCTOR_SESSIONS_DIR"])
    found = sorted(sessions.iterdir()) if sessions.is_dir() else []
    run.root = found[-1] if found else None
    return run


def assert_no_network(env: dict[str, str], root: Path) -> None:
    """No process tried the network, and the guard ran in the command and in every agent process."""
    log = Path(env["CCONDUCTOR_TEST_NETWORK_LOG"])
    assert not log.exists(), f"a process of the run tried to reach the network:\n{log.read_text()}"
    guarded = {line.split(" ", 1)[1] for line in Path(env["CCONDUCTOR_TEST_GUARDED"]).read_text().splitlines()}
    tasks = {str(root / e["data"]["task"]) for e in events(root, "agent.dispatched")}
    assert tasks and tasks <= guarded and "-" in guarded, (tasks, guarded)


@contextlib.contextmanager
def fake_apis(tmp: Path, model: ResearcherModel) -> Iterator[tuple[dict[str, str], fa.FakeAnthropic, FakeScholarly]]:
    messages = fa.FakeAnthropic(*[model] * MAX_MODEL_CALLS)
    scholarly = FakeScholarly()
    with messages.serve() as anthropic_url, scholarly.serve() as scholarly_url:
        env = {
            **base_env(tmp),
            "ANTHROPIC_API_KEY": KEY,
            "ANTHROPIC_BASE_URL": anthropic_url,
            **scholarly.env(scholarly_url),
        }
        yield env, messages, scholarly


def events(root: Path, kind: str) -> list[dict[str, Any]]:
    return [e for e in read_events(root / "events.jsonl") if e["type"] == kind]


# -- the mission -----------------------------------------------------------------------------------


@dataclass
class Mission:
    run: Run
    root: Path
    env: dict[str, str]
    model: ResearcherModel
    messages: fa.FakeAnthropic
    scholarly: FakeScholarly
    graph: dict[str, Any]


@pytest.fixture(scope="module")
def mission(tmp_path_factory: pytest.TempPathFactory) -> Mission:
    tmp = tmp_path_factory.mktemp("claude-mission")
    model = ResearcherModel()
    with fake_apis(tmp, model) as (env, messages, scholarly):
        run = cconductor(
            [
                "run",
                QUESTION,
                "--mission",
                "academic-research",
                "--backend",
                "anthropic",
                "--json",
                "--max-parallel",
                "2",
            ],
            env,
        )
    assert run.root is not None, run.stderr[-3000:]
    if messages.failures:
        raise messages.failures[0]
    assert run.returncode == 0, f"exit {run.returncode}\n{run.stdout[-3000:]}\n{run.stderr[-3000:]}"
    graph = json.loads((run.root / "knowledge-graph.json").read_text())
    return Mission(run, run.root, env, model, messages, scholarly, graph)


def test_the_mission_completes_with_every_agent_merged(mission: Mission) -> None:
    result = mission.run.result
    assert result["type"] == "run.result" and result["status"] == "completed", result
    session = json.loads((mission.root / "session.json").read_text())
    assert session["status"] == "completed" and session["options"]["backend"] == "anthropic"
    committed = {e["data"]["agent"] for e in events(mission.root, "merge.committed")}
    researchers = {f"academic-researcher-i1-{n}" for n in range(1, len(PLAN) + 1)}
    assert committed >= {"research-planner", "fact-checker", "synthesis-agent", *researchers}, committed
    assert not events(mission.root, "merge.rejected") and not events(mission.root, "agent.failed")
    assert all(e["data"]["exit_code"] == 0 for e in events(mission.root, "agent.finished"))
    roles = [c.role for c in mission.model.calls]
    assert roles.count("research-planner") == 1 and roles.count("synthesis-agent") == 1
    assert roles.count("academic-researcher") == 3 * len(PLAN)  # search, fetch, submit
    headers = [s.headers for s in mission.messages.seen]
    assert headers and all(h.get("anthropic-version") for h in headers)
    assert all(h.get("x-api-key") == KEY or h.get("authorization") == f"Bearer {KEY}" for h in headers)


def test_the_fact_checker_searched_the_stored_texts_and_scored_every_claim(mission: Mission) -> None:
    assert [c.role for c in mission.model.calls].count("fact-checker") == 2  # search_passages, submit
    claims = mission.graph["claims"]
    assert claims and all(a["confidence"] == 0.9 for c in claims for a in c["assessments"])
    assert all(len(c["assessments"]) == 1 for c in claims)


def test_researchers_used_the_provider_tools_on_the_recorded_responses(mission: Mission) -> None:
    asked = {(s.provider, s.path) for s in mission.scholarly.requests}
    assert {
        ("openalex", "/works"),
        ("crossref", "/works"),
        ("semanticscholar", "/graph/v1/paper/search"),
        ("arxiv", "/api/query"),
    } <= asked
    assert not mission.scholarly.unexpected
    assert sum(s.records for s in mission.scholarly.requests if s.provider == "openalex") >= 10
    recorded = {
        str(w["doi"]).removeprefix("https://doi.org/").lower(): w
        for w in mission.scholarly.openalex["results"]
        if w.get("doi")
    }
    sources = mission.graph["sources"]
    assert len(sources) >= 10 and all(s["doi"] in recorded for s in sources)
    for source in sources:
        text = (mission.root / "sources" / f"{source['content_sha256']}.txt").read_text()
        assert text.startswith(" ".join(recorded[source["doi"]]["title"].split())[:40])
    for claim in mission.graph["claims"]:
        for evidence in claim["evidence"]:
            assert evidence["verification"]["verified"] and evidence["locator"]["page"] == 1, evidence
    assert_no_network(mission.env, mission.root)
    assert list((Path(mission.env["XDG_CACHE_HOME"]) / "cconductor" / "http").rglob("*.json"))  # hermetic cache


def test_the_report_cites_the_recorded_papers(mission: Mission) -> None:
    from pybtex.database import parse_string

    report = (mission.root / "mission-report.md").read_text()
    body, _, bibliography = report.rpartition("## Bibliography")
    numbers = {int(n) for n in re.findall(r"\[(\d+), p\. \d+\]", body)}
    listed = {int(n) for n in re.findall(r'^(?:<a id="ref-\d+"></a>)?\[(\d+)\]', bibliography, re.M)}
    assert numbers and numbers <= listed, (numbers, listed)
    titles = {" ".join(str(w["title"]).split()).lower() for w in mission.scholarly.openalex["results"]}
    dois = {str(w["doi"]).lower() for w in mission.scholarly.openalex["results"] if w.get("doi")}
    cited_titles = [t for t in titles if t[:50] in " ".join(bibliography.split()).lower()]
    assert len(cited_titles) >= 10
    bib = parse_string((mission.root / "bibliography.bib").read_text(), "bibtex")
    assert len(bib.entries) >= 10
    for entry in bib.entries.values():
        title = " ".join(entry.fields["title"].replace("{", "").replace("}", "").split()).lower()
        assert any(t.startswith(title[:40]) for t in titles), f"{title!r} is not a recorded paper"
        assert f"https://doi.org/{entry.fields['doi'].lower()}" in dois, entry.fields["doi"]


def test_costs_are_one_line_per_model_call_and_summed(mission: Mission) -> None:
    lines = [json.loads(line) for line in (mission.root / "costs.jsonl").read_text().splitlines()]
    calls = {c.request_id: c for c in mission.model.calls}
    assert len(lines) == len(calls) == len(mission.messages.seen)
    for line in lines:
        call = calls[line["request_id"]]
        assert line["cost_usd"] > 0 and line["input_tokens"] == call.usage["input_tokens"]
        assert line["output_tokens"] == call.usage["output_tokens"]
        assert line["cache_read_input_tokens"] == call.usage["cache_read_input_tokens"]
        assert line["cache_creation_input_tokens"] == call.usage["cache_creation_input_tokens"]
    assert any(line["cache_read_input_tokens"] for line in lines) and any(
        line["cache_creation_input_tokens"] for line in lines
    )
    session = json.loads((mission.root / "session.json").read_text())
    assert session["cost_usd"] == pytest.approx(sum(line["cost_usd"] for line in lines), abs=1e-6)
    assert events(mission.root, "run.finished")[0]["data"]["cost_usd"] == pytest.approx(session["cost_usd"])
    logs = "\n".join(p.read_text() for p in (mission.root / "logs").glob("*.log"))
    assert all(f"request_id={rid}" in logs for rid in calls)
    reported = [rid for e in events(mission.root, "agent.costs") for rid in e["data"]["request_ids"]]
    assert sorted(reported) == sorted(calls)  # every request id also reaches events.jsonl


def test_the_api_key_is_in_no_file_and_no_output(mission: Mission) -> None:
    checked = 0
    for path in mission.root.rglob("*"):
        if path.is_file() and not path.is_symlink():
            assert KEY.encode() not in path.read_bytes(), f"the API key leaked into {path}"
            checked += 1
    assert checked > 50 and (mission.root / ".cconductor").is_dir()
    assert KEY not in mission.run.stdout and KEY not in mission.run.stderr


# -- failing early and budgets ----------------------------------------------------------------------


def test_a_budget_too_small_for_the_first_calls_worst_case_sends_nothing(tmp_path: Path) -> None:
    model = ResearcherModel(only=("research-planner",))
    with fake_apis(tmp_path, model) as (env, messages, _):
        run = cconductor(["run", QUESTION, "--backend", "anthropic", "--budget", "0.0001", "--json"], env, timeout=60)
    if messages.failures:
        raise messages.failures[0]
    assert run.returncode == 3, run.stderr[-3000:]
    assert run.root is not None and run.result["status"] == "budget_exhausted"
    assert "budget" in run.result["reason"], run.result
    # the planner's call could cost more than $0.0001 (4096 output tokens alone): it is never sent
    assert model.calls == [] and not (run.root / "costs.jsonl").exists()
    log = next((run.root / "logs").glob("research-planner-1.log")).read_text()
    assert "could cost up to" in log or "could cost up to" in run.stderr
    session = json.loads((run.root / "session.json").read_text())
    assert session["status"] == "budget_exhausted" and (run.root / "mission-report.md").exists()
    assert run.seconds < 60 and KEY not in run.stdout + run.stderr
    assert_no_network(env, run.root)


@pytest.mark.slow  # a whole run: the slow group (CI runs it) keeps the everyday suite under 10 min
def test_a_budget_is_never_overshot_by_the_call_that_ends_it(tmp_path: Path) -> None:
    model = ResearcherModel(only=("research-planner",))
    with fake_apis(tmp_path, model) as (env, messages, _):
        run = cconductor(["run", QUESTION, "--backend", "anthropic", "--budget", "0.01", "--json"], env, timeout=90)
    if messages.failures:
        raise messages.failures[0]
    assert run.root is not None and run.result["status"] == "budget_exhausted", run.result
    lines = [json.loads(line) for line in (run.root / "costs.jsonl").read_text().splitlines()]
    assert len(lines) == len(model.calls) >= 1  # the planner fit; a researcher's worst case did not
    assert sum(line["cost_usd"] for line in lines) <= 0.01
    dispatched = {e["data"]["agent"] for e in events(run.root, "agent.dispatched")}
    assert "research-planner" in dispatched


def test_auto_backend_without_a_key_runs_offline_and_says_so(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "note.md").write_text(
        "# Surveillance\n\nMachine learning helps public health surveillance find "
        "outbreaks earlier than manual review of reports.\n",
        encoding="utf-8",
    )
    mission_file = tmp_path / "tiny.json"
    mission_file.write_text(
        json.dumps(
            {
                "name": "tiny",
                "description": "planner and researcher",
                "objective": "answer from the note",
                "phases": {
                    "planning": ["research-planner"],
                    "ingestion": ["pdf-analyzer"],
                    "research": ["academic-researcher"],
                    "fact_check": [],
                    "synthesis": [],
                },
                "success_criteria": {
                    "confidence_threshold": 0.1,
                    "min_sources": 1,
                    "min_peer_reviewed_sources": 0,
                    "all_claims_cited": True,
                    "min_quality_score": 0,
                    "min_verified_evidence_ratio": 0.1,
                    "required_sections": ["Key Findings"],
                },
                "constraints": {
                    "max_iterations": 1,
                    "max_minutes": 5,
                    "max_agent_invocations": 10,
                    "budget_usd": 1,
                    "max_attempts_per_agent": 1,
                    "agent_timeout_seconds": 60,
                },
                "output": {"formats": ["markdown"], "citation_style": "numbered"},
            }
        )
    )
    env = base_env(tmp_path)
    run = cconductor(
        ["run", QUESTION, "--backend", "auto", "--mission", str(mission_file), "--input-dir", str(docs)],
        env,
        timeout=60,
    )
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    assert "No ANTHROPIC_API_KEY set: using the offline backend" in run.stdout
    assert run.root is not None
    assert json.loads((run.root / "session.json").read_text())["options"]["backend"] == "offline"
    assert events(run.root, "run.started")[0]["data"]["backend"] == "offline"
    assert not (run.root / "costs.jsonl").exists()
    assert_no_network(env, run.root)


def test_a_provider_base_url_override_redirects_api_requests_only() -> None:
    import httpx2

    from agents.providers import HttpClient, HttpConfig, OpenAlexProvider
    from orchestrator.model.errors import ConfigError

    seen: list[httpx2.Request] = []

    def answer(request: httpx2.Request) -> httpx2.Response:
        seen.append(request)
        return httpx2.Response(200, json={"results": []})

    env = {"CCONDUCTOR_PROVIDER_BASE_URL_OPENALEX": "http://127.0.0.1:9/openalex/"}
    config = HttpConfig.from_config({"base_urls": {"arxiv": "http://127.0.0.1:9/arxiv"}}, env)
    assert config.base_urls == {"openalex": "http://127.0.0.1:9/openalex", "arxiv": "http://127.0.0.1:9/arxiv"}
    with HttpClient(config, transport=httpx2.MockTransport(answer), cache=False) as client:
        OpenAlexProvider(client, api_key="oa-secret-key-1234", raise_errors=True).search("health", 2)
        client.get("https://api.crossref.org/works", params={"query": "x"})
        with client.stream("https://api.openalex.org/some.pdf"):
            pass
    assert [str(r.url).split("?")[0] for r in seen] == [
        "http://127.0.0.1:9/openalex/works",
        "https://api.crossref.org/works",
        "https://api.openalex.org/some.pdf",
    ]
    assert "oa-secret-key-1234" not in str(seen[0].url)  # keys go to the real API only
    for bad in ({"base_urls": {"openalex": "file:///etc"}}, {"base_urls": {"pubmed": "http://127.0.0.1:9"}}):
        with pytest.raises(ConfigError):
            HttpConfig.from_config(bad, {})
