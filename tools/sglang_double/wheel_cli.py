# Copyright: (c) 2026, llmserve.sglang contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Read an SGLang wheel's command line from its source with ``ast`` (no import of sglang or torch).

The second, independent reading of the CLI beside gen_flag_table.py (which asks the real parser): a unit test
holds the committed flag tables to what this finds in each cached wheel. It follows the two ways SGLang declares
options:

- ``parser.add_argument("--x", type=..., choices=..., action=..., nargs=..., default=...)`` in
  ``srt/server_args.py`` (every version; all of them up to 0.5.10.post1);
- ``x: A[T, "help" | Arg(choices=, aliases=, cli_name=, type_parser=, nargs=, action=, no_cli=)] = default``
  fields turned into options by ``arg_groups/arg_utils.add_cli_args_from_dataclass`` (0.5.15.post1:
  the ``ServerArgs`` dataclass; 0.5.23: the msgspec structs carrying ``_NS_PATH`` in ``arg_groups/fields/``),
  with the same rules: an explicit action wins; ``Literal[...]`` gives choices; ``List[X]`` gives ``nargs='+'``
  unless a type_parser is set; ``bool`` gives ``store_true``; else ``type_parser`` or ``int``/``float``/``str``.

Choices computed at run time (a list comprehension, a call, a set filled from the environment) are reported as
``None`` (unknown), and so are defaults that are no literal: the reader says what it cannot know.
"""
import ast
import zipfile

UNKNOWN = object()
_ACTIONS = {"store_true": "store_true", "store_false": "store_false", "store_const": "store_const",
            "append": "append", "count": "count", "BooleanOptionalAction": "boolean_optional",
            "DeprecatedAction": "deprecated", "DeprecatedStoreTrueAction": "store_true",
            "DeprecatedAliasStoreAction": "store", "LoRAPathAction": "store"}
_TYPES = {"int": "int", "float": "float", "str": "str", "loads": "json"}


class Wheel:
    """The Python sources of one wheel, parsed on demand."""

    def __init__(self, path):
        self._zip = zipfile.ZipFile(path)
        self._names = set(self._zip.namelist())
        self._trees = {}

    def module(self, dotted):
        """The ast of module ``sglang.x.y`` (a package's ``__init__``), or None when the wheel lacks it."""
        if dotted not in self._trees:
            base = dotted.replace(".", "/")
            tree = None
            for member in (base + ".py", base + "/__init__.py"):
                if member in self._names:
                    tree = ast.parse(self._zip.read(member).decode("utf-8"))
                    break
            self._trees[dotted] = tree
        return self._trees[dotted]

    def members(self, prefix):
        return sorted(n[:-3].replace("/", ".") for n in self._names if n.startswith(prefix) and n.endswith(".py"))


def _name(node):
    """The last name of ``x``, ``a.b.x`` or a string constant."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return None


def _literal(node):
    try:
        return ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return UNKNOWN


class _Module:
    """Constants of one module, following ``from sglang... import NAME`` into the wheel."""

    def __init__(self, wheel, dotted):
        self.wheel, self.dotted = wheel, dotted
        self.tree = wheel.module(dotted)
        self.assigns, self.imports = {}, {}
        for node in self.tree.body if self.tree else ():
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                self.assigns.setdefault(node.targets[0].id, node.value)
            elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value is not None:
                self.assigns.setdefault(node.target.id, node.value)
            elif isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("sglang"):
                for alias in node.names:
                    self.imports[alias.asname or alias.name] = (node.module, alias.name)

    def value(self, node, depth=0):
        """A literal value of an expression of this module, UNKNOWN when it is computed at run time."""
        if depth > 8:
            return UNKNOWN
        lit = _literal(node)
        if lit is not UNKNOWN:
            return lit
        if isinstance(node, ast.Name):
            if node.id in self.assigns:
                return self.value(self.assigns[node.id], depth + 1)
            if node.id in self.imports:
                module, name = self.imports[node.id]
                other = _Module(self.wheel, module)
                return other.value(ast.Name(id=name), depth + 1) if other.tree else UNKNOWN
            return UNKNOWN
        if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
            items = [self.value(e, depth + 1) for e in node.elts]
            if any(i is UNKNOWN for i in items):
                return UNKNOWN
            return set(items) if isinstance(node, ast.Set) else list(items)
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            left, right = self.value(node.left, depth + 1), self.value(node.right, depth + 1)
            if isinstance(left, list) and isinstance(right, list):
                return left + right
            return UNKNOWN
        if isinstance(node, ast.Call) and _name(node.func) in ("list", "tuple", "sorted") and len(node.args) == 1:
            inner = self.value(node.args[0], depth + 1)
            if isinstance(inner, (list, set)):
                return sorted(inner) if _name(node.func) == "sorted" else list(inner)
        return UNKNOWN


def _entry(opts, kind, typ=None, choices=UNKNOWN, nargs=None, default=UNKNOWN, dest=None):
    e = {"opts": opts, "kind": kind, "dest": dest or opts[0].lstrip("-").replace("-", "_")}
    if typ is not None:
        e["type"] = typ
    if nargs is not None:
        e["nargs"] = nargs
    if choices is not None:
        e["choices"] = choices  # UNKNOWN: computed at run time
    e["default"] = default
    return e


def _choices(value):
    """Choices as the tables hold them: a list in declaration order, a set sorted, UNKNOWN or None kept."""
    if isinstance(value, (set, frozenset)):
        return sorted(value, key=str)
    if isinstance(value, tuple):
        return list(value)
    return value


def _type_name(node):
    if node is None:
        return None
    return _TYPES.get(_name(node), _name(node))


def _add_argument(mod, call, field_defaults):
    """One ``parser.add_argument(...)`` call -> entry."""
    opts = [a.value for a in call.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
    kw = dict((k.arg, k.value) for k in call.keywords if k.arg)
    action = _ACTIONS.get(_name(kw["action"]) or _literal(kw["action"]), "store") if "action" in kw else "store"
    if _name(kw.get("action")) == "DeprecatedStoreConstAction":
        nargs_node = kw.get("nargs")
        action = "store" if nargs_node is not None and _literal(nargs_node) is None else "store_const"
    choices = _choices(mod.value(kw["choices"])) if "choices" in kw else None
    nargs = _literal(kw["nargs"]) if "nargs" in kw else None
    default = UNKNOWN
    if "default" in kw:
        node = kw["default"]
        if isinstance(node, ast.Attribute) and _name(node.value) == "ServerArgs":
            default = field_defaults.get(node.attr, UNKNOWN)
        else:
            default = mod.value(node)
    elif action in ("store_true",):
        default = False
    elif action in ("store", "append", "boolean_optional", "store_const", "deprecated"):
        default = None
    dest = _literal(kw["dest"]) if "dest" in kw else None
    switch = action in ("store_true", "store_false", "store_const", "boolean_optional", "deprecated")
    return _entry(opts, action, None if switch else _type_name(kw.get("type")), choices,
                  None if switch else nargs, default, dest)


def _unwrap(node, names):
    """Strip Optional[X] / X | None; names maps alias -> typing name."""
    if isinstance(node, ast.Subscript) and names.get(_name(node.value)) == "Optional":
        return node.slice
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        parts = [p for p in (node.left, node.right) if not (isinstance(p, ast.Constant) and p.value is None)]
        if len(parts) == 1:
            return parts[0]
    if isinstance(node, ast.Subscript) and names.get(_name(node.value)) == "Union":
        elts = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        rest = [e for e in elts if not (isinstance(e, ast.Constant) and e.value is None)]
        if len(rest) == 1:
            return rest[0]
    return node


def _field(mod, node, names):
    """One ``name: A[T, meta] = default`` class field -> entry, or None when it has no CLI surface."""
    ann = node.annotation
    if not (isinstance(ann, ast.Subscript) and names.get(_name(ann.value)) == "Annotated"):
        return None
    parts = ann.slice.elts if isinstance(ann.slice, ast.Tuple) else [ann.slice]
    inner, meta = parts[0], None
    for p in parts[1:]:
        if isinstance(p, ast.Constant) and isinstance(p.value, str):
            meta = {}
            break
        if isinstance(p, ast.Call) and _name(p.func) == "Arg":
            meta = dict((k.arg, k.value) for k in p.keywords if k.arg)
            break
        if isinstance(p, ast.Call) and _name(p.func) == "Derived":
            return None
    if meta is None or (meta.get("no_cli") is not None and _literal(meta["no_cli"]) is True):
        return None
    name = node.target.id
    cli = _literal(meta["cli_name"]) if "cli_name" in meta else "--" + name.replace("_", "-")
    opts = [cli] + (_literal(meta["aliases"]) if "aliases" in meta else [])
    dest = name
    default = mod.value(node.value) if node.value is not None else UNKNOWN
    if node.value is not None and isinstance(node.value, ast.Call) and _name(node.value.func) == "field":
        kws = dict((k.arg, k.value) for k in node.value.keywords)
        default = mod.value(kws["default"]) if "default" in kws else UNKNOWN
    if node.value is None:
        default = None  # no default: argparse's own None (the option is then required)
    if isinstance(default, tuple):
        default = list(default)
    tparser = _type_name(meta.get("type_parser"))
    nargs = _literal(meta["nargs"]) if "nargs" in meta else None
    choices = _choices(mod.value(meta["choices"])) if "choices" in meta else None
    if "action" in meta:
        # add_cli_args_from_dataclass passes an explicit action with its action_kwargs only (no type, no choices)
        action = _ACTIONS.get(_name(meta["action"]) or _literal(meta["action"]), "store")
        extra = {}
        if isinstance(meta.get("action_kwargs"), ast.Dict):
            for k, v in zip(meta["action_kwargs"].keys, meta["action_kwargs"].values):
                key = _literal(k) if k is not None else None
                extra[key] = _type_name(v) if key == "type" else mod.value(v)
        switch = action in ("store_true", "store_false", "store_const", "boolean_optional", "deprecated")
        return _entry(opts, action, extra.get("type"), _choices(extra.get("choices")),
                      None if switch else extra.get("nargs"), default, dest)
    t = _unwrap(inner, names)
    if isinstance(t, ast.Subscript) and names.get(_name(t.value)) == "Literal":
        elts = t.slice.elts if isinstance(t.slice, ast.Tuple) else [t.slice]
        lits = [_literal(e) for e in elts]
        first = type(lits[0]).__name__ if lits else "str"
        return _entry(opts, "store", tparser or _TYPES.get(first, "str"),
                      choices if choices is not None else lits, None, default, dest)
    if isinstance(t, ast.Subscript) and _name(t.value) in ("List", "list") and tparser is None:
        elem = _TYPES.get(_name(t.slice), "str")
        return _entry(opts, "store", elem, choices, nargs or "+", default, dest)
    if _name(t) == "bool":
        return _entry(opts, "store_true", None, None, None, default, dest)
    return _entry(opts, "store", tparser or _TYPES.get(_name(t), "str"), choices, nargs, default, dest)


def _typing_names(tree):
    names = {"A": "Annotated", "Annotated": "Annotated", "Optional": "Optional", "Literal": "Literal",
             "Union": "Union"}
    for node in tree.body:
        if isinstance(node, ast.ImportFrom):
            for a in node.names:
                if a.name in ("Annotated", "Optional", "Literal", "Union", "A"):
                    names[a.asname or a.name] = "Annotated" if a.name == "A" else a.name
    return names


def _record_classes(tree, server_args):
    """Classes whose annotated fields become options: ServerArgs (a dataclass) or those carrying _NS_PATH."""
    for node in tree.body:
        if not isinstance(node, ast.ClassDef):
            continue
        ns = any(isinstance(s, ast.Assign) and any(_name(t) == "_NS_PATH" for t in s.targets) for s in node.body)
        if ns or (server_args and node.name == "ServerArgs"):
            yield node


def read(wheel_path):
    """{first option string: entry} of the wheel's ``ServerArgs.add_cli_args``."""
    wheel = Wheel(wheel_path)
    out = {}
    sources = ["sglang.srt.server_args"] + wheel.members("sglang/srt/arg_groups/fields/")
    field_defaults = {}
    for dotted in sources:
        mod = _Module(wheel, dotted)
        if mod.tree is None:
            continue
        names = _typing_names(mod.tree)
        for cls in _record_classes(mod.tree, dotted == "sglang.srt.server_args"):
            for node in cls.body:
                if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
                    if node.value is not None:
                        field_defaults[node.target.id] = mod.value(node.value)
                    e = _field(mod, node, names)
                    if e is not None:
                        out[e["opts"][0]] = e
    mod = _Module(wheel, "sglang.srt.server_args")
    for node in ast.walk(mod.tree):
        if isinstance(node, ast.FunctionDef) and node.name == "add_cli_args":
            for call in ast.walk(node):
                if isinstance(call, ast.Call) and _name(call.func) == "add_argument":
                    e = _add_argument(mod, call, field_defaults)
                    out[e["opts"][0]] = e
    return out
