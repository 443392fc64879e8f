#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: model_stage
short_description: Stage one model's weights on the host - fetch, verify, publish atomically - with live progress
version_added: "0.1.0"
description:
  - Runs on the target host. A model already at C(dest) with its manifest (C(.llmserve-manifest.json)) is
    re-checked cheaply (size and mtime of every file, plus the checkpoint's structure) and left alone - nothing
    changes, nothing is hashed again unless O(verify=full).
  - Otherwise the model is fetched into C(<dest>.partial) by a detached worker, every file is hashed (sha256, in
    parallel threads) and compared to what the source promised (the Hub's LFS sha256 and sizes, the artifact
    server's or source directory's manifest, the fan-out seed's manifest), the checkpoint's structure is checked,
    the manifest is written beside the weights and the tree is renamed to C(dest). A previous tree at C(dest) is
    replaced only then.
  - Sources (C(kind)) - C(hub) (the C(hf) CLI of huggingface_hub >= 1.0, pinned C(revision), C(allow_patterns)
    and C(ignore_patterns), token in the environment only, C(HF_XET_HIGH_PERFORMANCE=1)); C(dir) (a local or
    NFS directory); C(http) (a file tree published with its manifest, or a C(.tar)/C(.tar.gz)/C(.tgz)/C(.tar.xz)
    tarball); C(host) (rsync over SSH from another host's staged tree, the fan-out path).
  - An interrupted transfer resumes - HTTP with a Range request from the bytes there, directory copies from the
    copied length, rsync with C(--partial), the C(hf) CLI from its local-dir state.
  - Free space is checked before anything is fetched, from the size the source gives (the Hub's metadata, the
    manifest, the tarball's Content-Length); the refusal names the path, what is needed and what is free.
  - Progress - the module returns after at most O(progress_interval) seconds with the bytes on disk; the action
    plugin of the same name prints one line per host (bytes, rate, ETA) and calls it again until it is done.
author:
  - llmserve maintainers (@llmserve)
options:
  model:
    description:
      - The model - C(name), C(kind) (C(hub), C(dir), C(http), C(host)), C(dest) (absolute), C(role)
        (C(target), C(draft), C(tokenizer)); C(repo), C(revision), C(allow_patterns), C(ignore_patterns),
        C(endpoint) and C(token_file) for C(hub); C(url) for C(http); C(path) for C(dir) and C(host);
        C(from_host), C(ssh_user), C(ssh_port), C(ssh_key) for C(host); C(adopt) (let the role replace an
        existing C(dest) it did not publish).
      - A C(token) key is refused (it would be printed); use C(token_file) or O(token).
    type: dict
    required: true
  token:
    description: Hub or artifact-server token (from a vaulted variable). Passed in the environment, never in an argv.
    type: str
  require_pinned:
    description: Refuse a C(hub) C(revision) that is not a 40-hex commit sha.
    type: bool
    default: false
  verify:
    description: How a model already in place is re-checked - C(cheap) (size and mtime) or C(full) (hash every file).
    type: str
    choices: [cheap, full]
    default: cheap
  workers:
    description: Files hashed at once (default - every core).
    type: int
  hf_cli:
    description: Path of the C(hf) CLI (default - beside this Python, else on PATH).
    type: path
  progress_interval:
    description: Return with the progress after this many seconds while the transfer runs (the action plugin re-calls).
    type: float
    default: 10
  stall_timeout:
    description: Seconds without a single byte (HTTP, the C(hf) CLI's connections, rsync's I/O) before the transfer
      fails, naming the URL and the file.
    type: float
    default: 60
  file_timeout:
    description: Seconds one file (HTTP, a tarball member, a C(dir) copy) may take in all (a server that trickles bytes fails here, named).
    type: float
    default: 7200
  model_timeout:
    description: Seconds the whole model's transfer may take; the worker stops (the C(hf) CLI and rsync are
      terminated) and the next run resumes.
    type: float
    default: 86400
  orphan_after:
    description:
      - A worker that no run has watched for this many seconds (its controller died) stops without publishing and
        gives up the lock; a later run waits at most this long for such a worker, and fails at once naming the
        holder of a lock that is watched. A run whose controller was killed on the controller this run uses is
        taken over at once (its worker stopped, its transfer resumed), without waiting.
    type: float
    default: 300
  controller:
    description:
      - Internal - the controller process of this run (its host, user, pid and start time), set by the action plugin
        and recorded in C(<dest>.lock) so that a later run on the same controller can see it is gone.
    type: dict
  orphan_of:
    description:
      - Internal - the lock token of a run whose controller the action plugin found gone (killed); that run's lock is
        taken over at once and its worker stopped (SIGTERM, then SIGKILL), and its transfer resumes in this run.
    type: str
  allow_http_token:
    description: Send the token over plain C(http://) (refused by default - it would travel in clear text).
    type: bool
    default: false
  resume_state:
    description: Internal - the state the action plugin hands back between progress lines.
    type: dict
notes:
  - Check mode says whether the model would be staged, and why; it fetches nothing and takes no lock. A dest the
    role may not replace is refused in check mode too.
  - Safety (the module runs as root and trusts no source) - every name a source gives (manifest entries, Hub file
    names, tarball members, directory listings, the index's shard names) must be a normalised relative path inside
    the tree with no symlink on the way, naming a plain file; one bad entry refuses the whole model before anything
    is written, naming it. Files are deleted only inside C(<dest>.partial).
  - C(dest) is replaced only when the role published it (C(.llmserve-manifest.json) at its top), when it is empty,
    or with C(adopt=true) on the model; system directories, their parents, directories below system trees, home
    directories and one-component paths are refused. C(dest.lock) beside it holds the run (host, pid, since).
  - A C(dir) source's symlink to a plain file inside the source tree is copied as that file; one that leaves the
    tree, points at a directory or dangles, and devices or fifos, refuse the model. C(host) copies plain files
    only (C(rsync -rt)). Staged files get mode 0644, directories 0755, whatever the source had.
  - The token goes only to the scheme, host and port it was given for (the Hub endpoint, the artifact URL); a
    redirect elsewhere is followed without it.
"""

EXAMPLES = r"""
- name: Stage the target from the Hub, pinned
  llmserve.sglang.model_stage:
    model:
      name: kimi-k2.5
      kind: hub
      repo: moonshotai/Kimi-K2.5
      revision: 0123456789abcdef0123456789abcdef01234567
      allow_patterns: ["*.json", "*.safetensors", "*.model", "*.py"]
      dest: /models/Kimi-K2.5
      token_file: /etc/llmserve/hf_token
    require_pinned: true

- name: Copy it from the host that fetched it (what llmserve.sglang.model_plan hands the other hosts)
  llmserve.sglang.model_stage:
    model: {name: kimi-k2.5, kind: host, from_host: 10.0.0.11, ssh_user: root, path: /models/Kimi-K2.5,
            dest: /models/Kimi-K2.5}
"""

RETURN = r"""
action:
  description: C(present) (already staged and whole), C(staged) (fetched, verified, published), C(recovered) (an
    interrupted publish was finished and the tree is whole), C(would_stage) (check mode).
  returned: always
  type: str
model_path:
  description: Where the model is (its C(dest)).
  returned: always
  type: str
reason:
  description: Why the model was (or would be) staged - what the check of C(dest) found.
  returned: when staged
  type: str
bytes:
  description: Bytes under the partial tree at the last look.
  returned: while staging
  type: int
total:
  description: Bytes the source promised (null when it did not say).
  returned: while staging
  type: int
rate:
  description: Bytes per second since the previous progress line.
  returned: while staging
  type: float
eta:
  description: Seconds left at that rate (null when unknown).
  returned: while staging
  type: float
stage:
  description: The worker's step - C(fetching), C(verifying), C(done).
  returned: while staging
  type: str
revision:
  description: The revision staged (the Hub's resolved commit for C(hub)).
  returned: when staged
  type: str
verify:
  description: The re-check of a model in place (see llmserve.sglang.model_verify's C(models)).
  returned: when present
  type: dict
took_over:
  description: The stale holder of C(<dest>.lock) this run took the lock from (its worker was gone).
  returned: when it happened
  type: str
recovered:
  description: What was done about a publish a crash interrupted (finished, undone, or C(.old) removed).
  returned: when it happened
  type: str
held_by:
  description: In check mode, the run holding C(<dest>.lock), if any.
  returned: in check mode, when the lock is held
  type: str
"""

import hashlib
import json
import os
import shutil
import signal
import socket
import time

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.llmserve.sglang.plugins.module_utils.host.proc_watch import alive, proc_stat
from ansible_collections.llmserve.sglang.plugins.module_utils.models import contain
from ansible_collections.llmserve.sglang.plugins.module_utils.models import stage
from ansible_collections.llmserve.sglang.plugins.module_utils.models.sources import base, hub
from ansible_collections.llmserve.sglang.plugins.module_utils.models.plan import (
    PlanError, human, inline_tokens, space_refusal, url_problem, validate)
from ansible_collections.llmserve.sglang.plugins.module_utils.models.verify import verify_tree
from ansible_collections.llmserve.sglang.plugins.module_utils.host import lock as locks


def _token(module, model):
    if module.params["token"] and model["kind"] in ("hub", "http"):
        return module.params["token"]
    if model.get("token_file"):
        try:
            with open(model["token_file"]) as f:
                return f.read().strip()
        except (IOError, OSError) as e:
            module.fail_json(msg="cannot read the token file %s: %s" % (model["token_file"], e.strerror or e))
    return None


def _free_bytes(path):
    probe = path
    while not os.path.exists(probe):
        probe = os.path.dirname(probe)
    st = os.statvfs(probe)
    return st.f_bavail * st.f_frsize


def _token_url(model):
    if model["kind"] == "hub":
        return (model.get("endpoint") or os.environ.get("HF_ENDPOINT") or hub.DEFAULT_ENDPOINT).rstrip("/")
    return model.get("url")


def _fingerprint(model):
    """What the partial tree is being filled from: a partial tree of another source is not resumed."""
    keys = ("kind", "repo", "revision", "url", "path", "from_host", "endpoint", "allow_patterns", "ignore_patterns")
    return hashlib.sha256(json.dumps(dict((k, model.get(k)) for k in keys), sort_keys=True).encode()).hexdigest()


class Run(object):
    """This run's hold on ``<dest>.lock``: taken before anything is touched, refreshed on every progress call
    (the worker stops when nobody refreshes it for orphan_after seconds), released on every way out."""

    def __init__(self, module, dest, token=None):
        self.module, self.path, self.token = module, stage.lock_of(dest), token
        self.controller = module.params.get("controller")
        self.orphan_of = module.params.get("orphan_of")

    def holder(self):
        me = proc_stat(os.getpid())
        now = time.time()
        return {"host": socket.gethostname(), "pid": os.getpid(), "starttime": me[3] if me else None,
                "since": now, "watched": now, "token": self.token, "dest": self.path[:-len(".lock")],
                "by": "roles/models (llmserve.sglang.model_stage)", "controller": self.controller}

    def dead(self, orphan_after):
        host = socket.gethostname()

        def judge(current):
            if self.orphan_of and current.get("token") == self.orphan_of and current.get("host") == host:
                return True  # its controller is gone (the action plugin saw it), its worker here: stopped at once
            watched = float(current.get("watched") or current.get("since") or 0)
            if current.get("host") == host:
                return not (current.get("pid") and alive(int(current["pid"]), current.get("starttime")))
            # Another host (a shared file system): its pid cannot be seen here; silence for twice the orphan time.
            return time.time() - watched > 2 * orphan_after
        return judge

    def take(self, orphan_after, wait):
        """Take the lock; a holder whose controller is gone (not watched for orphan_after) stops on its own within
        a second or two, so it is waited for up to ``wait`` seconds. Fails naming a live holder."""
        self.token = hashlib.sha256(os.urandom(32)).hexdigest()[:32]
        end = time.time() + wait
        while True:
            res = locks.take(self.path, self.holder(), 10 ** 9, self.dead(orphan_after))
            if res["taken"]:
                return res
            current = res["held_by"]
            silent = time.time() - float(current.get("watched") or current.get("since") or 0)
            if silent <= orphan_after:
                self.token = None
                self.module.fail_json(
                    held_by=current,
                    msg="%s is being staged by another run: %s, last watched %d s ago (lock %s). Wait for it; a run "
                        "whose controller died stops on its own %d s after it was last watched (models_orphan_after)"
                        % (self.path[:-len(".lock")], base.describe(current), silent, self.path, orphan_after))
            if time.time() > end:
                self.token = None
                self.module.fail_json(
                    msg="%s: the worker of an abandoned run (%s, last watched %d s ago) has not stopped; it should "
                        "within a stall timeout of noticing. If it hangs (a dead NFS mount), kill pid %s and run again"
                        % (self.path[:-len(".lock")], base.describe(current), silent, current.get("pid")))
            time.sleep(0.5)

    def stop_orphan(self, took_over, grace=10.0):
        """Stop the worker of the run taken over (its controller is gone), at once: SIGTERM, then SIGKILL after
        ``grace`` s; its transfer tool dies with it. Returns what was done, or None. Only a worker on this host,
        and the very process the lock named (pid and start time)."""
        if not took_over or took_over.get("token") != self.orphan_of or took_over.get("host") != socket.gethostname():
            return None
        pid, starttime = took_over.get("pid"), took_over.get("starttime")
        # a lock is not proof either: a real pid above 1 with its recorded start time, or nothing is signalled
        if not all(isinstance(v, int) and not isinstance(v, bool) for v in (pid, starttime)) or pid <= 1 \
                or not alive(pid, starttime):
            return None
        os.kill(pid, signal.SIGTERM)
        end = time.time() + grace
        while alive(pid, starttime) and time.time() < end:
            time.sleep(0.1)
        if alive(pid, starttime):
            os.kill(pid, signal.SIGKILL)
        return "stopped the worker (pid %s) of a run whose controller is gone; its transfer resumes here" % pid

    def watch(self):
        current = locks.update(self.path, self.token, {"watched": time.time()})
        if current is None or current.get("token") != self.token:
            self.token = None
            self.module.fail_json(msg="this run lost %s to %s; it stopped without publishing"
                                  % (self.path, base.describe(current) if current else "nobody (released)"))

    def release(self):
        if self.token:
            locks.release(self.path, self.token)
            self.token = None


def main():
    module = AnsibleModule(
        argument_spec=dict(
            model=dict(type="dict", required=True),
            token=dict(type="str", no_log=True),
            require_pinned=dict(type="bool", default=False),
            verify=dict(type="str", choices=["cheap", "full"], default="cheap"),
            workers=dict(type="int"),
            hf_cli=dict(type="path"),
            progress_interval=dict(type="float", default=10.0),
            stall_timeout=dict(type="float", default=float(base.STALL)),
            file_timeout=dict(type="float", default=float(base.FILE_DEADLINE)),
            model_timeout=dict(type="float", default=float(base.MODEL_DEADLINE)),
            orphan_after=dict(type="float", default=float(base.ORPHAN_AFTER)),
            controller=dict(type="dict"),
            orphan_of=dict(type="str", no_log=False),
            allow_http_token=dict(type="bool", default=False),
            resume_state=dict(type="dict"),
        ),
        supports_check_mode=True,
    )
    p = module.params
    # A token given inline is refused below; its value must not come back in the invocation either.
    module.no_log_values.update(inline_tokens([p["model"]]))
    try:
        (model,) = validate([dict((k, v) for k, v in p["model"].items() if k != "phase")], p["require_pinned"])
    except PlanError as e:
        module.fail_json(msg=str(e))
    dest, partial = model["dest"], stage.partial_of(model["dest"])
    require_tokenizer = model["role"] != "draft"
    state = p["resume_state"] or {}
    result = dict(changed=False, model_path=dest, name=model["name"])
    run = Run(module, dest, state.get("lock_token"))
    orphan_after = max(1.0, p["orphan_after"])

    def fail(msg, **extra):
        run.release()
        extra.update(result)
        module.fail_json(msg=msg, **extra)

    if not state:
        token = _token(module, model)
        if token and _token_url(model) and url_problem(_token_url(model), "url", allow_plain=False) and \
                not p["allow_http_token"]:
            fail("%s: a token would travel in clear text to %s; use https, or set models_allow_http_token to send "
                 "it over plain http anyway" % (model["name"], _token_url(model)))
        owned, what = stage.ownership(dest, model.get("adopt"))
        if not owned:
            fail("%s: %s" % (model["name"], what))
        if os.path.lexists(partial) and not stage.owns_partial(partial):
            fail("%s: %s exists and was not made by roles/models (no %s in it): the role writes and deletes in it. "
                 "Move it away" % (model["name"], partial, base.STATUS_NAME))
        old = stage.old_of(dest)
        if os.path.lexists(old) and not stage.retired(old):
            fail("%s: %s exists and was not left by roles/models (no %s in it); move it away"
                 % (model["name"], old, base.RETIRED_NAME))
        # Read-only until the source has been read and its names checked: a refusal leaves nothing behind.
        reason = None
        if os.path.isdir(dest) and not os.path.lexists(partial) and not os.path.lexists(old):
            check = verify_tree(dest, "full" if p["verify"] == "full" else "cheap", require_tokenizer, p["workers"])
            if check["ok"] and check["method"].startswith("manifest"):
                loose = contain.world_writable_warning(dest, model["name"])
                if loose:
                    module.warn(loose)
                module.exit_json(action="present", verify=check, **result)
            reason = "; ".join(check["problems"]) or "no manifest: staged by hand or by another tool (adopted)"
        elif os.path.lexists(old):
            reason = "an earlier publish was interrupted: finishing or undoing it"
        elif os.path.isdir(partial):
            reason = "an earlier transfer did not finish: resuming it"
        else:
            reason = "not staged yet"
        if module.check_mode:
            holder = locks.read(stage.lock_of(dest))
            if holder:
                result["held_by"] = base.describe(holder)
            result["changed"] = True
            module.exit_json(action="would_stage", reason=reason, **result)
        limits = base.Limits(p["stall_timeout"], p["file_timeout"], p["model_timeout"])
        try:
            files, total, revision = stage.expected(model, token, limits)
        except base.StageError as e:
            fail("%s: %s" % (model["name"], e))
        # An abandoned worker notices within a second, or a stall timeout when it is blocked on a silent server.
        took = run.take(orphan_after, p["stall_timeout"] + 15)
        if took.get("took_over"):
            result["took_over"] = "took over the lock of %s from %s (%s)" % (
                dest, base.describe(took["took_over"]), took["message"])
            stopped = run.stop_orphan(took["took_over"])
            if stopped:
                result["took_over"] += "; " + stopped
            module.warn(result["took_over"])
        try:
            recovered = stage.recover(dest)
        except (base.StageError, OSError) as e:
            fail("%s: %s" % (model["name"], e))
        if recovered:
            result["recovered"] = recovered
            if os.path.isdir(dest) and not os.path.lexists(partial):
                check = verify_tree(dest, "cheap", require_tokenizer, p["workers"])
                if check["ok"] and check["method"].startswith("manifest"):
                    run.release()
                    result["changed"] = True
                    module.exit_json(action="recovered", verify=check, **result)
        status = stage.read_status(partial) if os.path.isdir(partial) else None
        fingerprint = _fingerprint(model)
        if status and status.get("source") not in (None, fingerprint):
            # Fetched from another source or with other settings: not resumed, started again (inside partial only).
            shutil.rmtree(partial)
            status = None
        if not (status and status.get("state") == "done" and status.get("source") == fingerprint):
            if total is not None:
                present = stage.bytes_under(partial) if os.path.isdir(partial) else 0
                refusal = space_refusal(dest, stage.space_needed(model, total), _free_bytes(partial), present)
                if refusal:
                    fail(refusal)
            hf_cli = None
            if model["kind"] == "hub":
                try:
                    hf_cli = stage.hf_cli_path(p["hf_cli"])
                except base.StageError as e:
                    fail(str(e))
            worker_limits = base.Limits(p["stall_timeout"], p["file_timeout"], p["model_timeout"],
                                        stage.lock_of(dest), run.token, orphan_after)
            stage.start_worker(stage.fetch_and_verify(model, partial, files, revision, token, hf_cli,
                                                      require_tokenizer, p["workers"], worker_limits),
                               partial, stage.lock_of(dest), run.token, {"source": fingerprint})
        state = {"reason": reason, "total": total, "revision": revision, "started": time.time(),
                 "last_bytes": 0, "last_time": time.time(), "lock_token": run.token}
    else:
        run.watch()

    deadline = time.time() + max(0.0, p["progress_interval"])
    while True:
        status = stage.read_status(partial) or {}
        finished = status.get("state") in ("done", "failed")
        gone = not finished and status.get("pid") and not alive(status["pid"])
        if finished or gone or time.time() >= deadline:
            break
        time.sleep(0.5)
    result.update(reason=state["reason"], revision=state["revision"], total=state["total"])
    if status.get("state") == "failed":
        error = status.get("error") or ""
        fail("%s: staging into %s failed: %s%s" % (model["name"], partial, error,
                                                   "" if "refused" in error else " (run again to resume)"))
    if gone:
        fail("%s: the transfer worker (pid %s) died without a word; run again to resume"
             % (model["name"], status.get("pid")))
    if status.get("state") == "done":
        run.watch()
        contain.remove_in(partial, base.STATUS_NAME)
        try:
            stage.publish(partial, dest)
        except (base.StageError, OSError) as e:
            fail("%s: publishing %s failed: %s (run again: the next run finishes or undoes it)"
                 % (model["name"], dest, e))
        run.release()
        elapsed = time.time() - state["started"]
        result["changed"] = True
        module.exit_json(action="staged", stage="done", elapsed=elapsed, **result)
    now = time.time()
    done_bytes = stage.bytes_under(partial)
    rate = max(0, done_bytes - state["last_bytes"]) / max(now - state["last_time"], 1e-6)
    eta = max(0.0, state["total"] - done_bytes) / rate if state["total"] and rate > 0 else None
    state.update(last_bytes=done_bytes, last_time=now)
    module.exit_json(_model_stage_pending=True, _model_stage_state=state, action="staging",
                     stage=status.get("state", "starting"), bytes=done_bytes, rate=rate, eta=eta,
                     progress="%s / %s" % (human(done_bytes), human(state["total"]) if state["total"] else "?"),
                     **result)


if __name__ == "__main__":
    main()
