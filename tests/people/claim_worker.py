"""A person's process claiming a parked conversation, for the test of two racing claims.

Run as ``python -m tests.people.claim_worker LOCATION SESSION NAME``: prints ``ready``, waits
for a line on stdin (so both racers start together), claims, then prints ``won`` or
``lost CLAIMED_BY`` (``lost -`` when the other process was writing at that very moment).
"""

from __future__ import annotations

import asyncio
import sys

from swarmkit import PeopleQueueError, queues
from swarmkit.journal import open_journal


async def _claim(location: str, session_id: str, name: str) -> str:
    journal = open_journal(location, cipher=None)
    try:
        await queues.claim(journal, session_id, by=name)
    except PeopleQueueError as exc:
        return f"lost {exc.claimed_by or '-'}"
    finally:
        journal.close()
    return "won"


def main() -> None:
    """Claim once the test says go."""
    location, session_id, name = sys.argv[1:4]
    print("ready", flush=True)
    sys.stdin.readline()
    print(asyncio.run(_claim(location, session_id, name)), flush=True)


if __name__ == "__main__":
    main()
