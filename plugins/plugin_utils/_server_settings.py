# -*- coding: utf-8 -*-
# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# llmserve: controller-only (planning: action plugins and filters import it, modules must not - tools/import_graph)
"""Every setting of roles/server, declared once: name, kind, default, choices, range, description, what it follows.

:data:`TABLE` is the one source. ``tools/settings/server_settings.py`` generates roles/server/defaults/main.yml and
the options of meta/argument_specs.yml from it (then ``tools/docs/role_docs.py`` the role page); server/view reads
:data:`SETTINGS`, :data:`DEFAULTS` and :data:`SGLANG_FOLLOWS` from it and server/plan validates kinds, choices and
ranges by walking it. A new setting is one :class:`Setting` here and a run of the tool (its meaning aside).

A setting's ``default`` is what it resolves to where nothing else decides it: a setting that ``follows`` roles/sglang
(its fact of this play, the key of its install record) takes its fact, else its record, else ``default``; one with a
``template`` (Jinja) keeps it in defaults/main.yml and ``default`` is what the template gives with the defaults.
"""

from __future__ import annotations

from ansible_collections.llmserve.sglang.plugins.module_utils.sglang import api
from ansible_collections.llmserve.sglang.plugins.module_utils.sglang import client

KINDS = ("str", "int", "float", "bool", "dict", "list", "path")  # path: a str the argument spec types as one
ROLE = "server"


class Setting(object):
    """One ``server_<name>`` setting (see the module's doc for the fields; roles/router's declaration shares it)."""

    __slots__ = ("name", "kind", "default", "description", "choices", "min", "max", "elements", "follows",
                 "template", "no_log", "optional", "null_is_value", "declared", "comment", "section", "options")

    def __init__(self, name, kind, default, description, choices=None, min=None, max=None,  # pylint: disable=redefined-builtin
                 elements=None, follows=None, template=None, no_log=False, optional=False, null_is_value=False,
                 declared=True, comment="", section=(), options=None):
        if kind not in KINDS:
            raise ValueError("%s: kind %r is none of %s" % (name, kind, ", ".join(KINDS)))
        self.name, self.kind, self.default, self.description = name, kind, default, tuple(description)
        self.choices = tuple(choices) if choices else None
        self.min, self.max, self.elements = min, max, elements
        # follows: (roles/sglang's fact, the key of its install record); template: Jinja kept in defaults/main.yml
        self.follows, self.template = follows, template
        self.no_log = no_log
        # optional: null means unset (no default is forced); null_is_value: null is a value of its own
        self.optional, self.null_is_value = optional, null_is_value
        # declared: stated in defaults/main.yml (False: only a comment there, set per host)
        self.declared, self.comment, self.section = declared, comment, tuple(section)
        self.options = options  # argument spec of a dict's keys


TABLE = (
    Setting('instance', 'str', 'default',
            section=('Instance: several per host are welcome (own port, own CUDA_VISIBLE_DEVICES).',),
            description=(
                'Instance name: unit C(sglang-<instance>.service), config C(/etc/sglang/<instance>/), log '
                'C(/var/log/sglang/<instance>.log). Several per host are fine (own port and GPUs).',
            )),
    Setting('state', 'str', 'started',
            choices=('started', 'stopped'),
            comment='started | stopped',
            description=(
                'C(stopped) stops and disables the instance.',
            )),
    Setting('model_path', 'str', '',
            section=('What to serve.',),
            description=(
                'Model directory on the host (C(--model-path)). Required when O(server_state=started).',
            )),
    Setting('tp', 'int', 1,
            min=1,
            description=(
                'Tensor-parallel size, total across the nodes of O(server_tp_group).',
            )),
    Setting('host', 'str', '127.0.0.1',
            description=(
                'Listen address (C(--host)).',
            )),
    Setting('port', 'int', client.DEFAULT_PORT,
            min=1,
            max=65535,
            description=(
                'HTTP port (C(--port)).',
            )),
    Setting('served_model_name', 'str', '',
            description=(
                'C(--served-model-name); empty = the model path.',
            )),
    Setting('speculative', 'dict',
            {'algorithm': 'EAGLE3',
             'draft_model_path': '',
             'num_steps': None,
             'eagle_topk': None,
             'num_draft_tokens': None,
             'adaptive': False},
            null_is_value=True,
            options={'algorithm': {'type': 'str',
                                   'default': 'EAGLE3',
                                   'description': 'C(--speculative-algorithm) - C(EAGLE3) or C(EAGLE) (the ones this '
                                                  'role renders); empty = off.'},
                     'draft_model_path': {'type': 'str',
                                          'default': '',
                                          'description': 'C(--speculative-draft-model-path) on the host.'},
                     'num_steps': {'type': 'int',
                                   'description': 'C(--speculative-num-steps); unset = SGLang picks per model.'},
                     'eagle_topk': {'type': 'int', 'description': 'C(--speculative-eagle-topk).'},
                     'num_draft_tokens': {'type': 'int', 'description': 'C(--speculative-num-draft-tokens).'},
                     'adaptive': {'type': 'bool',
                                  'default': False,
                                  'description': 'C(--speculative-adaptive) (SGLang 0.5.11+, topk 1 only).'},
                     'adaptive_config': {'type': 'raw',
                                         'description': 'C(--speculative-adaptive-config) (dict or JSON string).'},
                     'source': {'type': 'str',
                                'description': ['Where this setting came from, shown (never launched) in the READY '
                                                "line, C(status.yml) and the instance's recorded view "
                                                '(C(server_view.speculation)); C(playbooks/benchmark.yml -e '
                                                'benchmark_apply=true) writes its run and date here. Unset = the '
                                                'inventory.']}},
            description=(
                'Speculative decoding. Set C(algorithm) to an empty string to serve without speculation.',
            )),
    Setting('args', 'dict',
            {},
            comment='other launch_server flags: {flag: value}; true = bare flag',
            description=(
                'Other launch_server flags, C({flag: value}); C(true) = a bare flag; C(false) = C(--no-flag) where '
                "the version's parser has one, omitted where false is SGLang's own default, else refused. "
                'Version-specific names are translated or refused by the plan (plugins/module_utils/sglang/argv.py).',
            )),
    Setting('env', 'dict',
            {},
            comment='extra environment for the server process',
            description=(
                'Extra environment for the server process (written to C(server.env)).',
            )),
    Setting('api_key', 'str', '',
            no_log=True,
            comment='no_log; lands only in api-key.yaml (0640 root:server_group), read by SGLang via --config',
            description=(
                'API key; kept only in C(/etc/sglang/<instance>/api-key.yaml) (0640 root:O(server_group)), which '
                "SGLang reads through C(--config) inside the process, so the key is not in the server's argv (C(ps)).",
            )),
    Setting('cuda_visible_devices', 'list',
            [],
            elements='int',
            comment='e.g. [0, 1, 2, 3]; empty = all GPUs of the host',
            description=(
                'GPUs of this instance (C(CUDA_VISIBLE_DEVICES)); empty = all.',
            )),
    Setting('sglang_record', 'str', 'llmserve_sglang',
            section=(
                'SGLang installation (defaults follow roles/sglang when it ran in this play, else the record it left on the host:',
                "/etc/ansible/facts.d/<server_sglang_record>.fact, roles/sglang's sglang_local_fact).",
            ),
            description=(
                'Name of the install record roles/sglang wrote (its O(sglang_local_fact), read as '
                'C(ansible_facts.ansible_local.NAME)). When roles/sglang did not run in the same play, '
                'O(server_python), O(server_sglang_version), O(server_patches), O(server_patch_state) and '
                'O(server_base_env) default to what that record says.',
                'Set it to the other record to launch from a second install on the same host; empty ignores records.',
            )),
    Setting('python', 'str', '/opt/sglang/venv/bin/python',
            follows=('sglang_venv_python', 'venv_python'),
            description=(
                'Python of the SGLang venv. Default C(sglang_venv_python) from roles/sglang, else '
                'C(/opt/sglang/venv/bin/python).',
            )),
    Setting('sglang_version', 'str', '',
            optional=True,
            follows=('sglang_installed_version', 'installed_version'),
            comment='empty = ask the venv',
            description=(
                'SGLang version; default C(sglang_installed_version), else asked from the venv.',
            )),
    Setting('patches', 'list',
            [],
            elements='str',
            follows=('sglang_patches_applied', 'patches_applied'),
            description=(
                'Patch ids applied to SGLang (default C(sglang_patches_applied)).',
            )),
    Setting('patch_state', 'str', '',
            follows=('sglang_patch_state', 'patch_state'),
            description=(
                'Hash of the patch state (default C(sglang_patch_state)); a change restarts the server.',
            )),
    Setting('base_env', 'dict',
            {},
            follows=('sglang_server_env', 'server_env'),
            description=(
                'Base environment (default C(sglang_server_env) from roles/sglang).',
            )),
    Setting('service_manager', 'str', 'auto',
            choices=('auto', 'systemd', 'pidfile'),
            comment='auto | systemd | pidfile (hosts without systemd: supervised, pid file)',
            section=('Service.',),
            description=(
                'How the server runs. C(systemd) = a unit C(sglang-<instance>.service). C(pidfile) = hosts without '
                'systemd (GPU containers) - a detached supervisor '
                '(C(/usr/local/lib/llmserve-sglang/sglang_supervise.py), spec in '
                'C(/etc/sglang/<instance>/launch.json)) runs the server as O(server_user) in its own process group, '
                'with pid file C(/run/llmserve-sglang/<instance>/server.pid); the same start, stop, restart, log '
                'rotation, backup, rollback and multi-node peer watch, but no automatic restart after a crash and no '
                'unit hardening or limits. C(auto) = C(systemd) when systemd is PID 1 on the host, else C(pidfile).',
            )),
    Setting('user', 'str', 'sglang',
            description=(
                'Unprivileged user the server runs as.',
            )),
    Setting('group', 'str', 'sglang',
            description=(
                'Its group.',
            )),
    Setting('create_user', 'bool', True,
            description=(
                'Create the user and group.',
            )),
    Setting('home', 'str', '/var/lib/sglang',
            description=(
                'Home and working directory of the service user (caches land here).',
                'The compile caches persist under C(<server_home>/compile-cache/<instance>/<sglang version>/) - '
                'C(SGLANG_CACHE_DIR) and, under it, C(TRITON_CACHE_DIR), C(TORCHINDUCTOR_CACHE_DIR), '
                'C(CUDA_CACHE_PATH) and C(FLASHINFER_WORKSPACE_BASE) (what SGLang 0.5.20+ redirects there itself; set'
                " for every version), so a restart does not compile again and an upgrade keeps the old version's "
                'kernels for a rollback. A variable set in O(server_env) wins.',
            )),
    Setting('config_dir', 'str', '/etc/sglang',
            description=(
                'Configuration root.',
            )),
    Setting('log_dir', 'str', '/var/log/sglang',
            description=(
                'Log directory.',
            )),
    Setting('log_keep', 'int', 5,
            min=0,
            description=(
                'Logs of previous runs kept beside the current one.',
            )),
    Setting('restart_policy', 'str', 'on-failure',
            choices=('no', 'on-failure', 'on-abnormal', 'always'),
            comment='systemd Restart=; see docs/roles/server.md',
            description=(
                'systemd C(Restart=).',
            )),
    Setting('restart_sec', 'int', 30,
            min=0,
            description=(
                'systemd C(RestartSec=).',
            )),
    Setting('start_limit_burst', 'int', 3,
            min=1,
            description=(
                'systemd C(StartLimitBurst=).',
            )),
    Setting('start_limit_interval', 'int', 1800,
            min=0,
            description=(
                'systemd C(StartLimitIntervalSec=).',
            )),
    Setting('stop_timeout', 'int', 120,
            min=1,
            comment="a serving server's drain: SGLang's own is unbounded",
            description=(
                'Seconds a serving server gets to stop before SIGKILL (systemd C(TimeoutStopSec=); the pid-file '
                "supervisor's bound). On SIGTERM SGLang drains - it finishes the requests it is serving - and that "
                'drain has no bound of its own, so this setting is the real bound of a restart or a stop.',
                'A server that never became ready is stopped with O(server_stop_grace_unready) instead.',
            )),
    Setting('stop_grace_unready', 'int', 10,
            min=1,
            comment='a server that never became ready (nothing to drain), and its GPU leftovers',
            description=(
                'Seconds between SIGTERM and SIGKILL for a server that never became ready (a failed or stalled '
                'start). It has no request to drain, and a start-up frozen inside a CUDA or NCCL call never acts on '
                'SIGTERM, so it is not given the whole O(server_stop_timeout).',
                'Also the grace of what the instance left on the GPUs after any stop (a scheduler process that '
                "outlived its launcher, sglang#23627) - found among C(nvidia-smi)'s compute processes by the "
                "instance's cgroup, its C(LLMSERVE_SGLANG_INSTANCE) environment marker or the server's process group;"
                ' nothing else is touched.',
            )),
    Setting('unit_hardening', 'dict',
            {'NoNewPrivileges': 'yes',
             'ProtectSystem': 'full',
             'ProtectHome': 'read-only',
             'PrivateTmp': 'yes',
             'ProtectKernelTunables': 'yes',
             'ProtectKernelModules': 'yes',
             'ProtectControlGroups': 'yes',
             'RestrictSUIDSGID': 'yes',
             'LockPersonality': 'yes',
             'RestrictRealtime': 'yes'},
            description=(
                'Hardening settings of the [Service] section (GPU compatible: no PrivateDevices).',
            )),
    Setting('unit_limits', 'dict',
            {'LimitNOFILE': 1048576, 'LimitMEMLOCK': 'infinity'},
            description=(
                'Resource limits of the [Service] section.',
            )),
    Setting('unit_extra', 'dict',
            {},
            comment='more [Service] settings',
            description=(
                'More [Service] settings.',
            )),
    Setting('restart', 'str', 'changed',
            choices=('always', 'changed', 'never'),
            comment='always | changed | never',
            section=('Change handling.',),
            description=(
                'When a running server is restarted: always, when what it runs changed, or never.',
            )),
    Setting('preflight', 'bool', True,
            description=(
                'Run llmserve.sglang.server_preflight before stopping anything.',
            )),
    Setting('verify_model', 'bool', True,
            section=(
                'Check the model (and draft) with llmserve.sglang.model_verify on every start, before stopping anything, whoever',
                'put the weights there; false skips it (your explicit choice).',
            ),
            description=(
                'Run llmserve.sglang.model_verify on the local model (and draft) on every start, before stopping '
                'anything, with server_preflight - whoever put the weights there. It refuses a checkpoint that is not'
                ' whole (a shard the index names missing, short or with a bad header; the manifest re-checked where '
                'roles/models wrote one), an architecture the installed SGLang does not have (naming the nearest it '
                'has), missing or unreadable tokenizer files (unless C(tokenizer-path) or C(skip-tokenizer-init) is '
                'in server_args), an EAGLE-3 draft whose tensor shapes do not fit its config or the target, and any '
                'file the server user cannot read. A model on a network filesystem is named in the plan.',
                'It costs seconds against minutes of loading (benchmarks/models/verify_cost.py). Set it to false only'
                ' to skip the check on purpose.',
            )),
    Setting('model_check_unknown', 'str', 'refuse',
            choices=('refuse', 'warn'),
            section=(
                "What the model check does where it cannot judge servability (the installed Transformers' model types or SGLang's",
                'registry unreadable, an external model package): refuse (the default) | warn (let it pass, one warning line).',
            ),
            description=(
                'What the model check (server_verify_model) does where it cannot judge whether the installed SGLang '
                "can serve the model - the model types of the installed Transformers or SGLang's model registry could"
                ' not be read through server_python, or C(SGLANG_EXTERNAL_MODEL_PACKAGE) adds models it does not '
                'read.',
                'C(refuse) stops the deploy naming what could not be checked and why. C(warn) lets it pass with one '
                'warning line naming the same; the server may then fail at start-up instead.',
            )),
    Setting('adopt_dirs', 'list',
            [],
            elements='str',
            comment='existing directories (home, config, log) the role may chmod/chown',
            description=(
                'Existing directories the role may take over - C(chmod) and C(chown) to what it needs '
                "(C(server_home), C(server_config_dir), C(server_log_dir) and the instance's directories below them)."
                ' The role changes only directories it made itself (they hold its root-owned marker '
                'C(.llmserve-sglang-dir)); an existing directory that already has the owner, group and mode it needs '
                'is used as it is; any other is refused, naming it and this setting. Paths are normalised and their '
                'links resolved on the host first, and a system directory (C(/etc), C(/var/lib), C(/usr/local), ...) '
                "or one holding one is never the role's, adopted or not. The compile caches below C(server_home) are "
                'never adopted with another owner or a looser mode - remove them and the role makes them again.',
            )),
    Setting('lock_stale_after', 'int', 7200,
            min=60,
            comment="seconds after which another run's deploy lock counts as stale",
            description=(
                'One deploy of an instance at a time - a deploy that changes something holds the lock '
                'C(/run/llmserve-sglang/<instance>.deploy.lock), which names its controller host, user, '
                'ansible-playbook pid and since when; another run is refused with that. A lock whose holder ran on '
                'the same controller and is gone is taken over with a warning at once, any other after this many '
                'seconds (a run on another controller cannot be seen from here).',
                'At the end, a deploy that waited checks that the server that runs is still the one it started '
                '(recorded fingerprint and pid) before it releases the lock.',
            )),
    Setting('on_failure', 'str', 'rollback',
            choices=('rollback', 'stop'),
            comment='rollback (previous config back, waited on) | stop (for experiments)',
            description=(
                'What follows a start that did not become ready. Either way the server that failed is stopped (with '
                'O(server_stop_grace_unready)), its log kept, and the play fails with the diagnosis.',
                'C(rollback) puts the previous configuration (kept in C(<config_dir>/<instance>/previous/)) back, '
                'starts it and waits until it is ready again; the failure message says whether it came back. A first '
                'deploy has nothing to roll back to.',
                'C(stop) leaves the instance stopped - for experiments, where the old server should not come back.',
            )),
    Setting('wait', 'bool', True,
            section=('Waiting for readiness.',),
            description=(
                'Wait with llmserve.sglang.server_ready after a (re)start.',
            )),
    Setting('ready_chat_probe', 'bool', True,
            comment='READY also asks one 1-token chat completion when the model has a chat template',
            description=(
                'READY also sends one 1-token C(/v1/chat/completions) when the model has a chat template (or '
                'C(server_args) gives C(chat-template)); a 4xx/5xx there is a failed start of category '
                'C(chat_template).',
                'Set it to false for a completion-only endpoint.',
            )),
    Setting('ready_timeout', 'int', 1800,
            min=1,
            description=(
                'Overall readiness timeout (s).',
            )),
    Setting('stall_timeout', 'int', 600,
            min=1,
            description=(
                'Fail when the log shows no progress for this long (s).',
            )),
    Setting('ready_interval', 'float', 2,
            min=0.1,
            description=(
                'Poll interval (s).',
            )),
    Setting('stage_timeouts', 'dict',
            {},
            description=(
                'Per start-up stage timeouts, see llmserve.sglang.server_ready.',
            )),
    Setting('tail_lines', 'int', 30,
            min=0,
            description=(
                'Log lines shown on failure.',
            )),
    Setting('progress_interval', 'float', 15,
            min=1,
            comment='seconds between live progress lines',
            description=(
                'Seconds between live progress lines while waiting.',
            )),
    Setting('tp_group', 'str', '',
            section=('Multi-node tensor parallelism: the inventory group whose hosts form ONE replica.',),
            description=(
                'Inventory group whose hosts form ONE multi-node TP replica; node rank = position in the group.',
            )),
    Setting('dist_init_host', 'str', None,
            optional=True,
            declared=False,
            comment='set per host when the default address (facts: default_ipv4) is not the one nodes reach',
            description=(
                'Address other nodes reach this host on (used from the first node of the group).',
            )),
    Setting('dist_init_port', 'int', 50000,
            min=1,
            max=65530,
            description=(
                'C(--dist-init-addr) port (it and +1..+5 must be free).',
            )),
    Setting('peer_watch', 'bool', True,
            section=(
                "While the group starts, a small watcher on each node (sglang_peer_watch.py, systemd and pid-file hosts) stops the node's",
                "server as soon as a peer's server is gone, so the whole replica fails within seconds (it listens on this port).",
            ),
            description=(
                "Multi-node only. While the group starts, stop every node's server as soon as one node's server is "
                'gone, so the whole replica fails within seconds and names the node that failed '
                '(C(sglang_peer_watch.py), systemd and pid-file hosts alike).',
            )),
    Setting('peer_watch_port', 'int', 50009,
            optional=True,
            min=1,
            max=65535,
            template='{{ server_dist_init_port | int + 9 }}',
            description=(
                "TCP port the peer watch listens on, on the node's dist-init address, during the start-up wait only. "
                'Default O(server_dist_init_port) + 9.',
            )),
    Setting('health_status_check', 'bool', True,
            comment='SGLANG_ENABLE_HEALTH_ENDPOINT_GENERATION=0: balancers/monitoring probing /health cannot latch it',
            section=(
                'The health latch (docs/health.md): a failed /health or /health_generate check marks SGLang UnHealthy and /ready',
                'answers 503 until a later check passes. The gateway probes /ready (roles/router); only /health_generate generates.',
            ),
            description=(
                "Set C(SGLANG_ENABLE_HEALTH_ENDPOINT_GENERATION=0) in the server's environment (SGLang 0.5.9 and "
                "later, unless O(server_env) sets it), so C(/health) answers from the server's status without "
                'generating. A C(/health) or C(/health_generate) check that gets no output within '
                'C(SGLANG_HEALTH_CHECK_TIMEOUT) marks SGLang UnHealthy, and C(/ready) answers 503 until a later check'
                ' passes (the health latch). Keep it true where a load balancer, monitoring or an operator probes '
                'C(/health) (they cannot latch a busy server); set it false only where C(/health) must stay a '
                'generation and only one prober uses it. C(/health_generate) always generates. See docs/health.md.',
            )),
    Setting('health_check_timeout', 'int', 0,
            comment='SGLANG_HEALTH_CHECK_TIMEOUT in s; 0 = derived from the longest prefill (context length)',
            description=(
                'C(SGLANG_HEALTH_CHECK_TIMEOUT) (seconds) for the server, unless O(server_env) sets it. V(0) derives '
                'it from the longest prefill the instance admits (the C(context_length) of O(server_args), else 128k '
                "tokens, at a floor of 4000 prefill tokens/s, times 2; never under SGLang's 20 s), so the one "
                'liveness probe on C(/health_generate) does not fail while a long prompt is prefilled.',
            )),
    Setting('spec_check', 'str', 'warn',
            choices=('off', 'warn', 'fail'),
            comment='off | warn | fail',
            section=(
                'After READY with a speculative algorithm: does the draft fit the target? (tasks/spec_check.yml)',
            ),
            description=(
                'After READY with a speculative algorithm, send a few bounded greedy generations and compare the '
                'accept length (tokens per verify step) with O(server_spec_min_accept_length) (module '
                'M(llmserve.sglang.spec_check)). C(warn) reports a draft that does not fit its target (or a '
                'generation that stalls) and carries on; C(fail) fails the host; C(off) skips the check. Default '
                'C(warn) - the server is up and its answers are correct (speculation is lossless), only slower; a '
                'failure after READY would not bring the previous server back.',
            )),
    Setting('spec_min_accept_length', 'float', api.MIN_ACCEPT_LENGTH,
            min=1.0,
            comment='tokens per verify step; 1.0 = no draft token accepted',
            description=(
                'Floor for the average accept length. 1.0 means no draft token is ever accepted (a draft trained for '
                'another target, a tokenizer or vocabulary mismatch, wrong num_steps/eagle_topk); a matched EAGLE-3 '
                'draft gives about 2.5-4.',
            )),
    Setting('spec_check_requests', 'int', 3,
            min=0,
            description=(
                'Generations the accept-length check sends, one after the other.',
            )),
    Setting('spec_check_max_new_tokens', 'int', 48,
            min=1,
            description=(
                'Tokens per check generation.',
            )),
    Setting('spec_check_request_timeout', 'float', 30,
            min=1,
            comment='seconds per generation before it counts as a stall',
            description=(
                'Seconds one check generation may take before the check reports a stall (the check never waits '
                'longer).',
            )),
)

# Entry points besides main and the settings they take (the same declarations).
ENTRY_POINTS = {
    "stop": ("Stop (and disable) an instance",
             ("service_manager", "stop_timeout", "stop_grace_unready", "instance", "config_dir", "log_dir")),
    "status": ("Report an instance: unit state, readiness, model, uptime, EAGLE accept length",
               ("service_manager", "instance", "config_dir", "log_dir", "host", "port", "api_key")),
}
MAIN = {
    "short_description": "Launch SGLang as a checked systemd unit (or supervised with a pid file) and wait until it is ready",
    "description": [
        "One straight line: read the host (server_info), plan on the controller (server_plan: every setting checked, "
        "argv, files, fingerprint, action), preflight with the installed SGLang, write, start or restart only when "
        "what runs changed (server_instance), wait (server_ready), report.",
        "Every setting is checked for type and range before anything running is touched; each refusal names its fix.",
    ],
}

BY_NAME = dict((s.name, s) for s in TABLE)
# What the rest of the collection reads (server/view, server/plan), derived from TABLE.
SETTINGS = dict((s.name, s.kind) for s in TABLE)
DEFAULTS = dict((s.name, s.default) for s in TABLE)
OPTIONAL = tuple(s.name for s in TABLE if s.optional)
NULL_IS_VALUE = tuple(s.name for s in TABLE if s.null_is_value)
SGLANG_FOLLOWS = dict((s.name, s.follows) for s in TABLE if s.follows)
CHOICES = dict((s.name, s.choices) for s in TABLE if s.choices)
# (minimum, maximum or None) of the numbers
RANGES = dict((s.name, (s.min, s.max)) for s in TABLE if s.min is not None or s.max is not None)


def template(setting):
    """The Jinja of a setting in defaults/main.yml, or None (a plain value)."""
    if setting.follows:
        fact, key = setting.follows
        return "{{ %s | default(__server_sglang_record.%s | default(%s)) }}" % (fact, key, _jinja(setting.default))
    return setting.template


def _jinja(value):
    """A default as a Jinja literal ('text', [], {})."""
    if isinstance(value, str):
        return "'%s'" % value.replace("'", "\\'")
    return "[]" if isinstance(value, list) else "{}"
