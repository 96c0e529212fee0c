"""Swarms on DBOS (extra ``dbos``): sessions as durable workflows on SQLite or Postgres, model
and tool calls as recorded steps, human decisions as messages. The only part of swarmkit that
imports dbos.

```python
app = DurableSwarms({"support": support}, database_url="sqlite:///swarms.sqlite")
async with app:
    handle = await app.start_session("support", "refund A-1")
    result = await handle.result()
```
"""

from __future__ import annotations

from swarmkit.dbos._app import DurableSwarms, QueueLimits
from swarmkit.dbos._client import SessionClient
from swarmkit.dbos._codec import JsonSerializer
from swarmkit.dbos._handle import SessionHandle
from swarmkit.dbos._steps import StepModel
from swarmkit.dbos._versions import default_version
from swarmkit.exceptions import DurableStepError

__all__ = [
    "DurableStepError",
    "DurableSwarms",
    "JsonSerializer",
    "QueueLimits",
    "SessionClient",
    "SessionHandle",
    "StepModel",
    "default_version",
]
