"""Layer 2: summary tables over the frames, shared by the CLI and the reports.

Pure functions: Runs / frames in, Polars frames (or plain dicts) out. Nothing here prints.
"""

from evalkit.tables.jobs import jobs_table
from evalkit.tables.trials import task_detail, trials_table

__all__ = ["jobs_table", "task_detail", "trials_table"]
