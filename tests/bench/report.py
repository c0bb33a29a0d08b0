"""The results as a text table, the markdown block of docs/benchmarks.md, and the target verdicts.

Ratios compare decoders on the same bytes: our records view and the peers all decode the first
``--peer-mib`` MiB of each file (the peers are too slow for the whole file). Early batches of a compressed
file hold fewer records (the producer's compression estimate starts at 1.0), so per-batch costs weigh
more there than over the whole file: the whole-file rate is reported too, but the verdicts use the prefix.
"""

from __future__ import annotations

from dataclasses import dataclass

from .timing import Timing

TARGET_VS_AIOKAFKA = 3.5  # on none and lz4; zstd is judged against libzstd alone (TARGET_VS_CODEC_ALONE)
TARGET_VS_CODEC_ALONE = 0.9
AIOKAFKA_TARGET_CODECS = ("none", "lz4")
TARGET_VS_KAFKA_PYTHON = 30.0
TARGET_BATCHES_MB_S = 1000.0  # 1 GB/s per core, on uncompressed data

DECOMPRESS_STAGE = "decompress"


@dataclass(frozen=True)
class CodecResult:
    codec: str
    file_bytes: int
    records: Timing  # our records view, whole file
    batches: Timing  # our batches view, whole file
    records_prefix: Timing  # our records view on the peers' prefix
    aiokafka: Timing
    kafka_python: Timing
    codec_alone: Timing | None = None  # the codec library decompressing the prefix's batches, nothing else

    @property
    def vs_codec_alone(self) -> float | None:
        """Our records view's rate as a fraction of the codec library's alone (1.0: decoding costs nothing)."""
        if self.codec_alone is None:
            return None
        return self.records_prefix.records_per_s / self.codec_alone.records_per_s

    @property
    def vs_aiokafka(self) -> float:
        return self.records_prefix.records_per_s / self.aiokafka.records_per_s

    @property
    def vs_kafka_python(self) -> float:
        return self.records_prefix.records_per_s / self.kafka_python.records_per_s


HEADER = ["codec", "records", "records view Mrec/s", "records view MB/s", "batches view MB/s",
          "prefix: records view Mrec/s", "prefix: aiokafka Mrec/s", "prefix: kafka-python Mrec/s", "vs aiokafka",
          "vs kafka-python", "prefix: codec library alone Mrec/s", "vs codec alone"]


def row(r: CodecResult) -> list[str]:
    alone = r.codec_alone
    return [r.codec, f"{r.records.records:,}", f"{r.records.records_per_s / 1e6:.2f}", f"{r.records.mb_per_s:,.0f}",
            f"{r.batches.mb_per_s:,.0f}", f"{r.records_prefix.records_per_s / 1e6:.2f}",
            f"{r.aiokafka.records_per_s / 1e6:.2f}", f"{r.kafka_python.records_per_s / 1e6:.3f}",
            f"{r.vs_aiokafka:.2f}x", f"{r.vs_kafka_python:.1f}x",
            "-" if alone is None else f"{alone.records_per_s / 1e6:.2f}",
            "-" if r.vs_codec_alone is None else f"{r.vs_codec_alone:.2f}"]


def text_table(rows: list[list[str]]) -> str:
    widths = [max(len(r[i]) for r in [HEADER, *rows]) for i in range(len(HEADER))]

    def line(cells: list[str]) -> str:  # first column left-aligned, figures right-aligned
        padded = [c.rjust(w) if i else c.ljust(w) for i, (c, w) in enumerate(zip(cells, widths, strict=True))]
        return "  ".join(padded)

    lines = [line(r) for r in [HEADER, *rows]]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def verdicts(results: list[CodecResult]) -> dict[str, dict[str, object]]:
    """Each target: met or not, with the figures it was judged on."""
    out: dict[str, dict[str, object]] = {}
    for r in results:
        if r.codec in AIOKAFKA_TARGET_CODECS:
            out[f"records view >= {TARGET_VS_AIOKAFKA:g}x aiokafka ({r.codec})"] = {
                "met": r.vs_aiokafka >= TARGET_VS_AIOKAFKA, "value": round(r.vs_aiokafka, 2), "codec": r.codec,
                "budget_ns_per_record": round(1e9 / (TARGET_VS_AIOKAFKA * r.aiokafka.records_per_s), 1)}
        elif r.vs_codec_alone is not None and r.codec_alone is not None:
            out[f"records view >= {TARGET_VS_CODEC_ALONE:g} x the codec library alone ({r.codec})"] = {
                "met": r.vs_codec_alone >= TARGET_VS_CODEC_ALONE, "value": round(r.vs_codec_alone, 2),
                "codec": r.codec,
                "budget_ns_per_record": round(1e9 / (TARGET_VS_CODEC_ALONE * r.codec_alone.records_per_s), 1)}
        out[f"records view >= {TARGET_VS_KAFKA_PYTHON:g}x kafka-python ({r.codec})"] = {
            "met": r.vs_kafka_python >= TARGET_VS_KAFKA_PYTHON, "value": round(r.vs_kafka_python, 1),
            "codec": r.codec,
            "budget_ns_per_record": round(1e9 / (TARGET_VS_KAFKA_PYTHON * r.kafka_python.records_per_s), 1)}
        if r.codec == "none":
            out[f"batches view >= {TARGET_BATCHES_MB_S:g} MB/s per core (none)"] = {
                "met": r.batches.mb_per_s >= TARGET_BATCHES_MB_S, "value": round(r.batches.mb_per_s), "codec": r.codec}
    return out


def verdict_lines(v: dict[str, dict[str, object]]) -> str:
    return "\n".join(f"  [{'met ' if x['met'] else 'MISS'}] {name}: {x['value']}" for name, x in v.items())


def miss_reasons(v: dict[str, dict[str, object]], stages: dict[str, dict[str, float]]) -> list[str]:
    """For each missed records-view target: the time per record it allows against decompression alone."""
    out = []
    for name, x in v.items():
        codec = str(x["codec"])
        if x["met"] or "budget_ns_per_record" not in x or codec not in stages:
            continue
        total = sum(stages[codec].values())
        decompress = stages[codec].get(DECOMPRESS_STAGE, 0.0)
        out.append(f"{name} allows {x['budget_ns_per_record']:.0f} ns per record; the records view takes "
                   f"{total:.0f}, of which {decompress:.0f} decompressing alone")
    return out


def breakdown_table(stages: dict[str, dict[str, float]]) -> str:
    """Markdown: CPU ns per record of each stage (``stages[codec][stage]``), per codec."""
    codecs = list(stages)
    names = list(dict.fromkeys(s for c in codecs for s in stages[c]))
    lines = ["| where the records view's time goes (CPU ns per record) | " + " | ".join(codecs) + " |",
             "|---" + "|---:" * len(codecs) + "|"]
    for name in names:
        lines.append(f"| {name} | " + " | ".join(f"{stages[c].get(name, 0.0):.1f}" for c in codecs) + " |")
    lines.append("| **total** | " + " | ".join(f"**{sum(stages[c].values()):.0f}**" for c in codecs) + " |")
    return "\n".join(lines)


def markdown_block(results: list[CodecResult], v: dict[str, dict[str, object]],
                   stages: dict[str, dict[str, float]] | None, notes: dict[str, str]) -> str:
    """What docs/benchmarks.md shows: the main table, how it was measured, the target verdicts
    and, when measured, the breakdown."""
    peer_mib = notes["peer_mib"]
    header = ["codec", "records", "records view<br>M records/s", "records view<br>MB/s", "batches view<br>MB/s",
              f"first {peer_mib} MiB:<br>records view", "aiokafka", "kafka-python", "records view<br>vs aiokafka",
              "records view<br>vs kafka-python", "codec library<br>alone", "records view<br>vs codec alone"]
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join(["---"] + ["---:"] * (len(header) - 1)) + "|"]
    for r in results:
        lines.append("| " + " | ".join(row(r)) + " |")
    lines += [
        "",
        f"Rates from the CPU time of the best of {notes['reps']} runs on one thread; MB = 10^6 bytes of `.log` "
        f"file; M records/s for the three decoders on the first {peer_mib} MiB, from which the ratios are "
        f"taken (the same bytes for all three). Each file: {notes['dataset']}. Every decoder checks the batch "
        f"CRCs. Codec library alone: libzstd (python-zstandard) or liblz4 (python-lz4's frame API) decompressing "
        f"each batch of the same first {peer_mib} MiB and nothing else, the bound a decoder cannot beat. "
        f"{notes['environment']}.",
        "",
        "Targets:",
        "",
    ]
    lines += [f"- {'met' if x['met'] else '**missed**'}: {name} ({x['value']})" for name, x in v.items()]
    if stages:
        lines += ["", breakdown_table(stages)]
        reasons = miss_reasons(v, stages)
        if reasons:
            lines += [""] + [f"- {r}." for r in reasons]
    return "\n".join(lines)
