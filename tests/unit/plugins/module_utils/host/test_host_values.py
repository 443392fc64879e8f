# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The one rule per kind of value (module_utils/host/values.py): each with a table of hostile inputs next to the good
value beside it, and Hypothesis over the text the rule reads."""
from urllib.parse import urlsplit

import pytest
from hypothesis import given, settings, strategies as st

from ansible_collections.llmserve.sglang.plugins.module_utils.host import values

# Every character that ends or splits a line for one of the readers of what the collection writes.
BREAKERS = ["\n", "\r", "\x00", "\t", "\x0b", "\x0c", "\x1b", "\x7f", "\x85", "\u2028", "\u2029"]


@pytest.mark.parametrize("c", BREAKERS)
def test_every_line_breaker_is_a_control_character_and_plain_text_is_not(c):
    assert values.control_name("ok" + c + "x") and values.text_problem("ok" + c)
    assert values.control_name("ok x ~ é 漢") is None and values.text_problem("ok x ~ é 漢") is None


@pytest.mark.parametrize("text, name", [("a\nb", "a newline"), ("a\r", "a carriage return"), ("\x00", "a NUL"),
                                        ("\t", "a tab"), ("\x1b[0m", "control character 0x1b"), ("plain", None),
                                        (5, None), (None, None)])
def test_control_characters_by_name(text, name):
    assert values.control_name(text) == name


@pytest.mark.parametrize("value, problem", [
    (["http://a:1", "--worker-urls"], "is a list, not one value"), ({"a": 1}, "is a mapping, not one value"),
    (("x",), "is a list, not one value"), ("one", None), (8000, None), (0.5, None), (True, None), (None, None),
])
def test_a_list_where_one_value_is_expected_is_refused(value, problem):
    assert values.scalar_problem(value) == problem
    if problem:
        assert values.text_problem(value) == problem


URLS_BAD = [
    ("http://gpu1:30000\r\nExecStartPre=/bin/sh", "carriage return"), ("http://gpu1:30000\n", "newline"),
    ("http://gpu1:30000\x00", "NUL"), ("http://gpu 1:30000", "whitespace"), (" http://gpu1:30000", "whitespace"),
    ("ftp://gpu1/x", "http:// or https://"), ("file:///etc/passwd", "http:// or https://"), ("gpu1:30000", "http://"),
    ("http://:30000", "with a host"), ("http://gpu1:0", "port"), ("http://gpu1:65536", "port"),
    ("http://gpu1:3e4", "port"), ("http://[::1", "not a URL"),
    ("http://user:s3cret@gpu1:30000", "credentials"), ("http://user@gpu1:30000", "credentials"),
    (["http://gpu1:30000"], "list"), (None, "not a string"), (30000, "not a string"),
]
URLS_GOOD = ["http://gpu1:30000", "https://gpu1", "http://10.0.0.1:1", "http://[fe80::1%25eth0]:65535/",
             "http://gpu1:30000/v1?x=1"]


@pytest.mark.parametrize("url, words", URLS_BAD)
def test_hostile_urls_are_refused_and_the_message_never_holds_the_password(url, words):
    problem = values.url_problem(url)
    assert problem and words in problem
    assert "s3cret" not in problem


@pytest.mark.parametrize("url", URLS_GOOD)
def test_good_urls_pass(url):
    assert values.url_problem(url) is None


def test_credentials_pass_only_where_a_setting_moves_them_to_a_secret_file():
    url = "http://user:s3cret@gpu1:30000"
    assert values.url_problem(url) == values.CREDENTIALS and values.url_problem(url, credentials=True) is None
    assert values.has_credentials(url) and not values.has_credentials("http://gpu1:30000")
    assert values.without_credentials(url) == "http://user:***@gpu1:30000"
    assert values.without_credentials("http://gpu1:30000/a") == "http://gpu1:30000/a"
    assert values.without_credentials("http://u:pa/ss@gpu1:1") == "http://u:***@gpu1:1"
    assert values.without_credentials("http://u:p@w@gpu1:1/x") == "http://u:***@gpu1:1/x"
    # the other rules still hold with credentials allowed
    assert values.url_problem("http://u:p@gpu1:1\r", credentials=True)


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=60))
def test_any_text_either_passes_as_a_url_with_its_parts_or_is_refused_without_its_password(text):
    url = "http://user:pw%s@host:1/%s" % (text, text)
    problem = values.url_problem(url, credentials=True)
    if problem is None:
        parts = urlsplit(url)
        assert parts.scheme == "http" and parts.hostname and not values.CONTROL.search(url)
        assert not any(c.isspace() for c in url)
    shown = values.without_credentials(url)
    assert shown.startswith("http://user:***@") and "pw" + text not in shown


@pytest.mark.parametrize("value, zero, port", [
    (1, False, 1), (65535, False, 65535), ("8000", False, 8000), (" 30000 ", False, None), (0, True, 0),
    (0, False, None), (65536, False, None), (-1, False, None), ("80x", False, None), (True, False, None),
    (80.0, False, None), ([8000], False, None), (None, False, None), ("99999", False, None), ("8000\n1", False, None),
])
def test_port_ranges(value, zero, port):
    assert values.port(value, zero) == port
    assert (values.port_problem(value, zero) is None) == (port is not None)


@settings(max_examples=200, deadline=None)
@given(st.one_of(st.integers(), st.text(max_size=8), st.floats(allow_nan=True), st.booleans(), st.none()))
def test_a_port_is_a_whole_number_in_range_or_nothing(value):
    p = values.port(value)
    assert p is None or (isinstance(p, int) and not isinstance(p, bool) and 1 <= p <= 65535)


@pytest.mark.parametrize("name, words", [
    ("../etc/passwd", "'/' or '..'"), ("../../root/.bashrc", "'/' or '..'"), ("a/b", "'/' or '..'"),
    ("x..y", "'/' or '..'"), ("router\nExecStart=/bin/sh", "newline"), ("router\r", "carriage return"),
    ("route r", "not a systemd unit name"), ("-router", "not a systemd unit name"), (".hidden", "not a systemd unit name"),
    ("r$(id)", "not a systemd unit name"), ("tmpl@", "template"), ("tmpl@.service", "template"), ("x" * 250, "longer"),
    ("", "not a unit name"), (["sglang-router"], "list"),
])
def test_hostile_unit_names_are_refused(name, words):
    problem = values.unit_name_problem(name)
    assert problem and words in problem


@pytest.mark.parametrize("name", ["sglang-router", "sglang-router.service", "sglang@kimi", "a:b_c.d-e", "x" * 240])
def test_good_unit_names_pass(name):
    assert values.unit_name_problem(name) is None


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=40))
def test_a_unit_name_that_passes_stays_one_file_in_its_folder(name):
    if values.unit_name_problem(name) is None:
        assert "/" not in name and ".." not in name and not values.CONTROL.search(name) and name.strip() == name


@pytest.mark.parametrize("key, value, words", [
    ("Nice\nExecStartPre", "1", "key"), ("nice", "1", "key"), ("Nice", "1\nExecStartPre=/bin/evil", "newline"),
    ("Nice", "1\rExecStartPre=/bin/evil", "carriage return"), ("Nice", ["1", "2"], "list"), (5, "1", "key"),
])
def test_hostile_unit_settings_are_refused(key, value, words):
    problem = values.unit_setting_problem(key, value)
    assert problem and words in problem
    assert values.unit_setting_problem("Nice", "1") is None and values.unit_setting_problem("LimitNOFILE", 65536) is None


@pytest.mark.parametrize("name, words", [
    ("__name__", "reserved"), ("__foo", "reserved"), ("te{am", "label name"), ("team}", "label name"),
    ("a: b", "label name"), ("team\n  severity", "label name"), ("9lives", "label name"), ("", "label name"),
    ("ümlaut", "label name"), (5, "label name"), ("team\n", "label name"),
])
def test_hostile_label_names_are_refused(name, words):
    problem = values.label_name_problem(name)
    assert problem and words in problem


@pytest.mark.parametrize("name", ["team", "_x", "severity_route", "A9"])
def test_good_label_names_pass(name):
    assert values.label_name_problem(name) is None


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=20))
def test_a_label_name_that_passes_is_prometheus_own_and_not_reserved(name):
    if values.label_name_problem(name) is None:
        assert name and not name.startswith("__") and all(c.isascii() and (c.isalnum() or c == "_") for c in name)
        assert not name[0].isdigit()


@pytest.mark.parametrize("value, ok", [("inference", True), ("a b {x}: 'y'", True), (3, True), ("a\nb", False),
                                       ("a\r", False), (["a"], False), ({"a": 1}, False)])
def test_label_values_are_one_line(value, ok):
    assert (values.label_value_problem(value) is None) is ok


@pytest.mark.parametrize("word, ok", [
    ("kimi-tp8", True), ("gpu1.example.com", True), ("10.0.0.1", True), ("--storage.tsdb.path=/d/p", False),
    ("$(reboot)", False), ("`id`", False), ("a;b", False), ("a b", False), ("a|b", False), ("'a'", False),
    ('"', False), ("-l", False), ("a\n", False), ("", False), ("a&b", False), ("a>b", False), ("é", False),
])
def test_shell_words(word, ok):
    assert (values.shell_word_problem(word) is None) is ok


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=30))
def test_a_shell_word_that_passes_reads_as_itself(word):
    import shlex
    if values.shell_word_problem(word) is None:
        assert shlex.split(word) == [word] and shlex.quote(word) == word and not word.startswith("-")


@pytest.mark.parametrize("host, ok", [("0.0.0.0", True), ("::1", True), ("fe80::1%eth0", True), ("gpu-1.lan", True),
                                      ("gpu1\n", False), ("a b", False), ("", False), ("a;b", False)])
def test_listen_addresses(host, ok):
    assert bool(values.HOST_RE.match(host)) is ok


@pytest.mark.parametrize("user, ok", [("sglang-router", True), ("_svc", True), ("root\n", False), ("Root", False),
                                      ("a" * 33, False), ("-x", False)])
def test_user_names(user, ok):
    assert bool(values.USER_RE.match(user)) is ok


# -- each rule's words, exactly: the refusal messages of the plans are built from them -------------------------------
@pytest.mark.parametrize("rule, value, words", [
    (values.text_problem, "a\nb", "contains a newline"),
    (values.scalar_problem, b"raw", "is a bytes, not one value"),
    (values.url_problem, "http://a b", "contains whitespace"),
    (values.url_problem, "http://[::1", "is not a URL (an unclosed [ of an IPv6 address?)"),
    (values.url_problem, "http://a:x", "has a port that is not a number in 1-65535"),
    (values.url_problem, "http://a:0", "has a port that is not a number in 1-65535"),
    (values.url_problem, "ftp://a", "is not an http:// or https:// URL with a host"),
    (values.url_problem, 5, "is not a string"),
    (values.url_problem, "http://u:p@a", "carries credentials (user:password@) in the URL"),
    (values.port_problem, 0, "is not a port number in 1-65535"),
    (values.port_problem, -1, "is not a port number in 1-65535"),
    (lambda v: values.port_problem(v, zero=True), -1, "is not a port number in 0-65535 (0 = off)"),
    (values.unit_name_problem, "", "is not a unit name"),
    (values.unit_name_problem, "a/b", "has a '/' or '..' (a unit name, not a path)"),
    (values.unit_name_problem, "a b", "is not a systemd unit name (letters, digits and ':_.@-', not starting with "
                                      "'.' or '-')"),
    (values.unit_name_problem, "t@", "is a template without an instance (name@.service)"),
    (values.unit_name_problem, "x" * 248, "is longer than 255 characters"),
    (lambda v: values.unit_setting_problem(v, "1"), "nice", "has a key that is not a systemd setting name"),
    (lambda v: values.unit_setting_problem("Nice", v), "1\r", "has a value that contains a carriage return"),
    (values.label_name_problem, "a-b", "is not a Prometheus label name ([a-zA-Z_][a-zA-Z0-9_]*)"),
    (values.label_name_problem, "__a", "starts with '__' (reserved for Prometheus' own labels)"),
    (values.shell_word_problem, "a;b", "is not a plain word (letters, digits and _@%+=:,./- only): a shell line "
                                       "would run or split it"),
    (values.shell_word_problem, "a\n", "contains a newline"),
])
def test_each_rule_says_its_problem_in_these_words(rule, value, words):
    assert rule(value) == words


@pytest.mark.parametrize("name, ok", [("x" * 247, True), ("x" * 248, False), ("Xorg", True), ("x" * 247 + ".service", True)])
def test_a_unit_name_is_at_most_255_characters_with_its_suffix(name, ok):
    assert (values.unit_name_problem(name) is None) is ok


@pytest.mark.parametrize("word, ok", [(5, True), (True, True), (None, True), ("Xa", True)])
def test_a_scalar_is_a_shell_word_by_its_text(word, ok):
    assert (values.shell_word_problem(word) is None) is ok


@pytest.mark.parametrize("url, shown", [
    ("http://user:pw@h:1", "http://user:***@h:1"), ("http://user@h:1", "http://user:***@h:1"),
    ("http://us/er:pw@h:1", "http://us:***@h:1"), ("http://user:p:w:x@h:1", "http://user:***@h:1"),
    ("h:1", "h:1"), ("http://h:1", "http://h:1"), (5, "5"),
])
def test_credentials_are_masked_up_to_the_last_at(url, shown):
    assert values.without_credentials(url) == shown


@pytest.mark.parametrize("url, has", [("http://user@h", True), ("http://:pw@h", True), ("http://u:p@h", True),
                                      ("http://h", False), ("http://[::1", False)])
def test_has_credentials(url, has):
    assert values.has_credentials(url) is has


@pytest.mark.parametrize("value, want", [
    (8, 8), (-3, -3), (0, 0), ("8", 8), (" 8 ", 8), ("-8", -8), (8.0, 8), ("0", 0),
    (True, None), (False, None), (8.5, None), ("8.0", None), ("8x", None), ("", None), (None, None), ([8], None),
    ("٨", None),  # an Arabic-Indic digit: int() reads it, the one rule does not
])
def test_to_int_takes_whole_numbers_only(value, want):
    got = values.to_int(value)
    assert got == want and (got is None or (isinstance(got, int) and not isinstance(got, bool)))


@pytest.mark.parametrize("value, want", [
    (2, 2.0), ("0.5", 0.5), (" 1.5 ", 1.5), (0, 0.0), ("-1", -1.0),
    (True, None), (False, None), ("x", None), (None, None), ("", None), ([1], None),
])
def test_to_float_takes_numbers_and_no_bool(value, want):
    got = values.to_float(value)
    assert got == want and (got is None or isinstance(got, float))


@pytest.mark.parametrize("value, want", [
    (True, True), (False, False), (1, True), (0, False),
    ("true", True), ("Yes", True), (" ON ", True), ("y", True), ("t", True), ("1", True),
    ("false", False), ("No", False), ("off", False), ("n", False), ("f", False), ("0", False), ("", False),
    (2, None), (-1, None), ("maybe", None), ("truee", None), (None, None), (1.0, None), ([True], None),
])
def test_to_bool_reads_the_one_list_of_boolean_words(value, want):
    assert values.to_bool(value) is want


def test_the_boolean_words_are_disjoint_and_lower_case():
    assert not set(values.TRUE_WORDS) & set(values.FALSE_WORDS)
    assert all(w == w.strip().lower() for w in values.TRUE_WORDS + values.FALSE_WORDS)


def test_a_url_whose_query_holds_another_url_keeps_its_password_hidden():
    url = "http://user:s3cret@h:8000/x?next=http://other"
    shown = values.without_credentials(url)
    assert "s3cret" not in shown and shown == "http://user:***@h:8000/x?next=http://other"
    assert values.without_credentials("http://h:8000/x?next=http://other") == "http://h:8000/x?next=http://other"
