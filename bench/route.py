"""Benchmark: route() latency of swarmkit's HandoffGraph against swarmstate's Rust core.

Both graphs are built from the same edges and timed on the same states in one process,
interleaved round by round (alternating which goes first), so drift in machine speed
hits both alike. Prints the median CPU nanoseconds per call, the median (and min-max) of
the per-round ratios ours/theirs per graph, and the geometric mean of those medians (below
1.0 means swarmkit is faster).

    .venv/bin/python bench/route.py [--rounds 15] [--calls 20000]

Run it with ``PYTHONPATH`` set to the checkout to measure (a script's own folder, not the
working directory, comes first on ``sys.path``). The whole set is 15 graphs: the first
six, one with 50 distinct keys, issue 34's four wider shapes and issue 46's four more.
"""

from __future__ import annotations

import argparse
import gc
import math
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import swarmstate

from swarmkit.graph import HandoffGraph


@dataclass(frozen=True, kw_only=True)
class Case:
    """One benchmark graph: its edges, the node routed from, and the states to route."""

    name: str
    """Short label printed in the table."""
    edges: Sequence[tuple[str, str, str | None]]
    """``(source, target, when)`` in insertion order."""
    node: str
    """The node every call routes from."""
    states: Sequence[dict[str, Any]]
    """States cycled through, so no single branch is all that is measured."""


def _cases() -> list[Case]:
    fan = [("start", f"agent{i}", f"category == 'c{i}'") for i in range(9)]
    fifty = [("start", f"step{i}", f"stage == 'stage{i}'") for i in range(50)]
    deep_when = "request.user.profile.tier == 'gold'"
    return [
        Case(
            name="2-edge equality triage",
            edges=[
                ("triage", "billing", "category == 'billing'"),
                ("triage", "support", "category == 'support'"),
            ],
            node="triage",
            states=[{"category": c, "id": 7} for c in ("billing", "support", "sales")],
        ),
        Case(
            name="10-edge fan with default",
            edges=[*fan, ("start", "fallback", None)],
            node="start",
            states=[{"category": f"c{i}"} for i in (0, 4, 8)] + [{"category": "zz"}],
        ),
        Case(
            name="deep dotted paths",
            edges=[
                ("n", "gold", deep_when),
                ("n", "eu", "request.user.profile.region == 'eu'"),
            ],
            node="n",
            states=[
                {"request": {"user": {"profile": {"tier": tier, "region": region}}}}
                for tier, region in (("gold", "us"), ("silver", "eu"), ("free", "us"))
            ],
        ),
        Case(
            name="membership in a list",
            edges=[("n", "urgent", "'urgent' in tags"), ("n", "vip", "'vip' in tags")],
            node="n",
            states=[
                {"tags": ["billing", "urgent"]},
                {"tags": ["vip"]},
                {"tags": ["a", "b", "c"]},
            ],
        ),
        Case(
            name="gold or (priority and urgent)",
            edges=[
                ("n", "escalate", "user.tier == 'gold' or (priority > 3 and 'urgent' in tags)"),
            ],
            node="n",
            states=[
                {"user": {"tier": "gold"}, "priority": 1, "tags": []},
                {"user": {"tier": "free"}, "priority": 5, "tags": ["x", "urgent"]},
                {"user": {"tier": "free"}, "priority": 2, "tags": ["urgent"]},
            ],
        ),
        Case(
            name="50 edges, last matches",
            edges=fifty,
            node="start",
            states=[{"stage": "stage49"}],
        ),
    ]


def _extra_cases() -> list[Case]:
    # Not in the first list: 50 edges on 50 different keys, so no key is shared; a state
    # of fewer keys is walked by its own keys. Reported apart so the first figure stays honest.
    varied = [("start", f"step{i}", f"f{i} == 'x{i}'") for i in range(50)]
    return [
        Case(
            name="50 distinct edges, last matches",
            edges=varied,
            node="start",
            states=[{"f49": "x49", "f3": "no"}],
        ),
    ]


def _wider_cases() -> list[Case]:
    """Issue 34's wider set: the shapes the six graphs above leave out."""
    bands = [
        ("score", "band_a", "score >= 90"),
        ("score", "band_b", "score >= 80 and score < 90"),
        ("score", "band_c", "score >= 70 and score < 80"),
        ("score", "band_d", "score >= 60 and score < 70"),
        ("score", "band_e", "score >= 50 and score < 60"),
        ("score", "band_f", "score < 50"),
    ]
    operators = ("==", "!=", ">", "<", ">=", "<=")
    mixed = []
    for i in range(200):
        operator = operators[i % len(operators)]
        if operator == "==":
            when = f"k{i % 20} == 'v{i}'"
        elif operator == "!=":
            when = f"k{i % 20} != 'same'"
        elif operator in (">", ">="):
            when = f"n{i % 10} {operator} {1000 + i}"
        else:
            when = f"n{i % 10} {operator} {-1 - i}"
        mixed.append(("start", f"t{i}", when))
    no_match = {**{f"k{j}": "same" for j in range(20)}, **{f"n{j}": 5 for j in range(10)}}
    chain = " or ".join(f"tier == 't{i}'" for i in range(20))
    mixed_chain = " or ".join(
        f"(region == 'r{i}' and amount > {i * 10})" if i % 2 else f"'{i}' in tags"
        for i in range(12)
    )
    return [
        Case(
            name="numeric bands (6 ranges)",
            edges=bands,
            node="score",
            states=[{"score": s} for s in (95, 85, 72, 64, 55, 12)],
        ),
        Case(
            name="200 mixed-operator edges, no match",
            edges=mixed,
            node="start",
            states=[no_match],
        ),
        Case(
            name="or chain of 20 equalities",
            edges=[("n", "hit", chain)],
            node="n",
            states=[{"tier": "t19"}, {"tier": "t0"}, {"tier": "none"}],
        ),
        Case(
            name="or chain of 12 mixed terms",
            edges=[("n", "hit", mixed_chain)],
            node="n",
            states=[
                {"region": "r11", "amount": 500, "tags": []},
                {"region": "x", "amount": 0, "tags": ["10"]},
                {"region": "x", "amount": 0, "tags": ["z"]},
            ],
        ),
    ]


def _issue46_cases() -> list[Case]:
    """Issue 46's four more: bands on a nested float, many edges on a few keys, edges keyed
    on one field and guarded by another, and an ``or`` chain of ranges."""
    tiers = [(0, 10.5), (10.5, 25), (25, 49.99), (49.99, 100), (100, 250), (250, 500)]
    tiers += [(500, 1000), (1000, 2500), (2500, 5000), (5000, 10000), (10000, 50000)]
    priced = [
        ("price", f"tier{i}", f"order.total >= {low} and order.total < {high}")
        for i, (low, high) in enumerate(tiers)
    ]
    priced.append(("price", "quote", "order.total >= 50000"))
    keyed = []
    for i in range(40):
        when = (
            f"country == 'c{i}'",
            f"plan == 'p{i}' or plan == 'q{i}'",
            f"channel == 'ch{i}'",
            f"seats >= {1000 + i}",
        )[i % 4]
        keyed.append(("in", f"queue{i}", when))
    guarded = [
        ("g", f"desk{i}", f"region == 'r{i % 6}' and amount > {(i // 6) * 100}") for i in range(24)
    ]
    ranges = " or ".join(f"(score >= {i * 10} and score < {i * 10 + 5})" for i in range(16))
    return [
        Case(
            name="12 price tiers on order.total",
            edges=priced,
            node="price",
            states=[{"order": {"total": t}} for t in (3.5, 49.99, 720, 12000.5, 99999)],
        ),
        Case(
            name="40 edges on 4 keys, late match",
            edges=keyed,
            node="in",
            states=[
                {"country": "zz", "plan": "q37", "channel": "web", "seats": 5},
                {"country": "c36", "plan": "free", "channel": "web", "seats": 5},
                {"country": "zz", "plan": "free", "channel": "web", "seats": 1039},
            ],
        ),
        Case(
            name="24 edges keyed on region, guarded",
            edges=guarded,
            node="g",
            states=[
                {"region": f"r{r}", "amount": a} for r, a in ((5, 350), (0, 50), (3, 1000), (9, 9))
            ],
        ),
        Case(
            name="or chain of 16 ranges",
            edges=[("n", "hit", ranges)],
            node="n",
            states=[{"score": s} for s in (152, 157, 3, 999)],
        ),
    ]


def _build(case: Case) -> tuple[Callable[..., Any], Callable[..., Any]]:
    ours, theirs = HandoffGraph(), swarmstate.HandoffGraph()
    for source, target, when in case.edges:
        ours.add_edge(source, target, when)
        theirs.add_edge(source, target, when)
    for state in case.states:  # the benchmark is only meaningful if both agree
        assert ours.route(case.node, state) == theirs.route(case.node, state), case.name
    return ours.route, theirs.route


def _time(route: Callable[..., Any], node: str, states: list[dict[str, Any]]) -> float:
    # CPU time: on a shared machine, waiting for a core is neither side's cost.
    start = time.process_time_ns()
    for state in states:
        route(node, state)
    return (time.process_time_ns() - start) / len(states)


def _measure(case: Case, rounds: int, calls: int) -> tuple[float, float, list[float]]:
    """Median ns per call of each side, and the ratio of each round (timed back to back)."""
    ours, theirs = _build(case)
    states = [case.states[i % len(case.states)] for i in range(calls)]
    samples: dict[str, list[float]] = {"ours": [], "theirs": []}
    for round_number in range(rounds):
        order = [("ours", ours), ("theirs", theirs)]
        if round_number % 2:
            order.reverse()
        for label, route in order:
            samples[label].append(_time(route, case.node, states))
    ratios = [a / max(b, 1) for a, b in zip(samples["ours"], samples["theirs"], strict=True)]
    return statistics.median(samples["ours"]), statistics.median(samples["theirs"]), ratios


def main() -> None:
    """Run every case and print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--calls", type=int, default=20_000)
    args = parser.parse_args()
    gc.disable()  # collections would land on whichever side happened to be running
    print(f"swarmstate {swarmstate.__version__}; {args.rounds} rounds x {args.calls} calls")
    print(f"{'graph':34} {'swarmkit ns':>12} {'swarmstate ns':>14} {'ratio':>7} {'min-max':>11}")
    ratios = [_report(case, args.rounds, args.calls) for case in _cases()]
    print(f"{'geometric mean ratio':34} {'':12} {'':14} {_geometric_mean(ratios):7.2f}")
    print("not in the issue's list:")
    extra = [_report(case, args.rounds, args.calls) for case in _extra_cases()]
    both = _geometric_mean(ratios + extra)
    print(f"{'geometric mean with these':34} {'':12} {'':14} {both:7.2f}")
    print("issue 34's wider set (numeric bands, mixed operators, or chains):")
    wider = [_report(case, args.rounds, args.calls) for case in _wider_cases()]
    print(f"{'geometric mean of these':34} {'':12} {'':14} {_geometric_mean(wider):7.2f}")
    eleven = _geometric_mean(ratios + extra + wider)
    print(f"{'geometric mean of the 11 above':34} {'':12} {'':14} {eleven:7.2f}")
    print("issue 46's four more (bands on a nested float, many edges, guards, or of ranges):")
    more = [_report(case, args.rounds, args.calls) for case in _issue46_cases()]
    print(f"{'geometric mean of these':34} {'':12} {'':14} {_geometric_mean(more):7.2f}")
    every = _geometric_mean(ratios + extra + wider + more)
    print(f"{'geometric mean of all':34} {'':12} {'':14} {every:7.2f} (target <= 0.25)")


def _report(case: Case, rounds: int, calls: int) -> float:
    ours, theirs, ratios = _measure(case, rounds, calls)
    ratio = statistics.median(ratios)
    spread = f"{min(ratios):.2f}-{max(ratios):.2f}"
    print(f"{case.name:34} {ours:12.0f} {theirs:14.0f} {ratio:7.2f} {spread:>11}")
    return ratio


def _geometric_mean(ratios: list[float]) -> float:
    return math.exp(sum(math.log(ratio) for ratio in ratios) / len(ratios))


if __name__ == "__main__":
    main()
