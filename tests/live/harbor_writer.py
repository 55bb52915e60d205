"""Write a job folder the way Harbor does while it runs (harbor-format.md §1, §2.3).

* ``config.json`` once at the start; the job ``result.json`` rewritten after every trial
  start and finish (``finished_at: null`` until the end);
* each trial: its folder, ``config.json``, ``agent/`` files (a trajectory that grows),
  ``verifier/`` files, and ``result.json`` last (Harbor's ``_finalize``);
* every write is Harbor's ``Path.write_text``: truncate, then write; not atomic. Here each
  write is split into chunks with pauses so that readers really do see empty and partial
  files.
"""

from __future__ import annotations

import json
import random
import threading
import time
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path

from tests.fuzz.corpus import GOLDEN, SKILLS

TRIAL_SRC = SKILLS / "3d-scan-calc__F8Fc7fn"
TRAJECTORY = GOLDEN / "hello-world.trajectory.json"


def slow_write_text(path: Path, text: str, rng: random.Random, chunks: int = 3) -> None:
    """``path.write_text(text)`` as the OS sees it, with readers let in between chunks."""
    data = text.encode()
    step = max(1, len(data) // chunks + 1)
    with open(path, "wb") as fh:  # the truncate happens here: readers see an empty file
        time.sleep(rng.uniform(0, 0.004))
        for i in range(0, len(data), step):
            fh.write(data[i : i + step])
            fh.flush()
            time.sleep(rng.uniform(0, 0.004))


class HarborLikeJob(threading.Thread):
    """A thread that writes ``n_trials`` trials into ``job_dir`` (``k`` tasks x attempts)."""

    def __init__(self, job_dir: Path, n_tasks: int = 4, attempts: int = 3, seed: int = 0) -> None:
        super().__init__(daemon=True)
        self.job_dir, self.n_tasks, self.attempts = job_dir, n_tasks, attempts
        self.rng = random.Random(seed)
        self.error: BaseException | None = None
        self.t0 = datetime(2026, 6, 1, 12, 0, 0)  # Harbor writes job times naive (local)
        #: when set, the writer waits up to this many seconds after each trial for a reader's
        #: ``reader_loaded()``, so loads overlap the writing however slow the machine is
        self.pace_s: float | None = None
        self._loads = threading.Semaphore(0)

    def reader_loaded(self) -> None:
        """A reader finished one load (lets a paced writer go on)."""
        self._loads.release()

    @property
    def n_trials(self) -> int:
        return self.n_tasks * self.attempts

    def _job_result(self, done: int, finished: bool) -> str:
        now = self.t0 + timedelta(seconds=30 * done)
        return json.dumps(
            {
                "id": "5f1c2f0e-0000-4000-8000-00000000live",
                "started_at": self.t0.isoformat(),
                "updated_at": now.isoformat(),
                "finished_at": now.isoformat() if finished else None,
                "n_total_trials": self.n_trials,
                "stats": {"n_completed_trials": done, "n_errored_trials": 0, "n_running_trials": 1},
            },
            indent=4,
        )

    def _trial(self, task: str, attempt: int, i: int) -> None:
        name = f"{task[:32]}__{uuid.UUID(int=self.rng.getrandbits(128)).hex[:7]}"
        d = self.job_dir / name
        d.mkdir()
        src = json.loads((TRIAL_SRC / "result.json").read_text())
        slow_write_text(
            d / "config.json", json.dumps(src["config"] | {"trial_name": name}, indent=4), self.rng
        )
        (d / "agent").mkdir()
        traj = TRAJECTORY.read_text()
        slow_write_text(
            d / "agent" / "trajectory.json", traj[: len(traj) // 2], self.rng
        )  # growing
        slow_write_text(d / "agent" / "trajectory.json", traj, self.rng)
        (d / "verifier").mkdir()
        reward = float(self.rng.random() < 0.6)
        slow_write_text(d / "verifier" / "reward.txt", f"{reward}\n", self.rng)
        start = datetime(2026, 6, 1, 10, 0, tzinfo=UTC) + timedelta(seconds=60 * i)
        src.update(
            id=str(uuid.UUID(int=self.rng.getrandbits(128))),
            task_name=task,
            trial_name=name,
            trial_uri=f"file://{d}",
            started_at=start.isoformat(),
            finished_at=(start + timedelta(seconds=50)).isoformat(),
            verifier_result={"rewards": {"reward": reward}},
            exception_info=None,
        )
        slow_write_text(d / "result.json", json.dumps(src, indent=4), self.rng, chunks=5)

    def run(self) -> None:
        try:
            self.job_dir.mkdir(parents=True, exist_ok=True)
            cfg = json.loads((SKILLS / "config.json").read_text())
            cfg["job_name"] = self.job_dir.name
            slow_write_text(self.job_dir / "config.json", json.dumps(cfg, indent=4), self.rng)
            slow_write_text(self.job_dir / "result.json", self._job_result(0, False), self.rng)
            i = 0
            for attempt in range(self.attempts):
                for t in range(self.n_tasks):
                    self._trial(f"live-task-{t}", attempt, i)
                    i += 1
                    time.sleep(self.rng.uniform(0.01, 0.06))  # the agent works
                    if self.pace_s is not None:
                        self._loads.acquire(timeout=self.pace_s)
                    slow_write_text(
                        self.job_dir / "result.json", self._job_result(i, False), self.rng
                    )
            slow_write_text(self.job_dir / "result.json", self._job_result(i, True), self.rng)
        except BaseException as e:  # surfaced by the test
            self.error = e
