#!/usr/bin/env python3
# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Local fleet of test hosts: podman containers with systemd as PID 1 and sshd.

Run as root on the controller (Python 3.11, standard library only):

    fleet.py up [-n N] [--name NAME] [--json]   start (or reuse) N hosts, write .fleet/NAME/inventory.yml
    fleet.py down [--name NAME | --all]          remove the hosts of one fleet (or all fleets)
    fleet.py status [--name NAME]                list fleets, hosts, states and SSH ports
    fleet.py exec HOST -- CMD...                 run a command in a host (podman exec)
    fleet.py image                               build the base image if its recipe changed

Hosts are named NAME-gpu1..NAME-gpuN; containers carry the label llmserve.fleet=NAME. SSH ports are picked by
podman on 127.0.0.1, so fleets started at the same time never collide. See docs/test-fleet.md.
"""
from __future__ import annotations

import argparse
import concurrent.futures
import contextlib
import fcntl
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
FLEET_DIR = Path(os.environ.get("LLMSERVE_FLEET_DIR", REPO / ".fleet"))
CACHE = Path(os.environ.get("LLMSERVE_FLEET_CACHE", "/var/cache/llmserve-fleet"))
CA_BUNDLE = Path(os.environ.get("LLMSERVE_FLEET_CA", "/etc/ssl/certs/ca-certificates.crt"))
CONTAINERFILE = HERE / "Containerfile"

LABEL = "llmserve.fleet"
IMAGE_REPO = "localhost/llmserve-fleet"
BASE_REPO = "localhost/llmserve-fleet-base"
DEFAULT_MIRROR = "http://deb.debian.org/debian"
# The debootstrap half of the recipe; changing it changes the base hash.
BASE_RECIPE = {
    "suite": "bookworm",
    "variant": "minbase",
    "include": ["python3", "systemd", "systemd-sysv", "iproute2", "procps"],
}
# Explicit limits: without them container start fails here ("error setting rlimits").
RUN_LIMITS = ["--ulimit", "nofile=1024:20000", "--ulimit", "nproc=4096:4096"]
# crun fails on this kernel's hybrid cgroups; runc works.
RUNTIME = ["--runtime", "runc"]
NAME_RE = re.compile(r"^[a-z][a-z0-9-]{0,30}$")
MAX_HOSTS = 32
READY_TIMEOUT = float(os.environ.get("LLMSERVE_FLEET_TIMEOUT", "180"))
REQUIRED_TOOLS = {"podman": "podman", "runc": "runc", "debootstrap": "debootstrap",
                  "ssh": "openssh-client", "ssh-keygen": "openssh-client"}


class FleetError(Exception):
    """A one-line problem with its fix, printed without a traceback."""


def log(msg: str) -> None:
    print(f"fleet: {msg}", file=sys.stderr, flush=True)


# ---------------------------------------------------------------- pure logic (unit tested)

def host_names(name: str, count: int) -> list[str]:
    """Host names stay unique across fleets: every one is prefixed by its fleet name."""
    return [f"{name}-gpu{i}" for i in range(1, count + 1)]


def validate(name: str, count: int | None = None) -> None:
    if not NAME_RE.match(name):
        raise FleetError(f"invalid fleet name {name!r}: use lower-case letters, digits and '-', "
                         "starting with a letter, at most 31 characters")
    if count is not None and not 1 <= count <= MAX_HOSTS:
        raise FleetError(f"invalid host count {count}: use -n between 1 and {MAX_HOSTS}")


def debian_mirror(sources: dict[str, str]) -> str:
    """First Debian archive URI (not security, not a third-party repo) from apt's sources files."""
    for fname in sorted(sources):
        text = sources[fname]
        if fname.endswith(".sources"):
            for stanza in re.split(r"\n\s*\n", text):
                fields = dict(re.findall(r"^([A-Za-z-]+):\s*(.*)$", stanza, re.M))
                suites = fields.get("Suites", "").split()
                for uri in fields.get("URIs", "").split():
                    if "bookworm" in suites and uri.rstrip("/").endswith("/debian"):
                        return uri.rstrip("/")
        else:
            for line in text.splitlines():
                m = re.match(r"^\s*deb\s+(?:\[[^]]*\]\s+)?(\S+)\s+bookworm\s", line)
                if m and m.group(1).rstrip("/").endswith("/debian"):
                    return m.group(1).rstrip("/")
    return DEFAULT_MIRROR


def base_hash(recipe: dict = BASE_RECIPE) -> str:
    return hashlib.sha256(json.dumps(recipe, sort_keys=True).encode()).hexdigest()[:12]


def image_hash(base: str, containerfile: bytes, pubkey: bytes, ca: bytes) -> str:
    """The image tag: changes whenever anything baked into the image changes."""
    h = hashlib.sha256()
    for part in (base.encode(), containerfile, pubkey, ca):
        h.update(hashlib.sha256(part).digest())
    return h.hexdigest()[:12]


def render_inventory(name: str, hosts: list[tuple[str, int]], key: str) -> str:
    """YAML inventory: group gpu_hosts, one entry per host, reached on 127.0.0.1."""
    lines = [
        f"# Written by tools/fleet/fleet.py up --name {name}; rewritten on every up.",
        "all:",
        "  children:",
        "    gpu_hosts:",
        "      hosts:",
    ]
    for host, port in hosts:
        lines += [
            f"        {host}:",
            "          ansible_host: 127.0.0.1",
            f"          ansible_port: {int(port)}",
        ]
    lines += [
        "      vars:",
        "        ansible_user: root",
        f"        ansible_ssh_private_key_file: {json.dumps(key)}",
        "        ansible_python_interpreter: /usr/bin/python3",
        # Host keys are shared by all fleet hosts and ports are reused: never record them.
        "        ansible_ssh_common_args: -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null",
        f"        llmserve_fleet_name: {name}",
        "",
    ]
    return "\n".join(lines)


# ---------------------------------------------------------------- system helpers

def run(cmd: list[str], check: bool = True, quiet: bool = True, **kw) -> subprocess.CompletedProcess:
    res = subprocess.run(cmd, text=True, capture_output=quiet, **kw)
    if check and res.returncode != 0:
        detail = (res.stderr or res.stdout or "").strip().splitlines() if quiet else []
        raise FleetError(f"{' '.join(cmd[:4])} ... failed (rc={res.returncode}): "
                         f"{detail[-1] if detail else 'see output above'}")
    return res


def ensure_root_and_tools() -> None:
    if os.geteuid() != 0:
        raise FleetError("fleet.py needs root (rootful podman, debootstrap): run it with sudo")
    missing = sorted({pkg for tool, pkg in REQUIRED_TOOLS.items() if shutil.which(tool) is None})
    if missing:
        log(f"installing {' '.join(missing)} (apt-get)")
        env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
        res = subprocess.run(["apt-get", "install", "-y", *missing], env=env, text=True, capture_output=True)
        if res.returncode != 0:
            subprocess.run(["apt-get", "update"], env=env, capture_output=True)
            run(["apt-get", "install", "-y", *missing], env=env)


@contextlib.contextmanager
def locked(path: Path):
    """Serialise image builds between concurrent fleet.py runs (other fleets wait, then reuse)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def ensure_key() -> Path:
    key = CACHE / "id_ed25519"
    with locked(CACHE / "key.lock"):
        if not key.exists():
            CACHE.mkdir(parents=True, exist_ok=True)
            run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "llmserve-fleet", "-f", str(key)])
    key.chmod(0o600)
    return key


def image_exists(ref: str) -> bool:
    return run(["podman", "image", "exists", ref], check=False).returncode == 0


def read_sources() -> dict[str, str]:
    files = [Path("/etc/apt/sources.list"), *sorted(Path("/etc/apt/sources.list.d").glob("*"))]
    return {str(p): p.read_text(errors="replace") for p in files if p.is_file()}


def ensure_base() -> str:
    """Debootstrap rootfs (tarball cached under CACHE) imported as the base image."""
    bh = base_hash()
    ref = f"{BASE_REPO}:{bh}"
    if image_exists(ref):
        return ref
    tarball = CACHE / f"rootfs-{bh}.tar"
    if not tarball.exists():
        mirror = debian_mirror(read_sources())
        log(f"debootstrap {BASE_RECIPE['suite']} from {mirror} (about a minute)")
        t0 = time.monotonic()
        with tempfile.TemporaryDirectory(dir=CACHE, prefix="rootfs-") as tmp:
            rootfs = Path(tmp) / "rootfs"
            run(["debootstrap", f"--variant={BASE_RECIPE['variant']}",
                 f"--include={','.join(BASE_RECIPE['include'])}", BASE_RECIPE["suite"], str(rootfs), mirror])
            partial = Path(tmp) / "rootfs.tar"
            run(["tar", "-C", str(rootfs), "--numeric-owner", "-cf", str(partial), "."])
            partial.rename(tarball)
        log(f"debootstrap done in {time.monotonic() - t0:.0f}s, cached {tarball}")
    run(["podman", "import", str(tarball), ref])
    return ref


def current_image_ref(key: Path) -> str:
    ca = CA_BUNDLE.read_bytes() if CA_BUNDLE.is_file() else b""
    tag = image_hash(base_hash(), CONTAINERFILE.read_bytes(), key.with_suffix(".pub").read_bytes(), ca)
    return f"{IMAGE_REPO}:{tag}"


def ensure_image(key: Path) -> str:
    ref = current_image_ref(key)
    if image_exists(ref):
        return ref
    if not CA_BUNDLE.is_file():
        raise FleetError(f"CA bundle {CA_BUNDLE} not found: install ca-certificates or set LLMSERVE_FLEET_CA")
    with locked(CACHE / "build.lock"):
        if image_exists(ref):  # another fleet.py built it while we waited
            return ref
        t0 = time.monotonic()
        base = ensure_base()
        log(f"building {ref}")
        with tempfile.TemporaryDirectory(prefix="fleet-build-") as ctx:
            shutil.copy(CONTAINERFILE, Path(ctx) / "Containerfile")
            shutil.copy(CA_BUNDLE, Path(ctx) / "fleet-ca.crt")
            shutil.copy(key.with_suffix(".pub"), Path(ctx) / "authorized_keys")
            # Host network for the build: apt reaches the Debian registry exactly as the host does.
            run(["podman", "build", *RUNTIME, *RUN_LIMITS, "--network", "host", "--build-arg", f"BASE={base}",
                 "-t", ref, ctx])
        log(f"image built in {time.monotonic() - t0:.0f}s")
        # Drop images of older recipes that no container uses any more (podman refuses those in use).
        for old in run(["podman", "images", "--format", "{{.Repository}}:{{.Tag}}", IMAGE_REPO],
                       check=False).stdout.split():
            if old != ref:
                run(["podman", "rmi", old], check=False)
    return ref


# ---------------------------------------------------------------- containers

def containers(name: str | None) -> list[dict]:
    """Containers of one fleet (or of every fleet): name, fleet, state."""
    flt = f"label={LABEL}={name}" if name else f"label={LABEL}"
    out = run(["podman", "ps", "-a", "--filter", flt, "--format", "json"]).stdout
    result = []
    for c in json.loads(out or "[]"):
        labels = c.get("Labels") or {}
        result.append({"name": c["Names"][0], "fleet": labels.get(LABEL, "?"),
                       "state": c.get("State", "?"), "image": c.get("Image", "?")})
    return sorted(result, key=lambda c: (c["fleet"], len(c["name"]), c["name"]))


def ssh_port(host: str) -> int:
    out = run(["podman", "port", host, "22/tcp"]).stdout.strip().splitlines()
    if not out:
        raise FleetError(f"{host} publishes no SSH port: remove it with 'fleet.py down' and run up again")
    return int(out[0].rsplit(":", 1)[1])


def start_host(fleet: str, host: str, image: str) -> None:
    run(["podman", "run", "-d", "--name", host, "--hostname", host, "--label", f"{LABEL}={fleet}",
         *RUNTIME, *RUN_LIMITS, "--systemd=always",
         # Roles' units use PrivateTmp/ProtectSystem etc.; systemd needs CAP_SYS_ADMIN to set up those namespaces.
         "--cap-add", "SYS_ADMIN",
         # Podman picks a free port itself, so concurrent fleets never race for one.
         "-p", "127.0.0.1::22", image, "/sbin/init"])


def ssh_cmd(key: Path, port: int) -> list[str]:
    return ["ssh", "-i", str(key), "-p", str(port), "-o", "BatchMode=yes", "-o", "StrictHostKeyChecking=no",
            "-o", "UserKnownHostsFile=/dev/null", "-o", "ConnectTimeout=5", "-o", "LogLevel=ERROR", "root@127.0.0.1"]


def wait_ready(host: str, key: Path, deadline: float) -> dict:
    """Wait for systemd to finish booting and for sshd to accept our key; report a degraded boot."""
    state = "unknown"
    while time.monotonic() < deadline:
        res = run(["podman", "exec", host, "systemctl", "is-system-running"], check=False)
        state = res.stdout.strip() or "unknown"
        if state in ("running", "degraded"):
            break
        if state in ("maintenance", "stopping", "offline"):
            raise FleetError(f"{host}: systemd is {state}: inspect with 'fleet.py exec {host} -- journalctl -b'")
        time.sleep(0.5)
    else:
        raise FleetError(f"{host}: systemd still {state} after {READY_TIMEOUT:.0f}s: "
                         f"inspect with 'fleet.py exec {host} -- systemctl list-jobs'")
    failed = []
    if state == "degraded":
        failed = run(["podman", "exec", host, "systemctl", "--failed", "--plain", "--no-legend"],
                     check=False).stdout.split("\n")
        failed = [ln.split()[0] for ln in failed if ln.strip()]
    port = ssh_port(host)
    while True:
        res = run([*ssh_cmd(key, port), "true"], check=False)
        if res.returncode == 0:
            break
        if time.monotonic() > deadline:
            raise FleetError(f"{host}: sshd on 127.0.0.1:{port} refuses the fleet key: "
                             f"{res.stderr.strip() or 'no answer'}; check 'fleet.py exec {host} -- systemctl status ssh'")
        time.sleep(0.5)
    return {"host": host, "port": port, "state": state, "failed_units": failed}


def parallel(fn, items):
    """Run fn over items in threads; raise the first error after all have finished."""
    if not items:
        return []
    with concurrent.futures.ThreadPoolExecutor(max_workers=min(len(items), 16)) as pool:
        futures = [pool.submit(fn, item) for item in items]
        results, errors = [], []
        for fut in futures:
            try:
                results.append(fut.result())
            except FleetError as exc:
                errors.append(str(exc))
    if errors:
        raise FleetError("; ".join(errors))
    return results


def cmd_up(name: str, count: int, as_json: bool) -> int:
    validate(name, count)
    t0 = time.monotonic()
    ensure_root_and_tools()
    key = ensure_key()
    image = ensure_image(key)
    wanted = host_names(name, count)
    existing = {c["name"]: c for c in containers(name)}
    extra = [h for h in existing if h not in wanted]
    if extra:
        log(f"removing {len(extra)} host(s) beyond -n {count}: {' '.join(extra)}")
        run(["podman", "rm", "-f", "-t", "0", *extra])
    stale = [h for h in wanted if h in existing and existing[h]["image"] != image]
    if stale:
        log(f"note: {' '.join(stale)} run an older image; 'fleet.py down --name {name}' then up to rebuild them")
    stopped = [h for h in wanted if h in existing and existing[h]["state"] != "running"]
    if stopped:
        run(["podman", "start", *stopped])
    new = [h for h in wanted if h not in existing]
    if new:
        log(f"starting {len(new)} host(s): {' '.join(new)}")
    parallel(lambda h: start_host(name, h, image), new)
    deadline = time.monotonic() + READY_TIMEOUT
    ready = parallel(lambda h: wait_ready(h, key, deadline), wanted)
    for r in ready:
        if r["state"] == "degraded":
            log(f"warning: {r['host']} booted degraded, failed units: {' '.join(r['failed_units']) or '?'}")
    fleet_dir = FLEET_DIR / name
    fleet_dir.mkdir(parents=True, exist_ok=True)
    inventory = fleet_dir / "inventory.yml"
    inventory.write_text(render_inventory(name, [(r["host"], r["port"]) for r in ready], str(key)))
    log(f"{count} host(s) ready in {time.monotonic() - t0:.1f}s ({len(new)} new, "
        f"{len(wanted) - len(new)} reused)")
    if as_json:
        print(json.dumps({"name": name, "inventory": str(inventory), "key": str(key), "image": image,
                          "hosts": ready}))
    else:
        print(inventory)
    return 0


def cmd_down(name: str | None, all_fleets: bool) -> int:
    if not all_fleets:
        validate(name)
    ensure_root_and_tools()
    t0 = time.monotonic()
    victims = containers(None if all_fleets else name)
    if victims:
        run(["podman", "rm", "-f", "-t", "0", *[c["name"] for c in victims]])
    fleets = {c["fleet"] for c in victims} | (set() if all_fleets else {name})
    if all_fleets and FLEET_DIR.is_dir():
        fleets |= {p.name for p in FLEET_DIR.iterdir() if p.is_dir()}
    for fleet in fleets:
        if NAME_RE.match(fleet):
            shutil.rmtree(FLEET_DIR / fleet, ignore_errors=True)
    left = containers(None if all_fleets else name)
    if left:
        raise FleetError(f"still present: {' '.join(c['name'] for c in left)}; remove them with podman rm -f")
    log(f"removed {len(victims)} host(s) in {time.monotonic() - t0:.1f}s")
    return 0


def cmd_status(name: str | None) -> int:
    if name:
        validate(name)
    rows = containers(name)
    if not rows:
        print("no fleet hosts" + (f" in fleet {name}" if name else ""))
        return 0
    print(f"{'FLEET':<20} {'HOST':<28} {'STATE':<10} SSH")
    for c in rows:
        port = "-"
        if c["state"] == "running":
            with contextlib.suppress(FleetError, ValueError):
                port = f"127.0.0.1:{ssh_port(c['name'])}"
        print(f"{c['fleet']:<20} {c['name']:<28} {c['state']:<10} {port}")
    return 0


def cmd_exec(host: str, command: list[str]) -> int:
    if command and command[0] == "--":
        command = command[1:]
    if not command:
        raise FleetError("nothing to run: use 'fleet.py exec HOST -- CMD...'")
    if host not in {c["name"] for c in containers(None)}:
        raise FleetError(f"{host} is not a fleet host: see 'fleet.py status'")
    tty = ["-it"] if sys.stdin.isatty() and sys.stdout.isatty() else ["-i"]
    return subprocess.run(["podman", "exec", *tty, host, *command]).returncode


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="fleet.py", description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("up", help="start or reuse N hosts and write .fleet/NAME/inventory.yml")
    p.add_argument("-n", "--count", type=int, default=2)
    p.add_argument("--name", default="fleet")
    p.add_argument("--json", action="store_true", help="print a JSON summary instead of the inventory path")
    p = sub.add_parser("down", help="remove a fleet's hosts")
    g = p.add_mutually_exclusive_group()
    g.add_argument("--name", default="fleet")
    g.add_argument("--all", action="store_true", help="remove the hosts of every fleet")
    p = sub.add_parser("status", help="list fleet hosts")
    p.add_argument("--name", default=None)
    p = sub.add_parser("exec", help="run a command in a host: exec HOST -- CMD...")
    p.add_argument("host")
    p.add_argument("command", nargs=argparse.REMAINDER)
    sub.add_parser("image", help="build the image if its recipe changed, print its name")
    args = parser.parse_args(argv)
    try:
        if args.cmd == "up":
            return cmd_up(args.name, args.count, args.json)
        if args.cmd == "down":
            return cmd_down(args.name, args.all)
        if args.cmd == "status":
            return cmd_status(args.name)
        if args.cmd == "exec":
            return cmd_exec(args.host, args.command)
        ensure_root_and_tools()
        print(ensure_image(ensure_key()))
        return 0
    except FleetError as exc:
        print(f"fleet: error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
