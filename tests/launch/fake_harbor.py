"""A stand-in for Harbor's CLI (tests only): --version, run -c --print-config, run -c, job
resume -p. It writes the files evalkit reads: job config.json / result.json and one trial
folder with result.json per (task, attempt). FAKE_HARBOR_MODE: ok | nothing | slow | half."""

from __future__ import annotations

import json
import os
import sys
import time
import uuid
from pathlib import Path

DEFAULT_EXCLUDE = ["AgentTimeoutError", "CancelledError", "VerifierTimeoutError"]
MODE = os.environ.get("FAKE_HARBOR_MODE", "ok")


def resolved(cfg: dict) -> dict:
    out = json.loads(json.dumps(cfg))
    out.setdefault("schema_version", 1)
    retry = out.setdefault("retry", {})
    retry.setdefault("include_exceptions", None)
    retry.setdefault("exclude_exceptions", list(reversed(DEFAULT_EXCLUDE)))  # unordered like a set
    retry.setdefault("wait_multiplier", 1.0)
    out["environment"] = {
        "type": "docker",
        "import_path": None,
        "force_build": False,
        "delete": True,
        **out["environment"],
    }
    out["agents"] = [
        {"name": None, "import_path": None, "model_name": None, "kwargs": {}, **a}
        for a in out["agents"]
    ]
    out.setdefault("verifier", {"disable": False})
    out.setdefault("debug", False)
    return out


def trials_of(cfg: dict) -> list[str]:
    names = []
    for ds in cfg.get("datasets", []):
        names += ds.get("task_names") or []
    names += [Path(t["path"]).name for t in cfg.get("tasks", [])]
    return [n for _ in range(cfg["n_attempts"]) for n in names]


def write_trial(job_dir: Path, task: str, reward: float) -> None:
    name = f"{task[:32]}__{uuid.uuid4().hex[:7]}"
    d = job_dir / name
    (d / "agent").mkdir(parents=True)
    (d / "config.json").write_text(json.dumps({"trial_name": name, "task": {"path": task}}))
    result = {
        "task_name": task,
        "trial_name": name,
        "agent_info": {"name": "fake", "version": "1"},
        "verifier_result": {"rewards": {"reward": reward}},
        "exception_info": None,
        "started_at": "2026-01-01T00:00:00Z",
        "finished_at": "2026-01-01T00:00:01Z",
    }
    (d / "result.json").write_text(json.dumps(result))


def execute(job_dir: Path, cfg: dict) -> None:
    todo = trials_of(cfg)
    for p in job_dir.glob("*/result.json"):
        t = json.loads(p.read_text())["task_name"]
        if t in todo:
            todo.remove(t)
    (job_dir / "result.json").write_text(
        json.dumps(
            {
                "started_at": "2026-01-01T00:00:00",
                "finished_at": None,
                "n_total_trials": len(trials_of(cfg)),
            }
        )
    )
    for i, task in enumerate(todo):
        if MODE == "nothing" or (MODE == "half" and i >= len(todo) // 2):
            break
        if MODE == "slow":
            time.sleep(0.3)
        write_trial(job_dir, task, 1.0 if i % 2 == 0 else 0.0)
    else:
        (job_dir / "result.json").write_text(
            json.dumps(
                {
                    "started_at": "2026-01-01T00:00:00",
                    "finished_at": "2026-01-01T00:01:00",
                    "n_total_trials": len(trials_of(cfg)),
                }
            )
        )
    print(f"fake harbor: {MODE} in {job_dir}; secret env never printed")


def main(args: list[str]) -> int:
    if args == ["--version"]:
        print("0.26.0")
        return 0
    if args[:1] == ["run"] and "-c" in args:
        cfg = json.loads(Path(args[args.index("-c") + 1]).read_text())
        if "--print-config" in args:
            print(json.dumps(resolved(cfg), indent=2))
            return 0
        job_dir = Path(cfg["jobs_dir"]) / cfg["job_name"]
        job_dir.mkdir(parents=True, exist_ok=True)
        (job_dir / "config.json").write_text(json.dumps(resolved(cfg)))
        execute(job_dir, resolved(cfg))
        return 0
    if args[:2] == ["job", "resume"]:
        job_dir = Path(args[args.index("-p") + 1])
        execute(job_dir, json.loads((job_dir / "config.json").read_text()))
        return 0
    if args[:2] == ["job", "schema"]:
        print(json.dumps({"properties": {}}))
        return 0
    print(f"fake harbor: unsupported {args}", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
