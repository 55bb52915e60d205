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
# # Nightly evaluation report
#
# The newest run against its baseline: the answer first, then the evidence. Produced by `evalkit report nightly`.

# %% tags=["parameters"]
# runs_dir None: $EVALKIT_RUNS, else "runs" in the working folder or the nearest folder above
# it (so the repository's runs/ is found from notebooks/ too): evalkit.find_runs.
runs_dir = None  # folder holding the Harbor job folders (see above)
candidate = None  # run label or job name; None: the newest run
baseline = None  # run label or job name; None: the most recent earlier run over the same tasks
run_by = "auto"  # "label" (agent + model + dataset), "job" (one run per job folder), or "auto"
runs = None  # run labels you give: {"LABEL": "PATH" or ["PATH", ...]} (dict or JSON text); replaces runs_dir
gate_lambda = 2.0  # ship gate: one broken task weighs as much as this many fixed tasks
gate_alpha = 0.05  # ship gate: significance level of its one-sided binomial test
gate_tau = 0.10  # ship gate: most broken tasks allowed, as a share of the tasks A solved
confidence = 0.95  # confidence level of every interval in the report
checksums = "exclude"  # tasks whose checksum differs: "exclude" them, or "ignore" the change
min_shared_tasks = 5  # fewer comparable tasks than this: no meaningful comparison
detail_runs = 8  # runs shown in detail (trajectories, anti-patterns, turns): the pair and the newest; 0: all
redact = True  # replace API-key-like values and secret env values with [REDACTED]
static_charts = True  # also each chart as a PNG in the notebook, for viewers that run no script
summary_path = None  # where to write summary.json (`evalkit report` sets it)

# %%
from evalkit import report

ctx = report.setup(
    runs_dir, candidate, baseline, run_by, redact=redact, runs=runs, checksums=checksums,
    gate_lambda=gate_lambda, gate_alpha=gate_alpha, gate_tau=gate_tau,
    confidence=confidence, min_shared_tasks=min_shared_tasks, detail_runs=detail_runs,
    static_charts=static_charts,
)

# %%
report.answer(ctx)

# %% [markdown]
# ## What was loaded
#
# The runs folder, its jobs and trials, how recent the newest trial is, and any file that could not be read.
# A *run* groups the jobs of one configuration; the candidate and baseline below are runs.

# %%
report.header(ctx)

# %% [markdown]
# ## Runs
#
# One row per run, oldest first. *Pass rate*: share of all trials with reward ≥ 1 (a missing reward counts as a
# failure), with its confidence interval (clustered by task). *Mean reward*: average reward, missing as 0.
# *pass@k*: chance that at least one of k attempts passes; *pass^k*: that all k pass (k: the most attempts a
# task got). *Cost* sums recorded costs only (the cell says how many trials were priced when some were not; an
# unknown cost is never counted as $0). *Median time / trial* is wall time.

# %%
report.runs_table(ctx)

# %% [markdown]
# ## Latest run against its baseline
#
# **A** is the baseline, **B** the candidate. Two gates decide, each with its reasons:
#
# - **Ship gate** (a statistical acceptance rule): a task is *fixed* when A did not pass it and B does,
#   *broken* the other way round (with several attempts, a task passes when a strict majority of its attempts
#   pass). It says **Ship it** only when the fixed tasks clearly outweigh the broken ones (net = fixed − λ·broken
#   is positive and a one-sided binomial test is below α), **Don't ship** when B breaks more than τ of what A
#   solved or the net is negative, and **Hold** otherwise: too few tasks changed to tell.
# - **Regression guard** (fixed thresholds): *revert* on a pass-rate drop of more than 5 points, *flag* on
#   +15 % cost or +20 % steps, else *merge*.
#
# The paired table compares A and B on the tasks both ran: the interval of B − A accounts for the attempts of
# one task not being independent.

# %%
report.gate(ctx)

# %% [markdown]
# ### What changed, task by task
#
# The grid counts tasks by their typical outcome in A (rows) and in B (columns): the diagonal is unchanged.
# The scatter puts every task at (pass rate in A, pass rate in B): above the diagonal B does better.

# %%
report.transitions(ctx)

# %% [markdown]
# ### Tasks broken and fixed, with evidence
#
# Each task opens onto its evidence bundle: every attempt's outcome, the failing assertions from the verifier,
# the verifier output, a condensed trajectory, where A's and B's tool calls first diverge, and the anti-pattern
# findings. All of it is copied from the job folders, as recorded.

# %%
report.tasks_changed(ctx)

# %% [markdown]
# ### What changed in the configuration
#
# The two runs' Harbor configs, flattened and compared key by key. An A/B test is clean when exactly one
# variable changed (model, agent, prompt, ...): more than one makes any difference hard to attribute.

# %%
report.config_diff(ctx)

# %% [markdown]
# ## Leaderboard (more than two runs)
#
# Every run over the tasks they all share, best first. *Score*: pass rate with its task-clustered interval.
# *Rank interval*: the ranks the run can hold at 95 % confidence; *tier 1*: runs not separable from the leader
# (corrected for the number of comparisons); *P(rank 1)* and *P(frontier)* (on the cost/score Pareto frontier)
# come from one joint bootstrap over tasks. *Tampered passes*, *green fails* (the agent's own checks passed, the
# verifier failed) and *passes unverified* come from the trajectory detectors. Below: how often each run flips
# against itself (the noise floor to compare A → B flips with), flaky and dead tasks, and the tasks that separate
# the runs most.

# %%
report.leaderboard(ctx)

# %% [markdown]
# ## Pass rate per task
#
# One row per task, hardest first (lowest pass rate over all runs); one column per run. A cell is the share of
# that task's attempts that passed (reward ≥ 1) and shows passes / attempts.

# %%
report.heatmap(ctx)

# %% [markdown]
# ## How trials fail
#
# Outcomes: *pass* (reward ≥ 1), *partial* (0 < reward < 1), *fail* (reward 0), *timeout* (the agent or verifier
# ran out of time without a passing reward), *error* (an exception and no reward), *no-reward* and *incomplete*
# (no usable result). Error kinds follow Harbor's error policy: *agent* errors are the agent's fault, *infra*,
# *provider* and *verifier* errors are not, so a run with many of those says more about the setup than about the agent.
# Anti-pattern rates are the share of trials where a detector found e.g. a retry loop or an unverified claim, with
# a confidence interval.

# %%
report.taxonomy(ctx)

# %% [markdown]
# ## Cost and efficiency
#
# Cost against pass rate, one point per run: the dashed line is the Pareto frontier (no run is both cheaper and
# better than a run on it). Cost is used only where recorded: an unknown cost is never counted as $0, and when no
# trial has a cost the chart uses input tokens instead. Then trial durations (wall time: setup, agent and verifier)
# and agent turns per trial.

# %%
report.cost_efficiency(ctx)

# %% [markdown]
# ## Data quality
#
# Can these numbers be trusted? *Evidence complete* means a trial has its trajectory, a reward file, the
# verifier's output and an artifacts manifest. *Token/cost mismatches* are trials whose trajectory totals disagree
# with result.json. *Cost unknown* trials are left out of every cost figure. *Incomplete* trials have no usable
# result (crashed, still running, or copied partially) and count as failures in pass rates.

# %%
report.data_quality(ctx)

# %%
_ = report.write_summary(ctx, summary_path, "nightly")
