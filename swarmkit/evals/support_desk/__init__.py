"""An example eval domain: a support desk (triage, billing, accounts) over a small database,
with a typed handoff, a rule edge, a refund that needs approval, and its tasks.

```python
from swarmkit.evals import evaluate
from swarmkit.evals.support_desk import build_swarm, tasks

report = await evaluate(tasks(), build_swarm(), trials=3)   # offline: DeskModel
```
"""

from swarmkit.evals.support_desk._domain import (
    DOMAIN,
    RefundRequest,
    build_swarm,
    offline_swarm,
    tasks,
)
from swarmkit.evals.support_desk._model import DeskModel

__all__ = ["DOMAIN", "DeskModel", "RefundRequest", "build_swarm", "offline_swarm", "tasks"]
