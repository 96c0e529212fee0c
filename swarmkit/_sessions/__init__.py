"""Sessions: each session verb as a course, and the one place a run loop is driven along it.

What the facade uses is exported here; the modules stay private to the package.
"""

from swarmkit._sessions._driver import last_result
from swarmkit._sessions._sessions import Sessions
from swarmkit._sessions._start import Turn

__all__ = ["Sessions", "Turn", "last_result"]
