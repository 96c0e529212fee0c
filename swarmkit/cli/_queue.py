"""`swarmkit queue`: the conversations waiting for a person, and what a person does with one.

The parser is here on the standard library; the work (``swarmkit.queues``) loads only when a
queue command runs.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from swarmkit.cli._usage import TARGET_HELP

if TYPE_CHECKING:
    from swarmkit.queues import WaitingConversation

_Command = Callable[..., argparse.ArgumentParser]
_HOME = "swarmkit.cli._queue"


def add_queue(commands: Any, journal_option: Callable[..., None]) -> None:
    """Register ``swarmkit queue list|claim|reply|hand-back|close|escalate``."""
    summary = "Work the queues of people: list, claim, reply, hand back, close, escalate."
    queue = commands.add_parser("queue", help=summary, description=summary)
    actions = queue.add_subparsers(dest="queue_command", required=True, metavar="ACTION")
    listed = _action(actions, "list", "List conversations waiting for a person.", "_list")
    listed.add_argument("--queue", metavar="NAME", help="only this queue's conversations")
    listed.add_argument("--json", action="store_true", help="print them as JSON")
    claim = _action(actions, "claim", "Claim a waiting conversation.", "_claim")
    _session_by(claim)
    reply = _action(actions, "reply", "Reply in a conversation you claimed.", "_reply")
    _session_by(reply)
    reply.add_argument("text", metavar="TEXT", help="what you say to the customer")
    back = _action(
        actions, "hand-back", "Hand a conversation you claimed back to an agent.", "_hand_back"
    )
    _swarm(back)
    _session_by(back)
    back.add_argument("--to", required=True, metavar="AGENT", help="the agent that goes on")
    close = _action(actions, "close", "Close a conversation you claimed.", "_close")
    _swarm(close)
    _session_by(close)
    sweep = _action(
        actions, "escalate", "Escalate conversations nobody claimed by their deadline.", "_escalate"
    )
    sweep.add_argument("--json", action="store_true", help="print them as JSON")
    for command in (listed, claim, reply, back, close, sweep):
        journal_option(command)


def _action(actions: Any, name: str, summary: str, handler: str) -> argparse.ArgumentParser:
    command: argparse.ArgumentParser = actions.add_parser(name, help=summary, description=summary)
    command.set_defaults(handler=f"{_HOME}:{handler}")
    command.add_argument("-v", "--verbose", action="store_true", help="show the library's logs")
    return command


def _session_by(command: argparse.ArgumentParser) -> None:
    command.add_argument("session", metavar="SESSION", help="the waiting conversation's session")
    command.add_argument("--by", required=True, metavar="NAME", help="who you are")


def _swarm(command: argparse.ArgumentParser) -> None:
    where = command.add_mutually_exclusive_group(required=True)
    where.add_argument(
        "--swarm",
        metavar="module:attribute",
        help=f"the swarm, which resumes the conversation in this process: {TARGET_HELP}",
    )
    where.add_argument(
        "--temporal-address",
        metavar="HOST:PORT",
        help="send it to the session's workflow on this Temporal server instead (a session "
        "a Temporal worker runs; --journal is its journal mirror)",
    )
    command.add_argument(
        "--temporal-namespace",
        default="default",
        metavar="NAME",
        help="the Temporal namespace, with --temporal-address (default: default)",
    )


# -- what each action does (loaded only once the command runs) ---------------------------------


async def _list(args: argparse.Namespace) -> int:
    from swarmkit import queues  # noqa: PLC0415 - loaded once the command runs
    from swarmkit.cli._journal_file import journal_path, open_for_writing  # noqa: PLC0415

    with open_for_writing(journal_path(args.journal)) as journal:
        found = await queues.waiting(journal, queue=args.queue)
    _print(found, as_json=args.json, empty="no conversation is waiting for a person")
    return 0


async def _escalate(args: argparse.Namespace) -> int:
    from swarmkit import queues  # noqa: PLC0415
    from swarmkit.cli._journal_file import journal_path, open_for_writing  # noqa: PLC0415

    with open_for_writing(journal_path(args.journal)) as journal:
        found = await queues.escalate(journal)
    _print(found, as_json=args.json, empty="nothing to escalate")
    return 0


async def _claim(args: argparse.Namespace) -> int:
    from swarmkit import queues  # noqa: PLC0415
    from swarmkit.cli._journal_file import journal_path, open_for_writing  # noqa: PLC0415

    with open_for_writing(journal_path(args.journal)) as journal:
        found = await queues.claim(journal, args.session, by=args.by)
    print(f"{found.session_id}: claimed by {found.claimed_by} ({found.queue})")
    return 0


async def _reply(args: argparse.Namespace) -> int:
    from swarmkit import queues  # noqa: PLC0415
    from swarmkit.cli._journal_file import journal_path, open_for_writing  # noqa: PLC0415

    with open_for_writing(journal_path(args.journal)) as journal:
        found = await queues.reply(journal, args.session, by=args.by, text=args.text)
    print(f"{found.session_id}: {len(found.replies)} reply(s) by {args.by}")
    return 0


async def _hand_back(args: argparse.Namespace) -> int:
    return await _finish(args, to=args.to)


async def _close(args: argparse.Namespace) -> int:
    return await _finish(args, to=None)


async def _finish(args: argparse.Namespace, *, to: str | None) -> int:
    if args.temporal_address:
        return await _finish_on_temporal(args, to=to)
    from swarmkit import queues  # noqa: PLC0415
    from swarmkit.cli._journal_file import open_for_writing, swarm_journal_path  # noqa: PLC0415
    from swarmkit.cli._target import load_swarm  # noqa: PLC0415
    from swarmkit.console import result_lines  # noqa: PLC0415

    swarm = load_swarm(args.swarm)
    with open_for_writing(swarm_journal_path(args.journal, swarm)) as journal:
        if to is None:
            result = await queues.close(swarm, args.session, by=args.by, journal=journal)
        else:
            result = await queues.hand_back(swarm, args.session, to=to, by=args.by, journal=journal)
    print("\n".join(result_lines(result)))
    return 1 if result.stop_reason == "error" else 0


async def _finish_on_temporal(args: argparse.Namespace, *, to: str | None) -> int:
    """Build the hand-back from the mirror and send it to the session's workflow, which
    resumes the conversation there; the command does not wait for its end."""
    from swarmkit import queues  # noqa: PLC0415
    from swarmkit.cli._durable import engine_command  # noqa: PLC0415
    from swarmkit.cli._journal_file import journal_path, open_for_writing  # noqa: PLC0415
    from swarmkit.exceptions import PeopleQueueError  # noqa: PLC0415

    with open_for_writing(journal_path(args.journal)) as journal:
        engine = queues.engine_of(await journal.read(args.session))
        if engine not in (None, "temporal"):
            raise PeopleQueueError(
                f"session {args.session!r} runs on {engine}, not Temporal: send its hand-back "
                f"with {engine}'s decide (see swarmkit.queues.hand_back_decision)",
                session_id=args.session,
            )
        decision = await queues.hand_back_decision(journal, args.session, to=to, by=args.by)
    send = engine_command("temporal", "decide_command")
    await send(
        args.session, decision, address=args.temporal_address, namespace=args.temporal_namespace
    )
    done = "closed" if to is None else f"handed back to {to}"
    print(f"{args.session}: {done}; its Temporal workflow goes on with it")
    return 0


def _print(found: Sequence[WaitingConversation], *, as_json: bool, empty: str) -> None:
    if as_json:
        print(json.dumps([c.to_data() for c in found], indent=2, ensure_ascii=False))
        return
    if not found:
        print(empty)
        return
    print(f"{'SESSION':<24} {'QUEUE':<16} {'PRI':>3} {'AGE':>8}  CLAIMED BY   STATE")
    for c in found:
        state = "escalated" if c.escalated_at is not None else ("overdue" if c.overdue else "")
        claimed = c.claimed_by or "-"
        print(
            f"{c.session_id:<24} {c.queue:<16} {c.priority:>3} {_age(c.age):>8}  "
            f"{claimed:<12} {state}".rstrip()
        )


def _age(seconds: float) -> str:
    minutes, secs = divmod(int(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h{minutes:02d}m" if hours else f"{minutes}m{secs:02d}s"
