"""The local session viewer (``swarmkit ui``): a JSON API and static pages over a journal.

Nothing in swarmkit's core imports this package; the command loads it when asked. It uses
the standard library only (``http.server``), and the pages ship inside the package.
"""

from __future__ import annotations

from swarmkit.ui._app import Reply, Viewer
from swarmkit.ui._server import TOKEN_HEADER, ViewerServer

__all__ = ["Reply", "TOKEN_HEADER", "Viewer", "ViewerServer"]
