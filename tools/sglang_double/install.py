#!/usr/bin/env python3
# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Install the SGLang double into a virtualenv as if it were the real ``sglang`` wheel (stdlib only, idempotent).

    python3 install.py --venv /opt/sglang/venv --version 0.5.23
"""
import argparse
import importlib.util
import glob
import hashlib
import base64
import os
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
# Loading version.py must not write bytecode next to the copied sources: a rewritten __pycache__ there makes the
# next copy of the tree (molecule's idempotence) see a change.
sys.dont_write_bytecode = True


def _version_module():
    """sglang/version.py, loaded on its own (the package's __init__ imports what a bare host lacks)."""
    spec = importlib.util.spec_from_file_location("_sglang_double_version", os.path.join(HERE, "sglang", "version.py"))
    mod = importlib.util.module_from_spec(spec)
    env = os.environ.pop("SGLANG_DOUBLE_VERSION", None)
    try:
        spec.loader.exec_module(mod)
    finally:
        if env is not None:
            os.environ["SGLANG_DOUBLE_VERSION"] = env
    return mod


_VERSION = _version_module()
SUPPORTED = _VERSION.SUPPORTED  # one per flag table (sglang/version.py)


def site_packages(venv):
    py = os.path.join(venv, "bin", "python")
    out = subprocess.check_output([py, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"])
    return out.decode().strip()


def record_line(root, path):
    with open(path, "rb") as f:
        data = f.read()
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return "%s,sha256=%s,%d" % (os.path.relpath(path, root), digest, len(data))


def install(venv, version):
    sp = site_packages(venv)
    dst = os.path.join(sp, "sglang")
    # Replace whole: a previous install of another version or stale files must not survive.
    if os.path.isdir(dst):
        shutil.rmtree(dst)
    for old in glob.glob(os.path.join(sp, "sglang-*.dist-info")):
        shutil.rmtree(old)
    shutil.copytree(os.path.join(HERE, "sglang"), dst, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    with open(os.path.join(dst, "_installed.py"), "w") as f:
        f.write("VERSION = %r\n" % version)
    info = os.path.join(sp, "sglang-%s.dist-info" % version)
    os.makedirs(info)
    with open(os.path.join(info, "METADATA"), "w") as f:
        f.write("Metadata-Version: 2.1\nName: sglang\nVersion: %s\n"
                "Summary: SGLang double (test stand-in for the sglang serving framework)\n" % version)
    with open(os.path.join(info, "INSTALLER"), "w") as f:
        f.write("sglang-double\n")
    lines = []
    for base, _, files in os.walk(dst):
        for name in sorted(files):
            lines.append(record_line(sp, os.path.join(base, name)))
    for name in ("METADATA", "INSTALLER"):
        lines.append(record_line(sp, os.path.join(info, name)))
    lines.append("%s,," % os.path.relpath(os.path.join(info, "RECORD"), sp))
    with open(os.path.join(info, "RECORD"), "w") as f:
        f.write("\n".join(lines) + "\n")
    install_standin(sp)
    return sp


STANDIN = os.path.join(HERE, "standin", "transformers")


def install_standin(sp):
    """Real SGLang comes with Transformers: a venv without one gets the stand-in (replaced when it is ours, a real
    one never touched)."""
    dst = os.path.join(sp, "transformers")
    if os.path.isdir(dst):
        if not _is_standin(dst):
            return  # a real Transformers: never touched
        shutil.rmtree(dst)
    shutil.copytree(STANDIN, dst, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))


def _is_standin(dst):
    try:
        with open(os.path.join(dst, "__init__.py")) as f:
            return "A stand-in for the Transformers" in f.read()
    except (IOError, OSError):
        return False


def installed_version(venv):
    sp = site_packages(venv)
    try:
        with open(os.path.join(sp, "sglang", "_installed.py")) as f:
            return f.read().split("'")[1]
    except (IOError, OSError, IndexError):
        return None


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--venv", required=True)
    p.add_argument("--version", default=SUPPORTED[-1], choices=SUPPORTED)
    args = p.parse_args(argv)
    if not os.path.exists(os.path.join(args.venv, "bin", "python")):
        p.error("no virtualenv at %s (bin/python missing)" % args.venv)
    if installed_version(args.venv) == args.version and not _differs(args.venv) \
            and os.path.isdir(os.path.join(site_packages(args.venv), "transformers")):
        print("unchanged: sglang double %s in %s" % (args.version, args.venv))
        return 0
    sp = install(args.venv, args.version)
    print("changed: sglang double %s installed into %s" % (args.version, sp))
    return 0


def _differs(venv):
    """True when the installed package files differ from this checkout's."""
    dst = os.path.join(site_packages(venv), "sglang")
    src = os.path.join(HERE, "sglang")
    for base, dirs, files in os.walk(src):
        dirs[:] = [d for d in dirs if d != "__pycache__"]
        for name in files:
            if name.endswith(".pyc"):
                continue
            a = os.path.join(base, name)
            b = os.path.join(dst, os.path.relpath(a, src))
            if not os.path.exists(b):
                return True
            with open(a, "rb") as fa, open(b, "rb") as fb:
                if fa.read() != fb.read():
                    return True
    return False


if __name__ == "__main__":
    sys.exit(main())
