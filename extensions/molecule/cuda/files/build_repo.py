# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Build a flat apt repository of NVIDIA-named packages whose tools are tools/fake_nvidia (runs on the test host).

build_repo.py FAKE_DIR REPO_DIR KERNEL_RELEASE  -> REPO_DIR/{*.deb,Packages}, cuda-keyring_1.1-1_all.deb among them.
"""
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile

FAKE, REPO, KERNEL = sys.argv[1:4]
UNIT = """[Unit]
Description=%s (fake for tests)
[Service]
ExecStart=/usr/bin/%s
[Install]
WantedBy=multi-user.target
"""
DAEMON = "#!/bin/sh\nexec sleep infinity\n"
PIN = "Package: nvidia-open nvidia-fabricmanager-* cuda-drivers\nPin: version %s.*\nPin-Priority: 1000\n"
SOURCE = ("deb [signed-by=/usr/share/keyrings/cuda-archive-keyring.gpg] "
          "https://developer.download.nvidia.com/compute/cuda/repos/debian12/x86_64/ /\n")


def package(name, version, arch, files, depends=None, repo=None):
    repo = repo or REPO
    root = tempfile.mkdtemp()
    os.makedirs(os.path.join(root, "DEBIAN"))
    control = "Package: %s\nVersion: %s\nArchitecture: %s\nMaintainer: tests <tests@localhost>\n" % (name, version, arch)
    if depends:
        control += "Depends: %s\n" % depends
    control += "Description: %s (llmserve.sglang test double)\n" % name
    with open(os.path.join(root, "DEBIAN", "control"), "w") as handle:
        handle.write(control)
    for path, content in files.items():
        target = os.path.join(root, path.lstrip("/"))
        os.makedirs(os.path.dirname(target), exist_ok=True)
        if isinstance(content, tuple) and content[0] == "link":
            os.symlink(content[1], target)
        elif isinstance(content, tuple) and content[0] == "tree":
            shutil.copytree(content[1], target)
        else:
            with open(target, "w") as handle:
                handle.write(content)
            os.chmod(target, 0o755 if content.startswith("#!") else 0o644)
    deb = os.path.join(repo, "%s_%s_%s.deb" % (name, version, arch))
    subprocess.run(["dpkg-deb", "--root-owner-group", "-Zgzip", "--build", root, deb], check=True,
                   stdout=subprocess.DEVNULL)
    shutil.rmtree(root)
    return deb, control


def main():
    os.makedirs(REPO, exist_ok=True)
    fake_tree = ("tree", FAKE)
    debs = [
        package("cuda-keyring", "1.1-1", "all",
                {"/usr/share/keyrings/cuda-archive-keyring.gpg": "not a key\n",
                 "/etc/apt/sources.list.d/cuda-debian12-x86_64.list": SOURCE}),
        package("nvidia-driver-pinning-580", "580.95.05-1", "all",
                {"/etc/apt/preferences.d/nvidia-driver-pinning-580": PIN % "580"}),
        package("nvidia-driver-pinning-590", "590.44.01-1", "all",
                {"/etc/apt/preferences.d/nvidia-driver-pinning-590": PIN % "590"}),
        package("cuda-toolkit-13-0", "13.0.2-1", "all", {
            "/usr/local/cuda-13.0/share/fake-nvidia": fake_tree,
            "/usr/local/cuda-13.0/bin/nvcc": ("link", "../share/fake-nvidia/nvcc"),
            "/usr/local/cuda": ("link", "cuda-13.0")}),
    ]
    for version in ("580.95.05-1", "590.44.01-1"):
        debs.append(package("nvidia-open", version, "amd64", {
            "/usr/share/fake-nvidia": fake_tree,
            "/usr/bin/nvidia-smi": ("link", "../share/fake-nvidia/nvidia-smi"),
            "/usr/bin/nvidia-persistenced": DAEMON,
            "/lib/systemd/system/nvidia-persistenced.service": UNIT % ("NVIDIA Persistence Daemon", "nvidia-persistenced"),
        }))
        debs.append(package("nvidia-fabricmanager-580" if version.startswith("580") else "nvidia-fabricmanager",
                            version, "amd64", {
                                "/usr/bin/nv-fabricmanager": DAEMON,
                                "/lib/systemd/system/nvidia-fabricmanager.service":
                                    UNIT % ("NVIDIA fabric manager", "nv-fabricmanager")}))
    entries = [entry(deb, control) for deb, control in debs]
    write_index(REPO, entries)
    # The running kernel's headers come from the OS archive, not from NVIDIA: a second local repository.
    os_repo = os.path.join(os.path.dirname(os.path.dirname(REPO)), "os-extra")
    os.makedirs(os_repo, exist_ok=True)
    deb, control = package("linux-headers-" + KERNEL, "999", "all",
                           {"/usr/src/linux-headers-%s/Makefile" % KERNEL: "# fake\n"}, repo=os_repo)
    write_index(os_repo, [entry(deb, control)])


def entry(deb, control):
    data = open(deb, "rb").read()
    return control.replace("Description:", "Filename: ./%s\nSize: %d\nSHA256: %s\nDescription:" % (
        os.path.basename(deb), len(data), hashlib.sha256(data).hexdigest()), 1)


def write_index(repo, entries):
    with open(os.path.join(repo, "Packages"), "w") as handle:
        handle.write("\n".join(entries))


if __name__ == "__main__":
    main()
