"""MkDocs hooks (mkdocs.yml): the pages stay Markdown that GitHub renders the same way.

A `|` inside a table cell is written `\\|`, even in a code span, so that it does not end the cell (the CLI's
synopses: `--fail-on error\\|warning\\|info`). GitHub drops the backslash; Python-Markdown keeps code spans
literal, so it is dropped here, in table cells only."""

from __future__ import annotations

import re

_CELL = re.compile(r"<(td|th)\b[^>]*>.*?</\1>", re.S)


def on_page_content(html: str, **kwargs: object) -> str:
    return _CELL.sub(lambda m: m.group(0).replace("\\|", "|"), html)
