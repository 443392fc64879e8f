# -*- coding: utf-8 -*-
# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Make the hostile sources of the models scenario on the seed (issue 25), and the files they aim at.

  /srv/artifacts/evil-manifest/  a file tree whose manifest lists ../../../srv/mol-escape and /srv/mol-victim
  /srv/artifacts/evil.tar        a tarball with a symlink to /etc/shadow and a member ../mol-escape-tar
  /srv/src/evil-dir/             a real checkpoint plus secret.json -> /etc/shadow
  /srv/mol-victim                what the absolute manifest entry would overwrite or delete
  /models/foreign/theirs.bin     a directory the role never made, at a dest
"""
import hashlib
import io
import json
import os
import shutil
import sys
import tarfile


def main(src_model):
    os.makedirs("/srv/artifacts/evil-manifest", exist_ok=True)
    payload = b"PAYLOAD" * 1000
    with open("/srv/artifacts/evil-manifest/payload", "wb") as f:
        f.write(payload)
    digest = hashlib.sha256(payload).hexdigest()
    entries = [{"path": p, "size": len(payload), "sha256": digest}
               for p in ("config.json", "../../../srv/mol-escape", "/srv/mol-victim")]
    with open("/srv/artifacts/evil-manifest/.llmserve-manifest.json", "w") as f:
        json.dump({"version": 1, "files": entries}, f)
    with tarfile.open("/srv/artifacts/evil.tar", "w") as tar:
        for name, kind, data in (("evil/config.json", tarfile.REGTYPE, b"{}"),
                                 ("evil/link", tarfile.SYMTYPE, None),
                                 ("../mol-escape-tar", tarfile.REGTYPE, b"x")):
            info = tarfile.TarInfo(name)
            info.type = kind
            if kind == tarfile.SYMTYPE:
                info.linkname = "/etc/shadow"
            else:
                info.size = len(data)
            tar.addfile(info, io.BytesIO(data) if data is not None else None)
    if not os.path.isdir("/srv/src/evil-dir"):
        shutil.copytree(src_model, "/srv/src/evil-dir")
        os.symlink("/etc/shadow", "/srv/src/evil-dir/secret.json")
    with open("/srv/mol-victim", "w") as f:
        f.write("precious\n")
    os.makedirs("/models/foreign", exist_ok=True)
    with open("/models/foreign/theirs.bin", "w") as f:
        f.write("not the role's\n")


if __name__ == "__main__":
    main(sys.argv[1])
