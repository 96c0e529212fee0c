"""RulesLogElsewhere: an engine's session journal keeps its sessions, the rules log elsewhere."""

from __future__ import annotations

from collections.abc import Sequence

from swarmkit.journal import InMemoryJournal, JournalRecord
from swarmkit.lowlevel import RulesLogElsewhere
from swarmkit.shadow import RULES_LOG, log_rule_change, read_rules_log
from tests.journal.test_journal_contract import step


class _SharedLog(RulesLogElsewhere):
    """The rules log in a second journal, reached directly (an engine would use a step)."""

    def __init__(self, local: InMemoryJournal, shared: InMemoryJournal) -> None:
        super().__init__(local)
        self.shared = shared

    async def append_rules_log(self, records: Sequence[JournalRecord]) -> None:
        await self.shared.append(records)

    async def read_rules_log(self) -> tuple[JournalRecord, ...]:
        return await self.shared.read(RULES_LOG)

    async def rules_log_next_seq(self) -> int:
        return await self.shared.next_seq(RULES_LOG)


async def test_the_rules_log_goes_elsewhere_and_every_other_session_stays_local() -> None:
    """Rule changes land in the shared journal and read back from it; a session's steps, its
    listing and its lease stay in the local journal."""
    local, shared = InMemoryJournal(), InMemoryJournal()
    journal = _SharedLog(local, shared)
    await log_rule_change(journal, "rule_demoted", {"rule": "a -> b"}, at=1.0)
    await journal.acquire_lease("s", owner="w", ttl=5.0)
    await journal.append(step("s", 0, "run_started"))
    await journal.release_lease("s", owner="w")
    assert [r.kind for r in await read_rules_log(shared)] == ["rule_demoted"]
    assert await read_rules_log(journal) == await read_rules_log(shared)
    assert await journal.next_seq(RULES_LOG) == 1 and await local.next_seq(RULES_LOG) == 0
    assert [r.kind for r in await journal.read("s")] == ["run_started"]
    assert [info.session_id for info in await journal.sessions()] == ["s"]
    assert await shared.next_seq("s") == 0
