"""Live progress from the job folder: a trial is finished when its result.json appears.

Counts are read from the files Harbor writes (never from its console output or exit
code): pass = reward >= 1; timeout = not a pass and a *Timeout* exception; fail = a
reward below 1; error = no reward (an exception).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tqdm.auto import tqdm


def trial_reward(result: dict[str, Any]) -> float | None:
    """rewards["reward"], else the first numeric reward, else None (goose's rule)."""
    rewards = (result.get("verifier_result") or {}).get("rewards") or {}
    if not isinstance(rewards, dict) or not rewards:
        return None
    value = rewards.get("reward", next(iter(rewards.values())))
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


@dataclass
class TrialCounts:
    finished: int = 0
    passed: int = 0
    failed: int = 0
    timeouts: int = 0
    errored: int = 0
    tasks: dict[str, int] = field(default_factory=dict)

    def as_dict(self) -> dict[str, int]:
        return {
            "finished": self.finished,
            "passed": self.passed,
            "failed": self.failed,
            "timeouts": self.timeouts,
            "errored": self.errored,
        }


class JobWatcher:
    """Polls ``job_dir/*/result.json``. Counts describe the files present now: a trial
    folder that Harbor deletes (resume drops unfinished or cancelled trials) stops counting."""

    def __init__(self, job_dir: Path) -> None:
        self.job_dir = job_dir
        self.results: dict[Path, tuple[str, str]] = {}  # path -> (task, pass|fail|error)
        self.counts = TrialCounts()

    def poll(self) -> int:
        """Refresh the counts; returns how many results appeared or vanished."""
        if not self.job_dir.is_dir():
            return 0
        present = set(self.job_dir.glob("*/result.json"))
        changed = 0
        for gone in set(self.results) - present:
            del self.results[gone]
            changed += 1
        for path in present - set(self.results):
            try:
                result = json.loads(path.read_text())
            except (OSError, ValueError):
                continue  # being written: next poll
            task = str(result.get("task_name") or path.parent.name.rsplit("__", 1)[0])
            reward = trial_reward(result)
            exc = str((result.get("exception_info") or {}).get("exception_type") or "")
            if reward is not None and reward >= 1.0:
                status = "pass"
            elif "timeout" in exc.lower():
                status = "timeout"
            else:
                status = "error" if reward is None else "fail"
            self.results[path] = (task, status)
            changed += 1
        if changed:
            c = self.counts = TrialCounts()
            for task, status in self.results.values():
                c.finished += 1
                c.tasks[task] = c.tasks.get(task, 0) + 1
                if status == "pass":
                    c.passed += 1
                elif status == "fail":
                    c.failed += 1
                elif status == "timeout":
                    c.timeouts += 1
                else:
                    c.errored += 1
        return changed

    def running(self) -> int:
        """Trial folders Harbor created that have no result.json yet (started, not done)."""
        if not self.job_dir.is_dir():
            return 0
        started = {p.parent for p in self.job_dir.glob("*/config.json")}
        return len(started - {p.parent for p in self.results})

    def declared_total(self) -> int | None:
        """n_total_trials from Harbor's job result.json (known once the job started)."""
        try:
            data = json.loads((self.job_dir / "result.json").read_text())
        except (OSError, ValueError):
            return None
        total = data.get("n_total_trials")
        return int(total) if isinstance(total, int) else None


class ProgressBar:
    """tqdm bar: trials finished / total (with elapsed time and an ETA), trials running, and
    pass / fail / timeout / error so far."""

    def __init__(
        self, watcher: JobWatcher, total: int | None, desc: str, enabled: bool = True
    ) -> None:
        self.watcher = watcher
        self._running = -1
        self.bar = tqdm(
            total=total, desc=desc, unit="trial", disable=not enabled, dynamic_ncols=True
        )
        self.update()

    def update(self) -> None:
        running = self.watcher.running() if not self.bar.disable else 0
        if self.watcher.poll() or self.bar.total is None or running != self._running:
            self._running = running
            if self.bar.total is None:
                total = self.watcher.declared_total()
                if total:
                    self.bar.total = total
            c = self.watcher.counts
            self.bar.n = c.finished
            self.bar.set_postfix(
                running=running,
                passed=c.passed,
                failed=c.failed,
                timeouts=c.timeouts,
                errors=c.errored,
                refresh=False,
            )
            self.bar.refresh()

    def close(self) -> None:
        self.update()
        self.bar.close()
