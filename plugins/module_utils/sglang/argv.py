# -*- coding: utf-8 -*-
# Note that this module util is **PRIVATE** to the collection. It can have breaking changes at any time.
# Do not use this from other collections or standalone plugins/modules!
# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Turn structured server settings into an SGLang ``launch_server`` argv.

Pure and deterministic (no I/O): plugin_utils/_server_plan.py renders roles/server's command line with :func:`render` after
validating the settings (an empty model path and a tp that does not divide over the nodes are refused there,
once); the ``sglang_argv`` filter exposes the same renderer. Flag names per version (see ``VERIFIED_VERSIONS``)
were read from the PyPI wheels (``sglang/srt/server_args.py``, from 0.5.23 also
``sglang/srt/arg_groups/fields/*.py``) and are checked against the real parsers by ``tests/real_parser``.
"""

from __future__ import annotations

import json
import re

from ansible_collections.llmserve.sglang.plugins.module_utils.host import values
from ansible_collections.llmserve.sglang.plugins.module_utils.sglang import adaptive as adaptive_cfg
from ansible_collections.llmserve.sglang.plugins.module_utils.sglang import allreduce
from ansible_collections.llmserve.sglang.plugins.module_utils.sglang import cli_flags
from ansible_collections.llmserve.sglang.plugins.module_utils.sglang import gates
from ansible_collections.llmserve.sglang.plugins.module_utils.sglang import speculative
from ansible_collections.llmserve.sglang.plugins.module_utils.sglang.version import release

# Versions whose tables below were read from the source and are exercised by tests/real_parser (sglang/gates.py).
VERIFIED_VERSIONS = gates.VERIFIED_VERSIONS
# 0.5.23 renamed the cuda-graph flags and moved allreduce fusion to a backend choice (arg_groups/fields/exec_.py).
NEW_CLI = gates.first("new_cli")
# --speculative-adaptive came in 0.5.11; from 0.5.14 its config can switch drafting off above a batch size
# (bench/spec_setting.py reads that from the wheels). 0.5.15.post1 has it (its real /server_info).
ADAPTIVE_FLAG = gates.first("adaptive")


def sm120_env(ptxas_path=None):
    """The environment SGLang needs on compute capability 12.x (RTX PRO 6000, ...): the one home of this rule.

    DeepGEMM has no SM120 kernels, so its JIT must be off; Triton's bundled ptxas may not know ``sm_120a``, so
    roles/sglang points TRITON_PTXAS_PATH at the toolkit's (the renderer only warns: it does not know the path).
    """
    env = {"SGLANG_ENABLE_JIT_DEEPGEMM": "0"}
    if ptxas_path:
        env["TRITON_PTXAS_PATH"] = str(ptxas_path)
    return env


# Patch ids of roles/sglang's SM120 patch set that make these features work on compute capability 12.x.
PATCH_SM120_ALLREDUCE_FUSION = "sm120-allreduce-fusion"
PATCH_SM120_SYMM_MEM = "sm120-symm-mem"

# Options whose fast path SGLang gates to SM90/SM100: refused on SM120 unless roles/sglang's matching patch is
# applied. (option names, patch id, why on SM120, what to say on other GPUs and how loudly.)
_SM120_GATED = (
    (("enable_flashinfer_allreduce_fusion", "flashinfer_allreduce_fusion_backend"), PATCH_SM120_ALLREDUCE_FUSION,
     "flashinfer allreduce fusion is a no-op on SM120 (layers/communicator.py gates it to SM90/SM100)",
     "warnings", "flashinfer allreduce fusion only takes effect on SM90/SM100; it does nothing on these GPUs"),
    (("enable_torch_symm_mem",), PATCH_SM120_SYMM_MEM,
     "enable_torch_symm_mem fails on SM120 (its size table has compute capability 9 and 10 only; KeyError: 12 "
     "up to 0.5.10)",
     "errors", "enable_torch_symm_mem supports compute capability 9.x and 10.x only: drop it for these GPUs"),
)

# Settings that have their own key: passing them through ``args`` too would give two values.
_OWNED = {
    "model_path": "model_path",
    "tp": "tp",
    "tp_size": "tp",
    "tensor_parallel_size": "tp",
    "host": "host",
    "port": "port",
    "served_model_name": "served_model_name",
    "nnodes": "nnodes",
    "node_rank": "node_rank",
    "dist_init_addr": "dist_init_addr",
    "api_key": "api_key_env",
    "speculative_algorithm": "speculative.algorithm",
    "speculative_draft_model_path": "speculative.draft_model_path",
    "speculative_draft_model": "speculative.draft_model_path",
    "speculative_num_steps": "speculative.num_steps",
    "speculative_eagle_topk": "speculative.eagle_topk",
    "speculative_num_draft_tokens": "speculative.num_draft_tokens",
    "speculative_adaptive": "speculative.adaptive",
    "speculative_adaptive_config": "speculative.adaptive_config",
}

_ATTN_KEYS = (
    "attention_backend",
    "prefill_attention_backend",
    "decode_attention_backend",
    "speculative_draft_attention_backend",
)
_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_ENV_REF = re.compile(r"^\$\{[A-Za-z_][A-Za-z0-9_]*\}\Z")


def _snake(name):
    return str(name).strip().lstrip("-").replace("-", "_")


def _flag(name):
    return "--" + name.replace("_", "-")


def _is_int(v):
    return isinstance(v, int) and not isinstance(v, bool)


def _scalar(v):
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float):
        return repr(v)
    return str(v)


def _gpu_major(gpu):
    """Lowest and set of compute-capability majors of the visible GPUs, or (None, set())."""
    if not isinstance(gpu, dict) or not gpu.get("present", True):
        return set()
    majors = set()
    for g in gpu.get("gpus") or []:
        major = g.get("compute_major")
        if major is None and g.get("compute_cap"):
            try:
                major = int(str(g["compute_cap"]).split(".", maxsplit=1)[0])
            except ValueError:
                major = None
        if major is not None:
            majors.add(int(major))
    return majors


def _translate(name, value, ver, out):
    """Map one user option to (flag_name, value) pairs for this version; report errors in out."""
    new = ver >= NEW_CLI
    # source: 0.5.23 arg_groups/fields/exec_.py has cuda_graph_max_bs_decode/_prefill and
    # cuda_graph_bs_decode/_prefill; 0.5.9/0.5.10.post1 server_args.py have --cuda-graph-max-bs/--cuda-graph-bs
    # (the decode graph).  The old meaning is the decode graph, so it maps to *_decode; the prefill graph
    # keeps SGLang's own default unless the user sets *_prefill.
    if name in ("cuda_graph_max_bs", "cuda_graph_bs"):
        return [(name + "_decode", value)] if new else [(name, value)]
    if name in ("cuda_graph_max_bs_decode", "cuda_graph_bs_decode"):
        return [(name, value)] if new else [(name[: -len("_decode")], value)]
    if name in ("cuda_graph_max_bs_prefill", "cuda_graph_bs_prefill") and not new:
        out["errors"].append(
            "args.%s: SGLang %s has no prefill cuda-graph batch-size flag; remove it (it exists from 0.5.23)"
            % (name, out["version"])
        )
        return []
    if name == "enable_flashinfer_allreduce_fusion" and new:
        # source: 0.5.23 arg_groups/serving_hook.py maps the deprecated flag to backend "auto"; say it directly.
        out["warnings"].append(
            "args.enable_flashinfer_allreduce_fusion is deprecated in SGLang %s; rendered as "
            "--flashinfer-allreduce-fusion-backend auto" % out["version"]
        )
        return [("flashinfer_allreduce_fusion_backend", "auto")] if value else []
    if name == "flashinfer_allreduce_fusion_backend" and not new:
        if value in (None, "auto"):
            return [("enable_flashinfer_allreduce_fusion", value is not None)]
        out["errors"].append(
            "args.flashinfer_allreduce_fusion_backend=%s needs SGLang >= 0.5.23; on %s use "
            "enable_flashinfer_allreduce_fusion: true instead" % (value, out["version"])
        )
        return []
    return [(name, value)]


def _emit(argv, flags, name, value, errors):
    """Append one option the way argparse expects it."""
    if value is None or value is False:
        return
    flag = _flag(name)
    if value is True:
        argv.append(flag)
    elif isinstance(value, (list, tuple)):
        # SGLang's list options are nargs='+'/'*' store actions (no action='append' in any of the three
        # versions): one flag followed by every item; repeating the flag would keep only the last list.
        if not value:
            return
        if any(isinstance(v, (dict, list, tuple)) for v in value):
            errors.append("args.%s: list items must be scalars; give plain values" % name)
            return
        argv.append(flag)
        argv.extend(_scalar(v) for v in value)
    elif isinstance(value, dict):
        # e.g. --json-model-override-args: SGLang json.loads() these strings; sorted keys keep argv stable.
        argv.extend([flag, json.dumps(value, sort_keys=True, separators=(",", ":"))])
    else:
        argv.extend([flag, _scalar(value)])
    flags[name] = value


def flags_argv(flags):
    """A ``{flag: value}`` mapping -> argv, the way render() writes options: ``true`` = a bare flag, ``false``/``null``
    = left out, a list = the flag followed by each item, a mapping = compact JSON. Keeps the mapping's order.

    roles/router renders sglang_router.launch_router's command line with it (filter ``sglang_flags``).
    """
    argv, seen, errors = [], {}, []
    for key, value in (flags or {}).items():
        _emit(argv, seen, _snake(key), value, errors)
    if errors:
        raise ValueError("; ".join(errors))
    return argv


def render(settings, version, gpu=None, patches=(), env=None, adaptive_config_path=None, api_key_config_path=None):
    """Render settings into ``{argv, env, warnings, errors, flags, files}``.

    ``argv`` excludes the interpreter/entry point: append it to ``python -m sglang.launch_server``.
    ``flags`` maps each rendered option (snake_case) to the value SGLang should parse.
    ``files`` maps paths the caller must write before start (an adaptive config given as a dict).
    ``env`` (optional) is the environment the server will get, used for SGLANG_ENABLE_SPEC_V2.
    """
    settings = dict(settings or {})
    patches = set(patches or ())
    out = {"argv": [], "env": {}, "warnings": [], "errors": [], "flags": {}, "files": {}, "version": str(version)}
    errors, warnings = out["errors"], out["warnings"]
    try:
        ver = release(version)
    except ValueError as exc:
        errors.append(str(exc))
        ver = NEW_CLI
    if str(version) not in VERIFIED_VERSIONS:
        warnings.append(
            "SGLang %s is not one of the versions whose flags were verified (%s); the preflight parse on the "
            "host is the check" % (version, ", ".join(VERIFIED_VERSIONS))
        )
    argv, flags = out["argv"], out["flags"]

    # --- core -------------------------------------------------------------------------------------
    # An empty model_path is refused by _server_plan.validate; here SGLang's own parser would ask for --model-path.
    if settings.get("model_path"):
        _emit(argv, flags, "model_path", str(settings["model_path"]), errors)
    tp = settings.get("tp") or 1
    if not _is_int(tp) or tp < 1:
        errors.append("settings.tp=%r is not a positive integer: set the total tensor-parallel size" % (tp,))
        tp = 1
    # --tp-size exists in 0.5.9, 0.5.10.post1 and 0.5.23; the short --tp only works as an argparse prefix.
    _emit(argv, flags, "tp_size", tp, errors)
    if settings.get("host") is not None:
        _emit(argv, flags, "host", str(settings["host"]), errors)
    port = settings.get("port")
    if port is not None:
        if not _is_int(port) or not 0 < port < 65536:
            errors.append("settings.port=%r is not a TCP port: give an integer 1-65535" % (port,))
        else:
            _emit(argv, flags, "port", port, errors)
    if settings.get("served_model_name"):
        _emit(argv, flags, "served_model_name", str(settings["served_model_name"]), errors)
    key_env = settings.get("api_key_env")
    if key_env:
        if not _ENV_NAME.match(str(key_env)):
            errors.append("settings.api_key_env=%r is not an environment variable name: use e.g. SGLANG_API_KEY" % (key_env,))
        elif api_key_config_path and not str(api_key_config_path).lower().endswith((".yaml", ".yml")):
            # source: server_args_config_parser.py _validate_yaml_file refuses any other suffix at start-up.
            errors.append(
                "api_key_config_path=%s: SGLang only reads --config files named *.yaml or *.yml; rename it"
                % api_key_config_path
            )
        elif api_key_config_path:
            # SGLang has no env var for the key (checked 0.5.9/0.5.10.post1/0.5.23); --config YAML is merged
            # in-process by prepare_server_args, so the key stays out of /proc/<pid>/cmdline.
            _emit(argv, flags, "config", str(api_key_config_path), errors)
        else:
            # systemd expands ${VAR} from Environment=/EnvironmentFile= as one argument (see shell_join).
            _emit(argv, flags, "api_key", "${%s}" % key_env, errors)
            warnings.append(
                "the API key from $%s ends up in the server's argv (visible in ps to local users); pass "
                "api_key_config_path to load it from a --config file readable by the server only instead" % key_env
            )

    # --- speculative --------------------------------------------------------------------------------
    spec = settings.get("speculative")
    # off: null, {} is not off (it names no algorithm: EAGLE3), {algorithm: ''} is (sglang/speculative.py)
    if spec is not None and spec != "" and (not isinstance(spec, dict) or speculative.algorithm(spec)):
        _render_spec(spec, ver, tp, env or {}, adaptive_config_path, out)

    # --- multi-node ---------------------------------------------------------------------------------
    nnodes = settings.get("nnodes") or 1
    if not _is_int(nnodes) or nnodes < 1:
        errors.append("settings.nnodes=%r is not a positive integer: set the number of nodes" % (nnodes,))
    elif nnodes > 1:
        rank = settings.get("node_rank")
        addr = settings.get("dist_init_addr")
        if not _is_int(rank) or not 0 <= rank < nnodes:
            errors.append("settings.node_rank=%r must be 0..%d for nnodes=%d: set this host's rank" % (rank, nnodes - 1, nnodes))
        if not addr or not re.match(r"^\[?[^\s\]]+\]?:\d+$", str(addr)):
            errors.append("settings.dist_init_addr=%r must be HOST:PORT of node rank 0 (same on every node)" % (addr,))
        _emit(argv, flags, "nnodes", nnodes, errors)
        if _is_int(rank):
            _emit(argv, flags, "node_rank", rank, errors)
        if addr:
            _emit(argv, flags, "dist_init_addr", str(addr), errors)

    # --- everything else, sorted --------------------------------------------------------------------
    args = {}
    raw = settings.get("args") or {}
    if not isinstance(raw, dict):
        errors.append("settings.args must be a mapping of SGLang option names to values")
        raw = {}
    for key in sorted(raw, key=_snake):
        name = _snake(key)
        if name in _OWNED:
            errors.append("args.%s duplicates settings.%s: set it there and drop it from args" % (name, _OWNED[name]))
            continue
        if name in args:
            errors.append("args has %s twice (snake_case and dashed spellings): keep one" % name)
            continue
        if name == "config" and "config" in flags:
            # source: server_args_config_parser.py raises "Multiple config files specified! Only one allowed."
            errors.append(
                "args.config clashes with the API key's --config file (SGLang reads only one --config): put those "
                "options into args instead"
            )
            continue
        for new_name, new_value in _translate(name, raw[key], ver, out):
            args[new_name] = new_value
    _arch_rules(args, settings, gpu, patches, tp, out)
    # the health latch (sglang/gates.py): a liveness timeout that fits the longest prefill, /health a status check
    out["env"].update(gates.health_env(version, args, env, settings.get("health_status_check", True),
                                       settings.get("health_check_timeout") or 0))
    topo = (gpu or {}).get("topology") or {} if isinstance(gpu, dict) else {}
    ar_errors, ar_warnings = allreduce.rules(env, version, _gpu_major(gpu), topo.get("pcie_only"), tp, args)
    errors.extend(ar_errors)
    warnings.extend(ar_warnings)
    for name in sorted(args):
        if args[name] is False:
            _emit_false(argv, flags, name, out)
        else:
            _emit(argv, flags, name, args[name], errors)
    del out["version"]
    return out


def _emit_false(argv, flags, name, out):
    """A false boolean: ``--no-x`` where the version's parser has it, nothing where false is SGLang's own default,
    else a refusal: leaving the flag out would silently run with the opposite of the setting.

    The switches and their parser defaults per version come from the real parsers (``cli_flags.py``, generated).
    """
    version = out["version"]
    table = cli_flags.SWITCHES.get(version)
    if table is None:
        out["warnings"].append(
            "args.%s=false is left out: SGLang %s has no verified flag table, so whether --%s is on by default is "
            "not known here" % (name, version, name.replace("_", "-")))
        return
    kind, default = table.get(name, (None, None))
    flag = _flag(name)
    if kind == "boolean_optional":
        argv.append("--no-" + flag[2:])
        flags[name] = False
    elif kind is None:
        out["errors"].append(
            "args.%s=false: %s is not an on/off switch in SGLang %s (it takes a value or does not exist): give the "
            "value SGLang expects, or drop the setting" % (name, flag, version))
    elif kind in ("store_true", "store_const", "deprecated", "deprecated_error") and default:
        out["errors"].append(
            "args.%s=false cannot be expressed for SGLang %s: %s is on by default and the version has no --no-%s; "
            "drop the setting or use a version that has the negation" % (name, version, flag, flag[2:]))
    # else: false is what SGLang does without the flag (store_true defaulting to False or None, store_false,
    # a retired flag): leaving it out is exact


def _render_spec(spec, ver, tp, env, adaptive_config_path, out):
    errors, warnings, argv, flags = out["errors"], out["warnings"], out["argv"], out["flags"]
    if not isinstance(spec, dict):
        errors.append("settings.speculative must be a mapping ({algorithm: EAGLE3, draft_model_path: ...}) or null")
        return
    # a mapping that names no algorithm means EAGLE3, here as everywhere; the spec was checked by
    # speculative.problems (the plan's validation, the sglang_argv filter): trusted here
    _emit(argv, flags, "speculative_algorithm", speculative.algorithm(spec), errors)
    if spec.get("draft_model_path"):
        _emit(argv, flags, "speculative_draft_model_path", str(spec["draft_model_path"]), errors)
    vals = {}
    for key in ("num_steps", "eagle_topk", "num_draft_tokens"):
        if spec.get(key) is not None:  # all unset: SGLang picks them per model
            vals[key] = spec[key]
            _emit(argv, flags, "speculative_" + key, spec[key], errors)
    topk = vals.get("eagle_topk")
    if topk == 1 and "num_steps" in vals and vals.get("num_draft_tokens", vals["num_steps"] + 1) != vals["num_steps"] + 1:
        warnings.append(
            "speculative.num_draft_tokens=%d is reset by SGLang to num_steps + 1 = %d when eagle_topk is 1"
            % (vals["num_draft_tokens"], vals["num_steps"] + 1)
        )
    spec_v2 = str(env.get("SGLANG_ENABLE_SPEC_V2", "")).lower() in ("1", "true", "yes", "on")
    if spec_v2 and ver < NEW_CLI and topk is not None and topk > 1:
        # source: 0.5.10.post1 server_args.py raises "Spec v2 currently only supports topk = 1".
        errors.append("speculative.eagle_topk=%d with SGLANG_ENABLE_SPEC_V2 on: spec v2 needs eagle_topk 1" % topk)
    if spec.get("adaptive"):
        if ver < ADAPTIVE_FLAG:
            errors.append(
                "speculative.adaptive needs --speculative-adaptive, which SGLang %s lacks (added in 0.5.11): upgrade "
                "sglang, or apply the seed's adaptive-speculation patch through roles/sglang's patch mechanism and "
                "pass its own flag in args" % out["version"]
            )
            return
        if topk is not None and topk != 1:
            errors.append("speculative.adaptive needs eagle_topk 1 (got %d): set eagle_topk: 1 or drop it" % topk)
        _emit(argv, flags, "speculative_adaptive", True, errors)
        cfg = spec.get("adaptive_config")
        if isinstance(cfg, dict):
            # What this release's loader accepts (flat list before 0.5.13, slots after; step 0 from 0.5.14).
            cfg_errors, steps = adaptive_cfg.validate(cfg, out["version"], vals.get("num_steps"))
            errors.extend(cfg_errors)
            if steps and not cfg_errors and "num_steps" in vals and vals["num_steps"] not in steps:
                errors.append(
                    "speculative.num_steps=%d is not among adaptive_config candidate_steps %s: pick one of them"
                    % (vals["num_steps"], sorted(steps))
                )
            # source: speculative/adaptive_spec_params.py (0.5.11 to 0.5.23) opens the config as a JSON file.
            if not adaptive_config_path:
                errors.append(
                    "speculative.adaptive_config is a mapping but SGLang reads a JSON file path: pass "
                    "adaptive_config_path=<path> (the caller writes files[path] there)"
                )
            else:
                out["files"][str(adaptive_config_path)] = json.dumps(cfg, sort_keys=True, indent=2) + "\n"
                _emit(argv, flags, "speculative_adaptive_config", str(adaptive_config_path), errors)
        elif cfg:
            _emit(argv, flags, "speculative_adaptive_config", str(cfg), errors)
    elif spec.get("adaptive_config"):
        warnings.append("speculative.adaptive_config is ignored because speculative.adaptive is false")


def _arch_rules(args, settings, gpu, patches, tp, out):
    """Topology and GPU-generation rules; may add options to args."""
    errors, warnings = out["errors"], out["warnings"]
    majors = _gpu_major(gpu)
    sm120 = 12 in majors
    topo = (gpu or {}).get("topology") or {} if isinstance(gpu, dict) else {}
    count = (gpu or {}).get("count") if isinstance(gpu, dict) else None
    if count is None and isinstance(gpu, dict):
        count = len(gpu.get("gpus") or [])
    # SGLang turns custom all-reduce off itself beyond two PCIe-only GPUs, with a warning in the log; say it
    # in the argv so the unit file shows what runs.
    if topo.get("pcie_only") and (count or 0) > 2 and tp > 1:
        if "disable_custom_all_reduce" not in args:
            args["disable_custom_all_reduce"] = True
            warnings.append(
                "%d PCIe-only GPUs: --disable-custom-all-reduce added (SGLang's custom all-reduce does not "
                "support more than two PCIe-only GPUs and would fall back to NCCL anyway)" % count
            )
        elif not args["disable_custom_all_reduce"]:
            warnings.append(
                "disable_custom_all_reduce is false on %d PCIe-only GPUs: SGLang will disable it at start-up anyway"
                % count
            )
    for keys, patch, why, severity, elsewhere in _SM120_GATED:
        if not majors or not any(args.get(k) for k in keys):
            continue
        if sm120 and patch not in patches:
            errors.append("%s: apply roles/sglang's patch '%s' (role passes it in patches) or drop the option" % (why, patch))
        elif not majors <= {9, 10, 12}:
            out[severity].append(elsewhere)
    if majors and majors != {10}:
        # trtllm-gen kernels need SM100's tcgen05 instructions ("Unsupported architecture" elsewhere).
        bad = {}
        for key in _ATTN_KEYS:
            val = args.get(key)
            if isinstance(val, str) and (val.startswith("trtllm") or (sm120 and val == "fa4")):
                bad[key] = val
        for key in ("moe_runner_backend", "fp8_gemm_backend", "fp4_gemm_backend"):
            val = args.get(key)
            if isinstance(val, str) and "trtllm" in val and sm120:
                bad[key] = val
        for key in sorted(bad):
            errors.append(
                "args.%s=%s needs SM100 kernels that do not run on compute capability %s: use triton or "
                "flashinfer instead" % (key, bad[key], "/".join(str(m) for m in sorted(majors)))
            )
    if sm120:
        out["env"].update(sm120_env())
        for key in ("moe_runner_backend", "fp8_gemm_backend"):
            val = args.get(key)
            if isinstance(val, str) and "deep_gemm" in val.replace("deepgemm", "deep_gemm"):
                errors.append("args.%s=%s uses DeepGEMM, which SM120 lacks: use auto, triton or cutlass" % (key, val))
        warnings.append(
            "SM120: if Triton fails with \"Value 'sm_120a' is not defined\", set TRITON_PTXAS_PATH to the CUDA "
            "toolkit's ptxas (e.g. /usr/local/cuda/bin/ptxas)"
        )


def _systemd_word(arg):
    # systemd.service(5) "Command lines": % starts a specifier (%% is a literal %), $ expands environment
    # variables ($$ is a literal $), and quoted words take C-style backslash escapes.
    if _ENV_REF.match(arg):
        return arg  # deliberately left for systemd to expand as one argument
    word = arg.replace("%", "%%").replace("$", "$$")
    if word and re.match(r"^[A-Za-z0-9_@%+=:,./-]+\Z", word) and word != ";":
        return word
    esc = word.replace("\\", "\\\\").replace('"', '\\"')
    # every control character as a C escape: systemd ends a unit line at CR as at LF (the planners refuse them first)
    return '"%s"' % values.CONTROL.sub(_c_escape, esc)


def _c_escape(m):
    c = m.group(0)
    named = {"\n": "\\n", "\t": "\\t", "\r": "\\r"}.get(c)
    return named or ("\\x%02x" % ord(c) if ord(c) < 0x80 else "\\u%04x" % ord(c))


def shell_join(argv):
    """Join argv for a systemd ExecStart= line (not for sh: sh would leave %% and $$ doubled).

    A word that is exactly ``${NAME}`` is left for systemd to expand (the API key); every other
    ``$`` and ``%`` is escaped so systemd passes it through literally.
    """
    return " ".join(_systemd_word(str(a)) for a in argv)
