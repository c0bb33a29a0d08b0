"""Reads a report page back: its summary cards, its tables (each cell's exact data-value) and its charts, so tests
compare the page with the Delta tables it was made from."""

from __future__ import annotations

from dataclasses import dataclass, field
from html.parser import HTMLParser


@dataclass
class Table:
    keys: list[str] = field(default_factory=list)
    rows: list[list[str]] = field(default_factory=list)

    def records(self) -> list[dict[str, str]]:
        return [dict(zip(self.keys, row, strict=True)) for row in self.rows]


class Page(HTMLParser):
    def __init__(self, text: str):
        super().__init__()
        self.cards: dict[str, str] = {}
        self.tables: dict[str, Table] = {}
        self.figures: list[str] = []
        self.external: list[str] = []  # anything the page would load from elsewhere
        self._table: Table | None = None
        self.feed(text)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if (a.get("id") or "").startswith("summary-"):
            self.cards[a["id"].removeprefix("summary-")] = a.get("data-value") or ""
        if tag == "table" and "sortable" in (a.get("class") or ""):
            self._table = self.tables.setdefault(a["id"], Table())
        elif tag == "th" and self._table is not None:
            self._table.keys.append(a["data-key"])
        elif tag == "tr" and self._table is not None and self._table.keys:
            self._table.rows.append([])
        elif tag == "td" and self._table is not None:
            self._table.rows[-1].append(a.get("data-value") or "")
        elif tag == "div" and "plotly-graph-div" in (a.get("class") or ""):
            self.figures.append(a["id"])
        for attr in ("src", "href"):
            if a.get(attr) and not a[attr].startswith("#"):
                self.external.append(a[attr])

    def handle_endtag(self, tag: str) -> None:
        if tag == "table":
            self._table = None


def report_numbers(pages: list[str]) -> dict:
    """What a notebook displayed: how many pages, and the last one's summary cards and chart ids."""
    page = Page(pages[-1]) if pages else None
    return {"pages": len(pages), "cards": page.cards if page else {}, "figures": page.figures if page else []}
