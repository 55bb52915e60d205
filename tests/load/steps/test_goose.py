"""goose stream-json turn counting (load/steps/goose.py). anchors.md: turns are the distinct
assistant message ids in the stream-json log (one streamed turn emits many chunks sharing
``message.id``); an assistant message without an id counts as one turn."""

from __future__ import annotations

from pathlib import Path

import orjson
from hypothesis import given, settings
from hypothesis import strategies as st

from evalkit.load.steps.goose import GOOSE_LOG_NAMES, find_goose_log, goose_turns


def _msg(role: str, mid: str | None = None, text: str = "hi") -> dict:
    m: dict = {"role": role, "content": [{"type": "text", "text": text}]}
    if mid is not None:
        m["id"] = mid
    return {"type": "message", "message": m}


def _log(path: Path, events: list) -> str:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"\n".join(e if isinstance(e, bytes) else orjson.dumps(e) for e in events))
    return str(path)


def test_chunks_of_one_turn_count_once(tmp_path: Path) -> None:
    p = _log(
        tmp_path / "goose.txt",
        [
            b"starting goose session...",  # banner text, not JSON
            _msg("user", "u1"),
            _msg("assistant", "a1", "Let me"),
            _msg("assistant", "a1", " look"),
            {"type": "notification", "message": {"role": "assistant", "id": "n1"}},
            _msg("assistant", "a2"),
            _msg("assistant", None),  # no id: one turn each
            _msg("assistant", ""),
            b'{"type": "message", "message": ',  # cut line
            {"type": "message", "message": "not an object"},
            _msg("assistant", "a2"),
            {"type": "complete", "total_tokens": 10},
        ],
    )
    assert goose_turns(p) == 4  # a1, a2, and two anonymous


def test_only_user_messages_is_zero_not_none(tmp_path: Path) -> None:
    assert goose_turns(_log(tmp_path / "l.jsonl", [_msg("user", "u1")])) == 0


def test_no_message_events_is_none(tmp_path: Path) -> None:
    assert goose_turns(_log(tmp_path / "a.txt", [{"type": "complete"}, b"plain text"])) is None
    assert goose_turns(_log(tmp_path / "b.txt", [])) is None
    assert goose_turns(str(tmp_path / "missing.txt")) is None


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(st.sampled_from(["user", "assistant"]), st.none() | st.sampled_from("abcde")),
        max_size=30,
    )
)
def test_turns_equal_distinct_ids_plus_anonymous(tmp_path_factory, msgs) -> None:
    p = _log(tmp_path_factory.mktemp("g") / "goose.txt", [_msg(r, m) for r, m in msgs])
    assistant = [m for r, m in msgs if r == "assistant"]
    expected = len({m for m in assistant if m}) + sum(1 for m in assistant if not m)
    assert goose_turns(p) == (expected if msgs else None)


def test_find_goose_log_by_known_name_for_any_agent(tmp_path: Path) -> None:
    assert GOOSE_LOG_NAMES[0] == "goose.txt"
    p = _log(tmp_path / "agent" / "goose-stream.jsonl", [_msg("assistant", "a")])
    _log(tmp_path / "agent" / "goose.jsonl", [_msg("assistant", "b")])
    # tried in GOOSE_LOG_NAMES order: goose.jsonl before goose-stream.jsonl
    assert find_goose_log(str(tmp_path), "claude-code") == str(tmp_path / "agent" / "goose.jsonl")
    listed = frozenset({"goose-stream.jsonl"})
    assert find_goose_log(str(tmp_path), None, listed) == p


def test_goose_agents_try_any_txt_or_jsonl_with_messages(tmp_path: Path) -> None:
    _log(tmp_path / "agent" / "a-setup.txt", [b"installing goose"])  # no message events
    want = _log(tmp_path / "agent" / "b-run.jsonl", [_msg("assistant", "x")])
    _log(tmp_path / "agent" / "c-run.txt", [_msg("assistant", "y")])  # later in name order
    _log(tmp_path / "agent" / "d.log", [_msg("assistant", "z")])
    assert find_goose_log(str(tmp_path), "Goose-CLI") == want
    assert find_goose_log(str(tmp_path), "claude-code") is None  # not a goose agent
    assert find_goose_log(str(tmp_path), "goose", frozenset()) is None  # no agent folder
    assert find_goose_log(str(tmp_path / "nowhere"), "goose") is None
