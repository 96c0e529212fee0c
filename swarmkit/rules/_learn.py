"""A small deterministic rule-list learner: sequential covering with FOIL-gain greedy growth.

Each round grows, for every target, one conjunction of up to three atoms on the rows not yet
covered, keeps the one with the most support among those precise enough, and removes the rows
it covers. Ties break on the condition's text, so the same corpus gives the same rules.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from swarmkit.rules._features import Test

MAX_ATOMS = 3
"""A condition is a conjunction of at most this many atoms."""
MAX_RULES = 20
"""At most this many rules per source agent."""
MAX_MEMBERS = 8
"""A membership test lists at most this many values."""


@dataclass(frozen=True, kw_only=True, slots=True)
class Learned:
    """A rule the learner proposes, before it is checked on held-out sessions."""

    target: str
    """The agent the rule hands off to."""
    atoms: tuple[str, ...]
    """The atoms of the conjunction, in the order they were added."""
    paths: tuple[str, ...]
    """The context paths the atoms read."""
    bits: int
    """The rows (training or not) the conjunction holds on."""
    tests: tuple[Test, ...]
    """The atoms as tests."""

    @property
    def when(self) -> str:
        """The condition in the language: the atoms joined by ``and``."""
        return " and ".join(self.atoms)


@dataclass(frozen=True, kw_only=True, slots=True)
class Learning:
    """What the learner found for one source agent."""

    rules: tuple[Learned, ...]
    """The rule list, first to try first."""
    atoms: tuple[Test, ...]
    """The atoms of the rules kept, or the first atom of each rule tried when none was kept:
    the features inconsistencies are looked for on."""


def learn(
    tests: Sequence[Test],
    labels: Mapping[str | None, int],
    train: int,
    *,
    min_precision: float,
    min_support: int,
) -> Learning:
    """A rule list for the targets in ``labels`` (target -> bitset of its rows; ``None``
    means the model kept the turn, never a rule's target), learned on the ``train`` rows."""
    remaining = train
    rules: list[Learned] = []
    tried: dict[str, Test] = {}
    targets = sorted(
        (t for t in labels if t is not None), key=lambda t: (-labels[t].bit_count(), t)
    )
    while len(rules) < MAX_RULES:
        best: tuple[int, str, Learned] | None = None
        for target in targets:
            grown = _grow(
                tests,
                labels[target],
                remaining,
                min_support=min_support,
                min_precision=min_precision,
                target=target,
            )
            if grown is None:
                continue
            tried.setdefault(grown.tests[0].text, grown.tests[0])
            covered = grown.bits & remaining
            positive = (covered & labels[target]).bit_count()
            if positive < min_support or positive < min_precision * covered.bit_count():
                continue
            key = (-positive, grown.when, grown)
            if best is None or key[:2] < best[:2]:
                best = key
        if best is None:
            break
        rule = best[2]
        rules.append(rule)
        remaining &= ~rule.bits
    used = {atom.text: atom for rule in rules for atom in rule.tests}
    return Learning(rules=tuple(rules), atoms=tuple((used or tried).values()))


def _grow(
    tests: Sequence[Test],
    positives: int,
    remaining: int,
    *,
    min_support: int,
    min_precision: float,
    target: str,
) -> Learned | None:
    covered = remaining
    atoms: list[Test] = []
    candidates = list(tests) + _memberships(tests, positives, remaining, min_precision)
    for _ in range(MAX_ATOMS):
        p0 = (covered & positives).bit_count()
        total0 = covered.bit_count()
        if p0 < min_support or total0 == 0:
            break
        base = math.log(p0 / total0)
        best: tuple[float, str, Test, int] | None = None
        used = {atom.text for atom in atoms}
        for test in candidates:
            if test.text in used:
                continue
            inside = covered & test.bits
            p = (inside & positives).bit_count()
            if p < min_support:
                continue
            total = inside.bit_count()
            if total == total0:
                continue
            gain = p * (math.log(p / total) - base)
            if gain <= 1e-12:
                continue
            if best is None or (-gain, test.text) < (-best[0], best[1]):
                best = (gain, test.text, test, inside)
        if best is None:
            break
        atoms.append(best[2])
        covered = best[3]
        if (covered & positives).bit_count() >= min_precision * covered.bit_count():
            break
    if not atoms:
        return None
    return _learned(target, atoms)


def _learned(target: str, atoms: Sequence[Test]) -> Learned:
    """The rule sending to ``target`` when all of ``atoms`` hold, on every row they hold on."""
    bits = ~0
    for atom in atoms:
        bits &= atom.bits
    return Learned(
        target=target,
        atoms=tuple(atom.text for atom in atoms),
        paths=tuple(dict.fromkeys(atom.path for atom in atoms)),
        bits=bits,
        tests=tuple(atoms),
    )


def _memberships(
    tests: Sequence[Test], positives: int, remaining: int, min_precision: float
) -> list[Test]:
    """``path in [...]`` for each path: its values that, alone, send enough of their rows
    to the target (two at least, or a single equality says it better)."""
    by_path: dict[str, list[tuple[str, int]]] = {}
    for test in tests:
        _, _, value = test.text.partition(" == ")
        if not value or value == "null" or value in ("true", "false"):
            continue
        inside = remaining & test.bits
        total = inside.bit_count()
        if total and (inside & positives).bit_count() >= min_precision * total:
            by_path.setdefault(test.path, []).append((value, test.bits))
    found: list[Test] = []
    for path, values in by_path.items():
        if 2 <= len(values) <= MAX_MEMBERS:
            bits = 0
            for _, value_bits in values:
                bits |= value_bits
            listed = ", ".join(value for value, _ in values)
            found.append(Test(text=f"{path} in [{listed}]", path=path, bits=bits))
    return found
