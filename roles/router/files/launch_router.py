# -*- coding: utf-8 -*-
# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Start the gateway's launcher with the API key from $ROUTER_API_KEY, so the key is not on the command line
(ps, /proc/PID/cmdline) - only in the root-owned environment file and the process's own environment. Likewise the
worker URLs from $ROUTER_WORKER_URLS (a JSON list) when they carry credentials (router_worker_credentials: env_file).
$ROUTER_LAUNCH_MODULE names the launcher (smg.launch_router, or sglang_router.launch_router for fleets that pin
sglang-router); both have parse_router_args + launch_router.
Installed by roles/router; run as: python launch_router.py [launch_router flags]."""

import importlib
import json
import os
import sys


def main():
    launcher = importlib.import_module(os.environ.get("ROUTER_LAUNCH_MODULE") or "smg.launch_router")
    argv = sys.argv[1:]
    urls = os.environ.pop("ROUTER_WORKER_URLS", "")
    if urls:
        argv = ["--worker-urls"] + [str(u) for u in json.loads(urls)] + argv
    key = os.environ.pop("ROUTER_API_KEY", "")
    if key:
        argv += ["--api-key", key]
    launcher.launch_router(launcher.parse_router_args(argv))


if __name__ == "__main__":
    main()
