"""Bytes to batches and records: the record batch and legacy message formats, their codecs, and the compiled
decoders."""

from pathlib import Path

from .compile_cache import choose

choose(Path(__file__).resolve().parent)  # before any module of the package imports numba
