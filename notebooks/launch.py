# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
#       format_version: '1.3'
#       jupytext_version: 1.19.6
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # Launch a Harbor run
#
# Trigger a Harbor job from a notebook through `evalkit.launch`: checks first (every problem at once),
# then a frozen manifest, then Harbor's own CLI (in its own Python >= 3.12 environment) with a live
# progress bar, and finally the loaded frames. **Dry run by default**: set `dry_run = False` (or pass
# `-p dry_run False` to papermill) to really run. Running the same parameters again resumes the job
# instead of starting a duplicate. See docs/launch.md.

# %% tags=["parameters"]
# runs_dir None: $EVALKIT_RUNS, else "runs" in the working folder or the nearest folder above
# it; relative task paths are found the same way (evalkit.runs_root, evalkit.find_path).
runs_dir = None  # runs root: the job folder is created inside it (see above)
agent = None  # a Harbor agent name ("oracle", "nop", "claude-code", ...), or None with agent_import_path
agent_import_path = "evalkit_scripted.agent:ScriptedAgent"  # the bundled deterministic scripted agent
model = "scripted/baseline"  # provider/model ("scripted/candidate" is the better variant)
paths = ["benchmarks/smoke-tasks"]  # local task or dataset folders (or use dataset: name@version)
dataset = None
tasks = []  # task names or globs to include (empty: all)
attempts = 2  # attempts per task
concurrency = 4  # concurrent trials
env = "docker"  # or daytona, modal, e2b, ... (passed through to Harbor)
agent_kwargs = {}  # agent settings (never credentials: list variable NAMES in pass_env)
pass_env = []  # names of environment variables the agent needs
job_name = None  # None: derived from the settings (the same settings find the same job)
dry_run = True  # True: show the config, manifest and command; run nothing

# %%
import evalkit
from evalkit.launch import RunSpec, dry_run as plan_only, run
spec = RunSpec(
    agent=agent, agent_import_path=agent_import_path, model=model, dataset=dataset,
    paths=[evalkit.find_path(p) for p in paths] if dataset is None else [],
    tasks=tasks, attempts=attempts, concurrency=concurrency, env=env, agent_kwargs=agent_kwargs,
    pass_env=pass_env, job_name=job_name, runs_root=evalkit.runs_root(runs_dir),
)
plan = plan_only(spec)
print(f"job folder: {plan.job_dir}  action: {plan.action}")
for problem in plan.problems:
    print("PROBLEM:", problem)
for note in plan.report.notes:
    print("note:", note)

# %% [markdown]
# ## What would run
#
# The Harbor job config (as Harbor itself resolved it with `harbor run --print-config`, when Harbor is
# installed), the manifest frozen into the job folder before any result exists, and the exact command.

# %%
print(plan.render())

# %% [markdown]
# ## Run
#
# Only when `dry_run` is False. Ctrl-C (interrupt the kernel) stops Harbor and leaves an interrupted
# job that loads; run this cell again to resume it.

# %%
runs = None
if not dry_run:
    runs = run(spec, progress=True)
    print(runs.options["launch"])

# %%
import polars as pl

if runs is not None:
    display(runs.jobs.select("job_name", "state", "n_trials_declared", "n_trials_found"))
    per_task = runs.trials.group_by("task_name").agg(
        attempts=pl.len(), passed=(pl.col("outcome") == "pass").sum()
    )
    display(per_task.sort("task_name"))
