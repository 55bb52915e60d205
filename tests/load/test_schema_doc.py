from pathlib import Path

from evalkit.load.schema_doc import render


def test_docs_schemas_md_is_up_to_date() -> None:
    doc = Path(__file__).parents[2] / "docs" / "schemas.md"
    assert doc.read_text() == render(), (
        "regenerate: python -m evalkit.load.schema_doc docs/schemas.md"
    )
