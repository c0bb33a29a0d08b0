"""A griffe extension for the API reference (mkdocs.yml): the docstrings use reStructuredText's ``literals`` and
:func:`roles`, which mkdocstrings reads as Markdown; this turns them into Markdown code spans before rendering.
The docstrings themselves are left as they are."""

from __future__ import annotations

import re

import griffe

_ROLE = re.compile(r":(?:py:)?(?:func|meth|class|mod|attr|data|obj|exc|const):`~?([^`]+)`")
_LITERAL = re.compile(r"``([^`]+?)``")


def markdown(text: str) -> str:
    """``x`` and :role:`x` as Markdown code spans, `x`."""
    return _LITERAL.sub(r"`\1`", _ROLE.sub(r"`\1`", text))


class RolesAsCode(griffe.Extension):
    """Rewrites every docstring griffe loads: modules, classes, functions and attributes alike."""

    def on_instance(self, *, obj: griffe.Object, **kwargs: object) -> None:
        if obj.docstring is not None:
            obj.docstring.value = markdown(obj.docstring.value)
