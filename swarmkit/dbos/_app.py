"""DurableSwarms: the swarms a process serves on DBOS, its queues, its version, its recovery."""

from __future__ import annotations

import contextlib
import sqlite3
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from dbos import DBOS, DBOSConfig, SetWorkflowID

from swarmkit.dbos._client import QUEUE_PREFIX, SessionClient
from swarmkit.dbos._codec import JsonSerializer
from swarmkit.dbos._handle import SessionHandle
from swarmkit.dbos._ledger import StepLedger
from swarmkit.dbos._steps import StepModel
from swarmkit.dbos._versions import check_swarms, default_version
from swarmkit.dbos._workflow import activate, deactivate, session_workflow
from swarmkit.exceptions import ConfigurationError, SessionExistsError
from swarmkit.journal import Journal
from swarmkit.result import RunResult
from swarmkit.swarm import Swarm


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

    ``stream_events=True`` writes each event of a session to a DBOS stream that
    ``SessionHandle.follow()`` reads from any process while the session runs (one database
    write per event). ``journal`` receives each session's records at every pause and at its
    end, for ``swarmkit show``, ``replay`` and the viewer.
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
        stream_events: bool = False,
    ) -> None:
        self.swarms = check_swarms(swarms)
        self.database_url = database_url
        self.journal = journal
        self.app_name = app_name
        self.application_version = application_version or default_version(self.swarms)
        self.executor_id = executor_id or "local"
        self._limits = limits
        self.polling_interval = polling_interval
        self.log_level = log_level
        self.stream_events = stream_events
        self._durable: dict[str, Swarm] = {}
        self._client: SessionClient | None = None

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
        _use_wal(self.database_url)
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
        if self._client is not None:
            self._client.close()
            self._client = None
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

    # -- sessions (through the worker's client) ---------------------------------------------

    @property
    def client(self) -> SessionClient:
        """A client of the same system database, swarms and version."""
        if self._client is None:
            self._client = SessionClient(
                self.swarms,
                database_url=self.database_url,
                app_name=self.app_name,
                application_version=self.application_version,
            )
        return self._client

    async def start_session(
        self,
        swarm: str,
        prompt: str,
        *,
        session_id: str | None = None,
        context: Mapping[str, Any] | None = None,
    ) -> SessionHandle:
        """Queue a new session of ``swarm`` (see ``SessionClient.start_session``)."""
        return await self.client.start_session(
            swarm, prompt, session_id=session_id, context=context
        )

    async def run_session(
        self,
        swarm: str,
        prompt: str,
        *,
        session_id: str | None = None,
        context: Mapping[str, Any] | None = None,
    ) -> RunResult:
        """Run a new session of ``swarm`` here and now, not through its queue (no queue
        limit applies); durable all the same: if this process dies, its recovery finishes it."""
        self.client.swarm(swarm)
        session_id = session_id or uuid.uuid4().hex
        if await DBOS.get_workflow_status_async(session_id) is not None:
            raise SessionExistsError(session_id)
        data = dict(context) if context is not None else None
        with SetWorkflowID(session_id):
            handle = await DBOS.start_workflow_async(session_workflow, swarm, prompt, data)
        return RunResult.from_data(await handle.get_result())

    def session_handle(self, session_id: str) -> SessionHandle:
        """The handle of an existing session."""
        return self.client.session_handle(session_id)

    async def recover_sessions(self, executor_ids: list[str]) -> tuple[str, ...]:
        """Take over dead workers' sessions (see ``SessionClient.recover_sessions``)."""
        return await self.client.recover_sessions(executor_ids)

    # -- swarms ------------------------------------------------------------------------------

    def durable_swarm(self, name: str) -> Swarm:
        """The registered swarm with every agent's model call made a recorded step."""
        if name not in self._durable:
            self._durable[name] = with_step_models(self.client.swarm(name))
        return self._durable[name]


def with_step_models(swarm: Swarm) -> Swarm:
    """The same swarm with each agent's model wrapped in a StepModel, and its spend ledger's
    calls made recorded steps (its fingerprint unchanged)."""
    models = {name: plan.model for name, plan in swarm.plans.items()}
    ledger = swarm.config.ledger
    if ledger is not None and not isinstance(ledger, StepLedger):
        swarm = swarm.with_ledger(StepLedger(ledger))
    if all(isinstance(m, StepModel) for m in models.values()):
        return swarm
    return swarm.with_models({name: StepModel(model) for name, model in models.items()})


def _use_wal(database_url: str) -> None:
    """Put a SQLite system database in write-ahead-log mode (kept in the file): a step's
    commit then costs one sync instead of a rollback journal's several."""
    if not database_url.startswith("sqlite:///"):
        return
    path = database_url.removeprefix("sqlite:///")
    with contextlib.closing(sqlite3.connect(path)) as db:
        db.execute("PRAGMA journal_mode=WAL")
