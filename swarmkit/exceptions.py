"""The one error tree of swarmkit: every error the library raises on purpose is in it.

```text
SwarmkitError
├── ConfigurationError (also ValueError)       a mistake in how something was built
│   ├── ConditionSyntaxError                   a `when` condition that does not parse
│   ├── GraphCycleError                        an edge that would close a cycle
│   ├── ConfigurationChangedError              a durable session met changed swarm code
│   ├── ApplicationVersionError                durable sessions left by other code
│   ├── TaskFileError                          an evaluation task file that does not load
│   └── RuleLearningError                      a journal or rules file rules cannot come from
│       └── PromotionRefusedError              a rule's evidence is short of promotion
├── ToolError                                  a tool could not be called or failed
│   ├── ToolArgumentsError                     the model's arguments did not validate
│   ├── ToolExecutionError                     the tool itself raised
│   ├── ToolServerError                        a tool server (MCP) failed the call
│   └── EffectOutcomeUnknownError              an engine lost an effect's attempt: it may
│                                              have happened (the run pauses for a person)
├── HandoffPayloadError                        a typed handoff's arguments did not validate
├── InputFilterError                           a handoff's input filter raised, or returned
│                                              something that is not messages or a string
├── ModelError                                 the model API failed (not retryable, or
│                                              still failing after the retries)
├── RunError                                   a run ended by a limit under the "error" policy
│   ├── MaxHandoffsExceeded
│   ├── MaxTurnsExceeded
│   └── HandoffCycleError
├── JournalError                               a journal could not be read or written
│   ├── SessionNotFoundError
│   ├── SessionBusyError                       another writer holds the session's lease
│   ├── SessionExistsError                     a new session was given a used id
│   └── ReplayDivergenceError                  replay asked what the journal does not hold
├── LedgerError                                a spend ledger could not be read or written
├── DurableStepError                           a failure a durable engine recorded, read back
├── PeopleQueueError                           a person's claim, reply, hand-back or close
│                                              that cannot be taken (nothing is written)
├── ViewerError                                the session viewer could not start
└── InteropRequestError (also ValueError)      an A2A message or AG-UI run input that
                                               cannot be acted on (e.g. no decision)
```

``swarmkit.testing.ScriptExhaustedError`` (also an ``AssertionError``) joins the tree for
scripted models that are asked more than their script holds.

Errors carry their context as attributes, and each message says what to fix.
"""

from __future__ import annotations

from collections.abc import Sequence


class SwarmkitError(Exception):
    """Root of every error swarmkit raises on purpose."""


class ConfigurationError(SwarmkitError, ValueError):
    """Something was built wrong; raised at construction, before any model call."""


class ConditionSyntaxError(ConfigurationError):
    """A condition does not parse; the message starts ``invalid condition:`` (as the one of
    swarmstate, a Python package with a Rust core whose HandoffGraph swarmkit's matches, does)
    and shows the expression with a caret under the column."""

    def __init__(self, message: str, *, expression: str, position: int) -> None:
        self.expression = expression
        self.position = position
        self.reason = message
        shown = expression if len(expression) <= 200 else expression[:200] + "…"
        caret = " " * min(position, len(shown)) + "^"
        # "invalid condition:" as swarmstate says it, so code matching its errors still matches.
        super().__init__(
            f"invalid condition: {message} at column {position + 1}\n  {shown}\n  {caret}"
        )


class GraphCycleError(ConfigurationError):
    """Adding an edge would close a cycle in a graph built with ``on_cycle="error"``."""

    def __init__(self, message: str, *, cycle: Sequence[str]) -> None:
        self.cycle = tuple(cycle)
        super().__init__(message)


class ConfigurationChangedError(ConfigurationError):
    """A durable session (a Temporal workflow) was started with another swarm configuration;
    ``changed`` names the parts of the fingerprint that differ."""

    def __init__(self, message: str, *, session_id: str, changed: Sequence[str]) -> None:
        self.session_id = session_id
        self.changed = tuple(changed)
        super().__init__(message)


class ApplicationVersionError(ConfigurationError):
    """Durable sessions were started by another version of the application (other swarm code):
    this worker does not run them; ``sessions`` maps each one's id to its version."""

    def __init__(self, message: str, *, sessions: dict[str, str], version: str) -> None:
        self.sessions = dict(sessions)
        self.version = version
        super().__init__(message)


class TaskFileError(ConfigurationError):
    """An evaluation task (``swarmkit.evals``) is malformed; ``source``, ``task`` and ``field``
    say where (the file, the task's id or position, the field's dotted path)."""

    def __init__(self, message: str, *, source: str, task: str | None, field: str | None) -> None:
        self.source = source
        self.task = task
        self.field = field
        where = source + (f", task {task}" if task else "") + (f", field {field}" if field else "")
        super().__init__(f"{where}: {message}")


class ToolError(SwarmkitError):
    """A tool call could not be completed."""

    def __init__(self, message: str, *, tool_name: str) -> None:
        self.tool_name = tool_name
        super().__init__(message)


class ToolArgumentsError(ToolError):
    """The arguments a model sent for a tool are not valid JSON or fail validation."""


class ToolExecutionError(ToolError):
    """The tool's own code raised; the original exception is the cause."""


class ToolServerError(ToolError):
    """A tool server (MCP) answered a call with an error, or could not be reached."""

    def __init__(self, message: str, *, tool_name: str, server: str) -> None:
        self.server = server
        super().__init__(message, tool_name=tool_name)


class EffectOutcomeUnknownError(ToolError):
    """A durable engine was about to run an effect again after losing an attempt (a killed
    worker) and could not learn whether it happened; the loop pauses for a person instead."""


class HandoffPayloadError(SwarmkitError):
    """The arguments of a typed handoff call do not validate against its input type."""

    def __init__(self, message: str, *, tool_name: str, target: str) -> None:
        self.tool_name = tool_name
        self.target = target
        super().__init__(message)


class InputFilterError(SwarmkitError):
    """A handoff's input filter failed; the run ends with ``stop_reason="error"`` (journaled,
    so it can be resumed once the filter is fixed), and what it raised is the cause."""

    def __init__(self, message: str, *, filter_name: str, source: str, target: str) -> None:
        self.filter_name = filter_name
        self.source = source
        self.target = target
        super().__init__(message)


class ModelError(SwarmkitError):
    """The model API failed: a client error that retrying cannot fix, or a transient one that
    outlasted the retries; the last failure is the cause, and ``status_code`` its HTTP status."""

    def __init__(
        self, message: str, *, model: str, attempts: int, status_code: int | None = None
    ) -> None:
        self.model = model
        self.attempts = attempts
        self.status_code = status_code
        super().__init__(message)


class RunError(SwarmkitError):
    """A run was ended by a limit whose policy is ``"error"``, or could not run at all."""

    def __init__(self, message: str, *, trail: Sequence[str], session_id: str) -> None:
        self.trail = tuple(trail)
        self.session_id = session_id
        super().__init__(message)


class MaxHandoffsExceeded(RunError):
    """The run asked for more handoffs than ``max_handoffs`` allows."""


class MaxTurnsExceeded(RunError):
    """The run used up ``max_turns`` model calls without an answer."""


class HandoffCycleError(RunError):
    """A handoff would return to an agent already on the run's trail."""

    def __init__(
        self, message: str, *, trail: Sequence[str], session_id: str, cycle: Sequence[str]
    ) -> None:
        self.cycle = tuple(cycle)
        super().__init__(message, trail=trail, session_id=session_id)


class JournalError(SwarmkitError):
    """A journal could not be read or written."""


class LedgerError(SwarmkitError):
    """A spend ledger's store could not be read or written."""


class SessionNotFoundError(JournalError):
    """The journal holds no session with that id."""

    def __init__(self, session_id: str) -> None:
        self.session_id = session_id
        super().__init__(f"no session {session_id!r} in the journal; list sessions to find its id")


class SessionBusyError(JournalError):
    """Another writer holds the session's lease: one run, resume or fork writes a session."""

    def __init__(self, session_id: str, *, owner: str, expires_at: float) -> None:
        self.session_id = session_id
        self.owner = owner
        self.expires_at = expires_at
        super().__init__(
            f"session {session_id!r} is being written by {owner}; wait for that run to end, or "
            "for its lease to expire if that process died, then resume it"
        )


class SessionExistsError(JournalError):
    """A new session was given the id of one that exists; ids are never reused."""

    def __init__(self, session_id: str) -> None:
        self.session_id = session_id
        super().__init__(
            f"session {session_id!r} exists already; pick a new id, or follow that session "
            "through its handle"
        )


class ReplayDivergenceError(JournalError):
    """Replay reached a step the journal does not hold; the message shows the difference."""

    def __init__(self, message: str, *, session_id: str, step: int, diff: str) -> None:
        self.session_id = session_id
        self.step = step
        self.diff = diff
        super().__init__(f"{message}\n{diff}" if diff else message)


class DurableStepError(SwarmkitError):
    """A failure a durable engine (DBOS) recorded for a step or a session, read back from its
    database: ``kind`` is the class name of the exception where it was raised; its message is
    kept, its traceback and cause are not (they never leave the process that raised them)."""

    def __init__(self, message: str, *, kind: str) -> None:
        self.kind = kind
        super().__init__(message)


class PeopleQueueError(SwarmkitError):
    """A claim, reply, hand-back or close on a conversation waiting for a person that cannot
    be taken: not waiting, claimed by someone else, nobody claimed it, an unknown agent.
    Nothing is written; ``session_id`` and ``claimed_by`` say which and by whom."""

    def __init__(
        self, message: str, *, session_id: str | None = None, claimed_by: str | None = None
    ) -> None:
        super().__init__(message)
        self.session_id = session_id
        self.claimed_by = claimed_by


class ViewerError(SwarmkitError):
    """The local session viewer (``swarmkit ui``) could not start, e.g. its port is taken."""


class InteropRequestError(SwarmkitError, ValueError):
    """A request from another system (an A2A message, an AG-UI run input) cannot be acted on:
    a paused task's reply that decides nothing, a context or thread id that is too long, a run
    input without a user message. The message says what to send instead."""


class RuleLearningError(ConfigurationError):
    """A journal or a rules file cannot give what ``swarmkit.rules`` was asked: no decisions to
    learn from, too few for the support asked, a rules file that does not parse or names agents
    the swarm lacks. The message says which, and what to change."""


class PromotionRefusedError(RuleLearningError):
    """A shadow rule's agreement with the model is short of promotion (too few fired decisions,
    or a Wilson lower bound under the threshold); nothing was written. ``rule``, ``fired``,
    ``agreements``, ``lower``, ``threshold`` and ``min_fired`` hold the evidence and the ask."""

    def __init__(
        self,
        message: str,
        *,
        rule: str,
        fired: int,
        agreements: int,
        lower: float,
        threshold: float,
        min_fired: int,
    ) -> None:
        super().__init__(message)
        self.rule = rule
        self.fired = fired
        self.agreements = agreements
        self.lower = lower
        self.threshold = threshold
        self.min_fired = min_fired
