# -*- coding: utf-8 -*-
# Note that this module util is **PRIVATE** to the collection. It can have breaking changes at any time.
# Do not use this from other collections or standalone plugins/modules!
# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Decisions for installing SGLang into a virtualenv (roles/sglang): what sglang requires, whether a reused
torch fits it, and which wheels an exact (no dependency resolution) wheelhouse install takes.

Standard library only (runs on the target, Python >= 3.8). Facts about the virtualenv are read by running
``READ_SCRIPT`` with the virtualenv's own interpreter (it sees what the server will see, base site dirs included).
"""
from __future__ import annotations

import json
import os
import re

from ansible_collections.llmserve.sglang.plugins.module_utils.install.patch import version_matches
from ansible_collections.llmserve.sglang.plugins.module_utils.sglang import version as sglang_version
from ansible_collections.llmserve.sglang.plugins.module_utils.sglang.argv import sm120_env

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


# --------------------------------------------------------------------------------------------------------------------
# The install request: what roles/sglang runs, decided once (through the private filter _sglang_install_request)
# --------------------------------------------------------------------------------------------------------------------

FLASHINFER_RE = re.compile(r"^(flashinfer[-_]python)(?=[=<>!~]|$)")


def wheels_dir(settings):
    """Where pip finds the wheels: a folder already on the host, the copied controller wheelhouse, or '' (online)."""
    if settings.get("wheelhouse_on_host"):
        return settings["wheelhouse_on_host"]
    if settings.get("wheelhouse"):
        return settings.get("wheelhouse_dest") or ""
    return ""


def sources(settings):
    """pip's source options: the wheelhouse alone (offline), else the index, extra indexes and trusted hosts."""
    where = wheels_dir(settings)
    if where:
        return ["--no-index", "--find-links", where]
    out = ["--index-url", settings["pip_index_url"]] if settings.get("pip_index_url") else []
    out += ["--extra-index-url=%s" % url for url in settings.get("pip_extra_index_urls") or []]
    out += ["--trusted-host=%s" % host for host in settings.get("pip_trusted_hosts") or []]
    return out


def pip_env(settings):
    """pip's environment: quiet and non-interactive, the CA bundle for pip and requests, the proxy."""
    env = {"PIP_DISABLE_PIP_VERSION_CHECK": "1", "PIP_NO_INPUT": "1"}
    if settings.get("ca_bundle"):
        env.update(PIP_CERT=settings["ca_bundle"], REQUESTS_CA_BUNDLE=settings["ca_bundle"],
                   SSL_CERT_FILE=settings["ca_bundle"])
    if settings.get("proxy"):
        for name in ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy"):
            env[name] = settings["proxy"]
        env["NO_PROXY"] = env["no_proxy"] = settings.get("no_proxy") or ""
    return env


def install_spec(settings, python, wheel_names):
    """What a verified install was made from (the marker's content): a different one means reinstall."""
    return {
        "sglang_version": settings["version"], "python": python, "torch_index_url": settings.get("torch_index_url"),
        "sources": sources(settings), "kernel_index_url": settings.get("kernel_index_url"),
        "flashinfer_extra": settings.get("flashinfer_extra"),
        "flashinfer_prebuilt": list(settings.get("flashinfer_prebuilt_packages") or []),
        "extra_packages": list(settings.get("extra_packages") or []),
        "dependencies": bool(settings.get("install_dependencies")), "reuse_torch": bool(settings.get("reuse_torch")),
        "exact": bool(settings.get("exact")),
        # an exact install changes when the wheelhouse's files do
        "wheels": sorted(os.path.basename(w) for w in wheel_names or []) if settings.get("exact") else [],
    }


def server_env(settings, compute_caps):
    """The environment roles/server starts SGLang with (exported as sglang_server_env).

    The server runs under systemd or the pid-file supervisor with a bare PATH, but its warm-up JIT-builds kernels
    with ``ninja`` (a console script of the venv, or of the base interpreter whose torch is reused) and nvcc; SM120
    GPUs need sglang/argv.sm120_env. ``server_env_extra`` wins.
    """
    extra = dict(settings.get("server_env_extra") or {})
    cuda_home = extra.get("CUDA_HOME") or settings["default_cuda_home"]
    path = [settings["venv_link"] + "/bin"]
    if settings.get("reuse_torch") and settings.get("python"):
        path.append(os.path.dirname(settings["python"]))
    path += [cuda_home + "/bin", "/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin"]
    env = {"PATH": ":".join(dict.fromkeys(path)), "CUDA_HOME": cuda_home}
    if any(str(cap).startswith("12.") for cap in compute_caps or []):
        env.update(sm120_env(settings.get("ptxas_path")))
    env.update(extra)
    return env


def request(settings, python, old_spec, wheel_names, compute_caps):
    """Everything roles/sglang decides before sglang's own requirements are known.

    ``old_spec``: the marker of the last verified install (None without one). Returns ``spec``, ``reinstall``,
    ``sources``, ``pip_env``, ``sglang_argv`` (sglang alone, --no-deps, to read its requirements) and
    ``server_env``.
    """
    spec = install_spec(settings, python, wheel_names)
    sglang_argv = [settings["venv"] + "/bin/python", "-m", "pip", "install", "--no-deps"] \
        + (["--force-reinstall"] if settings.get("force_reinstall") else []) \
        + spec["sources"] + ["sglang==%s" % settings["version"]]
    return {
        "spec": spec,
        "reinstall": bool(settings.get("force_reinstall")) or old_spec != spec,
        "sources": spec["sources"],
        "pip_env": pip_env(settings),
        "sglang_argv": sglang_argv,
        "server_env": server_env(settings, compute_caps),
    }


def pip_argv(settings, requires):
    """The pip commands after sglang itself, from its requirements (``requires``: :func:`plan`'s result).

    ``torch`` (empty when nothing is to install), ``exact`` (exact wheelhouse installs) or ``rest`` (dependencies,
    kernel package, FlashInfer with its extra, prebuilt and extra packages): empty lists mean "do not run".
    """
    pip = [settings["venv"] + "/bin/python", "-m", "pip", "install"]
    src = sources(settings)
    offline = bool(wheels_dir(settings))
    out = {"torch": [], "exact": [], "rest": []}
    if requires.get("torch_install"):
        out["torch"] = pip + (src if offline else ["--index-url", settings["torch_index_url"]]) + requires["torch_install"]
    if settings.get("exact"):
        out["exact"] = pip + ["--no-index", "--no-deps"] + (["--force-reinstall"] if settings.get("force_reinstall") else []) \
            + list(requires.get("wheels") or [])
        return out
    flashinfer = list(requires.get("flashinfer") or [])
    if settings.get("flashinfer_extra"):
        flashinfer = [FLASHINFER_RE.sub(r"\1[%s]" % settings["flashinfer_extra"], spec) for spec in flashinfer]
    out["rest"] = pip + ([] if settings.get("install_dependencies") else ["--no-deps"]) + src \
        + (["--extra-index-url", settings["kernel_index_url"]] if settings.get("kernel_index_url") and not offline else []) \
        + ["sglang==%s" % settings["version"]] + list(requires.get("kernel") or []) + flashinfer \
        + list(settings.get("flashinfer_prebuilt_packages") or []) + list(settings.get("extra_packages") or [])
    return out
