"""The ``swarmkit rules status`` and ``swarmkit rules promote`` commands."""

from __future__ import annotations

import argparse
import json
from typing import TypedDict

from swarmkit.cli import journal_path, load_swarm, open_for_reading, open_for_writing
from swarmkit.console import plural
from swarmkit.rules._command import _time
from swarmkit.rules._promote import Promotion, promote
from swarmkit.rules._status import RulesStatus, RuleStatus, status


class _Sessions(TypedDict):
    """The sessions the --since, --until and --prefix options select."""

    since: float | None
    until: float | None
    session_prefix: str | None


def _sessions(args: argparse.Namespace) -> _Sessions:
    return _Sessions(
        since=_time(args.since, "--since"),
        until=_time(args.until, "--until"),
        session_prefix=args.prefix,
    )


async def _status(args: argparse.Namespace) -> int:
    swarm = load_swarm(args.swarm)
    with open_for_reading(journal_path(args.journal)) as journal:
        report = await status(journal, swarm, **_sessions(args))
    if args.json:
        print(json.dumps(report.to_data(), indent=2, ensure_ascii=False))
    else:
        print("\n".join(status_lines(report)))
    return 0


async def _promote(args: argparse.Namespace) -> int:
    swarm = load_swarm(args.swarm)
    with open_for_writing(journal_path(args.journal)) as journal:
        promoted = await promote(
            journal,
            swarm,
            args.rule,
            out=args.out,
            threshold=args.threshold,
            min_fired=args.min_fired,
            by=args.by,
            **_sessions(args),
        )
    if args.json:
        print(json.dumps(dict(promoted.record.data), indent=2, ensure_ascii=False))
    else:
        print("\n".join(promotion_lines(promoted)))
    return 0


def status_lines(report: RulesStatus) -> list[str]:
    """The status as text for people: one block per rule."""
    lines = [f"Read {plural(report.sessions, 'session')}."]
    for rule in report.rules:
        lines += ["", *_rule_lines(rule)]
    return lines


def _rule_lines(rule: RuleStatus) -> list[str]:
    evidence = rule.evidence
    rate = "-" if evidence.rate is None else f"{evidence.rate:.1%}"
    lines = [
        f"{rule.rule}  [{rule.mode}]",
        f"  agreement  {evidence.agreements} of {evidence.fired} fired ({rate}), Wilson 95% "
        f"[{evidence.lower:.4f}, {evidence.upper:.4f}]",
        f"  takes      {rule.share:.1%} of {plural(rule.decisions, 'model decision')} at "
        f"{rule.agent}; would save {plural(rule.calls_saved, 'model call')}, "
        f"{rule.tokens_saved:,} tokens",
    ]
    if rule.decided or rule.audits.fired:
        lines.append(
            f"  active     decided {plural(rule.decided, 'turn')}; audits agree "
            f"{rule.audits.agreements} of {rule.audits.fired}"
        )
    if rule.disagreements:
        shown = "; ".join(
            f"{d.session_id} step {d.seq} (model: {d.model_target or 'kept the turn'})"
            for d in rule.disagreements[:10]
        )
        more = len(rule.disagreements) - 10
        lines.append(f"  disagrees  {shown}" + (f"; and {more} more" if more > 0 else ""))
    lines.extend(f"  {c['kind']}  by {c.get('by', '?')} at {c.get('at')}" for c in rule.changes)
    return lines


def promotion_lines(promoted: Promotion) -> list[str]:
    """What a promotion did, for people."""
    evidence = promoted.evidence
    return [
        f"Promoted {promoted.rule}: {evidence.agreements} of {evidence.fired} fired decisions "
        f"agree (Wilson 95% lower bound {evidence.lower:.4f}).",
        f"Rules written to {promoted.out}; the promotion is record {promoted.record.seq} of "
        "the journal's rules log.",
        f"Load them as the swarm's graph: HandoffGraph.from_dict(json.load(open("
        f"{str(promoted.out)!r}))), and take the rule out of shadow=.",
    ]
