"""``quorum-state``: the KRaft election state of a controller's metadata log (``__cluster_metadata-0``).

Kafka's FileQuorumStateStore (raft/src/main/java/org/apache/kafka/raft/FileQuorumStateStore.java) writes it as
one JSON object, QuorumStateData (raft/src/main/resources/common/message/QuorumStateData.json) plus a
``data_version`` field: ``leaderId``, ``leaderEpoch``, ``votedId`` (-1: none) in every version, ``appliedOffset``
and ``currentVoters`` in version 0, ``votedDirectoryId`` from version 1. The store rewrites it whole (write to
``quorum-state.tmp``, then an atomic move), so a reader sees one complete version.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Self

import pyarrow.fs as pafs

from ..findings import Finding, Severity
from .files import read_capped

QUORUM_STATE = "quorum-state"
MAX_QUORUM_STATE_BYTES = 1024 * 1024  # a few hundred bytes in practice, a voter list at most
_INT_FIELDS = ("leaderId", "leaderEpoch", "votedId")


@dataclass(slots=True)
class QuorumStateFile:
    path: str
    data_version: int | None = None
    leader_id: int | None = None
    leader_epoch: int | None = None
    voted_id: int | None = None
    voters: list[int] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)

    @classmethod
    def read(cls, path: str, filesystem: pafs.FileSystem | None = None) -> Self:
        out = cls(path)
        data = read_capped(path, filesystem, MAX_QUORUM_STATE_BYTES, out.findings, refuse_larger=True)
        if data is not None:
            out._parse(data)
        return out

    def _malformed(self, position: int, detail: str) -> None:
        self.findings.append(Finding(self.path, position, "quorum_state_malformed", detail, Severity.ERROR))

    def _parse(self, data: bytes) -> None:
        try:
            doc = json.loads(data.decode("utf-8"))
        except UnicodeDecodeError as e:
            return self._malformed(e.start, f"not UTF-8: {e.reason}")
        except json.JSONDecodeError as e:
            # JSONDecodeError.pos counts characters; quorum-state is ASCII in practice, so they are bytes
            return self._malformed(len(e.doc[:e.pos].encode()), f"not JSON: {e.msg}")
        if not isinstance(doc, dict):
            return self._malformed(0, "expected a JSON object")
        missing = [k for k in (*_INT_FIELDS, "data_version") if not isinstance(doc.get(k), int)]
        if missing:
            return self._malformed(0, f"missing or non-integer field(s): {', '.join(missing)}")
        self.data_version = doc["data_version"]
        self.leader_id, self.leader_epoch, self.voted_id = (doc[k] for k in _INT_FIELDS)
        voters = doc.get("currentVoters") or []
        self.voters = [v["voterId"] for v in voters if isinstance(v, dict) and isinstance(v.get("voterId"), int)]
