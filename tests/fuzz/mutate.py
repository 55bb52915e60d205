"""Mutations of the seed tree, as replayable operations.

A case is a list of ops (plain dicts) generated from ``random.Random``; ``apply(ops, root)``
performs them on a copy of the seed tree. Ops that change bytes carry the bytes (``data``),
so a stored crasher replays exactly. Families:

* content: truncate, wrong JSON type at a field path (every path of every JSON file is swept
  in order, list indices collapsed), NaN / Infinity / huge and odd numbers, deep nesting,
  invalid UTF-8 and lone surrogates, binary garbage, byte flips, empty files, dropped keys,
  another file's content (a trajectory as result.json ...), JSONL line surgery;
* structure: file removed, folder where a file is expected and the reverse, symlink loops
  (self, pair, to an ancestor), symlinks to /dev/zero and /dev/null, FIFOs, stray entries;
* file system: odd bytes in folder and file names (not UTF-8, encoded surrogates, control
  characters, newlines), symlinks into the tree (a trial linked from another job or twice)
  and out of it (``/etc``, ``/usr``, the folder above the tree), data files linked to another
  trial's file or out of the tree (``/etc/passwd``, ``/proc/self/environ``), job links in the
  runs root (to a job, the root itself, the folder above, ``/usr``);
* size: sparse files over the size cap, a tiny EVALKIT_MAX_FILE_MB;
* permissions: EACCES on open / listing / search of a file or folder (simulated at the OS
  boundary by :mod:`tests.fuzz.deny`: CI runs as root, which chmod does not stop).
"""

from __future__ import annotations

import json
import os
import random
import re
import shutil
from pathlib import Path
from typing import Any

from tests.fuzz.corpus import Target, targets, template
from tests.fuzz.fieldpaths import _docs, _dumps, _lines, _paths, _set, field_paths, general

Op = dict[str, Any]

WRONG_VALUES: list[Any] = [
    None, True, False, 0, -1, 1.5, "", "text", "1.0", "2026-13-45T99:99:99", [], {},
    [1, "a", None], {"a": 1}, {"": {"": []}}, 10**30, -(10**30), 2**63, -(2**63) - 1, 2**64,
    1e308, -1e308, 5e-324, "x" * 70_000, ["x"] * 2000, "\x00\x1b[31m</script>",
]  # fmt: skip
#: raw JSON text spliced in where a value goes (things json.dumps will not write)
RAW_VALUES = [
    b"NaN", b"Infinity", b"-Infinity", b"1e999", b"-1e999", b"1e-400", b"-0",
    b"123456789012345678901234567890", b"9223372036854775808", b"-9223372036854775809",
    b'"\\ud800"', b'"\\udfff\\ud800x"', b'"a\\u0000b"', b'"\xff\xfe"', b'"\xed\xa0\x80"',
    b"[" * 3000 + b"]" * 3000, b'{"a":' * 3000 + b"1" + b"}" * 3000,
    b"[" * 200_000 + b"]" * 200_000,
]  # fmt: skip
ODD_NUMBERS = [
    b"NaN", b"Infinity", b"-Infinity", b"1e999", b"-1e400", b"123456789012345678901234567890",
    b"9223372036854775807", b"-9223372036854775808", b"18446744073709551616", b"0.0", b"-0.0",
    b"1e-400", b"4.9e-324", b"1.7976931348623157e308",
]  # fmt: skip
BAD_UTF8 = [
    b"\xff",
    b"\xfe\xff",
    b"\xc3\x28",
    b"\xed\xa0\x80",
    b"\xf4\x90\x80\x80",
    b"\x80",
    b"\x00",
]
NUMBER_RE = re.compile(rb"(?<![\w.\"])-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?(?![\w.\"])")
SPARSE_SIZE = 3 * 1024**3  # over the default 256 MB cap; takes no disk space


def wrong_type(rng: random.Random, data: bytes, kind: str, gpath: str | None, line: int) -> bytes:
    """Put a wrong-typed (or raw odd) value at a field path (one matching ``gpath``)."""
    lines = data.splitlines(keepends=True)
    if kind == "jsonl":
        parsed = dict(_lines(data))
        li = line if line in parsed else rng.choice(sorted(parsed))
        doc = parsed[li]
    else:
        doc = json.loads(data)
    paths = _paths(doc)
    hits = [p for p in paths if general(p) == gpath] if gpath else []
    path = rng.choice(hits or paths)
    marker = "__evalkit_fuzz_raw__"
    raw = None
    if rng.random() < 0.35:
        raw, value = rng.choice(RAW_VALUES), marker
    else:
        value = rng.choice(WRONG_VALUES)
    doc = _set(doc, path, value)
    out = _dumps(doc, marker, raw)
    if kind == "jsonl":
        lines[li] = out.replace(b"\n", b"") + b"\n"
        return b"".join(lines)
    return out


# -- content mutations ------------------------------------------------------------------------


def _content(rng: random.Random, data: bytes, kind: str, family: str) -> bytes:
    n = len(data)
    if family == "truncate":
        return data[: rng.randrange(0, max(n, 1))]
    if family == "numbers":
        hits = list(NUMBER_RE.finditer(data))
        if not hits:
            return data + rng.choice(ODD_NUMBERS)
        out = bytearray(data)
        for m in sorted(
            rng.sample(hits, min(len(hits), rng.choice((1, 1, 3, 20)))), key=lambda m: -m.start()
        ):
            out[m.start() : m.end()] = rng.choice(ODD_NUMBERS)
        return bytes(out)
    if family == "nest":
        depth = rng.choice((64, 1000, 5000, 100_000))
        opener, closer = rng.choice(((b"[", b"]"), (b'{"a":', b"}")))
        inner = b"1" if opener == b'{"a":' else b""
        blob = opener * depth + inner + closer * depth
        if kind == "json" and rng.random() < 0.5:
            return blob
        pos = rng.randrange(0, n + 1)
        return data[:pos] + blob + data[pos:]
    if family == "utf8":
        out = bytearray(data)
        for _ in range(rng.choice((1, 2, 10))):
            pos = rng.randrange(0, len(out) + 1)
            out[pos:pos] = rng.choice(BAD_UTF8)
        if rng.random() < 0.3:
            out = bytearray(bytes(out).replace(b'": "', b'": "\\ud83d', 1))  # lone surrogate
        return bytes(out)
    if family == "garbage":
        blob = rng.randbytes(rng.choice((1, 16, 1024, 65536)))
        if rng.random() < 0.5 or n == 0:
            return blob
        pos = rng.randrange(0, n)
        return data[:pos] + blob + data[pos + len(blob) :]
    if family == "flip":
        out = bytearray(data or b"{}")
        for _ in range(rng.choice((1, 4, 32))):
            i = rng.randrange(len(out))
            out[i] ^= 1 << rng.randrange(8)
        return bytes(out)
    if family == "empty":
        return rng.choice((b"", b" ", b"\n\n", b"\x00", b"null", b"{}", b"[]", b'""', b"0"))
    if family == "drop_key" and kind in ("json", "jsonl"):
        try:
            docs = [d for _, d in _docs(data, kind)]
        except ValueError:
            return data[:-1]
        di = rng.randrange(len(docs)) if docs else 0
        keyed = [p for p in _paths(docs[di]) if p and not isinstance(p[-1], int)] if docs else []
        if keyed:
            p = rng.choice(keyed)
            cur = docs[di]
            for k in p[:-1]:
                cur = cur[k]
            del cur[p[-1]]
        if kind == "json":
            return json.dumps(docs[0], indent=2).encode()
        return b"".join(json.dumps(d).encode() + b"\n" for d in docs)
    if family == "lines":
        lines = data.splitlines(keepends=True) or [b"\n"]
        how = rng.choice(("dup", "shuffle", "blank", "garbage", "drop", "reverse", "crlf"))
        if how == "dup":
            i = rng.randrange(len(lines))
            lines[i:i] = [lines[i]] * rng.choice((1, 50))
        elif how == "shuffle":
            rng.shuffle(lines)
        elif how == "blank":
            lines.insert(rng.randrange(len(lines) + 1), rng.choice((b"\n", b"   \n", b"\r\n")))
        elif how == "garbage":
            lines.insert(
                rng.randrange(len(lines) + 1),
                rng.choice((b"{not json\n", b"[1,2]\n", b'"s"\n', b"null\n", b"\xff\xfe\n")),
            )
        elif how == "drop":
            del lines[rng.randrange(len(lines))]
        elif how == "reverse":
            lines.reverse()
        else:
            lines = [ln.rstrip(b"\n") + b"\r\n" for ln in lines]
        return b"".join(lines)
    if family == "big_string":
        return (
            data.replace(b'"', b'"' + b"A" * rng.choice((10_000, 300_000)), 1)
            if b'"' in data
            else data * 100
        )
    return data


CONTENT_FAMILIES = (
    "truncate", "numbers", "nest", "utf8", "garbage", "flip", "empty", "drop_key", "lines",
    "big_string", "other_file",
)  # fmt: skip
STRUCT_FAMILIES = (
    "remove", "dir_for_file", "file_for_dir", "symlink_loop", "symlink_special", "fifo",
    "sparse", "small_cap", "deny", "stray", "odd_name", "symlink_inout", "symlink_file",
    "symlink_job",
)  # fmt: skip
#: Files outside the tree a symlinked data file may lead to (procfs files stat as empty).
OUTSIDE_FILES = ("/etc/hostname", "/etc/passwd", "/proc/self/environ", "/proc/self/status")
#: Bytes that make a name odd: not UTF-8, an encoded surrogate, control characters.
ODD_BYTES = (b"\xff", b"\xc3\x28", b"\xed\xa0\x80", b"\n", b"\x01", b"\x1b[2J", b" ", b"\r")


def _pick_file(
    rng: random.Random, ts: list[Target], kinds: tuple[str, ...] = ("json", "jsonl", "text")
) -> Target:
    return rng.choice([t for t in ts if not t.is_dir and t.kind in kinds])


def content_op(rng: random.Random, family: str, t: Target, ts: list[Target]) -> Op:
    root = template()
    data = (root / t.rel).read_bytes()
    if family == "other_file":
        src = _pick_file(rng, ts)
        return {
            "op": "write",
            "path": t.rel,
            "data": (root / src.rel).read_bytes(),
            "family": family,
            "from": src.rel,
        }
    return {
        "op": "write",
        "path": t.rel,
        "data": _content(rng, data, t.kind, family),
        "family": family,
    }


def struct_op(rng: random.Random, family: str, ts: list[Target]) -> list[Op]:
    if family == "remove":
        t = rng.choice(ts)
        return [{"op": "remove", "path": t.rel, "family": family}]
    if family == "dir_for_file":
        t = _pick_file(rng, ts)
        return [{"op": "remove", "path": t.rel}, {"op": "mkdir", "path": t.rel, "family": family},
                {"op": "write", "path": t.rel + "/" + os.path.basename(t.rel), "data": b"{}"}]  # fmt: skip
    if family == "file_for_dir":
        t = rng.choice([t for t in ts if t.is_dir])
        return [{"op": "remove", "path": t.rel}, {"op": "write", "path": t.rel, "data": rng.choice((b"", b"{}", b"x" * 100)), "family": family}]  # fmt: skip
    if family == "symlink_loop":
        t = rng.choice(ts)
        name = os.path.basename(t.rel)
        how = rng.choice(("self", "pair", "ancestor", "root"))
        if how == "self":
            return [
                {"op": "remove", "path": t.rel},
                {"op": "symlink", "path": t.rel, "target": name, "family": family},
            ]
        if how == "pair":
            other = t.rel + ".loop"
            return [{"op": "remove", "path": t.rel}, {"op": "symlink", "path": t.rel, "target": name + ".loop", "family": family},
                    {"op": "symlink", "path": other, "target": name}]  # fmt: skip
        parent = os.path.dirname(t.rel) or "."
        up = "/".join([".."] * (parent.count("/") + (1 if parent != "." else 0))) or "."
        target = ".." if how == "ancestor" else up
        stray = (parent + "/" if parent != "." else "") + rng.choice(
            ("loop", "link__L00pL00", "agent")
        )
        return [{"op": "symlink", "path": stray, "target": target, "family": family}]
    if family == "odd_name":
        t = rng.choice(ts)
        base = os.path.basename(t.rel).encode()
        odd = rng.choice(ODD_BYTES)
        new = rng.choice((base + odd, odd + base, b"bad" + odd + b"__X2abcde"))
        return [{"op": "rename", "path": t.rel, "name_hex": new.hex(), "family": family}]
    if family == "symlink_inout":
        trials = [t for t in ts if t.is_dir and "__" in os.path.basename(t.rel)]
        src = rng.choice(trials)
        job = os.path.dirname(rng.choice(trials).rel)
        up = "/".join([".."] * (job.count("/") + 2))
        target = rng.choice(
            ("/etc", "/usr", up, "../" + os.path.relpath(src.rel, os.path.dirname(job) or "."))
        )
        return [{"op": "symlink", "path": f"{job}/link{rng.randrange(9)}__L1nkAbC", "target": target, "family": family}]  # fmt: skip
    if family == "symlink_file":  # a data file linked to another trial's file or out of the tree
        t = _pick_file(rng, ts)
        same = [o for o in ts if not o.is_dir and o.rel != t.rel and os.path.basename(o.rel) == os.path.basename(t.rel)]  # fmt: skip
        inside = os.path.relpath(
            rng.choice(same or [o for o in ts if not o.is_dir]).rel, os.path.dirname(t.rel) or "."
        )
        target = rng.choice((inside, inside, rng.choice(OUTSIDE_FILES)))
        return [{"op": "remove", "path": t.rel}, {"op": "symlink", "path": t.rel, "target": target, "family": family}]  # fmt: skip
    if family == "symlink_job":  # a job-named link in the runs root: to a job, above, outside
        job = rng.choice([t.rel for t in ts if t.is_dir and "/" not in t.rel])
        target = rng.choice((job, job, "..", "/usr", "/tmp", "."))
        return [{"op": "symlink", "path": f"linked-job-{rng.randrange(9)}", "target": target, "family": family}]  # fmt: skip
    if family == "symlink_special":
        t = _pick_file(rng, ts)
        return [{"op": "remove", "path": t.rel}, {"op": "symlink", "path": t.rel, "target": rng.choice(("/dev/zero", "/dev/null", "/nonexistent/x")), "family": family}]  # fmt: skip
    if family == "fifo":
        t = _pick_file(rng, ts)
        return [{"op": "remove", "path": t.rel}, {"op": "fifo", "path": t.rel, "family": family}]
    if family == "sparse":
        t = _pick_file(rng, ts)
        return [{"op": "sparse", "path": t.rel, "size": SPARSE_SIZE, "family": family}]
    if family == "small_cap":
        return [{"op": "env", "name": "EVALKIT_MAX_FILE_MB", "value": rng.choice(("0", "0.001", "0.003", "0.02", "-1", "junk")), "family": family}]  # fmt: skip
    if family == "deny":
        t = rng.choice(ts)
        how = rng.choice(("read", "search")) if t.is_dir else "read"
        return [{"op": "deny", "path": t.rel, "how": how, "family": family}]
    # stray entries where a loader might not expect them
    t = rng.choice([t for t in ts if t.is_dir])
    name = rng.choice(("zz__Str4yXX", "result.json", "config.json", ".hidden", "agent", "verifier", "steps", "x.jsonl", "2026-01-01", "trajectory.cont-7.json"))  # fmt: skip
    how = rng.choice(("dir", "file", "emptydir"))
    p = f"{t.rel}/{name}"
    if how == "file":
        return [{"op": "write", "path": p, "data": rng.choice((b"{}", b"", b"[]", b'{"seq": 1, "type": "x"}\n')), "family": "stray"}]  # fmt: skip
    ops: list[Op] = [{"op": "mkdir", "path": p, "family": "stray"}]
    if how == "dir":
        ops.append(
            {
                "op": "write",
                "path": p + "/result.json",
                "data": b'{"task_name": 1, "trial_name": []}',
            }
        )
    return ops


def generate(seed: int, index: int) -> list[Op]:
    """The ops of case ``index`` of campaign ``seed`` (deterministic). Every 4th case is the
    wrong-type sweep: case 4k hits field path k (mod the number of paths)."""
    rng = random.Random(f"{seed}:{index}")
    ts = targets()
    if index % 4 == 0:
        paths = field_paths()
        rel, line, g = paths[(index // 4) % len(paths)]
        kind = "jsonl" if rel.endswith(".jsonl") else "json"
        data = (template() / rel).read_bytes()
        return [{"op": "write", "path": rel, "family": "wrong_type", "field": g,
                 "data": wrong_type(rng, data, kind, g, line)}]  # fmt: skip
    ops: list[Op] = []
    for _ in range(rng.choice((1, 1, 1, 2, 3))):
        if rng.random() < 0.6:
            fam = rng.choice(CONTENT_FAMILIES)
            t = _pick_file(rng, ts)
            try:
                ops.append(content_op(rng, fam, t, ts))
            except (ValueError, IndexError, KeyError, TypeError):
                ops.append({"op": "write", "path": t.rel, "data": b"{", "family": "truncate"})
        else:
            ops += struct_op(rng, rng.choice(STRUCT_FAMILIES), ts)
    return ops


# -- applying ------------------------------------------------------------------------------


def _rm(p: Path) -> None:
    if p.is_symlink() or p.is_file() or (p.exists() and not p.is_dir()):
        p.unlink()
    elif p.is_dir():
        shutil.rmtree(p)


def tops(ops: list[Op]) -> set[str]:
    """Top-level folders of the tree the ops touch ('' when the tree's root itself)."""
    out = set()
    for op in ops:
        if op["op"] == "env":
            continue
        rel = op["path"]
        out.add(rel.split("/", 1)[0] if "/" in rel else "")
    return out


def apply(ops: list[Op], root: Path) -> tuple[dict[str, str], list[tuple[str, str]]]:
    """Perform ``ops`` under ``root``; returns (environment overrides, deny rules)."""
    env: dict[str, str] = {}
    deny: list[tuple[str, str]] = []
    for op in ops:
        kind = op["op"]
        if kind == "env":
            env[op["name"]] = op["value"]
            continue
        p = root / op["path"]
        if kind == "deny":
            deny.append((str(p), op["how"]))
            continue
        if not p.parent.is_dir() or p.parent.is_symlink():
            continue  # an earlier op removed or replaced the parent
        if kind == "remove":
            _rm(p)
        elif kind == "write":
            if p.is_symlink() or (p.exists() and not p.is_file()):
                _rm(p)
            p.write_bytes(op["data"])
        elif kind == "mkdir":
            _rm(p) if p.exists() and not p.is_dir() else None
            p.mkdir(exist_ok=True)
        elif kind == "symlink":
            if p.exists() or p.is_symlink():
                _rm(p)
            os.symlink(op["target"], p)
        elif kind == "fifo":
            if p.exists() or p.is_symlink():
                _rm(p)
            os.mkfifo(p)
        elif kind == "rename" and (p.exists() or p.is_symlink()):
            os.rename(p, os.path.join(os.fsencode(p.parent), bytes.fromhex(op["name_hex"])))
        elif kind == "sparse" and p.is_file() and not p.is_symlink():
            with open(p, "r+b") as fh:
                fh.truncate(op["size"])
    return env, deny
