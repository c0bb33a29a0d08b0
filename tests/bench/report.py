"""The results as a text table, a markdown table for the README, and the target verdicts."""

from __future__ import annotations

from dataclasses import dataclass

from .timing import Timing

TARGET_VS_AIOKAFKA = 3.0
TARGET_VS_KAFKA_PYTHON = 30.0
TARGET_BATCHES_MB_S = 1000.0  # 1 GB/s per core, on uncompressed data

HEADER = ["codec", "file MiB", "records", "records view Mrec/s", "records view MB/s", "batches view MB/s",
          "aiokafka Mrec/s", "kafka-python Mrec/s", "vs aiokafka", "vs kafka-python"]


@dataclass(frozen=True)
class CodecResult:
    codec: str
    file_bytes: int
    records: Timing
    batches: Timing
    aiokafka: Timing
    kafka_python: Timing

    @property
    def vs_aiokafka(self) -> float:
        return self.records.records_per_s / self.aiokafka.records_per_s

    @property
    def vs_kafka_python(self) -> float:
        return self.records.records_per_s / self.kafka_python.records_per_s

    def row(self) -> list[str]:
        return [self.codec, f"{self.file_bytes / 2**20:.0f}", f"{self.records.records:,}",
                f"{self.records.records_per_s / 1e6:.2f}", f"{self.records.mb_per_s:.0f}",
                f"{self.batches.mb_per_s:.0f}", f"{self.aiokafka.records_per_s / 1e6:.2f}",
                f"{self.kafka_python.records_per_s / 1e6:.3f}", f"{self.vs_aiokafka:.2f}x",
                f"{self.vs_kafka_python:.1f}x"]


def text_table(rows: list[list[str]]) -> str:
    widths = [max(len(r[i]) for r in [HEADER, *rows]) for i in range(len(HEADER))]

    def line(cells: list[str]) -> str:  # first column left-aligned, figures right-aligned
        padded = [c.rjust(w) if i else c.ljust(w) for i, (c, w) in enumerate(zip(cells, widths, strict=True))]
        return "  ".join(padded)

    lines = [line(r) for r in [HEADER, *rows]]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def markdown_table(rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(HEADER) + " |", "|" + "|".join(["---"] + ["---:"] * (len(HEADER) - 1)) + "|"]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(lines)


def verdicts(results: list[CodecResult]) -> dict[str, dict[str, object]]:
    """Each target: met or not, with the figures it was judged on."""
    out: dict[str, dict[str, object]] = {}
    for r in results:
        out[f"records view >= {TARGET_VS_AIOKAFKA:g}x aiokafka ({r.codec})"] = {
            "met": r.vs_aiokafka >= TARGET_VS_AIOKAFKA, "value": round(r.vs_aiokafka, 2)}
        out[f"records view >= {TARGET_VS_KAFKA_PYTHON:g}x kafka-python ({r.codec})"] = {
            "met": r.vs_kafka_python >= TARGET_VS_KAFKA_PYTHON, "value": round(r.vs_kafka_python, 1)}
        if r.codec == "none":
            out[f"batches view >= {TARGET_BATCHES_MB_S:g} MB/s per core (none)"] = {
                "met": r.batches.mb_per_s >= TARGET_BATCHES_MB_S, "value": round(r.batches.mb_per_s)}
    return out


def verdict_lines(v: dict[str, dict[str, object]]) -> str:
    return "\n".join(f"  [{'met ' if x['met'] else 'MISS'}] {name}: {x['value']}" for name, x in v.items())
