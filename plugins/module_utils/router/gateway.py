# -*- coding: utf-8 -*-
# Note that this module util is **PRIVATE** to the collection. It can have breaking changes at any time.
# Do not use this from other collections or standalone plugins/modules!
# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The SGLang gateway in front of the workers: which package, which launcher, which flags the installed one takes.

Two packages are supported. ``smg`` (Shepherd Model Gateway, PyPI ``smg``, 1.13) is SGLang's maintained gateway;
``sglang-router`` stopped at 0.3.2 and is kept for fleets that pin it. Both expose the same Python launcher
(``<pkg>.launch_router``: ``parse_router_args`` + ``launch_router``) and the same worker API (``GET /workers``,
``POST /workers``, ``DELETE /workers/{id}``: smg marks the worker ``draining``, stops routing to it, and removes it a
few seconds later).

Flags change between releases, so the argv is not decided from a version table: the installed launcher's own
``--help`` (argparse) lists what it takes, and :func:`render` keeps to that. A flag the role sets by default is left
out, with a note, when the installed package lacks it (``--health-check-port`` is new in smg); a flag the user asked
for by name (``router_args``) that the package lacks is refused before anything is touched.
"""

from __future__ import annotations

import re

from urllib.parse import quote

# package -> (import name, launcher module). The launcher module's --help is argparse's.
PACKAGES = {
    "smg": ("smg", "smg.launch_router"),
    "sglang-router": ("sglang_router", "sglang_router.launch_router"),
}
DEFAULT_PACKAGE = "smg"

# An option line of argparse's help: two spaces, then "--flag", "--flag VALUE", "--flag {a,b}", "-x, --flag ...",
# aliases separated by ", ".
_OPTION_LINE = re.compile(r"^ {2}(-{1,2}[A-Za-z0-9][^ ].*?)(?: {2,}(?P<desc>.*))?$")


class GatewayError(ValueError):
    """Bad input: the message names the problem and the fix."""


class GatewayAPIError(RuntimeError):
    """The gateway did not answer its worker API as expected: the message says what was asked and what came back."""


def launcher_module(package):
    """'smg' -> 'smg.launch_router'; an unknown package is refused naming the supported ones."""
    if package not in PACKAGES:
        raise GatewayError("router_package %r is not supported: give one of %s" % (package, ", ".join(sorted(PACKAGES))))
    return PACKAGES[package][1]


def help_command(python, package):
    """argv that prints the installed launcher's help (read-only: argparse exits after printing)."""
    return [python, "-m", launcher_module(package), "--help"]


def parse_help(text):
    """argparse ``--help`` text -> ``{"--flag": {"value": bool, "choices": [..] or None, "aliases": [..]}}``.

    Only the options section is read (the usage block wraps options across lines and is skipped)."""
    options = {}
    in_usage = True
    for line in (text or "").splitlines():
        if in_usage:
            # The usage block ends at the first blank line.
            if not line.strip():
                in_usage = False
            continue
        m = _OPTION_LINE.match(line)
        if not m:
            continue
        spec = m.group(1).strip()
        names = []
        value = False
        choices = None
        for part in spec.split(", "):
            part = part.strip()
            if not part.startswith("--"):
                continue
            name, _sep, rest = part.partition(" ")
            name = name.split("=", 1)[0]
            names.append(name)
            rest = rest.strip()
            if rest:
                value = True
                if rest.startswith("{") and "}" in rest:
                    choices = [c for c in rest[1:rest.index("}")].split(",") if c]
        for name in names:
            options[name] = {"value": value, "choices": choices, "aliases": [n for n in names if n != name]}
    return options


def _flag(name):
    name = str(name).strip()
    return name if name.startswith("--") else "--" + name.replace("_", "-")


def _values(flag, value):
    """A setting -> argv words, as SGLang's flags are rendered (true = bare flag; false/None/'' = left out)."""
    if value is None or value is False or (isinstance(value, str) and value == ""):
        return []
    if value is True:
        return [flag]
    if isinstance(value, (list, tuple)):
        return [flag] + [str(v) for v in value] if value else []
    return [flag, str(value)]


def render(worker_urls, flags, optional=None, extra=None, options=None, package=DEFAULT_PACKAGE, version="",
           urls_in_env=False):
    """The launcher argv for the installed package.

    ``flags``: the role's settings every supported package has ({flag: value}); one the installed help lacks is an
    error (the role and the package disagree). ``optional``: the role's defaults that only newer packages take,
    left out with a note when this one lacks them. ``extra``: the user's ``router_args``: refused when the
    installed help does not list them. ``options``: :func:`parse_help` of the installed launcher; None = not
    known (check mode before the install): everything is rendered and nothing is checked.

    ``urls_in_env``: the worker URLs reach the launcher through its environment file (``ROUTER_WORKER_URLS``, where
    credentials may stay): no ``--worker-urls`` here.

    Returns ``{"argv": [...], "left_out": [{"flag", "why"}], "health_port": int or None}``."""
    what = "%s %s" % (package, version) if version else package
    urls = [str(u).rstrip("/") for u in worker_urls or []]
    if not urls and not urls_in_env:
        raise GatewayError("no worker URLs: set router_worker_urls or put the workers in router_worker_group")
    argv = [] if urls_in_env else ["--worker-urls"] + urls
    left_out = []
    problems = []
    rendered = {}

    def known(flag):
        return options is None or flag in options

    def check_choice(flag, value):
        spec = (options or {}).get(flag) or {}
        if spec.get("choices") and value not in (None, "", False) and str(value) not in spec["choices"]:
            problems.append("%s %s: %s takes one of %s" % (flag, value, what, ", ".join(spec["choices"])))

    for source, table in (("role", flags or {}), ("optional", optional or {}), ("router_args", extra or {})):
        for name, value in table.items():
            flag = _flag(name)
            if flag in ("--worker-urls", "--api-key"):
                problems.append("%s is set by the role (worker URLs from the inventory; the API key from "
                                "router_api_key, kept off the command line): remove it from router_args" % flag)
                continue
            if not known(flag):
                if source == "optional":
                    left_out.append({"flag": flag, "why": "%s has no %s (its --help lists none)" % (what, flag)})
                    rendered.pop(flag, None)
                    continue
                problems.append("%s (%s) is not an option of %s: its --help lists no %s; remove it, or pin a "
                                "router_package/router_version that has it" % (flag, "router_args" if source ==
                                                                               "router_args" else "role setting",
                                                                               what, flag))
                continue
            check_choice(flag, value)
            rendered[flag] = value
    if problems:
        raise GatewayError("; ".join(problems))
    for flag, value in rendered.items():
        argv += _values(flag, value)
    port = rendered.get("--health-check-port")
    return {"argv": argv, "left_out": left_out,
            "health_port": int(port) if port not in (None, "", False) else None}


# -- the worker API (GET/POST /workers, DELETE /workers/{id}) --------------------------------------------------------
# Carried by the one HTTP transport (sglang/client.Client(gateway_url, api_key).call): the gateway speaks JSON over
# HTTP with a Bearer key as SGLang does, so there is no second client to keep in step. GET /workers answers
# {"workers": [{"id", "url", "is_healthy", ...}], "total": N, ...}.
REMOVED_STATUSES = (200, 202, 204)
ADDED_STATUSES = (200, 201, 202)


def worker_url(url):
    """A worker URL as the gateway lists it: no trailing slash (http://10.0.0.1:30000/ -> http://10.0.0.1:30000)."""
    return str(url or "").strip().rstrip("/")


def _said(status, body, err):
    if err:
        return "no answer (%s)" % err
    return "HTTP %s %s" % (status, str(body if body is not None else "")[:300])


def list_workers(client, timeout=10.0):
    """The gateway's workers, as ``GET /workers`` lists them (a list of dicts); GatewayAPIError when it did not
    answer 200 with a ``workers`` list."""
    status, body, err = client.call("GET", "/workers", timeout=timeout)
    if err or status != 200 or not isinstance(body, dict) or not isinstance(body.get("workers"), list):
        raise GatewayAPIError("GET %s/workers: %s - is the gateway running there, and router_api_key the key it "
                              "was started with?" % (client.url, _said(status, body, err)))
    return [w for w in body["workers"] if isinstance(w, dict)]


def matching(workers, url):
    """The listed workers whose URL is ``url`` (both compared without a trailing slash)."""
    want = worker_url(url)
    return [w for w in workers if worker_url(w.get("url")) == want]


def remove_worker(client, worker, timeout=10.0):
    """``DELETE /workers/{id}``: the gateway stops routing to the worker (smg marks it draining) and drops it."""
    wid = worker.get("id")
    if wid in (None, ""):
        raise GatewayAPIError("GET %s/workers lists %s without an id: this gateway cannot remove it by DELETE "
                              "/workers/{id}" % (client.url, worker.get("url")))
    status, body, err = client.call("DELETE", "/workers/%s" % quote(str(wid), safe=""), timeout=timeout)
    if err or status not in REMOVED_STATUSES:
        raise GatewayAPIError("DELETE %s/workers/%s (%s): %s" % (client.url, wid, worker.get("url"),
                                                                 _said(status, body, err)))


def add_worker(client, url, timeout=10.0):
    """``POST /workers {"url": url}``: the gateway adds the worker and routes to it once its health check passes."""
    status, body, err = client.call("POST", "/workers", body={"url": worker_url(url)}, timeout=timeout)
    if err or status not in ADDED_STATUSES:
        raise GatewayAPIError("POST %s/workers %s: %s" % (client.url, worker_url(url), _said(status, body, err)))
