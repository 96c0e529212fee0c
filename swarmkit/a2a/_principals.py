"""Who calls a served swarm: principals known by their tokens, whose tasks they see, and who
may decide a paused run."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from a2a.auth.user import User
from a2a.helpers import get_data_parts
from a2a.server.agent_execution import RequestContext, SimpleRequestContextBuilder
from a2a.server.context import ServerCallContext
from a2a.server.routes import DefaultServerCallContextBuilder
from a2a.server.tasks import TaskStore
from a2a.types.a2a_pb2 import Message, SendMessageRequest, Task, TaskState
from a2a.utils.errors import InvalidParamsError, UnsupportedOperationError
from starlette.requests import Request

from swarmkit.exceptions import ConfigurationError
from swarmkit.serving import CALLER, PRINCIPAL_KEY

DECIDER = "decider"
"""The principal an A2AServer's ``decision_token`` names."""

ENABLE_DECISIONS = (
    "deciding a paused run over A2A needs a decision token: serve with "
    "A2AServer(decision_token=...) (swarmkit serve a2a --allow-decisions) and send the "
    "decision with that token"
)
"""What a refused decision says: how a server lets a caller decide."""

INTERRUPT_ID = "interrupt_id"
"""The key that names a pause: in a waiting task's status message (its metadata and data
part), and in the decision that answers it (its metadata or data part)."""


@dataclass(frozen=True, kw_only=True, slots=True)
class Principal:
    """A caller of a served swarm, known by its bearer token."""

    name: str
    """Who it is, as the journal records a decision it takes (``a2a:<name>``)."""
    token: str
    """The bearer token it sends (16 printable ASCII characters or more)."""
    decides: bool = False
    """Whether it may decide a paused run (approve, edit, reject); a run token may not."""
    acts_for: str | None = None
    """The principal whose tasks it sees, continues and decides; None for its own."""

    @property
    def owner(self) -> str:
        """The principal its tasks belong to."""
        return self.acts_for or self.name


def server_principals(
    token: str | None, decision_token: str | None, principals: tuple[Principal, ...]
) -> dict[str, Principal]:
    """The principals of a server by name: ``caller`` for ``token``, ``decider`` (deciding the
    caller's tasks) for ``decision_token``, then ``principals``."""
    found: dict[str, Principal] = {}
    if token is not None:
        found[CALLER] = Principal(name=CALLER, token=token)
    if decision_token is not None:
        found[DECIDER] = Principal(
            name=DECIDER, token=decision_token, decides=True, acts_for=CALLER
        )
    for principal in principals:
        if principal.name in (*found, CALLER, DECIDER):
            raise ConfigurationError(
                f"a principal is already named {principal.name!r} ({CALLER!r} and "
                f"{DECIDER!r} name the server's token and decision token)"
            )
        found[principal.name] = principal
    if len({p.token for p in found.values()}) < len(found):
        raise ConfigurationError("each principal needs a token of its own")
    return found


class _Caller(User):
    """The a2a-sdk's view of a principal (an unknown name is nobody's and decides nothing)."""

    def __init__(self, principal: Principal | None) -> None:
        self.principal = principal

    @property
    def is_authenticated(self) -> bool:
        return self.principal is not None

    @property
    def user_name(self) -> str:
        return self.principal.name if self.principal else ""


class PrincipalContextBuilder(DefaultServerCallContextBuilder):
    """Puts the principal the token guard found into each call's context."""

    def __init__(self, principals: Mapping[str, Principal]) -> None:
        self.principals = dict(principals)

    def build_user(self, request: Request) -> User:
        """The principal whose token the request carried."""
        return _Caller(self.principals.get(str(request.scope.get(PRINCIPAL_KEY))))


def owner_of(context: ServerCallContext) -> str:
    """Whose tasks a call sees: its principal's, or those of the one it acts for."""
    # The task store asks this several times a task: by exact type, and ``owner`` inline.
    user = context.user
    principal = user.principal if type(user) is _Caller else None
    if principal is None:
        return ""
    return principal.acts_for or principal.name


def principal_of(context: ServerCallContext) -> Principal | None:
    """The principal making a call, if the call carried a known token."""
    return context.user.principal if isinstance(context.user, _Caller) else None


def check_waiting(
    task: Task | None, context: ServerCallContext, message: Message | None = None
) -> None:
    """Refuse (a protocol error) a message for ``task`` unless it waits for input, the caller
    may decide and the message names the pause it waits on: a late, repeated or stale
    decision never starts a new turn nor decides another pause."""
    if task is None:
        return
    if task.status.state != TaskState.TASK_STATE_INPUT_REQUIRED:
        state = TaskState.Name(task.status.state)
        raise UnsupportedOperationError(
            message=f"task {task.id} is {state}, not waiting for input: a message for it "
            "changes nothing (send a message without a task id to start a new turn)"
        )
    principal = principal_of(context)
    if principal is None or not principal.decides:
        raise UnsupportedOperationError(message=ENABLE_DECISIONS)
    _check_interrupt(task, message)


def _check_interrupt(task: Task, message: Message | None) -> None:
    """Refuse a decision that does not name the pause ``task`` waits on."""
    waits_on = waiting_data(task).get(INTERRUPT_ID)
    if not isinstance(waits_on, str):
        return  # a task paused before interrupt ids (its decision names none)
    named = interrupt_named(message)
    if named is None:
        raise InvalidParamsError(
            message=f"task {task.id} waits on interrupt {waits_on}: name it in the decision, "
            f"as its data part's \"{INTERRUPT_ID}\" or the message metadata's"
        )
    if named != waits_on:
        raise UnsupportedOperationError(
            message=f"the decision names interrupt {named[:64]}, but task {task.id} now waits on "
            f"interrupt {waits_on}: a decision for an earlier pause decides nothing"
        )


def waiting_data(task: Task) -> dict[str, Any]:
    """What the input-required message of a paused task says: its session, what is pending,
    the pause's interrupt id."""
    for data in get_data_parts(list(task.status.message.parts)):
        if isinstance(data, dict) and isinstance(data.get("session_id"), str):
            return data
    return {}


def interrupt_named(message: Message | None) -> str | None:
    """The interrupt id a decision names: its metadata's, else a data part's."""
    if message is None:
        return None
    if INTERRUPT_ID in message.metadata:
        named = message.metadata[INTERRUPT_ID]
        return named if isinstance(named, str) else str(named)
    for data in get_data_parts(list(message.parts)):
        if isinstance(data, dict) and INTERRUPT_ID in data:
            return str(data[INTERRUPT_ID])
    return None


class WaitingTaskCheck(SimpleRequestContextBuilder):
    """Builds each request's context, refusing a message for a task that does not wait for
    this caller's decision before the task is touched. ``on_new`` hears of each task id made
    for a message that starts a task (before the task is looked up or saved)."""

    def __init__(
        self,
        task_store: TaskStore,
        *,
        on_new: Callable[[str, ServerCallContext], None] | None = None,
    ) -> None:
        super().__init__(task_store=task_store)
        self.tasks = task_store
        self._on_new = on_new

    async def build(
        self,
        context: ServerCallContext,
        params: SendMessageRequest | None = None,
        task_id: str | None = None,
        context_id: str | None = None,
        task: Task | None = None,
    ) -> RequestContext:
        """The request's context, once a message naming a task is allowed to reach it."""
        if task_id:
            message = params.message if params is not None else None
            check_waiting(await self.tasks.get(task_id, context), context, message)
        built = await super().build(context, params, task_id, context_id, task)
        if not task_id and built.task_id and self._on_new is not None:
            self._on_new(built.task_id, context)
        return built
