"""Helpers every reader of ``evalkit.load`` shares, none of them tied to one format or frame:

* ``io``: reading a file safely (size cap, orjson with a NaN-tolerant fallback, load errors);
* ``timeparse``: timestamps to tz-aware UTC under the ``naive_tz`` policy;
* ``redact``: secrets out of text before it reaches a frame, a report or the terminal;
* ``cache``: the per-job Parquet cache outside the job folders, and its file signatures.
"""
