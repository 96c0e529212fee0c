"""SessionClient: start, follow, decide and recover DBOS sessions without running any."""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from typing import Any

from dbos import DBOS, DBOSClient, EnqueueOptions
from dbos import error as dbos_error

from swarmkit.dbos._codec import JsonSerializer
from swarmkit.dbos._handle import SessionHandle
from swarmkit.dbos._versions import check_swarms, default_version
from swarmkit.dbos._workflow import WORKFLOW_NAME
from swarmkit.exceptions import ApplicationVersionError, ConfigurationError, SessionExistsError
from swarmkit.swarm import Swarm

QUEUE_PREFIX = "swarmkit:"
"""Each swarm's sessions wait on the queue ``swarmkit:<swarm name>``."""


class SessionClient:
    """Talks to the system database only: any process (a web server, a script) can queue
    sessions, follow them, send decisions and hand a dead worker's sessions to the living.

    ``swarms`` are the same swarms the workers serve (to check decisions before they are
    sent, and to name the application version); ``application_version`` must match theirs
    when they set one.
    """

    def __init__(
        self,
        swarms: Mapping[str, Swarm],
        *,
        database_url: str,
        app_name: str = "swarmkit",
        application_version: str | None = None,
    ) -> None:
        self.swarms = check_swarms(swarms)
        self.database_url = database_url
        self.app_name = app_name
        self.application_version = application_version or default_version(self.swarms)
        self._dbos: DBOSClient | None = None

    @property
    def dbos(self) -> DBOSClient:
        """The DBOS client (connected on first use)."""
        if self._dbos is None:
            # A client may come before any worker: it creates DBOS's tables if they are absent.
            DBOS.migrate(self.database_url)
            self._dbos = DBOSClient(
                system_database_url=self.database_url,
                serializer=JsonSerializer(),
                application_name=self.app_name,
            )
        return self._dbos

    def close(self) -> None:
        """Release the client's database connections."""
        if self._dbos is not None:
            self._dbos.destroy()
            self._dbos = None

    def swarm(self, name: str) -> Swarm:
        """The registered swarm ``name``; ConfigurationError naming the known ones."""
        swarm = self.swarms.get(name)
        if swarm is None:
            known = ", ".join(sorted(self.swarms))
            raise ConfigurationError(
                f"swarm {name!r} is not registered (registered: {known}); register it on "
                "every worker and client"
            )
        return swarm

    async def start_session(
        self,
        swarm: str,
        prompt: str,
        *,
        session_id: str | None = None,
        context: Mapping[str, Any] | None = None,
    ) -> SessionHandle:
        """Queue a new session of ``swarm``; a worker with room runs it. Returns its handle.

        A ``session_id`` that exists raises SessionExistsError (ids are never reused).
        """
        self.swarm(swarm)
        session_id = session_id or uuid.uuid4().hex
        options: EnqueueOptions = {
            "workflow_name": WORKFLOW_NAME,
            "queue_name": QUEUE_PREFIX + swarm,
            "workflow_id": session_id,
            "workflow_id_reuse_policy": "reject",
            "app_version": self.application_version,
        }
        data = dict(context) if context is not None else None
        try:
            await self.dbos.enqueue_async(options, swarm, prompt, data)
        except dbos_error.DBOSWorkflowIDInUseError:
            raise SessionExistsError(session_id) from None
        return SessionHandle(session_id, self)

    async def first_finished(self, session_ids: Sequence[str]) -> str:
        """Wait until one of the sessions ends (or has ended); returns its id."""
        handles: list[Any] = [await self.dbos.retrieve_workflow_async(i) for i in session_ids]
        done = await self.dbos.wait_first_async(handles, polling_interval_sec=0.05)
        return str(done.workflow_id)

    def session_handle(self, session_id: str) -> SessionHandle:
        """The handle of an existing session (started by any process)."""
        return SessionHandle(session_id, self)

    async def recover_sessions(self, executor_ids: list[str]) -> tuple[str, ...]:
        """Hand the pending sessions of dead workers (their ``executor_id``\\ s) back to the
        queues, where any live worker of the same version takes them; returns their ids.

        Sessions of another application version are left where they are, and
        ApplicationVersionError names them and their versions (after the others are handed
        on). Never pass the id of a live worker: its running sessions would run twice.
        """
        pending = await self.dbos.list_workflows_async(
            status="PENDING", executor_id=list(executor_ids), name=WORKFLOW_NAME, load_input=False
        )
        taken: list[str] = []
        others: dict[str, str] = {}
        for status in pending:
            if status.app_version != self.application_version:
                others[status.workflow_id] = str(status.app_version)
                continue
            await self.dbos.resume_workflow_async(status.workflow_id, queue_name=status.queue_name)
            taken.append(status.workflow_id)
        if others:
            versions = ", ".join(sorted(set(others.values())))
            raise ApplicationVersionError(
                f"{len(others)} session(s) of worker(s) {', '.join(executor_ids)} were started "
                f"by another application version ({versions}), not this one "
                f"({self.application_version}); recover them from a worker or client that "
                "runs that code (the same swarms, or application_version set to it)",
                sessions=others,
                version=self.application_version,
            )
        return tuple(taken)

    async def sessions_of_other_versions(self) -> dict[str, str]:
        """Pending or queued sessions no worker of this version will run: id to version."""
        found = await self.dbos.list_workflows_async(
            status=["PENDING", "ENQUEUED"], name=WORKFLOW_NAME, load_input=False
        )
        return {
            s.workflow_id: str(s.app_version)
            for s in found
            if s.app_version != self.application_version
        }
