# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# Run with the virtualenv's python: verify the install. argv[1]: JSON {"caps": [...], "import": "full"|"metadata",
# "cuda_op": bool}. Prints one JSON object; exit 0 even on failure (the role turns "errors" into a failure).
import importlib
import importlib.util
import json
import sys
from importlib import metadata

cfg = json.loads(sys.argv[1])
caps = cfg.get("caps") or []
res = {"errors": [], "skipped": [], "checks": {}}


def check_import(mod):
    if cfg.get("import") == "metadata":
        ok = importlib.util.find_spec(mod) is not None
        res["checks"]["import " + mod] = "found (not executed)" if ok else "missing"
        if not ok:
            res["errors"].append("module %s is not installed in the virtualenv" % mod)
        return None
    try:
        m = importlib.import_module(mod)
        res["checks"]["import " + mod] = "ok"
        return m
    except Exception as e:  # noqa: BLE001
        res["errors"].append("import %s failed: %s: %s" % (mod, type(e).__name__, str(e).splitlines()[0] if str(e) else ""))
        return None


for dist in ("sglang", "torch"):
    try:
        res["checks"][dist + " version"] = metadata.version(dist)
    except metadata.PackageNotFoundError:
        res["errors"].append("package %s is not installed" % dist)

torch = None
try:
    import torch  # noqa: F811
    res["checks"]["import torch"] = "ok"
except Exception as e:  # noqa: BLE001
    res["errors"].append("import torch failed: %s" % e)

check_import("sglang")
kernel_mod = None
for name in ("sgl_kernel", "sglang_kernel"):
    if importlib.util.find_spec(name) is not None:
        kernel_mod = name
        break
if kernel_mod is None:
    res["errors"].append("no kernel package (sgl_kernel / sglang_kernel) importable")
elif caps:
    check_import(kernel_mod)  # loads its common_ops library; needs a GPU/driver
else:
    res["skipped"].append("loading %s's CUDA library: no GPU on this host" % kernel_mod)

if torch is not None:
    cuda = getattr(getattr(torch, "version", None), "cuda", None)
    res["checks"]["torch.version.cuda"] = cuda
    if not cuda or not str(cuda).startswith("13."):
        res["errors"].append("torch.version.cuda is %s, need 13.x: install torch from the CUDA 13 index (sglang_torch_index_url)" % cuda)
    arch = list(torch.cuda.get_arch_list()) if hasattr(torch, "cuda") else []
    res["checks"]["arch_list"] = arch
    for cap in sorted(set(caps)):
        sm = "sm_" + cap.replace(".", "")
        if sm not in arch and sm + "a" not in arch:
            res["errors"].append("torch arch list %s lacks %s for a GPU of compute capability %s" % (arch, sm, cap))
    if caps:
        if not torch.cuda.is_available():
            res["errors"].append("torch.cuda.is_available() is False on a host with %d GPU(s): driver/CUDA mismatch?" % len(caps))
        else:
            n = torch.cuda.device_count()
            res["checks"]["device_count"] = n
            if n != len(caps):
                res["errors"].append("torch sees %d GPU(s), the host has %d" % (n, len(caps)))
            if cfg.get("cuda_op", True):
                for i in range(n):
                    try:
                        v = torch.ones(8, device="cuda:%d" % i).sum().item()
                        torch.cuda.synchronize(i)
                        res["checks"]["cuda op on cuda:%d" % i] = v == 8
                        if v != 8:
                            res["errors"].append("CUDA op on cuda:%d returned %s" % (i, v))
                    except Exception as e:  # noqa: BLE001
                        res["errors"].append("CUDA op on cuda:%d failed: %s" % (i, str(e).splitlines()[0]))
    else:
        res["skipped"].append("GPU checks (arch list per GPU, torch.cuda, CUDA op per GPU): no GPU on this host")
print(json.dumps(res))
