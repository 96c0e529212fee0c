"""Swarms on Temporal (extra ``temporal``): sessions as workflows, model and tool calls as
activities, human decisions as updates. The only part of swarmkit that imports temporalio.

```python
plugin = SwarmPlugin(swarms={"support": "myapp.swarms:support"}, models={"gpt-4o": model})
client = await Client.connect("127.0.0.1:7233", plugins=[plugin])
async with Worker(client, task_queue="swarms", plugins=[plugin]):
    result = await run_session(client, "support", "refund A-1", task_queue="swarms")
```
"""

from __future__ import annotations

from swarmkit.temporal._client import (
    SessionHandle,
    decide,
    follow,
    pending_decision,
    resume_session,
    run_session,
    session_events,
    session_handle,
    session_result,
    start_session,
)
from swarmkit.temporal._data import SessionInput
from swarmkit.temporal._dev_server import dev_server
from swarmkit.temporal._options import ActivityOptions
from swarmkit.temporal._plugin import SwarmPlugin
from swarmkit.temporal._registry import Registry
from swarmkit.temporal._workflow import SwarmWorkflow

__all__ = [
    "ActivityOptions",
    "Registry",
    "SessionHandle",
    "SessionInput",
    "SwarmPlugin",
    "SwarmWorkflow",
    "decide",
    "dev_server",
    "follow",
    "pending_decision",
    "resume_session",
    "run_session",
    "session_events",
    "session_handle",
    "session_result",
    "start_session",
]
