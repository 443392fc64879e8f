# -*- coding: utf-8 -*-
# Note that this module util is **PRIVATE** to the collection. It can have breaking changes at any time.
# Do not use this from other collections or standalone plugins/modules!
# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The one rule per kind of value that reaches a unit file, an argv, a rules file, a label or a shell line.

Each rule is one function that answers None for a good value, else the value's problem as words to follow the
variable's name ("contains a carriage return"); the caller adds the name and the fix. A rule never repeats the value
(it may be a secret): the caller shows it, hidden or with its credentials masked (:func:`without_credentials`).
Kinds: text of one line (:func:`control_name`: no CR, LF, NUL, ... anywhere), a scalar where one is expected
(:func:`scalar_problem`: a list there would add a second ``--worker-urls``), URLs, ports, systemd unit names and
``[Service]`` settings, Prometheus label names and values, and words that a runbook's shell line carries.
"""

from __future__ import annotations

import re

from urllib.parse import urlsplit

# C0 and C1 control characters, DEL, and the Unicode line and paragraph separators: each ends a line for one of the
# readers of what the collection writes (systemd ends a unit line at CR as at LF, YAML 1.1 at NEL, U+2028, U+2029).
CONTROL = re.compile(u"[\x00-\x1f\x7f-\x9f\u2028\u2029]")
_NAMES = {"\n": "a newline", "\r": "a carriage return", "\x00": "a NUL", "\t": "a tab"}
# An address to listen on or a host to reach: a name, IPv4, IPv6 (with a zone after %).
HOST_RE = re.compile(r"^[A-Za-z0-9_.:%-]+\Z")
# A user or group name (shadow-utils' portable set).
USER_RE = re.compile(r"^[a-z_][a-z0-9_-]{0,31}\Z")
# A [Service] setting's name (LimitNOFILE, ProtectSystem).
UNIT_KEY_RE = re.compile(r"^[A-Z][A-Za-z0-9]*\Z")
# systemd unit names: unit_name_escape's safe set; 255 bytes at most (UNIT_NAME_MAX - 1).
UNIT_NAME_RE = re.compile(r"^[A-Za-z0-9:_.@-]+\Z")
UNIT_NAME_MAX = 255
# Prometheus label names (the data model); names starting with __ are reserved for its own use.
LABEL_NAME_RE = re.compile(r"^[a-zA-Z_][a-zA-Z0-9_]*\Z")
# A word every POSIX shell reads as itself, unquoted (shlex.quote's safe set, ASCII only).
SHELL_WORD_RE = re.compile(r"^[A-Za-z0-9_@%+=:,./-]+\Z")
CREDENTIALS = "carries credentials (user:password@) in the URL"


def control_name(value):
    """'a newline', 'a carriage return', 'control character 0x1b', ... for the first control character of the
    text ``value``; None for a value without one (and for one that is not text)."""
    m = CONTROL.search(value) if isinstance(value, str) else None
    if not m:
        return None
    c = m.group(0)
    return _NAMES.get(c, "control character 0x%02x" % ord(c))


def text_problem(value):
    """None for a scalar whose text is one line, else why not: the rule for any value written into a file or given
    as one argv word."""
    problem = scalar_problem(value)
    if problem:
        return problem
    what = control_name(value)  # a number, a boolean or null has none
    return "contains %s" % what if what else None


def scalar_problem(value):
    """None for a string, number, boolean or null; else 'is a list, not one value' (or a mapping)."""
    if value is None or isinstance(value, (str, int, float, bool)):
        return None
    kind = "a mapping" if isinstance(value, dict) else "a list" if isinstance(value, (list, tuple, set)) else \
        "a %s" % type(value).__name__
    return "is %s, not one value" % kind


def without_credentials(url):
    """``url`` with the password of its user:password@ replaced by ``***`` (to show it in a message or a result).
    Everything up to the last ``@`` counts as the user's part: a password with an unencoded ``/``, ``?`` or ``@``
    stays hidden too (a path with an ``@`` is masked with it)."""
    text = str(url)
    scheme, sep, rest = text.partition("://")
    userinfo, at, after = rest.rpartition("@")
    if not sep or not at:
        return text
    user = userinfo.partition(":")[0].partition("/")[0]
    return "%s://%s:***@%s" % (scheme, user, after)


def has_credentials(url):
    """True when ``url`` carries a user or password (``http://user:pw@host``)."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return False
    return bool(parts.username or parts.password)


def url_problem(url, credentials=False):
    """None for an http:// or https:// URL with a host, a port in 1-65535 (or none), no whitespace, no control
    character and - unless ``credentials`` - no user:password@; else the problem."""
    problem = text_problem(url)
    if problem or not isinstance(url, str):
        return problem or "is not a string"
    if re.search(r"\s", url):
        return "contains whitespace"
    try:
        parts = urlsplit(url)
        host = parts.hostname
    except ValueError:
        return "is not a URL (an unclosed [ of an IPv6 address?)"
    try:
        port = parts.port
    except ValueError:
        return "has a port that is not a number in 1-65535"
    if parts.scheme not in ("http", "https") or not host:
        return "is not an http:// or https:// URL with a host"
    if port is not None and port < 1:  # urlsplit itself refuses one above 65535
        return "has a port that is not a number in 1-65535"
    if not credentials and (parts.username is not None or parts.password is not None):
        return CREDENTIALS
    return None


def port(value, zero=False):
    """``value`` as a port number (1-65535, and 0 when ``zero``: off), or None when it is not one. Whole numbers and
    their text ('8000') only: not a boolean, not 80.5."""
    if isinstance(value, bool):
        return None
    if isinstance(value, str) and re.match(r"^\d{1,5}\Z", value):  # its text as written: "80\n" is no port
        value = int(value)
    if not isinstance(value, int) or not (0 if zero else 1) <= value <= 65535:
        return None
    return value


def port_problem(value, zero=False):
    """None for a port (:func:`port`), else the problem."""
    if port(value, zero) is not None:
        return None
    return "is not a port number in %d-65535%s" % (0 if zero else 1, " (0 = off)" if zero else "")


def unit_name_problem(name, suffix=".service"):
    """None for a systemd unit name: letters, digits and ``:_.@-``, no ``/``, no ``..``, ending in ``suffix`` or
    suffixed with it by the caller (``sglang-router`` -> ``sglang-router.service``), not a template without its
    instance (``x@.service``), at most 255 characters; else the problem."""
    problem = text_problem(name)
    if problem or not isinstance(name, str) or not name:
        return problem or "is not a unit name"
    full = name if name.endswith(suffix) else name + suffix
    if "/" in name or ".." in name:
        return "has a '/' or '..' (a unit name, not a path)"
    if not UNIT_NAME_RE.match(name) or name[0] in ".-":
        return "is not a systemd unit name (letters, digits and ':_.@-', not starting with '.' or '-')"
    if full.endswith("@" + suffix):
        return "is a template without an instance (name@%s)" % suffix
    if len(full) > UNIT_NAME_MAX:
        return "is longer than %d characters" % UNIT_NAME_MAX
    return None


def unit_setting_problem(key, value):
    """None for a ``[Service]`` setting ``key=value`` of one line, else the problem (of the key or of the value)."""
    if not isinstance(key, str) or not UNIT_KEY_RE.match(key):
        return "has a key that is not a systemd setting name"
    problem = text_problem(value)
    return "has a value that %s" % problem if problem else None


def label_name_problem(name):
    """None for a Prometheus label name (``[a-zA-Z_][a-zA-Z0-9_]*``, not starting ``__``), else the problem."""
    if not isinstance(name, str) or not LABEL_NAME_RE.match(name):
        return "is not a Prometheus label name ([a-zA-Z_][a-zA-Z0-9_]*)"
    if name.startswith("__"):
        return "starts with '__' (reserved for Prometheus' own labels)"
    return None


def label_value_problem(value):
    """None for a label value: one value of one line (Prometheus takes any UTF-8 but a line break ends a rules
    file's line), else the problem."""
    return text_problem(value)


def shell_word_problem(value):
    """None for a word a shell line can carry as itself (letters, digits and ``_@%+=:,./-``, not starting with
    ``-``): what a runbook's command or an environment file read by sh is built from; else the problem."""
    problem = text_problem(value)
    if problem:
        return problem
    text = str(value)
    if not SHELL_WORD_RE.match(text) or text.startswith("-"):
        return "is not a plain word (letters, digits and _@%+=:,./- only): a shell line would run or split it"
    return None


# The one coercer family for settings from an inventory (values arrive as strings: '8', 'yes'): each answers the
# value of its kind, or None where the value is not one (the caller names the setting and the fix).
TRUE_WORDS = ("1", "true", "yes", "on", "y", "t")
FALSE_WORDS = ("0", "false", "no", "off", "n", "f", "")
_INT_RE = re.compile(r"^\s*-?\d+\s*\Z", re.ASCII)


def to_int(value):
    """A whole number (``8``, ``'8'``, ``8.0``), else None (a bool is no number)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str) and _INT_RE.match(value):
        return int(value)
    return None


def to_float(value):
    """A number (``2``, ``'0.5'``), else None (a bool is no number)."""
    if isinstance(value, bool):
        return None
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


def to_bool(value):
    """True or False from a bool, 0/1 or one of :data:`TRUE_WORDS`/:data:`FALSE_WORDS` (any case), else None."""
    if isinstance(value, bool):
        return value
    if isinstance(value, int) and value in (0, 1):
        return bool(value)
    if isinstance(value, str) and value.strip().lower() in TRUE_WORDS + FALSE_WORDS:
        return value.strip().lower() in TRUE_WORDS
    return None
