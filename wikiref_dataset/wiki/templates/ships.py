"""Ship names as a reader sees them: ``{{USS|Enterprise|CV-6}}``, ``{{ship|HMS|Victory}}`` and ship classes
(``{{sclass|Fletcher|destroyer}}``)."""

from __future__ import annotations

from .arguments import Renderer, TemplateArgs, unrendered

__all__ = ["RENDERERS"]


def _ship(prefix: str) -> Renderer:
    def render_ship(args: TemplateArgs) -> str:
        name, designation = args.pos(1), args.pos(2)
        if not name:
            return prefix
        return f"{prefix} {name} ({designation})" if designation else f"{prefix} {name}"

    return render_ship


def _ship_name(args: TemplateArgs) -> str:
    """``{{ship|USS|Enterprise|CV-6}}`` → ``USS Enterprise (CV-6)``."""
    prefix, name, designation = args.pos(1), args.pos(2), args.pos(3)
    text = " ".join(value for value in (prefix, name) if value)
    return f"{text} ({designation})" if designation else text


def _ship_class(args: TemplateArgs) -> str:
    """``{{sclass|Fletcher|destroyer}}`` → ``Fletcher-class destroyer``."""
    name, kind = args.pos(1), args.pos(2)
    return f"{name}-class {kind}".strip() if name else unrendered(args)


RENDERERS: tuple[tuple[Renderer, tuple[str, ...]], ...] = (
    (_ship("USS"), ("uss",)),
    (_ship("HMS"), ("hms",)),
    (_ship("HMAS"), ("hmas",)),
    (_ship("HMCS"), ("hmcs",)),
    (_ship("SS"), ("ss",)),
    (_ship("RMS"), ("rms",)),
    (_ship_name, ("ship",)),
    (_ship_class, ("sclass", "sclass-", "sclass2")),
)
"""The rendered ship templates: (renderer, the canonical names it renders)."""
