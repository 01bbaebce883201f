"""The inline-template package: every family is wired into the registry, and template arguments are rendered by the
wikitext renderer."""

import importlib
import pkgutil

import mwparserfromhell
import pytest

from wikiref_dataset.wiki import plaintext, templates
from wikiref_dataset.wiki.templates import arguments
from wikiref_dataset.wiki.templates.registry import TEMPLATE_RENDERERS


def _families():
    for info in pkgutil.iter_modules(templates.__path__):
        module = importlib.import_module(f"{templates.__name__}.{info.name}")
        if hasattr(module, "RENDERERS"):
            yield module


def test_every_family_is_in_the_registry():
    families = list(_families())
    assert len(families) == 9
    listed = [name for family in families for _, names in family.RENDERERS for name in names]
    assert len(listed) == len(set(listed)) == len(TEMPLATE_RENDERERS)
    assert set(listed) == set(TEMPLATE_RENDERERS)


def test_the_renderer_renders_the_arguments():
    template = mwparserfromhell.parse("{{lang|fr|''texte''}}").filter_templates()[0]
    with pytest.raises(NotImplementedError):
        arguments.TemplateArgs(template).pos(2)
    args = plaintext.TemplateArgs(template)
    assert isinstance(args, arguments.TemplateArgs)
    assert args.pos(2) == "texte" and TEMPLATE_RENDERERS["lang"](args) == "texte"
    assert plaintext.render("{{lang|fr|''texte''}}") == "texte"
