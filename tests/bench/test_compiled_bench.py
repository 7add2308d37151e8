"""``kafkalite bench compiled``: its changes for mypyc still apply to the sources, its module of
generated encoders/decoders is the codec's own code, and (slow) the build compiles and runs."""

from __future__ import annotations

import importlib.util
import re
import sys
import types
from pathlib import Path

import pytest

import kafkalite
from kafkalite.protocol import decode_body, encode_body
from kafkalite_bench import compiled
from kafkalite_bench.codec import cases

ROOT = Path(kafkalite.__file__).parent.parent


@pytest.mark.parametrize("patch", compiled.PATCHES, ids=[p[3][:40] for p in compiled.PATCHES])
def test_every_change_for_mypyc_still_applies_to_the_sources(patch):
    path, pattern, _, why = patch
    assert re.search(pattern, (ROOT / path).read_text()), f"{path}: the change for '{why}' no longer applies"


def test_the_generated_module_encodes_and_decodes_as_the_codec():
    source, env = compiled.generated_module()
    module = types.ModuleType("generated_for_test")
    exec(compile(source, "<generated>", "exec"), module.__dict__)
    module.__dict__.update(env)
    for i, c in enumerate(cases()):
        expected = encode_body(c.api_key, c.version, c.value, c.response)
        out = bytearray()
        getattr(module, f"m{i}_encode")(c.value, out)
        assert out == expected, c.name
        value, end = getattr(module, f"m{i}_decode")(bytearray(expected), 0)
        assert end == len(expected)
        assert value == decode_body(c.api_key, c.version, expected, response=c.response), c.name


@pytest.mark.slow
@pytest.mark.skipif(importlib.util.find_spec("mypyc") is None, reason="mypyc is not installed")
def test_the_build_compiles_and_its_child_runs_compiled(tmp_path):
    where = compiled.build(tmp_path / "build")
    assert list((where / "kafkalite" / "network").glob(f"processor.*{sys.implementation.cache_tag}*.so"))
    result = compiled._run_child(where, 0.05)
    assert result["compiled"] and set(result["generated"]) < set(result["ops"])
