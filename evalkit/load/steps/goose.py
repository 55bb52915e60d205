"""goose ``run --output-format stream-json`` logs: turn counting for trials without ATIF.

goose's own Harbor reporter (anchors.md) counts turns as agent steps of
``agent/trajectory.json``, else as the number of distinct assistant message ids in the
stream-json log (one streamed turn emits many chunks sharing ``message.id``). Harbor tees
that stream to ``agent/goose.txt``. An assistant message without an id counts as one turn.
"""

from __future__ import annotations

import os

import orjson

from evalkit.load.shared import io

#: File names tried in ``<trial>/agent/`` (any agent); for agents named like goose every
#: ``*.txt`` / ``*.jsonl`` there is tried too.
GOOSE_LOG_NAMES = ("goose.txt", "goose.jsonl", "goose-stream.jsonl", "goose.stream-json.jsonl")


def find_goose_log(
    trial_dir: str, agent_name: str | None = None, listed: frozenset[str] | None = None
) -> str | None:
    """Path of a goose stream-json log in the trial's agent folder, else None.

    ``listed``: the names in the agent folder when the caller listed it (empty: no folder).
    """
    adir = os.path.join(trial_dir, "agent")
    for n in GOOSE_LOG_NAMES:
        if listed is not None and n not in listed:
            continue
        p = os.path.join(adir, n)
        if os.path.isfile(p):
            return p
    if agent_name and "goose" in agent_name.lower():
        if listed is not None and not listed:
            return None  # no agent folder (or an empty one)
        try:
            names = sorted(os.listdir(adir))
        except OSError:
            return None
        for n in names:
            p = os.path.join(adir, n)
            if n.endswith((".txt", ".jsonl")) and os.path.isfile(p) and goose_turns(p) is not None:
                return p
    return None


def goose_turns(path: str) -> int | None:
    """Distinct assistant message ids in a stream-json log; None when it has no message events."""
    data, err = io.read_bytes(path, "trajectory")
    if err is not None or not data:
        return None
    ids: set[str] = set()
    anonymous = 0
    seen_message = False
    for line in data.split(b"\n"):
        line = line.strip()
        if not line.startswith(b"{") or b'"message"' not in line:
            continue
        try:
            ev = orjson.loads(line)
        except orjson.JSONDecodeError:
            continue
        if not isinstance(ev, dict) or ev.get("type") != "message":
            continue
        msg = ev.get("message")
        if not isinstance(msg, dict):
            continue
        seen_message = True
        if msg.get("role") != "assistant":
            continue
        mid = msg.get("id")
        if isinstance(mid, str) and mid:
            ids.add(mid)
        else:
            anonymous += 1
    return len(ids) + anonymous if seen_message else None
