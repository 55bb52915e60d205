"""The input corpus of the trajectory golden outputs (``tests/fixtures/golden/trajectories``).

Cases (each a trials frame over folders laid out under one root):

* ``harbor``: every trial of tests/fixtures/harbor as ``evalkit.load`` lists it;
* ``atif_tree``: the ATIF fixture tree laid out as trial folders (main file with its
  continuation / summarization siblings);
* ``atif_files``: every file of tests/fixtures/atif alone as a trial's
  ``agent/trajectory.json`` (native logs, JSONL, SOURCES.md included) and goose logs;
* ``fuzz_seed`` and ``crasher-*``: the fuzz campaign's seed tree and its stored crashers;
* ``edges``: hand-written hostile files (:data:`EDGES`: empty, invalid JSON, BOM, NaN,
  duplicate keys, 1e400, lone surrogates, deep nesting, continuation chains and cycles, odd
  references and labels, subagents, multi-step trials, FIFOs, symlink loops, ...);
* ``trials_variants``: odd trials frames (missing / relative / duplicate folders);
* ``random``: Hypothesis-generated ATIF-ish documents, stored as input files
  (``random_inputs.json.gz``) because the generator is not deterministic.

Run ``python -m tests.load.steps.golden_corpus --write`` to re-freeze the outputs after a
deliberate rule change (review the diff of ``test_golden`` first).
"""

from __future__ import annotations

import base64
import gzip
import json
import os
import shutil
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any
from unittest import mock

import orjson
import polars as pl

from tests.load.steps.steps_helpers import ATIF, trials_frame

FIXTURES = Path(__file__).parents[2] / "fixtures"
HARBOR = FIXTURES / "harbor"
GOLDEN_DIR = FIXTURES / "golden" / "trajectories"
RANDOM_INPUTS = GOLDEN_DIR / "random_inputs.json.gz"
FRAMES = ("steps", "tool_calls", "trial_summary", "errors")
ERROR_FIELDS = ("path", "level", "error_type", "message", "job_id", "trial_id")


def _doc(steps: Any, version: Any = "ATIF-v1.6", **root: Any) -> dict:
    d: dict = {
        "schema_version": version,
        "session_id": "s",
        "agent": {"name": "a", "model_name": "m"},
    }
    d["steps"] = steps
    d.update(root)
    if version is None:
        del d["schema_version"]
    return d


def _step(i: int, text: str = "hi", **kw: Any) -> dict:
    s = {
        "step_id": i,
        "source": "agent",
        "message": text,
        "timestamp": f"2025-01-01T00:00:0{i % 10}Z",
    }
    s.update(kw)
    return s


def _call_step(i: int, cmd: str, out: str, **kw: Any) -> dict:
    return _step(
        i,
        tool_calls=[
            {"tool_call_id": f"c{i}", "function_name": "bash", "arguments": {"command": cmd}}
        ],
        observation={"results": [{"source_call_id": f"c{i}", "content": out}]},
        **kw,
    )


def _ref_step(i: int, ref: dict | list) -> dict:
    return _step(i, observation={"results": [{"content": "sub", "subagent_trajectory_ref": ref}]})


def _j(obj: Any) -> bytes:
    return orjson.dumps(obj)


BASIC = _j(_doc([_step(1, source="user"), _call_step(2, "ls", "a\nb"), _step(3, "done")]))
SUB = _doc([_call_step(1, "pwd", "/"), _step(2, "sub done")], trajectory_id="sub")

EDGE_NUMBERS = (
    b'{"schema_version":"ATIF-v1.1","agent":{"name":"a"},"steps":[{"step_id":1E0,"source":"agent",'
    b'"metrics":{"prompt_tokens":1.0e2,"completion_tokens":-0,"cached_tokens":5E+0,"cost_usd":1e-7},'
    b'"extra":{"a":1E16,"b":0.0000001,"c":-0.0,"d":123456789.0,"e":1e15,"f":0.1,"g":18446744073709551615,'
    b'"h":18446744073709551616,"i":-9223372036854775809,"j":5e-324,"k":1.7976931348623157e308,'
    b'"l":2.5E-5,"m":100000000000000000000000,"n":1e22,"o":1e21,"p":0.30000000000000004}}],'
    b'"final_metrics":{"total_prompt_tokens":1e2,"total_cached_tokens":7,"total_cost_usd":0.5}}'
)

#: name -> {trial-relative path: bytes | dict | "fifo" | ("symlink", target) | "dir"}
# fmt: off
EDGES: dict[str, dict[str, Any]] = {
    "basic": {"agent/trajectory.json": BASIC},
    "empty": {"agent/trajectory.json": b""},
    "whitespace_only": {"agent/trajectory.json": b" \n\t "},
    "invalid_json": {"agent/trajectory.json": b'{"schema_version": "ATIF-v1.6", "steps": [}'},
    "truncated": {"agent/trajectory.json": BASIC[:len(BASIC) // 2]},
    "json_list_episode_log": {
        "agent/trajectory.json": b'[{"episode": 0, "prompt": "p", "response": "r"}]',
    },
    "json_list_command_log": {
        "agent/trajectory.json": b'[{"command": "ls", "output": "", "return_code": 0}]',
    },
    "json_list_empty": {"agent/trajectory.json": b"[]"},
    "json_list_scalars": {"agent/trajectory.json": b"[1, 2]"},
    "json_scalar": {"agent/trajectory.json": b"42"},
    "json_string": {"agent/trajectory.json": b'"ATIF-v1.6"'},
    "json_null": {"agent/trajectory.json": b"null"},
    "jsonl": {"agent/trajectory.json": b'{"type": "a"}\n{"type": "b"}\n'},
    "object_not_atif": {"agent/trajectory.json": b'{"foo": 1, "bar": 2}'},
    "object_no_keys": {"agent/trajectory.json": b"{}"},
    "bom": {"agent/trajectory.json": b"\xef\xbb\xbf" + BASIC},
    "nan_literal": {
        "agent/trajectory.json": BASIC.replace(b'"done"', b'"done","extra":{"x":NaN,"y":Infinity,"z":-Infinity}'),
    },
    "nan_metrics": {
        "agent/trajectory.json": b'{"schema_version":"ATIF-v1.6","agent":{},"steps":[{"source":"agent","metrics":{"prompt_tokens":NaN,"cost_usd":Infinity}}],"final_metrics":{"total_cost_usd":NaN,"total_prompt_tokens":Infinity}}',
    },
    "nan_and_big_int": {
        "agent/trajectory.json": b'{"schema_version":"ATIF-v1.6","agent":{},"steps":[{"source":"agent","step_id":18446744073709551616,"message":{"n":18446744073709551616,"f":NaN},"extra":{"big":99999999999999999999999}}]}',
    },
    "duplicate_steps_key": {
        "agent/trajectory.json": b'{"schema_version":"ATIF-v1.6","agent":{},"steps":[{"source":"user","message":"first"}],"steps":[{"source":"agent","message":"second"},{"source":"agent"}]}',
    },
    "duplicate_keys_nested": {
        "agent/trajectory.json": b'{"schema_version":"ATIF-v1.6","agent":{"model_name":"x","model_name":"y"},"steps":[{"source":"agent","message":"a","message":"b","extra":{"k":1,"j":2,"k":3},"metrics":{"prompt_tokens":1,"prompt_tokens":2}}]}',
    },
    "duplicate_version": {
        "agent/trajectory.json": b'{"schema_version":"ATIF-v1.0","schema_version":"ATIF-v1.6","agent":{},"steps":[{"source":"agent","metrics":{"prompt_tokens":5,"cached_tokens":3}}]}',
    },
    "huge_exponent": {
        "agent/trajectory.json": b'{"schema_version":"ATIF-v1.6","agent":{},"steps":[{"source":"agent","step_id":1e400,"metrics":{"prompt_tokens":1e400,"cost_usd":-1e400},"extra":{"x":1e400}}],"final_metrics":{"total_prompt_tokens":1e400}}',
    },
    "numbers": {"agent/trajectory.json": EDGE_NUMBERS},
    "deep_nesting": {
        "agent/trajectory.json": b'{"schema_version":"ATIF-v1.6","agent":{},"steps":[{"source":"agent","extra":' + b"[" * 2000 + b"]" * 2000 + b"}]}",
    },
    "deep_nesting_200": {
        "agent/trajectory.json": b'{"schema_version":"ATIF-v1.6","agent":{},"steps":[{"source":"agent","extra":' + b'{"a":' * 200 + b"1" + b"}" * 200 + b"}]}",
    },
    "lone_surrogate": {
        "agent/trajectory.json": b'{"schema_version":"ATIF-v1.6","agent":{},"steps":[{"source":"agent","message":"a\\ud800b","extra":{"\\udfff":"\\ud83d"}}]}',
    },
    "surrogate_pair_escape": {
        "agent/trajectory.json": b'{"schema_version":"ATIF-v1.6","agent":{},"steps":[{"source":"agent","message":"\\ud83d\\ude42 \\u00e9\\/\\u0000"}]}',
    },
    "invalid_utf8": {
        "agent/trajectory.json": b'{"schema_version":"ATIF-v1.6","agent":{},"steps":[{"source":"agent","message":"\xff\xfe"}]}',
    },
    "overlong_utf8": {
        "agent/trajectory.json": b'{"schema_version":"ATIF-v1.6","agent":{},"steps":[{"source":"agent","message":"\xc0\xaf"}]}',
    },
    "control_chars_raw": {
        "agent/trajectory.json": b'{"schema_version":"ATIF-v1.6","agent":{},"steps":[{"source":"agent","message":"a\x01b"}]}',
    },
    "trailing_garbage": {"agent/trajectory.json": BASIC + b" x"},
    "trailing_comma": {
        "agent/trajectory.json": b'{"schema_version":"ATIF-v1.6","agent":{},"steps":[],}',
    },
    "version_missing": {"agent/trajectory.json": _j(_doc([_step(1)], version=None))},
    "version_null_no_agent": {
        "agent/trajectory.json": b'{"schema_version":null,"steps":[{"source":"agent"}]}',
    },
    "version_int": {"agent/trajectory.json": _j(_doc([_step(1)], version=5))},
    "version_v10_cached": {
        "agent/trajectory.json": _j(_doc([_step(1, metrics={"prompt_tokens": 2 ** 63 - 1, "cached_tokens": 1}), _step(2, metrics={"prompt_tokens": 10, "cached_tokens": 0}), _step(3, metrics={"prompt_tokens": None, "cached_tokens": 4})], version="ATIF-v1.0", final_metrics={"total_prompt_tokens": 10, "total_cached_tokens": 5})),
    },
    "version_prefix_only": {"agent/trajectory.json": _j(_doc([_step(1)], version="ATIF-"))},
    "version_trailing": {
        "agent/trajectory.json": _j(_doc([_step(1, metrics={"prompt_tokens": 1, "cached_tokens": 2})], version="ATIF-v1.1-rc1")),
    },
    "steps_not_list": {"agent/trajectory.json": _j(_doc({"0": _step(1)}))},
    "bad_steps": {"agent/trajectory.json": _j(_doc([1, None, "x", _step(1), [], True]))},
    "continuation_chain": {
        "agent/trajectory.json": _j(_doc([_step(1), _call_step(2, "ls", "x")], continued_trajectory_ref="trajectory.cont-1.json")),
        "agent/trajectory.cont-1.json": _j(_doc([_step(1, is_copied_context=True), _step(3)], continued_trajectory_ref="trajectory.cont-2.json", final_metrics={"total_prompt_tokens": 3})),
        "agent/trajectory.cont-2.json": _j(_doc([_call_step(4, "pwd", "/")], final_metrics={"total_prompt_tokens": 7, "total_cost_usd": 0.25})),
    },
    "continuation_abs_ref": {
        "agent/trajectory.json": _j(_doc([_step(1)], continued_trajectory_ref="/logs/agent/trajectory.cont-1.json")),
        "agent/trajectory.cont-1.json": _j(_doc([_step(2)])),
    },
    "continuation_missing": {
        "agent/trajectory.json": _j(_doc([_step(1)], continued_trajectory_ref="trajectory.cont-9.json")),
    },
    "continuation_escape": {
        "agent/trajectory.json": _j(_doc([_step(1)], continued_trajectory_ref="../trajectory.json")),
    },
    "continuation_cycle": {
        "agent/trajectory.json": _j(_doc([_step(1)], continued_trajectory_ref="trajectory.cont-1.json")),
        "agent/trajectory.cont-1.json": _j(_doc([_step(2)], continued_trajectory_ref="trajectory.json")),
    },
    "continuation_self": {
        "agent/trajectory.json": _j(_doc([_step(1)], continued_trajectory_ref="trajectory.json")),
    },
    "continuation_bad": {
        "agent/trajectory.json": _j(_doc([_step(1)], continued_trajectory_ref="trajectory.cont-1.json")),
        "agent/trajectory.cont-1.json": b"[1]",
    },
    "continuation_nul": {
        "agent/trajectory.json": _j(_doc([_step(1)], continued_trajectory_ref="a\x00b")),
    },
    "unlinked_continuations": {
        "agent/trajectory.json": BASIC,
        "agent/trajectory.cont-2.json": _j(_doc([_step(7)])),
        "agent/trajectory.cont-10.json": _j(_doc([_step(9)])),
        "agent/trajectory.cont-1.json": _j(_doc([_step(5)], final_metrics={"total_cost_usd": 1.5})),
        "agent/trajectory.cont-01.json": _j(_doc([_step(6)])),
        "agent/trajectory.cont-x.json": _j(_doc([_step(8)])),
    },
    "summarization_unreferenced": {
        "agent/trajectory.json": BASIC,
        "agent/trajectory.summarization-1-summary.json": _j(_doc([_step(1, "summary")])),
        "agent/trajectory.summarization-1-questions.json": _j(_doc([_step(1, "q")])),
        "agent/trajectory.summarization-2.json": b"not json",
        "agent/trajectory.summarization-3.txt": b"ignored",
    },
    "subagent_by_path": {
        "agent/trajectory.json": _j(_doc([_step(1), _ref_step(2, [{"trajectory_path": "sub.json", "trajectory_id": "worker"}, {"trajectory_path": "sub2.json"}])])),
        "agent/sub.json": _j(SUB),
        "agent/sub2.json": _j(_doc([_step(1)])),
    },
    "subagent_refs_odd": {
        "agent/trajectory.json": _j(_doc([_ref_step(1, {"trajectory_path": "missing.json"}), _ref_step(2, {"session_id": "x"}), _ref_step(3, [{"trajectory_path": "/container/logs/sub.json"}, 5, "x"]), _ref_step(4, {"trajectory_path": "../../escape.json"}), _ref_step(5, {"trajectory_path": "sub.json"}), _ref_step(6, {"trajectory_path": "trajectory.json"}), _ref_step(7, {"trajectory_path": "bad.json"}), _ref_step(8, {"trajectory_path": "sub.json", "trajectory_id": ""})])),
        "agent/sub.json": _j(SUB),
        "agent/bad.json": b"{",
    },
    "subagent_embedded": {
        "agent/trajectory.json": _j(_doc([_step(1), _ref_step(2, {"trajectory_id": "emb1"}), _ref_step(3, {"trajectory_id": "nope"})], subagent_trajectories=[_doc([_step(1, "e1")], trajectory_id="emb1"), _doc([_call_step(1, "echo x", "x")], session_id="sess2"), _doc([_step(1, "e3")]), _doc([_step(1, "e4")], trajectory_id="emb1"), {"not": "atif"}, 5])),
    },
    "subagent_nested_depth": {
        "agent/trajectory.json": _j(_doc([_ref_step(1, {"trajectory_path": "s1.json"})])),
        **{f"agent/s{i}.json": _j(_doc([_ref_step(1, {"trajectory_path": f"s{i + 1}.json"})])) for i in range(1, 8)},
    },
    "subagent_label_clash": {
        "agent/trajectory.json": _j(_doc([_ref_step(1, [{"trajectory_path": "a.json", "trajectory_id": "main"}, {"trajectory_path": "b.json", "trajectory_id": "main"}])])),
        "agent/a.json": _j(_doc([_step(1)])),
        "agent/b.json": _j(_doc([_step(1)])),
    },
    "multi_step": {
        "steps/b/agent/trajectory.json": _j(_doc([_step(1, timestamp="2025-01-01T00:00:00Z")])),
        "steps/a/agent/trajectory.json": _j(_doc([_call_step(1, "ls", "x", timestamp="2025-01-02T00:00:00Z")], final_metrics={"total_prompt_tokens": 4})),
        "steps/c/agent/trajectory.json": _j(_doc([_step(1, timestamp="2025-01-01T12:00:00Z")], continued_trajectory_ref="trajectory.cont-1.json", final_metrics={"total_prompt_tokens": 1})),
        "steps/c/agent/trajectory.cont-1.json": _j(_doc([_step(2)])),
        "steps/d/agent/not-a-trajectory.json": b"{}",
    },
    "multi_step_and_main": {
        "agent/trajectory.json": BASIC,
        "steps/x/agent/trajectory.json": _j(_doc([_step(1, timestamp=None)])),
        "steps/y/agent/trajectory.json": _j(_doc([_step(1)])),
        "steps/z/agent/trajectory.json": b"",
    },
    "multi_step_bad_ts": {
        "steps/a/agent/trajectory.json": _j(_doc([_step(1, timestamp=5)])),
        "steps/b/agent/trajectory.json": _j(_doc([_step(1, timestamp="2020-01-01T00:00:00Z")])),
    },
    "fifo": {"agent/trajectory.json": "fifo"},
    "fifo_continuation": {
        "agent/trajectory.json": _j(_doc([_step(1)], continued_trajectory_ref="trajectory.cont-1.json")),
        "agent/trajectory.cont-1.json": "fifo",
    },
    "fifo_subagent": {
        "agent/trajectory.json": _j(_doc([_ref_step(1, {"trajectory_path": "sub.json"})])),
        "agent/sub.json": "fifo",
        "agent/trajectory.summarization-1-summary.json": "fifo",
    },
    "fifo_multi_step": {
        "steps/a/agent/trajectory.json": "fifo",
        "steps/b/agent/trajectory.json": BASIC,
    },
    "symlink_loop": {"agent/trajectory.json": ("symlink", "trajectory.json")},
    "symlink_pair_loop": {
        "agent/trajectory.json": ("symlink", "other.json"),
        "agent/other.json": ("symlink", "trajectory.json"),
    },
    "symlink_dangling": {"agent/trajectory.json": ("symlink", "nowhere.json")},
    "symlink_ok": {"agent/real.json": BASIC, "agent/trajectory.json": ("symlink", "real.json")},
    "symlink_agent_dir_loop": {"agent": ("symlink", "agent")},
    "directory_named_trajectory": {"agent/trajectory.json/x": b"{}"},
    "agent_is_a_file": {"agent": b"{}"},
    "goose_log": {
        "agent/goose.txt": b'{"type":"message","message":{"id":"m1","role":"assistant"}}\n{"type":"message","message":{"id":"m1","role":"assistant"}}\n{"type":"message","message":{"id":"m2","role":"assistant"}}\n',
    },
    "goose_and_trajectory": {
        "agent/goose.txt": b'{"type":"message","message":{"id":"m1","role":"assistant"}}\n',
        "agent/trajectory.json": BASIC,
    },
    "no_agent_folder": {"verifier/reward.txt": b"1"},
    "empty_agent_folder": {"agent/.keep": b""},
}
# fmt: on


def _nested(depth: int, leaf: Any, key: str = "a") -> Any:
    for _ in range(depth):
        leaf = {key: leaf}
    return leaf


LEAF = {
    "f": 1e16,
    "g": 0.1,
    "s": 'it\'s "q"',
    "n": None,
    "t": True,
    "i": 2**63,
    "l": [1.5, "é", -0.0],
}
# fmt: off
ODD_REFS = [
    "it's.json", 'a"b.json', "x\x1cy.json", "\u2028.json", "日本.json", "tab\t.json", 'both\'".json',
    "b\\s.json", "\x7f.json",
]
# fmt: on


def _deep_list(depth: int) -> list:
    v: list = []
    for _ in range(depth):
        v = [v, 0.5]
    return v


def _deep_json(obj: Any) -> bytes:
    return json.dumps(obj, ensure_ascii=False).encode()


def _deep_field(field: str, depth: int) -> bytes:
    """A step whose ``field`` nests ``depth + 2`` levels (LEAF holds a list): orjson.dumps
    gives up at 255 levels, and the Python path then writes str(value), the Python repr."""
    return _deep_json(_doc([_step(1, **{field: _nested(depth, LEAF)})]))


def _padded(depth: int) -> bytes:
    """A document nesting ``depth`` levels in all (orjson reads up to 1024)."""
    head = b'{"schema_version":"ATIF-v1.6","agent":{},"steps":[{"source":"agent","message":"m"}],"x_pad":'
    return head + b"[" * (depth - 1) + b"]" * (depth - 1) + b"}"


# fmt: off
EDGES.update(
    {
        **{f"depth_{f}_{d}": {"agent/trajectory.json": _deep_field(f, d)} for f in ("extra", "message", "reasoning_content") for d in (252, 253, 300)},
        "depth_arguments_300": {
            "agent/trajectory.json": _deep_json(_doc([_step(1, tool_calls=[{"tool_call_id": "c", "function_name": "bash", "arguments": _nested(300, LEAF)}])])),
        },
        "depth_list_300": {
            "agent/trajectory.json": _deep_json(_doc([_step(1, extra=[["x", 1e+22], _deep_list(299)])])),
        },
        "depth_document_1024": {"agent/trajectory.json": _padded(1024)},
        "depth_document_1025": {"agent/trajectory.json": _padded(1025)},
        **{f"continuation_ref_odd_{i}": {"agent/trajectory.json": _j(_doc([_step(1)], continued_trajectory_ref=r))} for i, r in enumerate(ODD_REFS)},
        "continuation_ref_dotted": {
            "agent/trajectory.json": _j(_doc([_step(1)], continued_trajectory_ref="./x/../trajectory.cont-1.json")),
            "agent/trajectory.cont-1.json": _j(_doc([_step(2)], continued_trajectory_ref="trajectory.cont-2.json/")),
            "agent/trajectory.cont-2.json": _j(_doc([_step(3)], continued_trajectory_ref="../agent/trajectory.cont-3.json")),
            "agent/trajectory.cont-3.json": _j(_doc([_step(4)], continued_trajectory_ref=".")),
        },
        "continuation_ref_root": {
            "agent/trajectory.json": _j(_doc([_step(1)], continued_trajectory_ref="/")),
        },
        "continuation_ref_symlink": {
            "agent/trajectory.json": _j(_doc([_step(1)], continued_trajectory_ref="link.json")),
            "agent/link.json": ("symlink", "trajectory.json"),
        },
        "continuation_ref_dir": {
            "agent/trajectory.json": _j(_doc([_step(1)], continued_trajectory_ref="trajectory.cont-1.json")),
            "agent/trajectory.cont-1.json/x": b"{}",
        },
        "unlinked_continuation_odd_numbers": {
            "agent/trajectory.json": BASIC,
            "agent/trajectory.cont-99999999999999999999.json": _j(_doc([_step(8)])),
            "agent/trajectory.cont-١.json": _j(_doc([_step(9)])),
            "agent/trajectory.cont-2.json": _j(_doc([_step(7)])),
            "agent/trajectory.cont-0.json": _j(_doc([_step(6)])),
            "agent/trajectory.cont-3.json": b"[]",
        },
        "subagent_refs_paths": {
            "agent/trajectory.json": _j(_doc([_step(1), _ref_step(2, [{"trajectory_path": r} for r in ["./sub.json", "sub.json/", "x/../sub.json", "../agent/sub.json", "./trajectory.json", "", ".", "..", "/", "/abs/dir/sub2.json", "link.json", *ODD_REFS]])])),
            "agent/sub.json": _j(SUB),
            "agent/sub2.json": _j(_doc([_step(1, "two")])),
            "agent/link.json": ("symlink", "trajectory.json"),
        },
        "subagent_labels": {
            "agent/trajectory.json": _j(_doc([_ref_step(1, [{"trajectory_path": f"s{i}.json", "trajectory_id": t} for i, t in enumerate(["x", "x", "x#2", "main", "", "it's", "x"])])])),
            **{f"agent/s{i}.json": _j(_doc([_step(1, f"s{i}")])) for i in range(7)},
            "agent/trajectory.summarization-1-summary.json": _j(_doc([_step(1, "sum")])),
            "agent/trajectory.summarization-.json": _j(_doc([_step(1, "sum2")])),
        },
        "subagent_cycle": {
            "agent/trajectory.json": _j(_doc([_ref_step(1, {"trajectory_path": "a.json"})])),
            "agent/a.json": _j(_doc([_ref_step(1, {"trajectory_path": "b.json"})])),
            "agent/b.json": _j(_doc([_ref_step(1, [{"trajectory_path": "a.json"}, {"trajectory_path": "trajectory.json"}])])),
        },
        "subagent_with_continuation": {
            "agent/trajectory.json": _j(_doc([_ref_step(1, {"trajectory_path": "sub.json"})], continued_trajectory_ref="trajectory.cont-1.json")),
            "agent/trajectory.cont-1.json": _j(_doc([_step(2)])),
            "agent/sub.json": _j(_doc([_step(1)], continued_trajectory_ref="sub.cont.json", final_metrics={"total_prompt_tokens": 99})),
            "agent/sub.cont.json": _j(_doc([_ref_step(1, {"trajectory_path": "trajectory.cont-1.json"})])),
        },
        "summarization_dir": {
            "agent/trajectory.json": BASIC,
            "agent/trajectory.summarization-1-x.json/y": b"{}",
            "agent/trajectory.summarization-2-x.json": ("symlink", "nowhere"),
        },
    }
)
# fmt: on


def _calls_doc(calls: list[tuple[Any, Any, Any]]) -> bytes:
    """One agent step per (function_name, arguments, extra) call, each with an observation."""
    steps = []
    for i, (fn, args, extra) in enumerate(calls):
        c: dict = {"tool_call_id": f"c{i}", "function_name": fn, "arguments": args}
        if extra is not None:
            c["extra"] = extra
        steps.append(
            _step(
                i,
                tool_calls=[c],
                observation={"results": [{"source_call_id": f"c{i}", "content": "out"}]},
            )
        )
    return _j(_doc(steps))


# fmt: off
WS = [
    "\x1c", "\x1d", "\x1e", "\x1f", "\x85", "\xa0", "\u1680", "\u180e", "\u2000", "\u200b",
    "\u2028", "\u2029", "\u202f", "\u205f", "\u3000", "\ufeff", "\x0b", "\x0c", "\r", "\t",
]
# fmt: on
# fmt: off
EDGES.update(
    {
        "unicode_tool_names": {
            "agent/trajectory.json": _calls_doc([(n, {"command": "ls"}, None) for n in ["TMUX_SEND_KEYS", "ＢＡＳＨ", "BAİSH", "bash\u200b", "Ba sh", "Ba-_sh", "a/b:c.d__run", "mcp__x__", "bash/", "x.EXEC", "İ", ""]]),
        },
        "unicode_status": {
            "agent/trajectory.json": _calls_doc([("read", {}, {"status": v}) for v in ["OK", "ERROR", "Faİled", "İ", "SUCCEEDED", "ok ", "errored"]]),
        },
        "unicode_whitespace_commands": {
            "agent/trajectory.json": _calls_doc([("bash", {"command": f"ls{w}"}, None) for w in WS] + [("bash", {"command": f"\n\n{w}ls"}, None) for w in WS] + [("x", {"keystrokes": [{"keystrokes": w}, {"keystrokes": f"a{w}"}]}, None) for w in WS]),
        },
        "ignored_siblings": {
            "agent/trajectory.json": BASIC,
            "agent/trajectory.foo.json": b"garbage",
            "agent/trajectory..json": b"[",
            "agent/trajectory.cont-1.json.bak": b"{",
            "agent/trajectory.cont-.json": _j(_doc([_step(5)])),
            "agent/trajectory.summarization-1.txt": b"x",
            "agent/trajectory.zzz.json": "fifo",
            "agent/trajectory.dir.json/x": b"{}",
            "agent/Trajectory.json": b"{",
            "agent/trajectory.JSON": b"{",
            "agent/other.json": b"{",
        },
        "float_ties": {
            "agent/trajectory.json": _j(_doc([_step(1, extra={"v": [2.0 ** 49 + 0.25, 2.0 ** 49 + 0.75, 2.0 ** 49 + 1.25, 670597701678940.2, 2.0 ** 50 + 0.5]}, message={"m": 2.0 ** 49 + 0.25}, tool_calls=[{"tool_call_id": "c", "function_name": "x", "arguments": {"f": 2.0 ** 49 + 1.25}}])])),
        },
        "shlex_lists": {
            "agent/trajectory.json": _calls_doc([("bash", {"command": v}, None) for v in [["a b", "it's", ""], ["é", "a\tb", "$x", "a*b", "@%+=:,./-_", "~x", "a\x00b"], ["bash", "-lc", "  ls  \n"], ["/bin/zsh", "-cl", ""], ["bash", "-x", "ls"], ["bash"], ["sh", "-c", "a", "b"], []]]),
        },
    }
)
# fmt: on


def _materialise(td: Path, files: dict[str, Any]) -> None:
    td.mkdir(parents=True, exist_ok=True)
    for rel, content in files.items():
        p = td / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        if content == "fifo":
            os.mkfifo(p)
        elif isinstance(content, tuple) and content[0] == "symlink":
            os.symlink(content[1], p)
        elif isinstance(content, bytes):
            p.write_bytes(content)
        else:
            p.write_bytes(orjson.dumps(content))


def _edge_dirs(root: Path, names: list[str]) -> list[Path]:
    dirs = []
    for name in names:
        td = root / "job" / name
        _materialise(td, EDGES[name])
        dirs.append(td)
    return dirs


# -- cases -------------------------------------------------------------------------------------
#: What a case lays out: a trials frame (for build_trajectories) or a runs folder (for
#: evalkit.load: its ids are path hashes), and the environment to set.
Built = tuple[pl.DataFrame | Path, dict[str, str]]
#: A case: root folder -> what it laid out there.
Case = Callable[[Path], Built]


def _harbor(root: Path) -> Built:
    shutil.copytree(HARBOR, root / "harbor", symlinks=True)
    return root / "harbor", {}


def _fixture_mains() -> list[list[tuple[Path, str]]]:
    """Each main ATIF fixture with its continuation / summarization siblings."""
    mains = []
    for f in sorted(ATIF.rglob("*.json")):
        b = f.name
        if "native" in f.parts or ".cont-" in b or ".summarization-" in b:
            continue
        if b.endswith(".traces.json"):
            continue
        files = [(f, "trajectory.json")]
        if b.endswith("trajectory.json"):
            pre = b[: -len("trajectory.json")]
            files += [
                (g, g.name[len(pre) :]) for g in sorted(f.parent.glob(pre + "trajectory.*.json"))
            ]
        mains.append(files)
    return mains


def _atif_tree(root: Path) -> Built:
    dirs = []
    for i, files in enumerate(_fixture_mains()):
        td = root / f"job{i % 3}" / f"trial{i}"
        (td / "agent").mkdir(parents=True)
        for src, name in files:
            shutil.copy(src, td / "agent" / name)
        dirs.append(td)
    return trials_frame(dirs), {}


def _atif_files(root: Path) -> Built:
    dirs = []
    for i, f in enumerate(sorted(p for p in ATIF.rglob("*") if p.is_file())):
        td = root / "job" / f"t{i:03d}"
        (td / "agent").mkdir(parents=True)
        shutil.copy(f, td / "agent" / "trajectory.json")
        dirs.append(td)
    for f in sorted((ATIF / "native").rglob("*.jsonl")):
        td = root / "job" / f"goose-{f.stem}"
        (td / "agent").mkdir(parents=True)
        shutil.copy(f, td / "agent" / "goose.txt")
        dirs.append(td)
    return trials_frame(dirs, agent_name=["goose"] * len(dirs)), {}


def _fuzz_seed(root: Path) -> Built:
    from tests.fuzz.corpus import build

    return build(root / "seed"), {}


def _crasher(case_dir: Path) -> Case:
    def make(root: Path) -> Built:
        from tests.fuzz.check import prepare
        from tests.fuzz.crashers import load_crasher
        from tests.fuzz.mutate import apply

        _, ops = load_crasher(case_dir)
        ops = [o for o in ops if o["op"] != "deny"]  # deny patches os functions: not a tree
        tree = prepare(ops, root)
        env, _ = apply(ops, tree)
        return tree, env

    return make


def _edges(root: Path) -> Built:
    """Every edge file as a trial, in one batch, result totals set (metrics_mismatch)."""
    dirs = _edge_dirs(root, sorted(EDGES))
    n = len(dirs)
    tok = [(None, 100, 0, 7, 2**62)[i % 5] for i in range(n + 2)]
    trials = trials_frame(
        dirs,
        n_input_tokens=tok[:n],
        n_output_tokens=tok[1 : n + 1],
        n_cache_tokens=tok[2 : n + 2],
        cost_usd=[(None, 0.25, 1.5)[i % 3] for i in range(n)],
    )
    return trials, {}


def _long_chain(root: Path) -> Built:
    """More files than the per-trial cap (500) in one continuation chain."""
    files: dict[str, Any] = {
        "agent/trajectory.json": _j(
            _doc([_step(0)], continued_trajectory_ref="trajectory.cont-1.json")
        )
    }
    for i in range(1, 505):
        nxt = f"trajectory.cont-{i + 1}.json"
        files[f"agent/trajectory.cont-{i}.json"] = _j(
            _doc([_step(i)], continued_trajectory_ref=nxt)
        )
    _materialise(root / "job" / "long", files)
    return trials_frame([root / "job" / "long"]), {}


def _size_cap(root: Path) -> Built:
    """EVALKIT_MAX_FILE_MB lowered: main files at and over the cap, a continuation over it."""
    cap = int(0.001 * 1024 * 1024)
    body = _j(_doc([_step(1)], continued_trajectory_ref="trajectory.cont-1.json"))
    dirs = []
    for over in (0, 1, 5000):
        main = body[:-1] + b',"pad":"' + b"x" * (cap + over - len(body) - 9) + b'"}'
        td = root / "job" / f"cap{over}"
        cont = _j(_doc([_step(2, "y" * 2000)]))
        _materialise(td, {"agent/trajectory.json": main, "agent/trajectory.cont-1.json": cont})
        dirs.append(td)
    _materialise(root / "job" / "small", {"agent/trajectory.json": BASIC})
    return trials_frame([*dirs, root / "job" / "small"]), {"EVALKIT_MAX_FILE_MB": "0.001"}


# fmt: off
SAMPLE = [
    "basic", "continuation_chain", "empty", "subagent_by_path", "bad_steps", "multi_step", "jsonl",
    "unlinked_continuations", "no_agent_folder", "goose_log",
]
# fmt: on


def _trials_variants(root: Path) -> Built:
    """Only trial_id / trial_dir / source_format: a trailing slash, a dotted path, a trial
    folder that is missing / a file / a symlink / named with quotes and non-ASCII letters,
    one folder under two trial ids, a duplicate trial id, a non-Harbor row."""
    dirs = _edge_dirs(root, SAMPLE)
    odd = root / "jöb x" / "tríal 'q' \u2028\x1c"
    for name in ("subagent_refs_odd", "continuation_missing", "symlink_loop", "empty"):
        _materialise(odd / f"odd-{name}", EDGES[name])
    dirs += sorted(odd.iterdir())
    (root / "job" / "a-file").write_bytes(b"x")
    (root / "job" / "linked").symlink_to(dirs[1])
    rows = [(d.name, str(d), "harbor") for d in dirs] + [
        ("slash", str(dirs[0]) + "/", "harbor"),
        ("dotted", str(root / "job" / "." / "x" / ".." / dirs[4].name), "harbor"),
        ("missing", str(root / "job" / "nope"), "harbor"),
        ("a-file", str(root / "job" / "a-file"), "harbor"),
        ("linked", str(root / "job" / "linked"), "harbor"),
        ("again", str(dirs[1]), "harbor"),
        ("basic", str(dirs[2]), "harbor"),  # duplicate id: the first row wins
        ("go", str(dirs[0]), "go-code"),
    ]
    return (
        pl.DataFrame(rows, schema=["trial_id", "trial_dir", "source_format"], orient="row"),
        {},
    )


def _random(root: Path) -> Built:
    """Stored Hypothesis-generated trials (files and result totals)."""
    stored = json.loads(gzip.decompress(RANDOM_INPUTS.read_bytes()))
    dirs = []
    for i, t in enumerate(stored["trials"]):
        td = root / f"job{i % 4}" / f"r{i:03d}"
        _materialise(td, {k: base64.b64decode(v) for k, v in t.items()})
        dirs.append(td)
    n = len(dirs)
    return (
        trials_frame(dirs, n_input_tokens=stored["tokens"][:n], cost_usd=stored["costs"][:n]),
        {},
    )


def cases() -> dict[str, Case]:
    from tests.fuzz.crashers import stored

    out: dict[str, Case] = {
        "harbor": _harbor,
        "atif_tree": _atif_tree,
        "atif_files": _atif_files,
        "fuzz_seed": _fuzz_seed,
        "edges": _edges,
        "long_chain": _long_chain,
        "size_cap": _size_cap,
        "trials_variants": _trials_variants,
    }
    if RANDOM_INPUTS.exists():
        out["random"] = _random
    for d in stored():
        out[f"crasher-{d.name}"] = _crasher(d)
    return out


# -- outputs -----------------------------------------------------------------------------------


def _rel(path: str | None, root: str) -> str | None:
    if path is None:
        return None
    return os.path.relpath(path, root) if path.startswith(root) else path


def normalise(
    frames: dict[str, pl.DataFrame], trials: pl.DataFrame, root: Path, hashed: bool
) -> dict[str, pl.DataFrame]:
    """Frames with what depends on where the case was built replaced: the root folder by
    ``<root>`` in error paths and messages, and (``hashed``: ids are path hashes made by
    evalkit.load) trial_id / job_id by the folder's path under the root."""
    r = str(root)
    out = {}
    ids: dict[str, str] = {}
    if hashed:
        for tid, jid, tdir in trials.select("trial_id", "job_id", "trial_dir").rows():
            if tdir is not None:
                ids[tid] = _rel(tdir, r)
                if jid is not None:  # a Harbor job folder holds its trial folders
                    ids[jid] = _rel(os.path.dirname(tdir), r)
    for name, df in frames.items():
        exprs = []
        for c in ("trial_id", "job_id"):
            if c in df.columns and ids:
                exprs.append(pl.col(c).replace(ids))
        for c in ("path", "message", "trial_dir", "job_dir"):
            if c in df.columns and df.schema[c] == pl.String and (name in ("errors", "trials")):
                exprs.append(pl.col(c).str.replace_all(r, "<root>", literal=True))
        out[name] = df.with_columns(exprs) if exprs else df
    if "errors" in out:
        out["errors"] = out["errors"].sort(pl.all(), nulls_last=True, maintain_order=True)
    return out


def build_case(make: Case, root: Path) -> Built:
    """Lay the case out under ``root``."""
    root.mkdir(parents=True, exist_ok=True)
    return make(root)


def frames_of(built: Built, root: Path, *, cache: bool = False) -> dict[str, pl.DataFrame]:
    """The normalised frames of a laid-out case: a runs folder through evalkit.load
    (``runs.steps`` ..., + ``trials``), a trials frame through build_trajectories."""
    import evalkit.load
    from evalkit.load.errors import errors_frame
    from evalkit.load.steps.table import build_trajectories

    source, env = built
    with mock.patch.dict(os.environ, env):
        if isinstance(source, Path):
            runs = evalkit.load(str(source), cache=cache, progress=False)
            trials = runs._trials
            tf = runs._ensure_trajectories()
        else:
            trials = source
            tf = build_trajectories(trials, cache=cache, progress=False)
    frames = {
        "steps": tf.steps,
        "tool_calls": tf.tool_calls,
        "trial_summary": tf.trial_summary,
        "errors": errors_frame(tf.errors),
    }
    if isinstance(source, Path):
        frames["trials"] = trials
        rollouts = trials.filter(pl.col("source_format") == "go-code")["trial_id"]
        for name in ("steps", "tool_calls"):  # go-code rows: not from trajectories
            frames[name] = frames[name].filter(~pl.col("trial_id").is_in(rollouts.implode()))
    return normalise(frames, trials, root, isinstance(source, Path))


def run_case(make: Case, root: Path, *, cache: bool = False) -> dict[str, pl.DataFrame]:
    """Lay one case out under ``root`` and return its normalised frames."""
    return frames_of(build_case(make, root), root, cache=cache)


def golden_path(frame: str) -> Path:
    return GOLDEN_DIR / f"{frame}.parquet"


def read_golden(frame: str, case: str) -> pl.DataFrame:
    df = pl.read_parquet(golden_path(frame))
    return df.filter(pl.col("case") == case).drop("case")


def write_all(tmp: Path) -> None:
    """Run every case and write the golden frames (one parquet per frame, a ``case`` column)."""
    parts: dict[str, list[pl.DataFrame]] = {}
    for name, make in cases().items():
        got = run_case(make, tmp / name)
        for frame, df in got.items():
            parts.setdefault(frame, []).append(df.with_columns(pl.lit(name).alias("case")))
        print(name, {k: v.height for k, v in got.items()}, file=sys.stderr)
    GOLDEN_DIR.mkdir(parents=True, exist_ok=True)
    for frame, dfs in parts.items():
        pl.concat(dfs, how="diagonal_relaxed").write_parquet(
            golden_path(frame), compression="zstd", compression_level=19
        )


if __name__ == "__main__":
    import tempfile

    if "--write" not in sys.argv:
        sys.exit("usage: python -m tests.load.steps.golden_corpus --write")
    with tempfile.TemporaryDirectory() as d:
        write_all(Path(d))
