# -*- coding: utf-8 -*-
# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Start sglang_router.launch_router with the API key from $ROUTER_API_KEY, so the key is not on the command line
(ps, /proc/PID/cmdline) - only in the root-owned environment file and the process's own environment.
Installed by roles/router; run as: python launch_router.py [launch_router flags]."""

import os
import sys

from sglang_router.launch_router import launch_router, parse_router_args


def main():
    argv = sys.argv[1:]
    key = os.environ.pop("ROUTER_API_KEY", "")
    if key:
        argv += ["--api-key", key]
    launch_router(parse_router_args(argv))


if __name__ == "__main__":
    main()
