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
# # Explore runs
#
# Interactive browsers over a runs folder (run this notebook in Jupyter: widgets need a live kernel).
#
# - **Trial browser**: filter trials by run, job, task, outcome, error kind or anti-pattern detector; pick one
#   to read its result, its verifier output and its trajectory step by step (tool errors and findings are
#   highlighted, long observations are collapsed).
# - **Compare explorer**: pick a baseline A and a candidate B, press *Compare*, then open a task to read both
#   trajectories side by side from the point where their tool calls first diverge.

# %% tags=["parameters"]
# runs_dir None: $EVALKIT_RUNS, else "runs" in the working folder or the nearest folder above
# it (so the repository's runs/ is found from notebooks/ too): evalkit.find_runs.
runs_dir = None  # folder holding the Harbor job folders (see above)
run_by = None  # None: evalkit's run labels; "job": one run per job folder

# %%
import evalkit
from evalkit.widgets import CompareExplorer, TrialBrowser

runs = evalkit.load(evalkit.find_runs(runs_dir), run=run_by, trajectories=True)
runs

# %% [markdown]
# ## Trial browser

# %%
browser = TrialBrowser(runs)
browser

# %% [markdown]
# ## Compare explorer
#
# Defaults: B is the newest run, A the one before it.

# %%
explorer = CompareExplorer(runs)
explorer
