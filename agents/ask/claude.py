"""Claude writes the answer from the retrieved context only, through the project's one client.

The context (claims with their verified passages, entities, relationships) is quoted to the model
as untrusted data; the model must end every sentence with markers naming the items it rests on.
Whatever it writes is validated afterwards by the orchestrator, marker by marker, so an invented
id or an unsupported sentence is dropped, not trusted. The call is priced into ``costs.jsonl``
and logged (redacted) in ``logs/ask.log``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from agents.claude.client import ClaudeClient
from agents.claude.config import ClaudeConfig, load_config
from agents.claude.conversation import untrusted
from agents.claude.errors import ClaudeError
from orchestrator.answers.data import AnswerError, Draft, Retrieved
from orchestrator.model.layout import SessionPaths

AGENT = "ask"
NOT_FOUND_REPLY = "NOT FOUND"
SYSTEM = f"""You answer a question about one research session using ONLY the context items given to you.
Rules:
- Every sentence ends with markers naming the context items it rests on, written exactly as [@id] or
  [@id1; @id2], with the ids exactly as given. Never invent an id.
- Prefer quoting the passages verbatim; otherwise paraphrase closely. Add no fact, number or name
  that is not in the context. Mention entities by the names given.
- Write 1 to 5 sentences of plain prose: no headings, no lists, no preamble.
- If the context does not answer the question, reply exactly: {NOT_FOUND_REPLY}"""


def context_text(retrieved: Retrieved) -> str:
    """The retrieved items as the model sees them (ids, kinds, statements, verified passages)."""
    blocks = []
    for item in retrieved.items:
        lines = [f"[@{item.id}] ({item.kind}) {item.text}"]
        for passage in item.passages:
            page = f", p. {passage.page}" if passage.page else ""
            lines.append(f'    passage ({passage.title}{page}): "{" ".join(passage.text.split())}"')
        blocks.append("\n".join(lines))
    return "\n".join(blocks)


class ClaudeComposer:
    name = "anthropic"

    def __init__(self, session_root: Path, *, config: ClaudeConfig | None = None, http_client: Any = None,
                 api_key: str | None = None):
        self.session_root = session_root
        self.config = config or load_config({})
        self.http_client = http_client
        self.api_key = api_key

    def compose(self, retrieved: Retrieved) -> Draft:
        logs = SessionPaths(self.session_root).logs
        logs.mkdir(exist_ok=True)
        with open(logs / f"{AGENT}.log", "a", encoding="utf-8") as log:  # the client's request log, redacted
            client = ClaudeClient(
                config=self.config, settings=self.config.settings_for("research", AGENT),
                session_root=self.session_root, agent=AGENT, attempt=1, http_client=self.http_client,
                api_key=self.api_key, log=log,
            )
            user = f"Question: {retrieved.question}\n\nContext items:\n" + untrusted("graph", context_text(retrieved))
            try:
                message = client.create(purpose="answer", system=SYSTEM, messages=[{"role": "user", "content": user}])
            except ClaudeError as exc:
                raise AnswerError(f"Claude could not answer: {exc}") from None
            finally:
                client.close()
        stop = getattr(message, "stop_reason", None)
        if stop == "refusal":
            raise AnswerError("Claude refused to answer this question (stop_reason 'refusal'); rephrase it, "
                              "or use --backend offline")
        if stop == "max_tokens":
            raise AnswerError("Claude's answer was cut off at max_tokens; raise models.ask.max_tokens in the "
                              "config, or ask a narrower question")
        text = "".join(getattr(b, "text", "") for b in message.content if getattr(b, "type", "") == "text").strip()
        if text.upper().startswith(NOT_FOUND_REPLY):
            text = ""
        return Draft(text, self.name, client.settings.model, client.total_cost_usd)
