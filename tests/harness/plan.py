"""Produce plans: a list of client operations run by the Java producer or by librdkafka.

The same plan format drives both clients so scenarios are written once in Python; the Java side is
tests/harness/java/ProducePlan.java (Kafka's own producer), the librdkafka side is `run_librdkafka`.
"""

from __future__ import annotations

import base64
import json
import tempfile
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.harness.broker import HarnessError, KafkaDistribution

Header = tuple[str, bytes | None]


def _b64(data: bytes | None) -> str | None:
    return None if data is None else base64.b64encode(data).decode()


def _unb64(text: str | None) -> bytes | None:
    return None if text is None else base64.b64decode(text)


@dataclass
class Plan:
    ops: list[dict[str, Any]] = field(default_factory=list)

    def open(self, p: str, props: Mapping[str, Any]) -> Plan:
        """Create producer `p` with client properties (Java or librdkafka names, per the runner)."""
        self.ops.append({"op": "open", "p": p, "props": {k: str(v) for k, v in props.items()}})
        return self

    def send(self, p: str, topic: str, value: bytes | None, key: bytes | None = None, *,
             partition: int | None = None, headers: Iterable[Header] = (), timestamp: int | None = None,
             sync: bool = False) -> Plan:
        self.ops.append({
            "op": "send", "p": p, "topic": topic, "partition": partition, "timestamp": timestamp,
            "key": _b64(key), "value": _b64(value), "headers": [[k, _b64(v)] for k, v in headers], "sync": sync,
        })
        return self

    def do(self, op: str, p: str = "") -> Plan:
        """init | begin | commit | abort | flush | close | halt (Java only: the JVM stops at once, like a crash)."""
        self.ops.append({"op": op, "p": p})
        return self

    def sleep(self, ms: int) -> Plan:
        self.ops.append({"op": "sleep", "ms": ms})
        return self

    def extend(self, other: Plan) -> Plan:
        self.ops.extend(other.ops)
        return self

    def sends(self) -> int:
        return sum(op["op"] == "send" for op in self.ops)


def run_java(plan: Plan, dist: KafkaDistribution, bootstrap: str) -> list[tuple[str, int, int]]:
    """Run with Kafka's Java producer; return (topic, partition, offset) per acknowledged send."""
    with tempfile.NamedTemporaryFile("w", suffix=".jsonl", delete=False) as f:
        f.write("\n".join(json.dumps(op) for op in plan.ops) + "\n")
    try:
        proc = dist.run_java("ProducePlan.java", bootstrap, f.name)
    finally:
        Path(f.name).unlink()
    acked = [(t, int(p), int(o)) for t, p, o in (line.split() for line in proc.stdout.splitlines() if line)]
    if len(acked) != plan.sends():
        raise HarnessError(f"Java producer acknowledged {len(acked)} of {plan.sends()} sends:\n{proc.stderr}")
    return acked


def run_librdkafka(plan: Plan, bootstrap: str) -> list[tuple[str, int, int]]:
    """Run with librdkafka (confluent-kafka); same return value as run_java."""
    from confluent_kafka import Producer

    producers: dict[str, Any] = {}
    acked: list[tuple[str, int, int]] = []
    errors: list[Any] = []

    def report(err: Any, msg: Any) -> None:
        if err is not None:
            errors.append(err)
        else:
            acked.append((msg.topic(), msg.partition(), msg.offset()))

    for op in plan.ops:
        kind, p = op["op"], producers.get(op.get("p", ""))
        if kind == "open":
            producers[op["p"]] = Producer({"bootstrap.servers": bootstrap, "log_level": 3, **op["props"]})
        elif kind == "send":
            kwargs: dict[str, Any] = {"on_delivery": report}
            if op["partition"] is not None:
                kwargs["partition"] = op["partition"]
            if op["timestamp"] is not None:
                kwargs["timestamp"] = op["timestamp"]
            if op["headers"]:
                kwargs["headers"] = [(k, _unb64(v)) for k, v in op["headers"]]
            p.produce(op["topic"], value=_unb64(op["value"]), key=_unb64(op["key"]), **kwargs)
            p.poll(0)
            if op["sync"]:
                p.flush(30)
        elif kind == "flush":
            p.flush(30)
        elif kind == "close":
            p.flush(30)
            del producers[op["p"]]
        elif kind == "init":
            p.init_transactions(30)
        elif kind == "begin":
            p.begin_transaction()
        elif kind == "commit":
            p.commit_transaction(30)
        elif kind == "abort":
            p.abort_transaction(30)
        elif kind == "sleep":
            time.sleep(op["ms"] / 1000)
    for p in producers.values():
        p.flush(30)
    if errors or len(acked) != plan.sends():
        raise HarnessError(f"librdkafka acknowledged {len(acked)} of {plan.sends()} sends; errors: {errors[:5]}")
    return acked
