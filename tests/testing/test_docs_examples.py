"""The examples of docs/testing.md run as they are written, with the plugin's fixtures, in a
pytest of their own (as a user would run them)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration


pytest_plugins = ["pytester"]

DOC = Path(__file__).resolve().parents[2] / "docs" / "testing.md"


def examples() -> list[str]:
    text = DOC.read_text().split("## Examples", 1)[1].split("\n## ", 1)[0]
    return [b for b in re.findall(r"```python\n(.*?)```", text, re.S) if "def test_" in b]


def test_the_examples_of_docs_testing_md_pass(pytester):
    blocks = examples()
    assert len(blocks) == 3
    pytester.makepyfile(**{f"test_example_{i}": block for i, block in enumerate(blocks)})
    result = pytester.runpytest_subprocess("-q", timeout=240)
    result.assert_outcomes(passed=3)
