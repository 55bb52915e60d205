# ---
# jupyter:
#   jupytext:
#     formats: ipynb,py:percent
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
# # Nightly loop: launch, wait, report, gate
#
# Runs the candidate configuration through Harbor (or resumes it: the same settings find the
# same job), waits with a live progress bar (trials done / running / failed, elapsed, ETA),
# renders the nightly report against the baseline and writes summary.json. Interrupting it
# leaves a job that loads; running it again resumes.
#
# **The gate's exit code (0 Ship it, 1 Hold, 2 Don't ship).** A notebook cannot exit with a
# code of its own choosing: papermill exits 0 when every cell ran (a cell's `sys.exit` is
# caught by the kernel) and 1 on an error. A scheduler that acts on the verdict runs
# `evalkit loop --notebook notebooks/nightly_loop.ipynb ...` (this notebook under papermill,
# then the exit code read from the summary.json it wrote), or `evalkit loop ...` (the same
# loop without the notebook), or reads `gates.ship.verdict` from `<out_dir>/summary.json`.

# %% tags=["parameters"]
# runs_dir None: $EVALKIT_RUNS, else "runs" in the working folder or the nearest folder above
# it; relative task paths are found the same way (evalkit.runs_root, evalkit.find_path), so
# the notebook works from the repository root, from notebooks/ and under papermill --cwd.
runs_dir = None  # runs root: the candidate's job folder goes inside it
baseline = "scripted-baseline"  # baseline job folder(s) or job name(s) in runs_dir
agent = None  # Harbor agent name (oracle, claude-code, ...), or None with agent_import_path
agent_import_path = "evalkit_scripted.agent:ScriptedAgent"  # custom agent module:Class
model = "scripted/candidate"  # provider/model
task_paths = ["benchmarks/smoke-tasks"]  # local task folders (or set dataset)
tasks = []  # task names to run (empty: all)
dataset = None  # registry dataset name@version
attempts = 3  # attempts per task
concurrency = 4  # concurrent trials
env = "docker"  # Harbor environment
agent_kwargs = {}  # agent settings (never credentials: pass_env names them)
pass_env = []  # names of environment variables the agent needs
job_name = None  # None: derived from the settings, so a rerun resumes
out_dir = "reports"  # report, executed notebook and summary.json
follow_plan = False  # on a Hold, run the plan's extra attempts and report again
harbor = None  # Harbor executable (None: $EVALKIT_HARBOR, then PATH)
report_params = {}  # more nightly report parameters, e.g. {"gate_alpha": 0.1}

# %%
import evalkit
from evalkit.launch import RunSpec
from evalkit.launch.loop import nightly_loop

spec = RunSpec(
    agent=agent, agent_import_path=agent_import_path, model=model, dataset=dataset,
    paths=[evalkit.find_path(p) for p in task_paths] if dataset is None else [], tasks=tasks,
    attempts=attempts, concurrency=concurrency, env=env, agent_kwargs=agent_kwargs,
    pass_env=pass_env, job_name=job_name, runs_root=evalkit.runs_root(runs_dir),
)
loop = nightly_loop(
    spec, baseline, out=out_dir, follow_plan=follow_plan, harbor=harbor,
    report_params=report_params,
)

# %% [markdown]
# The verdict, the report and, on a Hold, the plan: how many more candidate attempts on
# which tasks most likely decide (`evalkit run --plan summary.json` runs them).

# %%
print(f"{loop.verdict} -> exit code {loop.exit_code}")
print(f"report: {loop.html}\nsummary: {loop.summary_path}")
loop.plan
