"""The creation sites an OCaml source should have under ppx_mtrace, found by reading the
text alone (no ppx, no compiler): every traced form that docs/ocaml.md lists, at the
position docs/ocaml.md gives it -- the operator, the first character of a let%lwt /
let* / and* keyword, the start of the module path of a call (`Lwt.pick`: the `L`),
whatever parentheses or begin..end surround it -- as (line, column), column from 0.

Also the lines marked `root` in a comment: forms there may run outside any traced
callback (so as the main thread, 0).

As a program: source_forms.py FILE.ml prints "line:col" a line."""
import re
import sys

# Traced functions, module by module (docs/ocaml.md, "What is traced")
TRACED = {
    "Lwt": "bind map catch try_bind finalize both all join pick npick choose nchoose "
           "nchoose_split pause wrap wrap1 wrap2 wrap3 wrap4 wrap5 wrap6 wrap7 apply "
           "on_success on_failure on_termination on_any async dont_wait wait task "
           "protected no_cancel",
    "Lwt_list": "iter_s iter_p iteri_s iteri_p map_s map_p mapi_s mapi_p rev_map_s "
                "rev_map_p fold_left_s fold_right_s for_all_s for_all_p exists_s exists_p "
                "find_s filter_s filter_p filter_map_s filter_map_p partition_s partition_p",
    "Lwt_pool": "use",
    "Lwt_stream": "next get peek junk nget npeek njunk last_new to_list iter iter_s "
                  "iter_p iter_n fold fold_s find find_s find_map find_map_s map_s "
                  "filter_s filter_map_s map_list_s get_while_s junk_while_s from",
    "Lwt_seq": "iter_s iter_p iter_n fold_left_s map_s filter_s filter_map_s unfold_lwt to_list",
    "Lwt_result": "bind bind_lwt bind_result bind_lwt_error bind_error map map_error catch both "
                  "iter iter_error",
    "Lwt_mvar": "take put",
    "Lwt_condition": "wait",
    "Lwt_mutex": "lock with_lock",
    "Lwt_unix": "sleep with_timeout timeout",
}
TRACED = {m: set(v.split()) for m, v in TRACED.items()}
# Of those, the ones that make a stream or sequence, not a promise: their callbacks run
# later, as the thread that was current at the call, and they create no thread (nothing
# would resolve it), so they name no site.
THREADLESS = {"Lwt_stream": {"map_s", "filter_s", "filter_map_s", "map_list_s", "from"},
              "Lwt_seq": {"map_s", "filter_s", "filter_map_s", "unfold_lwt"}}
OPS = [">>=", ">|=", "=<<", "=|<", "<&>", "<?>"]
OP_RE = "|".join(re.escape(o) for o in OPS)

CALL = re.compile(r"\b(%s)\.([a-z_][A-Za-z0-9_']*)" % "|".join(TRACED))
PREFIX_OP = re.compile(r"\bLwt(?:\.Infix)?\.\(\s*(?:%s)\s*\)" % OP_RE)
KEYWORD = re.compile(r"\blet%lwt\b|\b(?:let|and)[*+](?![*+!$&%<=>@^|~?.:])")
OPERATOR = re.compile(r"(?<![!$&*+\-./:<=>?@^|~%])(?:" + OP_RE + r")(?![!$&*+\-./:<=>?@^|~%])")
LOCAL_OPEN = re.compile(r"\blet\s+open\s+Lwt\s+in\b")
BARE = re.compile(r"(?<![.A-Za-z0-9_'])([a-z_][A-Za-z0-9_']*)\b")


def blank(src):
    """Comments and string literals as spaces (newlines kept): positions stay put."""
    out, i, n, depth = [], 0, len(src), 0
    sp = lambda s: re.sub(r"[^\n]", " ", s)
    while i < n:
        if src.startswith("(*", i):
            j, depth = i + 2, 1
            while j < n and depth:
                if src.startswith("(*", j):
                    depth, j = depth + 1, j + 2
                elif src.startswith("*)", j):
                    depth, j = depth - 1, j + 2
                else:
                    j += 1
            out.append(sp(src[i:j]))
            i = j
        elif src[i] == '"':
            j = i + 1
            while j < n and src[j] != '"':
                j += 2 if src[j] == "\\" else 1
            out.append('"' + sp(src[i + 1:j]) + '"')
            i = j + 1
        elif src[i] == "'" and i + 2 < n and src[i + 2] == "'":
            out.append("' '")  # a character literal such as '"'
            i += 3
        else:
            out.append(src[i])
            i += 1
    return "".join(out)


def _pos(text, off):
    line = text.count("\n", 0, off) + 1
    return line, off - (text.rfind("\n", 0, off) + 1)


def _region_end(text, start):
    """Where `let open Lwt in` stops applying: the close of the group around it, or the
    next top-level definition."""
    depth, i = 0, start
    while i < len(text):
        c = text[i]
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
            if depth < 0:
                return i
        elif c == "\n" and i + 1 < len(text) and text[i + 1] not in " \t\n":
            return i
        i += 1
    return i


def sites(path):
    text = blank(open(path).read())
    out, inside_prefix = set(), set()
    for m in PREFIX_OP.finditer(text):
        out.add(_pos(text, m.start()))
        inside_prefix.update(range(m.start(), m.end()))
    for m in CALL.finditer(text):
        if m.group(2) in TRACED[m.group(1)] and m.group(2) not in THREADLESS.get(m.group(1), ()):
            out.add(_pos(text, m.start()))
    for m in KEYWORD.finditer(text):
        out.add(_pos(text, m.start()))
    for m in OPERATOR.finditer(text):
        if m.start() not in inside_prefix:
            out.add(_pos(text, m.start()))
    for m in LOCAL_OPEN.finditer(text):
        end = _region_end(text, m.end())
        for b in BARE.finditer(text, m.end(), end):
            if b.group(1) in TRACED["Lwt"]:
                out.add(_pos(text, b.start()))
    return out


def roots(path):
    """Lines whose comment says `root`: their forms may be created by thread 0."""
    return {n for n, line in enumerate(open(path), 1) if re.search(r"\(\*[^*]*\broot\b", line)}


if __name__ == "__main__":
    for line, col in sorted(sites(sys.argv[1])):
        print("%d:%d" % (line, col))
