"""An external research agent that uses only the standard library and the artifact protocol.

On its first attempt it misquotes its source on purpose; on a retry it reads the retry
instructions from its task and quotes the closest passage the orchestrator found.
Usage: researcher.py SESSION_DIR TASK_FILE
"""

import hashlib
import json
import re
import sys
from pathlib import Path

session, task = Path(sys.argv[1]), json.loads(Path(sys.argv[2]).read_text())
agent = task["agent"]
text = "Cache design notes.\fThe measured latency was 12 ms on average across runs. Memory use stayed under 40 MB."
data = text.encode()
sha = hashlib.sha256(data).hexdigest()
(session / "sources").mkdir(exist_ok=True)
(session / "sources" / f"{sha}.txt").write_bytes(data)

snippet = "latency was 40 ms at the median"
retry = task.get("retry_instructions")
if retry:
    for violation in retry["shacl_violations"]:
        found = re.search(r'closest passage in that source is "([^"]+)"', violation["message"])
        if found:
            snippet = found.group(1)

question = task["sub_questions"][0]
folder = session / "artifacts" / agent
folder.mkdir(parents=True, exist_ok=True)
(folder / "sources.json").write_text(json.dumps({"sources": [
    {"id": "notes", "type": "report", "title": "Cache design notes", "year": 2024, "content_sha256": sha}]}))
(folder / "claims.json").write_text(json.dumps({"claims": [
    {"id": "C1", "statement": "The cache answers in about 12 ms.", "confidence": 0.7, "priority": "high",
     "sub_question_id": question["id"],
     "evidence": [{"source_id": "notes", "snippet": snippet, "locator": {"page": 2}}]}]}))
(folder / "completion.json").write_text(json.dumps({
    "agent": agent, "status": "completed", "summary": f"attempt {task['attempt']}",
    "completed_at": "2026-01-01T00:00:00Z"}))
(session / f"{agent}.kg.lock").touch()
