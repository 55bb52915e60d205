"""steps/columns.py: what the readers fill is derived from the declarations."""

from __future__ import annotations

import pytest

from evalkit.load.steps import columns as C


def test_reader_fields_are_the_declared_columns_not_derived_then_the_working_ones():
    derived = {c.name for c in (*C.STEP_COLUMNS, *C.TOOL_CALL_COLUMNS) if c.derived}
    assert {"timestamp", "is_error", "exit_code", "is_error_source", "retried"} <= derived
    for fields, declared, working in (
        (C.STEP_FIELDS, C.STEP_COLUMNS, C.STEP_WORKING),
        (C.CALL_FIELDS, C.TOOL_CALL_COLUMNS, C.CALL_WORKING),
    ):
        read = [c.name for c in declared if not c.derived]
        assert list(fields) == read + [c.name for c in working]
        assert not set(fields) & {c.name for c in declared if c.derived}


def test_a_named_row_puts_each_value_under_its_field_and_null_elsewhere():
    row = C.call_row(trial_id="t", function_name="bash", _sig="s")
    got = dict(zip(C.CALL_FIELDS, row, strict=True))
    assert got["trial_id"] == "t" and got["function_name"] == "bash" and got["_sig"] == "s"
    assert {k for k, v in got.items() if v is not None} == {"trial_id", "function_name", "_sig"}
    assert dict(zip(C.STEP_FIELDS, C.step_row(message="m"), strict=True))["message"] == "m"


def test_a_row_naming_a_derived_or_unknown_column_is_refused():
    with pytest.raises(TypeError, match="is_error"):
        C.call_row(is_error=True)
    with pytest.raises(TypeError, match="mesage"):
        C.step_row(mesage="typo")
