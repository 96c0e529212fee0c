"""Viewer: the JSON API of the session viewer, as plain request in, reply out.

The HTTP layer (``_server.py``) checks the token and the Host header, then hands requests
here; every reply is redacted before it is encoded.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote

from swarmkit.bounds import json_problem
from swarmkit.exceptions import SessionNotFoundError, SwarmkitError
from swarmkit.journal import Journal, JournalRecord, turn_of, turn_sessions
from swarmkit.ledger import LedgerStore, spend_report
from swarmkit.people import is_people_queue
from swarmkit.swarm import Swarm
from swarmkit.ui._decisions import DecisionRefused, decide, decision_from
from swarmkit.ui._picture import Edge, draw_svg, mark_path, swarm_edges
from swarmkit.ui._queue import ACTIONS, act, waiting_list
from swarmkit.ui._redact import redact
from swarmkit.ui._replay import replay_session
from swarmkit.ui._requests import NEEDS_SWARM, RequestsNotShown, SentRequests
from swarmkit.ui._rules import RulesPage, RulesQuery
from swarmkit.ui._sessions import SessionList, SessionQuery
from swarmkit.ui._timeline import path_of, session_view

MAX_BODY_DEPTH = 32
"""How deep a request body's JSON may nest (an edited payload is a few levels)."""


@dataclass(frozen=True, kw_only=True, slots=True)
class Reply:
    """What the API answers."""

    status: int
    """The HTTP status."""
    body: Any
    """JSON-safe data, redacted before it is sent."""


def _error(status: int, message: str, **more: Any) -> Reply:
    return Reply(status=status, body={"error": message, **more})


class Viewer:
    """The viewer's API over one journal, and optionally the swarm its sessions ran on."""

    def __init__(
        self,
        journal: Journal,
        *,
        swarm: Swarm | None = None,
        allow_decisions: bool = False,
        listing: Journal | None = None,
        ledger: LedgerStore | None = None,
    ) -> None:
        """``listing``: a second connection to the same store for the (slow) sessions list;
        ``ledger``: the spend ledger the spend page reads (by default the swarm's)."""
        self.journal = journal
        self.swarm = swarm
        if ledger is None and swarm is not None and swarm.config.ledger is not None:
            ledger = swarm.config.ledger.store
        self.ledger = ledger
        self.allow_decisions = allow_decisions
        self.sessions = SessionList(journal, listing=listing)
        self.requests = SentRequests(swarm, journal) if swarm is not None else None
        self.rules = RulesPage(journal, swarm)

    async def api(
        self, method: str, path: str, query: Mapping[str, str], body: bytes = b""
    ) -> Reply:
        """Answer one API request (``path`` starts with ``/api/``); replies are redacted."""
        parts = path.removeprefix("/api").strip("/").split("/")
        try:
            reply = await self._route(method, parts, query, body)
        except SwarmkitError as exc:
            # A journal that cannot be read, a replay or resume the session does not allow.
            reply = _error(409, str(exc))
        return Reply(status=reply.status, body=redact(reply.body))

    async def _route(
        self, method: str, parts: list[str], query: Mapping[str, str], body: bytes
    ) -> Reply:
        match method, parts:
            case "GET", ["config"]:
                return Reply(status=200, body=self._config())
            case "GET", ["spend"]:
                return await self._spend(query)
            case "GET", ["sessions"]:
                return Reply(status=200, body=await self.sessions.page(_query(query)))
            case "GET", ["rules"]:
                rules_query = _rules_query(query)
                if isinstance(rules_query, str):
                    return _error(400, rules_query)
                return Reply(status=200, body=await self.rules.data(rules_query))
            case "GET", ["sessions", session_id]:
                return await self._session(unquote(session_id))
            case "GET", ["sessions", session_id, "requests", seq]:
                return await self._request(unquote(session_id), seq)
            case "POST", ["sessions", session_id, "replay" | "decision" as action]:
                data = _json(body)
                if isinstance(data, str):
                    return _error(400, data)
                if action == "replay":
                    return await self._replay(unquote(session_id), data)
                return await self._decide(unquote(session_id), data)
            case "GET", ["queue"]:
                return Reply(status=200, body=await waiting_list(self.journal))
            case "POST", ["queue", session_id, action] if action in ACTIONS:
                return await self._queue_action(unquote(session_id), action, _json(body))
            case _, ["sessions", _, "replay" | "decision"] | ["queue", _, _]:
                return _error(405, "this request changes state: send it as POST")
            case _:
                return _error(404, f"no API at /api/{'/'.join(parts)}")

    async def _spend(self, query: Mapping[str, str]) -> Reply:
        """The spend ledger's report: spend grouped ``by`` (default tenant, agent, model,
        day), and each budget's limit, spend and what is left."""
        if self.ledger is None:
            return _error(404, "no spend ledger: start the viewer with a swarm that has one")
        by = [part for part in query.get("by", "tenant,agent,model,day").split(",") if part]
        report = await spend_report(self.ledger, by=by, now=time.time())
        return Reply(status=200, body=report)

    def _config(self) -> dict[str, Any]:
        return {
            "spend": self.ledger is not None,
            "swarm": self.swarm is not None,
            "agents": sorted(self.swarm.plans) if self.swarm else [],
            "allow_decisions": self.allow_decisions,
            "takers": [n for n, p in self.swarm.plans.items() if not is_people_queue(p.agent)]
            if self.swarm
            else [],
        }

    async def _session(self, session_id: str) -> Reply:
        records = await self._read(session_id)
        if records is None:
            return _error(404, f"no session {session_id!r} in the journal")
        view = session_view(records, self.swarm)
        view["drawing"] = self._drawing(records, view["trail"])
        view["can_replay"] = self.swarm is not None
        view["can_decide"] = self.swarm is not None and self.allow_decisions
        view["thread"] = await self._thread(session_id)
        return Reply(status=200, body=view)

    async def _thread(self, session_id: str) -> dict[str, Any]:
        """The conversation a session is a turn of, with all its turns, first to last."""
        conversation, turn = turn_of(session_id)
        return {
            "conversation": conversation,
            "turn": turn,
            "turns": await turn_sessions(self.journal, conversation),
        }

    def _drawing(self, records: tuple[JournalRecord, ...], trail: list[str]) -> str:
        edges: list[Edge] = swarm_edges(self.swarm) if self.swarm else []
        edges = mark_path(edges, path_of(records))
        if self.swarm is not None:
            agents = sorted(self.swarm.plans)
            entry = self.swarm.entry_agent
        else:
            agents = list(dict.fromkeys(trail)) or ["?"]
            entry = agents[0]
        extra = [a for e in edges for a in (e.source, e.target) if a not in agents]
        return draw_svg([*agents, *dict.fromkeys(extra)], entry, edges, trail)

    async def _request(self, session_id: str, seq: str) -> Reply:
        """What the model call at record ``seq`` was sent, rebuilt by the swarm."""
        if self.requests is None:
            return _error(409, NEEDS_SWARM)
        records = await self._read(session_id)
        if records is None:
            return _error(404, f"no session {session_id!r} in the journal")
        if not seq.isdigit():
            return _error(404, f"no record {seq!r} in session {session_id!r}")
        try:
            data = await self.requests.of_call(session_id, len(records), int(seq))
        except RequestsNotShown as exc:
            return _error(409, str(exc))
        return Reply(status=200, body=data)

    async def _replay(self, session_id: str, body: Mapping[str, Any]) -> Reply:
        if self.swarm is None:
            return _error(409, "replay needs the swarm: start the viewer with --swarm")
        if await self._read(session_id) is None:
            return _error(404, f"no session {session_id!r} in the journal")
        prompt = body.get("prompt")
        prompt = prompt if isinstance(prompt, str) and prompt else None
        return Reply(
            status=200, body=await replay_session(self.swarm, self.journal, session_id, prompt)
        )

    async def _decide(self, session_id: str, body: Mapping[str, Any]) -> Reply:
        if not self.allow_decisions or self.swarm is None:
            return _error(
                403, "decisions are off: start the viewer with --swarm and --allow-decisions"
            )
        records = await self._read(session_id)
        if records is None:
            return _error(404, f"no session {session_id!r} in the journal")
        pending = session_view(records, None)["pending"]
        if pending is None:
            return _error(409, f"session {session_id!r} is not waiting for a decision")
        try:
            decision = decision_from(body, pending, self.swarm)
        except DecisionRefused as exc:
            return _error(422, str(exc), errors=exc.errors)
        outcome = await decide(self.swarm, self.journal, session_id, decision)
        return Reply(status=200, body=outcome)

    async def _queue_action(
        self, session_id: str, action: str, body: Mapping[str, Any] | str
    ) -> Reply:
        """A person's claim, reply, hand-back or close, behind the decision switch."""
        if not self.allow_decisions:
            return _error(403, "decisions are off: start the viewer with --allow-decisions")
        if isinstance(body, str):
            return _error(400, body)
        if action in ("hand-back", "close") and self.swarm is None:
            return _error(409, f"{action} runs the swarm: start the viewer with --swarm")
        return Reply(status=200, body=await act(self.swarm, self.journal, session_id, action, body))

    async def _read(self, session_id: str) -> tuple[JournalRecord, ...] | None:
        try:
            return await self.journal.read(session_id)
        except SessionNotFoundError:
            return None


def _query(query: Mapping[str, str]) -> SessionQuery:
    return SessionQuery(
        status=query.get("status", ""),
        agent=query.get("agent", ""),
        search=query.get("q", ""),
        offset=_int(query.get("offset"), 0),
        limit=_int(query.get("limit"), 50),
    )


def _rules_query(query: Mapping[str, str]) -> RulesQuery | str:
    """The suggest thresholds asked for, or what is wrong with them."""
    given = query.get("min_support")
    support = 20 if given is None else _int(given, 0)
    try:
        precision = float(query.get("min_precision", "0.98"))
    except ValueError:
        precision = -1.0
    if not 1 <= support <= 1_000_000:
        return "min_support must be a whole number from 1 to 1000000"
    if not 0 < precision <= 1:
        return "min_precision must be a number in (0, 1]"
    return RulesQuery(min_support=support, min_precision=precision)


def _int(text: str | None, default: int) -> int:
    try:
        return int(text) if text is not None else default
    except ValueError:
        return default


def _json(body: bytes) -> dict[str, Any] | str:
    """A POST's JSON object, or why the body is refused (too deep or too long)."""
    if not body:
        return {}
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError:
        return {}
    problem = json_problem(text, max_depth=MAX_BODY_DEPTH)
    if problem is not None:
        return f"the request body is refused: {problem}"
    try:
        value = json.loads(text)
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}
