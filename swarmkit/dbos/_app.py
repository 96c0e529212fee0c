"""DurableSwarms: the swarms a process serves on DBOS, its queues, its version, its recovery."""

from __future__ import annotations

import hashlib
import json
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from dbos import DBOS, DBOSConfig, SetWorkflowID

import swarmkit
from swarmkit.agent import Agent
from swarmkit.dbos._codec import JsonSerializer
from swarmkit.dbos._handle import SessionHandle
from swarmkit.dbos._steps import StepModel
from swarmkit.dbos._workflow import WORKFLOW_NAME, activate, deactivate, session_workflow
from swarmkit.exceptions import ApplicationVersionError, ConfigurationError, SessionExistsError
from swarmkit.handoffs import Handoff
from swarmkit.journal import Journal
from swarmkit.swarm import Swarm

QUEUE_PREFIX = "swarmkit:"
"""Each swarm's sessions wait on the queue ``swarmkit:<swarm name>``."""


@dataclass(frozen=True, kw_only=True, slots=True)
class QueueLimits:
    """How many sessions of one swarm run at once."""

    per_worker: int | None = None
    """At most this many on one worker process (None: no limit)."""
    total: int | None = None
    """At most this many across all workers (None: no limit)."""

    def __post_init__(self) -> None:
        for name in ("per_worker", "total"):
            value = getattr(self, name)
            if value is not None and (type(value) is not int or value < 1):
                raise ConfigurationError(
                    f"QueueLimits({name}=...) must be a whole number of 1 or more, or None; "
                    f"got {value!r}"
                )


class DurableSwarms:
    """Swarm sessions as DBOS workflows on a system database (SQLite or Postgres).

    Build it, then ``launch()`` (or use it as a context manager): DBOS then recovers this
    worker's pending sessions and starts taking queued ones. One per process (DBOS is).

    ``application_version`` is what DBOS recovers and dequeues by: a worker runs only the
    sessions started under its own version. By default it is a digest of swarmkit's version
    and the registered swarms' fingerprints, so changed swarm code is a new version and its
    worker leaves older sessions to a worker that still runs the old code. Set it yourself to
    pin one version across deployments you know are compatible.

    ``executor_id`` names this worker in the system database; a restarted worker recovers the
    sessions of its own id, so give each worker a stable id of its own (the default, ``local``,
    suits a single worker). ``recover_sessions`` takes over the sessions of a dead one.
    """

    def __init__(
        self,
        swarms: Mapping[str, Swarm],
        *,
        database_url: str,
        journal: Journal | None = None,
        app_name: str = "swarmkit",
        application_version: str | None = None,
        executor_id: str | None = None,
        limits: QueueLimits | Mapping[str, QueueLimits] | None = None,
        polling_interval: float = 1.0,
        log_level: str = "WARNING",
    ) -> None:
        if not swarms:
            raise ConfigurationError("DurableSwarms needs at least one swarm: swarms={name: Swarm}")
        for name, swarm in swarms.items():
            if not isinstance(swarm, Swarm):
                raise ConfigurationError(
                    f"swarms[{name!r}] is {type(swarm).__name__}, not a Swarm"
                )
        self.swarms = dict(swarms)
        self.database_url = database_url
        self.journal = journal
        self.app_name = app_name
        self.application_version = application_version or default_version(self.swarms)
        self.executor_id = executor_id or "local"
        self._limits = limits
        self.polling_interval = polling_interval
        self.log_level = log_level
        self._durable: dict[str, Swarm] = {}

    # -- lifecycle ---------------------------------------------------------------------------

    def config(self) -> DBOSConfig:
        """The DBOS configuration this worker launches with."""
        return {
            "name": self.app_name,
            "system_database_url": self.database_url,
            "application_version": self.application_version,
            "executor_id": self.executor_id,
            "serializer": JsonSerializer(),
            "log_level": self.log_level,
            "notification_listener_polling_interval_sec": min(self.polling_interval, 1.0),
        }

    async def launch(self) -> None:
        """Start DBOS: register the queues, recover this worker's pending sessions."""
        activate(self)
        DBOS(config=self.config())
        DBOS.launch()
        for name in self.swarms:
            limits = self.limits(name)
            await DBOS.register_queue_async(
                QUEUE_PREFIX + name,
                worker_concurrency=limits.per_worker,
                global_concurrency=limits.total,
                polling_interval_sec=self.polling_interval,
            )

    async def destroy(self) -> None:
        """Stop DBOS in this process; its pending sessions stay pending for recovery."""
        DBOS.destroy(destroy_registry=False)
        deactivate(self)

    async def __aenter__(self) -> DurableSwarms:
        await self.launch()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.destroy()

    def limits(self, swarm: str) -> QueueLimits:
        """The queue limits of ``swarm``'s sessions."""
        if isinstance(self._limits, QueueLimits):
            return self._limits
        return (self._limits or {}).get(swarm, QueueLimits())

    # -- sessions ----------------------------------------------------------------------------

    async def start_session(
        self,
        swarm: str,
        prompt: str,
        *,
        session_id: str | None = None,
        context: Mapping[str, Any] | None = None,
    ) -> SessionHandle:
        """Queue a new session of ``swarm``; a worker with room runs it. Returns its handle."""
        self.swarm(swarm)
        session_id = session_id or uuid.uuid4().hex
        if await DBOS.get_workflow_status_async(session_id) is not None:
            raise SessionExistsError(session_id)
        queue = await DBOS.retrieve_queue_async(QUEUE_PREFIX + swarm)
        assert queue is not None, "launch() registers every swarm's queue"
        data = dict(context) if context is not None else None
        with SetWorkflowID(session_id):
            await queue.enqueue_async(session_workflow, swarm, prompt, data)
        return SessionHandle(session_id, self)

    def session_handle(self, session_id: str) -> SessionHandle:
        """The handle of an existing session (started here or by any other process)."""
        return SessionHandle(session_id, self)

    async def recover_sessions(self, executor_ids: list[str]) -> tuple[str, ...]:
        """Take over the pending sessions of dead workers (their ``executor_id``\\ s).

        Only sessions of this worker's application version are taken; if others remain,
        ApplicationVersionError names them and their versions (after the rest are taken).
        Never pass the id of a live worker: its running sessions would run twice.
        """
        pending = await DBOS.list_workflows_async(
            status="PENDING", executor_id=list(executor_ids), name=WORKFLOW_NAME, load_input=False
        )
        taken: list[str] = []
        others: dict[str, str] = {}
        for status in pending:
            if status.app_version != self.application_version:
                others[status.workflow_id] = str(status.app_version)
                continue
            await DBOS.resume_workflow_async(status.workflow_id, queue_name=status.queue_name)
            taken.append(status.workflow_id)
        if others:
            raise ApplicationVersionError(
                f"{len(others)} session(s) of workers {', '.join(executor_ids)} were started by "
                f"another application version ({', '.join(sorted(set(others.values())))}); this "
                f"worker runs {self.application_version!r} and leaves them. Recover them from a "
                "worker that runs that code (the same swarms, or application_version set to it)",
                sessions=others,
                version=self.application_version,
            )
        return tuple(taken)

    # -- swarms ------------------------------------------------------------------------------

    def swarm(self, name: str) -> Swarm:
        """The registered swarm ``name``; ConfigurationError naming the known ones."""
        swarm = self.swarms.get(name)
        if swarm is None:
            known = ", ".join(sorted(self.swarms))
            raise ConfigurationError(
                f"swarm {name!r} is not registered (registered: {known}); add it to "
                "DurableSwarms(swarms={...}) on every worker"
            )
        return swarm

    def durable_swarm(self, name: str) -> Swarm:
        """The registered swarm with every agent's model call made a recorded step."""
        if name not in self._durable:
            self._durable[name] = with_step_models(self.swarm(name))
        return self._durable[name]


def default_version(swarms: Mapping[str, Swarm]) -> str:
    """A digest of swarmkit's version and the swarms' names and fingerprints."""
    parts = {name: swarm.fingerprint() for name, swarm in sorted(swarms.items())}
    text = json.dumps([swarmkit.__version__, parts], sort_keys=True, default=str)
    return "swarmkit-" + hashlib.sha256(text.encode()).hexdigest()[:16]


def with_step_models(swarm: Swarm) -> Swarm:
    """The same swarm, each agent's model wrapped in a StepModel (a new Swarm, never a copy)."""
    models = {name: plan.model for name, plan in swarm.plans.items()}
    if all(isinstance(m, StepModel) for m in models.values()):
        return swarm
    wrapped = {name: StepModel(model) for name, model in models.items()}
    with_models = getattr(swarm, "with_models", None)
    if with_models is not None:  # the public seam, where this swarmkit has it
        derived: Swarm = with_models(wrapped)
        return derived
    # TODO(seam): Swarm.with_models({agent: model}); until then rebuild from the configuration
    given: Any = swarm._agents_given  # noqa: SLF001
    settings: dict[str, Any] = dict(swarm._settings)  # noqa: SLF001
    entries = given.values() if isinstance(given, Mapping) else given
    members: list[Agent | Handoff] = [_with_model(entry, wrapped) for entry in entries]
    named = {_member_name(e) for e in members}
    members += [
        replace(plan.agent, model=wrapped[name])
        for name, plan in swarm.plans.items()
        if name not in named
    ]
    settings["entry_agent"] = swarm.entry_agent
    derived = Swarm(members, **settings)
    if derived.fingerprint() != swarm.fingerprint():
        raise ConfigurationError(
            "this swarm could not be rebuilt with durable models (its fingerprint changed); "
            "wrap each agent's model in swarmkit.dbos.StepModel yourself"
        )
    return derived


def _with_model(entry: Any, wrapped: Mapping[str, StepModel]) -> Any:
    if isinstance(entry, Handoff) and isinstance(entry.agent, Agent):
        return replace(entry, agent=replace(entry.agent, model=wrapped[entry.agent.name]))
    if isinstance(entry, Agent) and entry.name in wrapped:
        return replace(entry, model=wrapped[entry.name])
    return entry


def _member_name(entry: Any) -> str:
    agent = entry.agent if isinstance(entry, Handoff) else entry
    return str(getattr(agent, "name", agent))
