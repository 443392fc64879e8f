# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""spec_check's adaptive check (issue 34): a launch that asked for --speculative-adaptive and runs static is found in
the server log (SGLang's warning) or in /server_info, against a loopback server."""
import testpaths  # puts the checkout on sys.path as the collection

import pytest

import netutil
from ansible_collections.llmserve.sglang.plugins.modules import spec_check

REPO = testpaths.REPO
LINE = ("[2026-12-04 10:00:01] speculative_adaptive disabled: speculative_eagle_topk=4 (only topk=1 is supported). "
        "Falling back to static speculative params.\n")


def server(adaptive):
    class H(netutil.JSONHandler):
        def do_GET(self):  # noqa: N802  (http.server's name)
            self.reply(200, {"speculative_algorithm": "EAGLE3", "speculative_adaptive": adaptive})
    return netutil.serve(H)


@pytest.mark.parametrize("log,adaptive,why", [
    (LINE, False, "speculative_eagle_topk=4 (only topk=1 is supported)"),
    ("Load weight end\n", False, "/server_info says speculative_adaptive false"),
    ("Load weight end\n", True, None),
    (None, True, None),
])
def test_adaptive_disabled_reads_the_log_then_server_info(tmp_path, log, adaptive, why):
    srv = server(adaptive)
    path = None
    if log is not None:
        path = tmp_path / "server.log"
        path.write_text("x" * 100 + "\n" + log)
    try:
        url = "http://127.0.0.1:%d" % srv.server_address[1]
        assert spec_check.adaptive_disabled(url, None, str(path) if path else None, 5.0) == why
    finally:
        srv.shutdown()


def test_a_log_that_cannot_be_read_falls_back_to_server_info(tmp_path):
    srv = server(False)
    try:
        url = "http://127.0.0.1:%d" % srv.server_address[1]
        assert spec_check.adaptive_disabled(url, None, str(tmp_path / "missing.log"), 5.0) == \
            "/server_info says speculative_adaptive false"
    finally:
        srv.shutdown()
