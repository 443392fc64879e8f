# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Pure logic of tools/fleet/fleet.py: names, mirror parsing, recipe hashing, inventory rendering."""
import testpaths
import importlib.util
from pathlib import Path

import pytest
import yaml

FLEET_PY = Path(testpaths.REPO) / "tools" / "fleet" / "fleet.py"
spec = importlib.util.spec_from_file_location("fleet", FLEET_PY)
fleet = importlib.util.module_from_spec(spec)
spec.loader.exec_module(fleet)


def test_host_names_are_prefixed_by_fleet():
    assert fleet.host_names("mol-default", 3) == ["mol-default-gpu1", "mol-default-gpu2", "mol-default-gpu3"]


@pytest.mark.parametrize("name", ["Fleet", "1abc", "a_b", "a" * 32, ""])
def test_bad_names_are_refused(name):
    with pytest.raises(fleet.FleetError, match="invalid fleet name"):
        fleet.validate(name)


@pytest.mark.parametrize("count", [0, fleet.MAX_HOSTS + 1])
def test_bad_counts_are_refused(count):
    with pytest.raises(fleet.FleetError, match="invalid host count"):
        fleet.validate("fleet", count)


def test_mirror_from_deb822_skips_security_and_third_party():
    sources = {
        "/etc/apt/sources.list.d/debian.sources": (
            "Types: deb\nURIs: http://mirror.example/debian/\nSuites: bookworm bookworm-updates\n"
            "Components: main\n\nTypes: deb\nURIs: http://mirror.example/debian-security\n"
            "Suites: bookworm-security\n"),
        "/etc/apt/sources.list.d/node.sources": "Types: deb\nURIs: https://deb.nodesource.com/node_20.x\n"
                                                "Suites: nodistro\n",
    }
    assert fleet.debian_mirror(sources) == "http://mirror.example/debian"


def test_mirror_from_one_line_format_and_default():
    assert fleet.debian_mirror({"/etc/apt/sources.list": "deb [arch=amd64] http://m.example/debian bookworm main\n"}) \
        == "http://m.example/debian"
    assert fleet.debian_mirror({}) == fleet.DEFAULT_MIRROR


def test_image_hash_changes_with_every_ingredient():
    ref = fleet.image_hash("b", b"cf", b"key", b"ca")
    assert ref == fleet.image_hash("b", b"cf", b"key", b"ca")
    others = {fleet.image_hash(*args) for args in
              [("x", b"cf", b"key", b"ca"), ("b", b"x", b"key", b"ca"), ("b", b"cf", b"x", b"ca"),
               ("b", b"cf", b"key", b"x")]}
    assert ref not in others and len(others) == 4
    assert fleet.base_hash() == fleet.base_hash(dict(fleet.BASE_RECIPE))


def test_inventory_is_valid_yaml_with_gpu_hosts():
    text = fleet.render_inventory("fleet-x", [("fleet-x-gpu1", 40001), ("fleet-x-gpu2", 40002)], "/k/id_ed25519")
    inv = yaml.safe_load(text)
    group = inv["all"]["children"]["gpu_hosts"]
    assert group["hosts"] == {
        "fleet-x-gpu1": {"ansible_host": "127.0.0.1", "ansible_port": 40001},
        "fleet-x-gpu2": {"ansible_host": "127.0.0.1", "ansible_port": 40002},
    }
    assert group["vars"]["ansible_user"] == "root"
    assert group["vars"]["ansible_ssh_private_key_file"] == "/k/id_ed25519"
    assert group["vars"]["ansible_python_interpreter"] == "/usr/bin/python3"
