# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The double reads `--config` YAML as SGLang does (yaml.safe_load), also without PyYAML: PyYAML is the referee."""
import testpaths
import json
import os
import sys

import pytest
import yaml

REPO = testpaths.REPO
sys.path.insert(0, os.path.join(REPO, "tools", "sglang_double"))

from sglang._double import config  # noqa: E402  pylint: disable=wrong-import-position

# What deployments write, and the traps of a hand-written parser: quotes, backslashes, '#', ':' and YAML 1.1 words.
KEYS = ['plain-key', 'k"ey', 'back\\slash', 'both\\"mixed\\\\', "it's", 'has # hash', 'co: lon', 'tab\there',
        'uni\u00e9\u2028code', 'yes', '012', '1.5', '', ' lead and trail ']
DOCS = [
    "api-key: 'single ''quoted'' key'\n",
    'api-key: "esc \\x41\\u00e9\\t\\\\ \\" end"  # comment\n',
    "enable-metrics: true\ntp-size: 8\nmem-fraction-static: 0.85\nserved-model-name: kimi\n",
    "flags: [a, 'b c', \"d\\\\e\", 3]\nempty: []\nnothing: ~\nalso-nothing:\n",
    "on-word: on\noff-word: OFF\nplain: some words here\nhashy: a#b\n",
    "---\n# comment\nport: 30000\nneg: -7\nunder: 1_000\n",
]


@pytest.fixture
def no_pyyaml(monkeypatch):
    monkeypatch.setitem(sys.modules, "yaml", None)  # import yaml -> ImportError, as on a host without PyYAML


@pytest.mark.parametrize("key", KEYS)
def test_api_key_as_roles_server_writes_it(tmp_path, no_pyyaml, key):
    path = tmp_path / "api-key.yaml"
    path.write_text("# comment\napi-key: %s\n" % json.dumps(key))  # roles/server: to_json, a YAML double-quoted scalar
    assert config.read_config_yaml(str(path)) == {"api-key": key}
    sys.modules.pop("yaml")
    assert yaml.safe_load(path.read_text()) == {"api-key": key}


@pytest.mark.parametrize("doc", DOCS)
def test_same_mapping_as_pyyaml(tmp_path, no_pyyaml, doc):
    path = tmp_path / "server.yaml"
    path.write_text(doc)
    got = config.read_config_yaml(str(path))
    assert got == yaml.safe_load(doc)


def test_nested_mapping_is_refused_not_misread(tmp_path, no_pyyaml):
    path = tmp_path / "server.yaml"
    path.write_text("outer:\n  inner: 1\n")
    with pytest.raises(ValueError, match="flat"):
        config.read_config_yaml(str(path))
