"""Packs are read by libyaml where PyYAML has it: the same data as the pure-Python safe
loader, and the same error (with its message) for text that is not YAML."""

from __future__ import annotations

from importlib.resources import files

import pytest
import yaml

from auditor.packs import yamlload
from auditor.packs.model import available_rulesets


@pytest.mark.parametrize("ruleset", available_rulesets())
def test_a_pack_reads_as_the_safe_loader_reads_it(ruleset: str) -> None:
    text = (files("auditor.rules") / f"{ruleset}.yaml").read_text()
    assert yamlload.safe_load(text) == yaml.safe_load(text)


@pytest.mark.parametrize("text", ["a: [1, 2", "a: b: c", "key: !!python/object:os.system x"])
def test_text_that_is_not_safe_yaml_fails_as_the_safe_loader_does(text: str) -> None:
    with pytest.raises(yaml.YAMLError) as pure:
        yaml.safe_load(text)
    with pytest.raises(yaml.YAMLError) as fast:
        yamlload.safe_load(text)
    assert str(fast.value) == str(pure.value)
