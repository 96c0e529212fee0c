"""A small deterministic rule-list learner: sequential covering with FOIL-gain greedy growth.

Each round grows, for every target, one conjunction of up to three atoms on the rows not yet
covered, keeps the one with the most support among those precise enough, and removes the rows
it covers. When no conjunction is precise on the rows left (they may all be one target's, so no
test narrows them), the target's rows left are set apart from every training row instead: the
last of several classes gets its own rule. Ties break on the condition's text, so the same
corpus gives the same rules.
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
class Contested:
    """A rule grown on the training rows that the model's own decisions there contradict."""

    rule: Learned
    """The rule, as its first atom."""
    counts: Mapping[str | None, int]
    """Target (``None``: the model kept the turn) -> training rows it holds on that went there
    (of the rows no earlier rule takes)."""

    @property
    def agreed(self) -> int:
        """Of those rows, how many went to the rule's target."""
        return self.counts.get(self.rule.target, 0)

    @property
    def covered(self) -> int:
        """How many rows it holds on (of those no earlier rule takes)."""
        return sum(self.counts.values())


@dataclass(frozen=True, kw_only=True, slots=True)
class Learning:
    """What the learner found for one source agent."""

    rules: tuple[Learned, ...]
    """The rule list, first to try first."""
    atoms: tuple[Test, ...]
    """The atoms of the rules kept, or the first atom of each rule tried when none was kept:
    the features inconsistencies are looked for on."""
    contested: tuple[Contested, ...] = ()
    """The rules tried last, when none met the thresholds on the training rows: where each
    holds, the model's decisions went to several targets."""


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
    failed: list[Contested] = []
    targets = sorted(
        (t for t in labels if t is not None), key=lambda t: (-labels[t].bit_count(), t)
    )
    thresholds = _Thresholds(min_precision=min_precision, min_support=min_support)
    while len(rules) < MAX_RULES:
        best: tuple[int, str, Learned] | None = None
        failed = []
        for target in targets:
            grown = _candidate(
                tests, labels[target], remaining, train, target=target, thresholds=thresholds
            )
            if grown is None:
                continue
            tried.setdefault(grown.tests[0].text, grown.tests[0])
            positive, total = _counts(grown, labels[target], remaining)
            if not thresholds.met(positive, total):
                failed.append(_contested(grown, remaining, labels))
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
    return Learning(
        rules=tuple(rules), atoms=tuple((used or tried).values()), contested=_distinct(failed)
    )


@dataclass(frozen=True, kw_only=True, slots=True)
class _Thresholds:
    """What a rule needs on the rows it is judged on."""

    min_precision: float
    min_support: int

    def met(self, positive: int, total: int) -> bool:
        """Whether ``positive`` of ``total`` rows are enough, and a large enough share."""
        return positive >= self.min_support and positive >= self.min_precision * total


def _candidate(
    tests: Sequence[Test],
    positives: int,
    remaining: int,
    train: int,
    *,
    target: str,
    thresholds: _Thresholds,
) -> Learned | None:
    """The rule grown for ``target`` on the rows left, when it meets the thresholds there;
    else the rule grown against the other targets' training rows too."""
    grown = _grow(tests, positives, remaining, thresholds, target=target)
    if grown is not None and thresholds.met(*_counts(grown, positives, remaining)):
        return grown
    # The rows left may all be the target's (or split with no test between them): then no
    # test narrows them, yet a rule needs one. A test that sets them apart from the other
    # targets' rows the earlier rules took as well names them, without leaning on the order.
    pool = remaining | (train & ~positives)
    return _grow(tests, positives & remaining, pool, thresholds, target=target) or grown


def _counts(rule: Learned, positives: int, rows: int) -> tuple[int, int]:
    """How many of ``rows`` the rule holds on are ``positives``, and how many it holds on."""
    covered = rule.bits & rows
    return (covered & positives).bit_count(), covered.bit_count()


def _contested(grown: Learned, remaining: int, labels: Mapping[str | None, int]) -> Contested:
    """A rule that fell short, as its first atom (the atoms added to it only chased the noise
    in decisions that conflict), with where the model sent the rows left it holds on."""
    rule = _learned(grown.target, grown.tests[:1])
    counts = {label: (rule.bits & remaining & bits).bit_count() for label, bits in labels.items()}
    return Contested(rule=rule, counts={label: count for label, count in counts.items() if count})


def _distinct(failed: Sequence[Contested]) -> tuple[Contested, ...]:
    """One contested rule per condition, for the target most of its rows went to (a rule for
    a target fewer went to than to another is no candidate)."""
    by_when: dict[str, Contested] = {}
    for found in sorted(failed, key=lambda c: (-c.agreed, c.rule.target)):
        if found.agreed == max(found.counts.values()):
            by_when.setdefault(found.rule.when, found)
    return tuple(sorted(by_when.values(), key=lambda c: (-c.agreed, c.rule.when)))


def _grow(
    tests: Sequence[Test],
    positives: int,
    pool: int,
    thresholds: _Thresholds,
    *,
    target: str,
) -> Learned | None:
    """The conjunction FOIL gain grows for ``target`` on the ``pool`` rows, or ``None``."""
    min_support, min_precision = thresholds.min_support, thresholds.min_precision
    covered = pool
    atoms: list[Test] = []
    candidates = list(tests) + _memberships(tests, positives, pool, min_precision)
    for _ in range(MAX_ATOMS):
        covered_positives = covered & positives
        p0 = covered_positives.bit_count()
        total0 = covered.bit_count()
        if p0 < min_support or total0 == 0:
            break
        base = math.log(p0 / total0)
        best: tuple[float, str, Test, int] | None = None
        used = {atom.text for atom in atoms}
        for test in candidates:
            if test.text in used:
                continue
            p = (covered_positives & test.bits).bit_count()
            if p < min_support:
                continue
            # At most p * -base, where the test holds on positives alone: a test that cannot
            # reach the best so far is not counted further.
            if best is not None and p * (0.0 - base) < best[0]:
                continue
            inside = covered & test.bits
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
    """The rule sending to ``target`` when all of ``atoms`` hold, on every row they hold on;
    an atom a later one makes redundant (``amount >= 31`` before ``amount >= 56``) is left out."""
    bits = _conjunction(atoms)
    kept = list(atoms)
    for atom in atoms:
        others = [other for other in kept if other is not atom]
        if others and _conjunction(others) == bits:
            kept = others
    atoms = kept
    return Learned(
        target=target,
        atoms=tuple(atom.text for atom in atoms),
        paths=tuple(dict.fromkeys(atom.path for atom in atoms)),
        bits=bits,
        tests=tuple(atoms),
    )


def _conjunction(atoms: Sequence[Test]) -> int:
    bits = ~0
    for atom in atoms:
        bits &= atom.bits
    return bits


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
