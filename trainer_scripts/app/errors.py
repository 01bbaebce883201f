"""The app's one error: a problem with what the user gave, shown in one line on the page.

It lives apart from :mod:`.backend` (which re-exports it) because both the backend and :mod:`.public` (the rules of an
app served to others, which the backend's load functions apply first) raise it.
"""

from __future__ import annotations


class AppError(ValueError):
    """A problem with what the user gave: the page shows the message and keeps serving."""


__all__ = ["AppError"]
