"""Benchmark: every structural (and trainerd) detector over 1,000,000 synthetic tool calls.

    .venv/bin/python benchmarks/bench_detectors.py            # 1M calls, both modes
    .venv/bin/python benchmarks/bench_detectors.py --calls 200000 --mode structural

Generates realistic frames (20 calls per 16 agent steps per trial on average, a mix of shell
commands and file tools, observations of 50-1,500 characters with ~12% failures, agent
messages with claims / hedges / abstentions, retry loops and sleeps planted at known rates),
then times ``evalkit.patterns.detect`` (generation is not timed) and prints rows/s. The
target (issue 5) is <= 10 s for all detectors over 1M rows on the 2-core dev machine.
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np
import polars as pl

import evalkit.patterns as ep

SHELL = [
    "pytest -q tests/test_app.py", "python -m pytest -x", "cat src/app.py", "ls -la", "sleep 5",
    "sed -i 's/foo/bar/' src/app.py", "echo 'x = 1' > src/config.py", "grep -rn 'def main' src",
    "pip install numpy", "apt-get install -y curl", "uname -a", "git status", "go test ./...",
    "python src/app.py", "cat > out.txt << 'EOF'\nhello -> world\nEOF", "make test",
    "rm -rf build", "npm test", "head -50 README.md", "tail -f /var/log/app.log",
]  # fmt: skip
TOOLS = [
    ("Read", '{"file_path":"/repo/src/mod%d.py"}'), ("Edit", '{"file_path":"/repo/src/mod%d.py","old_string":"a","new_string":"b"}'),
    ("Write", '{"file_path":"/repo/src/new%d.py","content":"print(1)"}'), ("Grep", '{"pattern":"foo%d","path":"/repo"}'),
    ("TodoWrite", '{"todos":[{"id":"%d"}]}'), ("str_replace_editor", '{"command":"view","path":"/repo/tests/test_%d.py"}'),
]  # fmt: skip
OBS_OK = [
    "ok", "collected 12 items\n\n" + "tests/test_app.py ............ [100%]\n" * 3 + "12 passed in 0.52s",
    "def main():\n    return run()\n" * 20, "total 48\ndrwxr-xr-x 2 root root 4096 .\n" * 8,
    "On branch main\nnothing to commit, working tree clean", "Successfully installed numpy-1.26.4",
    "The file /repo/src/mod1.py has been updated successfully.", "Linux host 6.1.0 x86_64 GNU/Linux",
]  # fmt: skip
OBS_ERR = [
    "Traceback (most recent call last):\n  File \"src/app.py\", line 3, in <module>\nNameError: name 'x' is not defined",
    "FAILED tests/test_app.py::test_add - AssertionError: assert 2 == 3\n1 failed, 11 passed in 0.6s",
    "bash: foo: command not found", "E: Unable to locate package curl", "exec format error",
    "Error: context_length_exceeded: prompt is too long",
]  # fmt: skip
MSGS = [
    "", "", "", "Let me look at the code.", "Now let me run the tests.", "I'll fix the failing test.",
    "The task is complete. All tests pass.", "This should work now, I believe it fixes the bug.",
    "I created src/helper.py with the new function.", "I'm not sure how to proceed; could you clarify?",
    "Assuming this is Ubuntu x86_64, I'll install the binary.", "Done! The issue has been fixed.",
]  # fmt: skip


def make_frames(n_calls: int, seed: int = 0) -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame]:
    """Synthetic steps / tool_calls / trials with ~n_calls tool calls."""
    rng = np.random.default_rng(seed)
    per_trial = 50
    n_trials = max(1, n_calls // per_trial)
    n = n_trials * per_trial
    trial = np.repeat(np.arange(n_trials), per_trial)
    within = np.tile(np.arange(per_trial), n_trials)
    # ~1.25 calls per agent step; step 0 is the user prompt
    step = 1 + (within * 4) // 5
    call_index = np.zeros(n, dtype=np.int64)
    same = np.r_[False, (step[1:] == step[:-1]) & (trial[1:] == trial[:-1])]
    call_index[same] = 1
    is_shell = rng.random(n) < 0.6
    shell_i = rng.integers(0, len(SHELL), n)
    tool_i = rng.integers(0, len(TOOLS), n)
    # plant retry loops: 3% of calls repeat the previous call
    rep = rng.random(n) < 0.03
    for arr in (shell_i, tool_i):
        arr[1:][rep[1:]] = arr[:-1][rep[1:]]
    is_shell[1:][rep[1:]] = is_shell[:-1][rep[1:]]
    err = rng.random(n) < 0.12
    obs_i = np.where(err, rng.integers(0, len(OBS_ERR), n), rng.integers(0, len(OBS_OK), n))
    num = rng.integers(0, 40, n)
    shell_s = pl.Series(SHELL)[shell_i]
    tool_name = pl.Series([t[0] for t in TOOLS])[tool_i]
    tool_args = pl.Series([t[1] for t in TOOLS])[tool_i]
    ok_s = pl.Series(OBS_OK)[np.where(err, 0, obs_i)]
    err_s = pl.Series(OBS_ERR)[np.where(err, obs_i, 0)]
    tid = pl.Series("trial_id", [f"t{i:07d}" for i in range(n_trials)])[trial]
    calls = (
        pl.DataFrame(
            {
                "trial_id": tid,
                "step_index": step,
                "call_index": call_index,
                "_shell": is_shell,
                "_cmd": shell_s,
                "_tn": tool_name,
                "_ta": tool_args,
                "_num": num,
                "is_error": err,
                "_ok": ok_s,
                "_err": err_s,
            }
        )
        .with_columns(
            pl.when(pl.col("_shell"))
            .then(pl.lit("Bash"))
            .otherwise(pl.col("_tn"))
            .alias("function_name"),
            pl.when(pl.col("_shell"))
            .then(
                pl.concat_str(
                    [
                        pl.lit('{"command":"'),
                        pl.col("_cmd")
                        .str.replace_all("\n", "\\n", literal=True)
                        .str.replace_all('"', '\\"', literal=True),
                        pl.lit('"}'),
                    ]
                )
            )
            .otherwise(pl.col("_ta").str.replace("%d", pl.col("_num").cast(pl.String)))
            .alias("arguments"),
            pl.when(pl.col("_shell")).then(pl.col("_cmd")).alias("command"),
            pl.when(pl.col("is_error"))
            .then(pl.col("_err"))
            .otherwise(pl.col("_ok"))
            .alias("observation"),
            pl.lit("main").alias("trajectory"),
            pl.lit(True).alias("is_main"),
        )
        .drop("_shell", "_cmd", "_tn", "_ta", "_num", "_ok", "_err")
    )
    n_steps = int(step.max()) + 1
    st_trial = np.repeat(np.arange(n_trials), n_steps)
    st_idx = np.tile(np.arange(n_steps), n_trials)
    msg_i = rng.integers(0, len(MSGS), n_trials * n_steps)
    steps = pl.DataFrame(
        {
            "trial_id": pl.Series([f"t{i:07d}" for i in range(n_trials)])[st_trial],
            "step_index": st_idx,
            "source": np.where(st_idx == 0, "user", "agent"),
            "message": pl.Series(MSGS)[msg_i],
            "trajectory": "main",
            "is_main": True,
        }
    ).with_columns(
        pl.when(pl.col("step_index") == 0)
        .then(pl.lit("Fix the failing test in src/app.py."))
        .otherwise(pl.col("message"))
        .alias("message"),
        pl.lit(1, pl.Int64).alias("n_tool_calls"),
        (1000 + pl.col("step_index") * 500).alias("prompt_tokens"),
    )
    trials = pl.DataFrame(
        {
            "trial_id": [f"t{i:07d}" for i in range(n_trials)],
            "run": np.where(np.arange(n_trials) % 2 == 0, "a", "b"),
            "task_name": [f"task{i % 500}" for i in range(n_trials)],
            "reward": (rng.random(n_trials) < 0.5).astype(float),
            "exception_type": [
                "AgentTimeoutError" if x < 0.05 else None for x in rng.random(n_trials)
            ],
            "n_steps": n_steps - 1,
            "has_trajectory": True,
        }
    )
    return steps, calls, trials


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--calls", type=int, default=1_000_000)
    ap.add_argument("--mode", choices=["structural", "trainerd", "both"], default="both")
    ap.add_argument("--per-detector", action="store_true", help="also time each detector alone")
    args = ap.parse_args()
    t0 = time.perf_counter()
    steps, calls, trials = make_frames(args.calls)
    print(f"generated {calls.height:,} tool calls, {steps.height:,} steps, {trials.height:,} trials "
          f"in {time.perf_counter() - t0:.1f} s (not timed)")  # fmt: skip
    modes = ["structural", "trainerd"] if args.mode == "both" else [args.mode]
    if len(modes) > 1 or args.per_detector:
        for mode in modes:
            wall, cpu, f = _timed(steps, calls, trials, mode)
            print(f"{mode:>10}: {wall:6.2f} s wall, {cpu:6.2f} s CPU, {f.height:,} findings")
            if args.per_detector:
                for d in ep.list_detectors(mode):
                    wall, cpu, _ = _timed(steps, calls, trials, mode, [d["name"]])
                    print(
                        f"    {d['name']:<26} {wall:6.2f} s wall, {cpu:6.2f} s CPU (incl. preparation)"
                    )
    wall, cpu, f = _timed(steps, calls, trials, modes)
    print(
        f"all detectors ({' + '.join(modes)}, one call): {wall:.2f} s wall, {cpu:.2f} s CPU "
        f"for {calls.height:,} rows = {calls.height / wall:,.0f} rows/s (wall), {f.height:,} findings"
    )
    print(
        f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores: CPU time is the figure "
        "that does not depend on other processes (wall <= CPU for one CPU-bound process)"
    )


def _timed(steps, calls, trials, mode, detectors=None):
    w, c = time.perf_counter(), time.process_time()
    f = ep.detect(steps=steps, tool_calls=calls, trials=trials, mode=mode, detectors=detectors)
    return time.perf_counter() - w, time.process_time() - c, f


if __name__ == "__main__":
    main()
