"""Seeded episode planning for the scripted agent (pure: no Harbor import).

An episode is decided up front from ``(seed, task, attempt)``:

- whether the attempt succeeds: ``draw < pass_rate[variant]``, where ``draw`` does NOT
  depend on the variant (common random numbers), so baseline and candidate differ only
  where their pass rates differ;
- how it behaves (exploration, verification, hedging, retry loops, ...): drawn from a
  second stream that does depend on the variant.

The agent knows how to solve a task by replaying the paragraphs of the task's
``solution/solve.sh``. Failing episodes use realistic failure modes that exercise
evalkit's trajectory analyses: identical failing commands (retry loops), premature and
unverified completion claims, hedged claims, errors that are not diagnosed, and (opt-in)
stalls that end in Harbor's agent timeout.
"""

from __future__ import annotations

import hashlib
import random
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

VARIANTS: dict[str, dict[str, float]] = {
    # probabilities of behaviour traits; failure-mode weights
    "baseline": {
        "explore": 0.55,
        "verify": 0.4,
        "hedge": 0.35,
        "transient_error": 0.3,
        "diagnose": 0.4,
        "loop_then_recover": 0.15,
        "w_retry_loop": 3,
        "w_partial": 3,
        "w_guess": 3,
        "w_give_up": 1,
        "loop_len": 4,
        "assume": 0.5,
    },
    "candidate": {
        "explore": 0.9,
        "verify": 0.85,
        "hedge": 0.15,
        "transient_error": 0.2,
        "diagnose": 0.85,
        "loop_then_recover": 0.05,
        "w_retry_loop": 1,
        "w_partial": 2,
        "w_guess": 2,
        "w_give_up": 3,
        "loop_len": 3,
        "assume": 0.1,
    },
}
DEFAULT_PASS_RATE = {"baseline": 0.6, "candidate": 0.7}
MISSING_TOOL_CMD = "python3 /app/solve.py"
WRONG_INPUT_CMD = "cat /app/input.txt"
INSTALL_CMD = "apt-get install -y --no-download -qq python3"  # offline: fails fast, no network
_REDIRECT = re.compile(r">\s*(/app/[\w./-]+)")
_APP_PATH = re.compile(r"/app/[\w./*${}%-]+")


@dataclass(frozen=True)
class TaskInfo:
    """What the agent knows about a task."""

    name: str
    instruction: str
    blocks: tuple[str, ...]
    pass_rates: dict[str, float] = field(default_factory=dict)

    @property
    def outputs(self) -> list[str]:
        """Files the reference solution writes (redirect targets, else the last edited file)."""
        outs: list[str] = []
        for block in self.blocks:
            outs += [m for m in _REDIRECT.findall(block) if m not in outs]
        if outs or not self.blocks:
            return outs
        plain = [p for p in _APP_PATH.findall(self.blocks[-1]) if not re.search(r"[*${}%]", p)]
        return [p for p in plain if "." in p.rsplit("/", 1)[-1]][-1:]

    @property
    def inputs(self) -> list[str]:
        """``/app`` paths named in the instruction that the solution does not create."""
        named = re.findall(r"`(/app/[\w./-]+)`", self.instruction)
        outs = set(self.outputs)
        for block in self.blocks:
            for m in re.finditer(r"\b(?:mkdir|touch)\b([^;&|\n]*)", block):
                outs.update(_APP_PATH.findall(m.group(1)))
        res: list[str] = []
        for p in named:
            if p not in outs and p not in res and not any(p.startswith(o + "/") for o in outs):
                res.append(p)
        return res


@dataclass
class Action:
    """One agent step: a thought and a shell command (``None`` for the final message)."""

    message: str
    command: str | None = None


@dataclass
class Plan:
    task: str
    variant: str
    attempt: int
    seed: int
    pass_rate: float
    draw: float
    succeed: bool
    mode: str
    traits: list[str]
    actions: list[Action]

    def summary(self) -> dict[str, object]:
        return {
            "task": self.task,
            "variant": self.variant,
            "attempt": self.attempt,
            "seed": self.seed,
            "pass_rate": self.pass_rate,
            "draw": round(self.draw, 6),
            "intended_success": self.succeed,
            "mode": self.mode,
            "traits": self.traits,
            "n_actions": len(self.actions),
        }


def split_blocks(script: str) -> list[str]:
    """Paragraphs of a shell script, without the shebang, comments and ``set`` lines."""
    blocks: list[str] = []
    cur: list[str] = []
    for line in [*script.splitlines(), ""]:
        s = line.strip()
        if s.startswith("#") or re.fullmatch(r"set( -[a-z]+)+", s):
            continue
        if not s:
            if cur:
                blocks.append("\n".join(cur))
            cur = []
            continue
        cur.append(line.rstrip())
    return blocks


def load_task(task_dir: Path, name: str | None = None) -> TaskInfo:
    """Read instruction, reference solution and ``[metadata] scripted_pass_rate``."""
    instruction = _read(task_dir / "instruction.md")
    blocks = split_blocks(_read(task_dir / "solution" / "solve.sh"))
    rates: dict[str, float] = {}
    try:
        meta = tomllib.loads(_read(task_dir / "task.toml")).get("metadata", {})
        raw = meta.get("scripted_pass_rate", {})
        rates = {str(k): float(v) for k, v in raw.items()} if isinstance(raw, dict) else {}
    except (tomllib.TOMLDecodeError, TypeError, ValueError):
        rates = {}
    return TaskInfo(name or task_dir.name, instruction, tuple(blocks), rates)


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except OSError:
        return ""


FOLLOW_UP_MARK = "__plan-"


def family_dirs(job_dir: Path) -> list[Path]:
    """The job folders whose claims number a trial's attempts: the candidate job and its
    follow-up jobs (``<job>__plan-*``, named by evalkit.launch.followup) that exist."""
    family = job_dir.name.split(FOLLOW_UP_MARK, 1)[0]
    root = job_dir.parent
    found = [root / family, *sorted(root.glob(f"{family}{FOLLOW_UP_MARK}*"))]
    return [d for d in found if d.is_dir()]


def seed_of(*parts: object) -> int:
    """A stable 64-bit seed from the parts (independent of PYTHONHASHSEED)."""
    digest = hashlib.sha256("|".join(str(p) for p in parts).encode()).hexdigest()
    return int(digest[:16], 16)


def pass_rate(task: TaskInfo, variant: str) -> float:
    if variant in task.pass_rates:
        return min(1.0, max(0.0, task.pass_rates[variant]))
    if task.pass_rates:  # unknown variant: the best declared rate
        return max(task.pass_rates.values())
    # undeclared task: a stable per-task difficulty in [0.2, 0.9], candidate +0.1
    base = 0.2 + 0.7 * (seed_of("difficulty", task.name) % 1000) / 999
    return min(1.0, base + (0.1 if variant == "candidate" else 0.0))


def make_plan(
    task: TaskInfo,
    *,
    variant: str = "baseline",
    attempt: int = 1,
    seed: int = 0,
    stall_rate: float = 0.0,
) -> Plan:
    """Decide the whole episode for one attempt."""
    knobs = VARIANTS.get(variant, VARIANTS["baseline"])
    p = pass_rate(task, variant)
    draw = random.Random(seed_of(seed, task.name, attempt)).random()
    style = random.Random(seed_of(seed, task.name, attempt, variant))
    succeed = draw < p and bool(task.blocks)
    traits: list[str] = []
    acts: list[Action] = []

    def chance(key: str) -> bool:
        return style.random() < knobs[key]

    if chance("explore"):
        traits.append("explore")
        acts += _explore(task)
    if succeed:
        mode = "solve"
        if chance("transient_error"):
            traits.append("transient_error")
            acts.append(
                Action("The input is probably in /app/input.txt; read it.", WRONG_INPUT_CMD)
            )
            if chance("diagnose"):
                traits.append("diagnose")
                acts.append(
                    Action("That file does not exist. List /app to find the input.", "ls -la /app")
                )
            else:
                traits.append("skipped_diagnostic")
        if chance("loop_then_recover"):
            traits.append("retry_loop")
            acts += _loop(int(knobs["loop_len"]) - 1)
            acts.append(
                Action(
                    "python3 is not installed here; I will use shell tools instead.",
                    "command -v bash awk sed",
                )
            )
        acts += [Action(_thought(b), b) for b in task.blocks]
        verified = chance("verify")
        if verified:
            traits.append("verify")
            acts.append(Action("Check the result before finishing.", _verify_cmd(task)))
        hedged = chance("hedge")
        traits += ["hedge"] if hedged else []
        acts.append(Action(_final_success(task, verified, hedged)))
    elif stall_rate > 0 and style.random() < stall_rate:
        mode = "stall"
        acts.append(
            Action(
                "Wait until the environment signals it is ready.",
                "while [ ! -f /app/.ready ]; do sleep 2; done",
            )
        )
    else:
        weights = {m: knobs[f"w_{m}"] for m in ("retry_loop", "partial", "guess", "give_up")}
        mode = style.choices(list(weights), weights=list(weights.values()))[0]
        acts += _failure(task, mode, knobs, style, traits)
    return Plan(task.name, variant, attempt, seed, p, draw, succeed, mode, traits, acts)


def _explore(task: TaskInfo) -> list[Action]:
    acts = [Action("Look at the working directory first.", "ls -la /app")]
    for path in task.inputs[:2]:
        is_dir = "." not in path.rsplit("/", 1)[-1]
        cmd = f"ls -la {path}" if is_dir else f"cat {path}"
        acts.append(Action(f"Inspect {path}.", cmd))
    return acts


def _loop(n: int) -> list[Action]:
    msgs = [
        "Run a small solver script.",
        "That failed; run it again.",
        "Try once more.",
        "Retry the solver.",
    ]
    return [Action(msgs[min(i, len(msgs) - 1)], MISSING_TOOL_CMD) for i in range(max(n, 1))]


def _thought(block: str) -> str:
    first = block.splitlines()[0]
    return f"Apply the solution step: {first[:80]}"


def _verify_cmd(task: TaskInfo) -> str:
    outs = task.outputs
    if outs:
        return "cat " + " ".join(outs)
    dirs = [p for p in task.inputs if "." not in p.rsplit("/", 1)[-1]]
    return "ls -la " + " ".join(dirs or ["/app"])


def _out_phrase(task: TaskInfo) -> str:
    return task.outputs[0] if task.outputs else "the requested files"


def _final_success(task: TaskInfo, verified: bool, hedged: bool) -> str:
    out = _out_phrase(task)
    if hedged:
        return f"I think {out} should be correct now; the task is probably complete."
    if verified:
        return f"Task complete. I wrote {out} and checked its contents."
    return f"Task complete. I wrote {out}."


def _misdirect(block: str) -> str:
    """The same command aimed at the wrong place (last ``/app/`` becomes ``/tmp/``)."""
    i = block.rfind("/app/")
    return block if i < 0 else block[:i] + "/tmp/" + block[i + 5 :]


def _failure(
    task: TaskInfo, mode: str, knobs: dict[str, float], style: random.Random, traits: list[str]
) -> list[Action]:
    out = _out_phrase(task)
    acts: list[Action] = []
    if mode == "retry_loop":
        traits.append("retry_loop")
        if style.random() < knobs["assume"]:
            traits.append("architecture_assumption")
            acts.append(Action("Install python3 for a solver script.", INSTALL_CMD))
        acts += _loop(int(knobs["loop_len"]))
        if style.random() < knobs["hedge"]:
            traits.append("hedge")
            acts.append(
                Action(f"The script should have produced {out}; the task is probably done.")
            )
        else:
            traits += ["premature_completion", "unverified_claim"]
            acts.append(Action(f"I have completed the task and created {out} with the result."))
    elif mode == "partial":
        traits += ["premature_completion", "unverified_claim"]
        blocks = list(task.blocks)
        acts += [Action(_thought(b), b) for b in blocks[:-1]]
        acts.append(Action(_thought(blocks[-1]), _misdirect(blocks[-1])))
        acts.append(Action(f"Task complete. I created {out} as requested."))
    elif mode == "guess":
        traits += ["skipped_diagnostic", "hedge"]
        acts.append(Action("The input is probably in /app/input.txt; read it.", WRONG_INPUT_CMD))
        if task.outputs:
            acts.append(Action(f"Write the answer to {out}.", f"echo 0 > {task.outputs[0]}"))
        elif task.blocks:
            acts.append(Action(_thought(task.blocks[-1]), _misdirect(task.blocks[-1])))
        acts.append(Action(f"I believe {out} should be correct now."))
    else:  # give_up
        traits += ["give_up", "diagnose"]
        acts.append(Action("Run a small solver script.", MISSING_TOOL_CMD))
        acts.append(
            Action(
                "It failed; check which tools exist.",
                "command -v python3 perl jq || ls /usr/bin | head -n 40",
            )
        )
        acts.append(
            Action(
                "I could not complete the task: the tools I planned to use are not available in this container. Stopping without a result."
            )
        )
    return acts
