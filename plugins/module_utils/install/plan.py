# -*- coding: utf-8 -*-
# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Decisions for installing SGLang into a virtualenv (roles/sglang): what sglang requires, whether a reused
torch fits it, and which wheels an exact (no dependency resolution) wheelhouse install takes.

Standard library only (runs on the target, Python >= 3.8). Facts about the virtualenv are read by running
``READ_SCRIPT`` with the virtualenv's own interpreter (it sees what the server will see, base site dirs included).
"""
from __future__ import absolute_import, division, print_function

import json
import os
import re

from ansible_collections.llmserve.sglang.plugins.module_utils.install.patch import version_matches
from ansible_collections.llmserve.sglang.plugins.module_utils.sglang import version as sglang_version

__metaclass__ = type

TORCH_FAMILY = ("torch", "torchvision", "torchaudio")
KERNELS = ("sgl-kernel", "sglang-kernel")

# Run with the virtualenv's python; argv[1]: JSON list of distribution names to look up.
READ_SCRIPT = sglang_version.PROBE_SOURCE + r"""
import json, sys
from importlib import metadata
out = {"sglang": _sglang_version(), "requires": [], "requires_python": "", "installed": {}, "locations": {}}
try:
    d = metadata.distribution("sglang")
    out["requires"] = list(d.requires or [])
    out["requires_python"] = d.metadata.get("Requires-Python") or ""
except metadata.PackageNotFoundError:
    pass
for n in json.loads(sys.argv[1]):
    try:
        d = metadata.distribution(n)
        out["installed"][n] = d.version
        out["locations"][n] = str(d.locate_file(""))
    except metadata.PackageNotFoundError:
        out["installed"][n] = None
print(json.dumps(out))
"""

_NAME_RE = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*(\[[^\]]*\])?\s*(.*)$")
# PEP 427: {name}-{version}(-{build})?-{python}-{abi}-{platform}.whl
_WHEEL_RE = re.compile(r"^(?P<name>[^-]+)-(?P<version>[^-]+)(-(?P<build>\d[^-]*))?-(?P<py>[^-]+)-(?P<abi>[^-]+)-(?P<plat>[^-]+)\.whl$")


def canon(name):
    """PEP 503 normalised project name."""
    return re.sub(r"[-_.]+", "-", name).lower()


def split_requirement(req):
    """``'flashinfer_python[cu13]==0.6.12; marker'`` -> ('flashinfer-python', '[cu13]', '==0.6.12', 'marker')."""
    spec, _sep, marker = req.partition(";")
    m = _NAME_RE.match(spec)
    if not m:
        raise ValueError("cannot read requirement %r" % req)
    return canon(m.group(1)), m.group(2) or "", m.group(3).replace(" ", ""), marker.strip()


def classify(requires, family=TORCH_FAMILY, kernels=KERNELS):
    """Group sglang's unconditional Requires-Dist into torch family, kernel package and FlashInfer specs."""
    family = set(canon(n) for n in family)
    kernels = set(canon(n) for n in kernels)
    out = {"torch": [], "kernel": [], "flashinfer": []}
    for req in requires or []:
        name, _extras, _spec, marker = split_requirement(req)
        if "extra" in marker:
            continue
        text = req.partition(";")[0].replace(" ", "")
        if name in family:
            out["torch"].append(text)
        elif name in kernels:
            out["kernel"].append(text)
        elif name.startswith("flashinfer-"):
            out["flashinfer"].append(text)
    return out


def torch_reuse(torch_specs, installed, locations, python):
    """Check the torch family seen by the virtualenv against sglang's pins, for a reused (not installed) torch.

    Returns ``(errors, missing)``: ``errors`` lists one clear sentence per mismatch (torch absent, or a family
    member present at a version sglang does not accept); ``missing`` lists the specs of family members that are
    absent but may be installed next to the reused torch (torchvision, torchaudio).
    """
    errors, missing = [], []
    for text in torch_specs:
        name, _extras, spec, _marker = split_requirement(text)
        have = installed.get(name)
        where = locations.get(name) or ""
        if have is None:
            if name == "torch":
                errors.append(
                    "sglang_reuse_torch is set but %s has no torch at all (sglang needs %s). Fix: set sglang_python "
                    "to the interpreter that has torch (e.g. /opt/torch/.venv/bin/python3), or set "
                    "sglang_reuse_torch: false to install %s into the virtualenv." % (python, text, text))
            else:
                missing.append(text)
            continue
        try:
            ok = version_matches(have, spec or None)
        except ValueError as e:
            errors.append("cannot compare %s %s with %r: %s" % (name, have, spec, e))
            continue
        if not ok:
            found_in = (" (in %s)" % where) if where else ""
            errors.append(
                "sglang needs %s but the reused interpreter %s has %s %s%s. Fix: pick an sglang_version that pins "
                "%s %s, point sglang_python at an interpreter with %s, or set sglang_reuse_torch: false to install "
                "it into the virtualenv." % (text, python, name, have, found_in, name, have.split("+")[0], text))
    return errors, missing


def parse_wheel_name(filename):
    """``'sglang-0.5.15.post1-cp312-cp312-manylinux_2_34_x86_64.whl'`` -> ('sglang', '0.5.15.post1'), else None."""
    m = _WHEEL_RE.match(os.path.basename(filename))
    if not m:
        return None
    return canon(m.group("name")), m.group("version")


def exact_wheels(files, version):
    """The wheels an exact install takes: every ``*.whl`` given, one per project, sglang==version among them.

    Raises ValueError naming the problem and the fix (two versions of one project, no sglang wheel, a file that
    is not a wheel name).
    """
    by_name = {}
    bad = []
    for f in sorted(files):
        parsed = parse_wheel_name(f)
        if parsed is None:
            bad.append(os.path.basename(f))
            continue
        by_name.setdefault(parsed[0], []).append((parsed[1], f))
    if bad:
        raise ValueError("not wheel file names (name-version-python-abi-platform.whl): %s; rename or remove them"
                         % ", ".join(bad))
    dups = ["%s (%s)" % (n, ", ".join(os.path.basename(f) for _v, f in v)) for n, v in sorted(by_name.items())
            if len(v) > 1]
    if dups:
        raise ValueError("sglang_wheelhouse_exact installs every wheel without resolving, so each project must appear "
                         "once; the wheelhouse has several of: %s. Remove the ones you do not want." % "; ".join(dups))
    got = [v for v, _f in by_name.get("sglang", [])]
    if not got:
        raise ValueError("the wheelhouse has no sglang wheel; add sglang==%s (pip download --no-deps sglang==%s)"
                         % (version, version))
    if got[0] != version:
        raise ValueError("the wheelhouse holds sglang %s, not sglang_version %s; add the right wheel or change "
                         "sglang_version" % (got[0], version))
    return [v[0][1] for _n, v in sorted(by_name.items())]


def plan(facts, version, reuse_torch, python, exact, wheel_files, family=TORCH_FAMILY, kernels=KERNELS):
    """Everything the role needs after sglang itself is in the virtualenv. ``facts``: READ_SCRIPT's output.

    Returns a dict (version, requires_python, torch, kernel, flashinfer, torch_install, wheels, notes, errors).
    """
    groups = classify(facts.get("requires"), family, kernels)
    out = dict(groups, version=facts.get("sglang"), requires_python=facts.get("requires_python") or "",
               installed=facts.get("installed") or {}, torch_install=[], wheels=[], notes=[], errors=[])
    if out["version"] is None:
        out["errors"].append("sglang is not installed in the virtualenv")
        return out
    if reuse_torch:
        errors, missing = torch_reuse(groups["torch"], out["installed"], facts.get("locations") or {}, python)
        out["errors"].extend(errors)
        if not errors:
            found = out["installed"].get("torch")
            out["notes"].append("reusing torch %s from %s" % (found, (facts.get("locations") or {}).get("torch") or python))
        if exact:
            if missing:
                out["notes"].append("not installed (exact wheelhouse, not in it): %s" % ", ".join(missing))
        else:
            out["torch_install"] = missing
    elif not exact:
        out["torch_install"] = groups["torch"] or ["torch"]
    if exact:
        try:
            out["wheels"] = exact_wheels(wheel_files, version)
        except ValueError as e:
            out["errors"].append(str(e))
    return out


def read_json_output(stdout):
    """The last line of a helper script's stdout, as JSON (earlier lines may be warnings)."""
    lines = [x for x in (stdout or "").splitlines() if x.strip()]
    if not lines:
        raise ValueError("no output")
    return json.loads(lines[-1])
