"""The Databricks notebook (jobs/databricks_nightly.py) run outside Databricks: its cells in order, and a stand-in
for the ``dbutils`` global whose widgets hold the values a run is given."""

from __future__ import annotations

from tests.helpers.corpus import NOTEBOOK

__all__ = ["NOTEBOOK", "DBUtils", "Widgets", "cells"]


class Widgets:
    def __init__(self, values: dict[str, str]):
        self.values = values

    def text(self, name: str, default: str) -> None:
        self.values.setdefault(name, default)

    def dropdown(self, name: str, default: str, choices: list[str]) -> None:
        assert default in choices and self.values.setdefault(name, default) in choices

    def get(self, name: str) -> str:
        return self.values[name]


class DBUtils:
    def __init__(self, values: dict[str, str]):
        self.widgets = Widgets(values)


def cells(source: str) -> list[str]:
    body = source.split("\n", 1)[1]  # "# Databricks notebook source"
    return [c for c in body.split("# COMMAND ----------") if c.strip() and "# MAGIC" not in c]
