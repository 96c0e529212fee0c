"""The application version DBOS runs sessions by, derived from the swarms unless set."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping

import swarmkit
from swarmkit.exceptions import ConfigurationError
from swarmkit.swarm import Swarm


def default_version(swarms: Mapping[str, Swarm]) -> str:
    """A digest of swarmkit's version and the swarms' names and fingerprints: changed swarm
    code is a new version, whose workers leave the older sessions to the older code."""
    parts = {name: swarm.fingerprint() for name, swarm in sorted(swarms.items())}
    text = json.dumps([swarmkit.__version__, parts], sort_keys=True, default=str)
    return "swarmkit-" + hashlib.sha256(text.encode()).hexdigest()[:16]


def check_swarms(swarms: Mapping[str, Swarm]) -> dict[str, Swarm]:
    """The swarms by name, each checked to be a Swarm."""
    if not swarms:
        raise ConfigurationError("register at least one swarm: swarms={name: Swarm}")
    for name, swarm in swarms.items():
        if not isinstance(swarm, Swarm):
            raise ConfigurationError(f"swarms[{name!r}] is {type(swarm).__name__}, not a Swarm")
    return dict(swarms)
