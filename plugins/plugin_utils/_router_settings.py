# -*- coding: utf-8 -*-
# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# llmserve: controller-only (planning: action plugins and filters import it, modules must not - tools/import_graph)
"""Every setting of roles/router, declared once: name, kind, default, choices, description, and where it goes.

:data:`TABLE` is the one source, as plugin_utils/_server_settings.TABLE is roles/server's (the same
:class:`Setting`, with three fields of the router's). ``tools/settings/server_settings.py --role router`` generates
roles/router/defaults/main.yml and meta/argument_specs.yml from it (then ``tools/docs/role_docs.py`` the role page);
the router_plan action templates :data:`SETTINGS`, _router_plan checks them (its choices are :data:`CHOICES`), and
_router_view builds the gateway's view from them: its flag table is every ``argv`` setting in :data:`TABLE`'s order
(the order of the gateway's command line). A new setting is one :class:`Setting` here and a run of the tool; a new
gateway flag is one with ``argv='flag'`` (every supported package takes it) or ``argv='newer'`` (left out, with a
note, where the installed one lacks it; 0 = off).
"""

from __future__ import annotations

from ansible_collections.llmserve.sglang.plugins.module_utils.router.gateway import DEFAULT_PACKAGE, PACKAGES
from ansible_collections.llmserve.sglang.plugins.module_utils.sglang import gates
from ansible_collections.llmserve.sglang.plugins.plugin_utils import _server_settings

ROLE = "router"
ARGV = (None, "flag", "newer")


class Setting(_server_settings.Setting):
    """One ``router_<name>`` setting: roles/server's fields, and ``argv`` (None, or the gateway flag ``--<name with
    dashes>``: ``flag`` every supported package takes, ``newer`` only newer ones, left out where 0), ``required``
    (an entry point's option that must be given) and ``main`` (False: only the drain/restore entry points take it)."""

    __slots__ = ("argv", "required", "main")

    def __init__(self, name, kind, default, description, argv=None, required=False, main=True, **kw):
        if argv not in ARGV:
            raise ValueError("router_%s: argv %r is none of %s" % (name, argv, ARGV))
        super().__init__(name, kind, default, description, **kw)
        self.argv, self.required, self.main = argv, required, main


TABLE = (
    Setting('state', 'str', 'started',
            choices=('started', 'stopped'),
            comment='started | stopped',
            description=(
                'C(started) installs, configures and runs the router; C(stopped) stops and disables it.',
            )),
    Setting('package', 'str', DEFAULT_PACKAGE,
            section=("Package: smg (Shepherd Model Gateway, SGLang's maintained gateway) from PyPI, a compiled binary "
                     "for any",
                     'x86_64/aarch64 CPU. sglang-router (frozen at 0.3.2) stays supported for fleets that pin it:',
                     'router_package: sglang-router, router_version: "0.3.2".'),
            choices=tuple(PACKAGES),
            comment='smg | sglang-router',
            description=(
                "C(smg) (Shepherd Model Gateway), SGLang's maintained gateway; C(sglang-router) (frozen at 0.3.2) for"
                ' fleets that pin it. Both start through C(<package>.launch_router); every flag is checked against '
                "the installed launcher's own C(--help) (module C(router_argv)) before the unit is written.",
            )),
    Setting('version', 'str', '1.13.0',
            description=(
                'Version of O(router_package) from PyPI (pinned).',
            )),
    Setting('venv', 'path', '/opt/sglang-router/venv-' + DEFAULT_PACKAGE,
            template='/opt/sglang-router/venv-{{ router_package }}',
            comment='one venv per package: a switch never mixes them',
            description=(
                'Virtualenv the gateway is installed into; one per package, so a switch never mixes the two: '
                'C(/opt/sglang-router/venv-<router_package>).',
            )),
    Setting('python', 'str', 'python3',
            comment='interpreter that creates the venv',
            description=(
                'Interpreter that creates the venv.',
            )),
    Setting('install_os_packages', 'bool', True,
            comment='python3-venv and friends from the OS',
            description=(
                'Install python3-venv/pip from the OS first.',
            )),
    Setting('pip_index_url', 'str', '',
            description=(
                "pip index URL (PIP_INDEX_URL); empty = pip's default.",
            )),
    Setting('pip_extra_index_url', 'str', '',
            description=(
                'Extra pip index URL.',
            )),
    Setting('pip_trusted_hosts', 'list', [],
            elements='str',
            description=('pip trusted hosts.',)),
    Setting('ca_bundle', 'str', '',
            comment='CA bundle path on the target for pip (corporate proxy); "" = system',
            description=(
                'CA bundle on the target for pip (PIP_CERT), for TLS-intercepting proxies; empty = system store.',
            )),
    Setting('proxy_env', 'dict', {},
            comment='e.g. {https_proxy: http://proxy:3128, no_proxy: localhost}',
            description=('Proxy environment for pip (https_proxy, no_proxy, ...).',)),
    Setting('user', 'str', 'sglang-router',
            section=('Service.',),
            description=(
                'Service user.',
            )),
    Setting('group', 'str', 'sglang-router',
            description=(
                'Service group.',
            )),
    Setting('service_name', 'str', 'sglang-router',
            description=(
                'systemd unit name (without .service).',
            )),
    Setting('config_dir', 'path', '/etc/sglang-router',
            description=(
                'Folder of the environment file.',
            )),
    Setting('stop_timeout', 'int', 200,
            comment='> router_shutdown_grace_period_secs: in-flight requests finish',
            description=(
                'TimeoutStopSec; keep it above router_shutdown_grace_period_secs.',
            )),
    Setting('unit_hardening', 'dict',
            {'NoNewPrivileges': 'yes', 'ProtectSystem': 'strict', 'ProtectHome': 'yes', 'PrivateTmp': 'yes',
             'PrivateDevices': 'yes', 'ProtectProc': 'invisible', 'ProtectKernelTunables': 'yes',
             'ProtectKernelModules': 'yes', 'ProtectKernelLogs': 'yes', 'ProtectControlGroups': 'yes',
             'ProtectClock': 'yes', 'ProtectHostname': 'yes', 'RestrictSUIDSGID': 'yes', 'RestrictNamespaces': 'yes',
             'RestrictRealtime': 'yes', 'LockPersonality': 'yes', 'CapabilityBoundingSet': '',
             'AmbientCapabilities': '', 'RestrictAddressFamilies': 'AF_INET AF_INET6 AF_UNIX',
             'SystemCallArchitectures': 'native', 'UMask': '0077'},
            description=(
                'systemd sandboxing settings of the unit.',
            )),
    Setting('unit_limits', 'dict', {'LimitNOFILE': 65536},
            description=('systemd resource limits of the unit.',)),
    Setting('unit_extra', 'dict', {},
            description=('More [Service] settings.',)),
    Setting('host', 'str', '0.0.0.0',
            section=('What the gateway runs: its flags, in the order of its command line (router_view.flags). Every '
                     'flag is',
                     "checked against the installed launcher's own --help (module router_argv)."),
            argv='flag',
            description=(
                '--host the router binds.',
            )),
    Setting('port', 'int', 30000,
            argv='flag',
            description=(
                '--port the router listens on.',
            )),
    Setting('policy', 'str', 'cache_aware',
            argv='flag',
            choices=('random', 'round_robin', 'cache_aware', 'power_of_two', 'manual'),
            comment='random | round_robin | cache_aware | power_of_two',
            description=(
                '--policy.',
            )),
    Setting('prometheus_host', 'str', '127.0.0.1',
            argv='flag',
            description=(
                '--prometheus-host.',
            )),
    Setting('prometheus_port', 'int', 29000,
            argv='flag',
            description=(
                '--prometheus-port.',
            )),
    Setting('log_level', 'str', 'info',
            argv='flag',
            choices=('debug', 'info', 'warn', 'error'),
            comment='debug | info | warn | error',
            description=(
                '--log-level.',
            )),
    Setting('health_check_endpoint', 'str', 'auto',
            argv='flag',
            comment="auto = /ready where every worker's SGLang has it (0.5.20+), else /health",
            description=(
                '--health-check-endpoint on each worker. C(auto) = C(/ready) when the SGLang of every worker host of '
                "O(router_worker_group) is known (planned by roles/server in this run, or roles/sglang's install "
                'record) and 0.5.20 or newer - C(/ready) answers 503 while a server starts or drains - else '
                'C(/health). With O(router_worker_urls) the versions are unknown, so C(auto) means C(/health).',
            )),
    Setting('health_check_interval_secs', 'int', 5,
            argv='flag',
            comment="the packages' own default is 60 s x 3 failures: 3 min to drop a dead worker",
            description=(
                "--health-check-interval-secs. The packages' own default (60 s, 3 failures) takes about 3 minutes to "
                'stop routing to a dead or paused worker.',
            )),
    Setting('health_check_timeout_secs', 'int', 3,
            argv='flag',
            min=gates.LIMITS['min_probe_timeout'],
            comment='>= 2 (sglang/gates.MIN_PROBE_TIMEOUT_S): SGLang takes up to 1 s to answer',
            description=(
                '--health-check-timeout-secs, at least 2 (the floor of every SGLang probe, C(MIN_PROBE_TIMEOUT_S) in '
                'module_utils/sglang/gates.py) - SGLang takes up to its own 1 s to answer a health probe, so a 1 s '
                'timeout marks busy workers unhealthy now and then (modelplane#206).',
            )),
    Setting('health_failure_threshold', 'int', 2,
            argv='flag',
            description=(
                '--health-failure-threshold.',
            )),
    Setting('health_success_threshold', 'int', 2,
            argv='flag',
            description=(
                '--health-success-threshold.',
            )),
    Setting('retry_max_retries', 'int', 5,
            argv='flag',
            description=(
                '--retry-max-retries.',
            )),
    Setting('retry_initial_backoff_ms', 'int', 50,
            argv='flag',
            description=(
                '--retry-initial-backoff-ms.',
            )),
    Setting('retry_max_backoff_ms', 'int', 30000,
            argv='flag',
            description=(
                '--retry-max-backoff-ms.',
            )),
    Setting('request_timeout_secs', 'int', 1800,
            argv='flag',
            description=(
                '--request-timeout-secs.',
            )),
    Setting('shutdown_grace_period_secs', 'int', 180,
            argv='flag',
            description=(
                '--shutdown-grace-period-secs.',
            )),
    Setting('worker_startup_timeout_secs', 'int', 1800,
            argv='flag',
            description=(
                '--worker-startup-timeout-secs.',
            )),
    Setting('worker_startup_check_interval', 'int', 10,
            argv='flag',
            description=(
                '--worker-startup-check-interval.',
            )),
    Setting('health_check_port', 'int', 30081,
            argv='newer',
            comment="smg: the router's own /liveness /readiness on a dedicated listener and\n"
                    'runtime (not starved by traffic); 0 = off; left out where unsupported',
            description=(
                "--health-check-port (smg) - the gateway's own C(/liveness), C(/readiness) and C(/health) on a "
                'dedicated listener with its own runtime, so probes are not starved by traffic; the role waits on '
                'C(/readiness) there. Left out, with a note, where the installed package lacks the flag '
                '(sglang-router). 0 = off.',
                'Must differ from O(router_port) and O(router_prometheus_port).',
            )),
    Setting('args', 'dict', {},
            comment='other launch_router flags: {flag: value}; true = bare flag; list = several values',
            description=(
                'Other launch_router flags {flag: value}; true = bare flag, a list = several values.',
                "Refused before anything is written when the installed launcher's C(--help) does not list the flag, "
                'or the value is outside its choices.')),
    Setting('api_key', 'str', '',
            no_log=True,
            comment='no_log; clients and /workers then need "Authorization: Bearer KEY"',
            description=(
                '--api-key: clients and the /workers API then need C(Authorization: Bearer KEY); the router also '
                'sends it to workers. Kept in a 0600 environment file (root, read by systemd) and handed to the '
                'router inside the process (C(launch_router.py)), never on its command line.',
            )),
    Setting('worker_urls', 'list', [],
            section=('Workers: explicit URLs, or one per replica from an inventory group (its rank-0 node; see',
                     'docs/roles/router.md).'),
            elements='str',
            description=('Worker URLs; empty = one per replica of router_worker_group.',)),
    Setting('worker_group', 'str', 'gpu_hosts',
            description=(
                'Inventory group of the SGLang hosts; the rank-0 node of each replica (first host of its '
                'server_tp_group, or every host without one) becomes a worker.',
            )),
    Setting('worker_scheme', 'str', 'http',
            description=(
                'Scheme of worker URLs built from the inventory.',
            )),
    Setting('worker_port', 'int', None,
            optional=True,
            comment="used when a host sets no server_port; null: roles/server's default",
            description=(
                "Worker port when a host sets no server_port; null = roles/server's default (its instance view).",
            )),
    Setting('expected_workers', 'int', None,
            optional=True,
            comment='null = every worker URL',
            description=(
                'Healthy workers /readiness must report before the role returns; null = all.',
            )),
    Setting('worker_credentials', 'str', 'refuse',
            choices=('refuse', 'env_file'),
            comment='refuse: a URL with user:password@ fails the plan; env_file: the URLs go to\n'
                    'the 0600 router.env only (never the unit file or the argv)',
            description=(
                'Where credentials in a worker URL (C(http://user:password@host:port)) may go. C(refuse) fails the '
                'plan, naming the URL with its password masked. C(env_file) hands every worker URL to the gateway '
                'through the 0600 root environment file (C(ROUTER_WORKER_URLS), read by C(launch_router.py) inside '
                "the process) - never the 0644 unit file, the command line or the plan's output (which shows the "
                'password as C(***)).',
            )),
    Setting('wait', 'bool', True,
            section=('Waiting for readiness: /readiness must report router_expected_workers healthy workers.',),
            description=(
                'Wait until /readiness reports router_expected_workers healthy workers.',
            )),
    Setting('ready_timeout', 'int', 600,
            description=(
                'Seconds to wait for readiness.',
            )),
    Setting('ready_interval', 'int', 2,
            description=(
                'Seconds between readiness polls.',
            )),
    Setting('drain_worker_url', 'str', '',
            section=('Drain / restore (tasks_from: drain | restore), around a worker restart.',),
            required=True,
            main=False,
            description=(
                'Worker URL (as the router lists it) to drain or restore.',
            )),
    Setting('drain_timeout', 'int', 600,
            main=False,
            comment='how long in-flight requests of the drained worker may take',
            description=(
                "Seconds the drained worker's in-flight requests may take.",
            )),
    Setting('gateway_host', 'str', '',
            main=False,
            comment='inventory host that runs the router; "" = the current host',
            description=(
                'Inventory host that runs the router (drain/restore are delegated to it); empty = current host.',
            )),
    Setting('drain_metrics', 'bool', True,
            main=False,
            comment="wait for sglang:num_running_reqs == 0 on the worker's /metrics when it has one",
            description=(
                "Wait for sglang:num_running_reqs == 0 on the worker's /metrics (when it serves one).",
            )),
)

# Entry points besides main and the settings they take (the same declarations).
ENTRY_POINTS = {
    "drain": ("Remove one worker from the router and wait for its in-flight requests",
              ("host", "port", "api_key", "gateway_host", "drain_worker_url", "ready_timeout", "ready_interval",
               "drain_timeout", "drain_metrics")),
    "restore": ("Add a drained worker back and wait until the router reports it healthy",
                ("host", "port", "api_key", "gateway_host", "drain_worker_url", "ready_timeout", "ready_interval")),
}
MAIN = {
    "short_description": "Install SGLang's gateway (smg, or a pinned sglang-router), run it under systemd, wait for "
                         "every replica",
}

BY_NAME = dict((s.name, s) for s in TABLE)
# What the rest of the collection reads, derived from TABLE.
SETTINGS = tuple(s.name for s in TABLE if s.main)  # what main takes (the router_plan action templates them)
DEFAULTS = dict((s.name, s.default) for s in TABLE)
CHOICES = dict((s.name, s.choices) for s in TABLE if s.choices)
FLAGS = tuple(s.name for s in TABLE if s.argv == "flag")  # in the order of the gateway's command line
NEWER_FLAGS = tuple(s.name for s in TABLE if s.argv == "newer")


def template(setting):
    """The Jinja of a setting in defaults/main.yml, or None (a plain value)."""
    return setting.template


def flag(name):
    """The gateway's flag of a setting (``health_check_port`` -> ``health-check-port``)."""
    return name.replace("_", "-")
