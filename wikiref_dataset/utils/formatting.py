"""Durations and sizes written for a person (7 min 05 s, 1.5 GB): the one formatting the commands, the builds and the experiments runner share."""

from __future__ import annotations


def format_seconds(seconds: float) -> str:
    """A duration for a person: ``12 s``, ``7 min 05 s``, ``2 h 05 min``."""
    seconds = max(0, round(seconds))
    if seconds < 60:
        return f"{seconds} s"
    if seconds < 3600:
        return f"{seconds // 60} min {seconds % 60:02d} s"
    return f"{seconds // 3600} h {seconds % 3600 // 60:02d} min"


def human_bytes(size: int | None) -> str:
    if size is None:
        return "?"
    value = float(size)
    for unit in ("B", "KB", "MB", "GB", "TB"):
        if value < 1024 or unit == "TB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{size} B"
