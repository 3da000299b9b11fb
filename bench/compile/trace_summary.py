#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Summarises a clang -ftime-trace file (clang 19): where one translation unit's compile time
goes.

    python3 bench/compile/trace_summary.py TRACE.json [--top 25] [--top-functions 15] [--width 150]
                                           [--match REGEX ...]

Traces come from `python3 bench/compile_time.py --time-trace DIR` (or any clang -ftime-trace).
Prints, in milliseconds:
  1. phases: the frontend (headers, module loading, parsing, template instantiation, IR
     emission) against the backend (the IR optimiser and machine code generation);
  2. template instantiations (InstantiateFunction / InstantiateClass events) aggregated by the
     template's name with its arguments stripped — `total` counts an event only when no event of
     the same name encloses it (clang's own rule for its "Total" rows), `self` excludes every
     nested event — then the root instantiations (those the TU's own code asked for, with
     everything they pulled in) and the most expensive single ones, arguments kept;
  3. functions by backend time: `opt` is the IR optimiser (the outermost new-PM
     PassManager<Function> run of the function plus the inliner on its own call-graph SCC),
     `codegen` is machine code generation (the legacy pass manager's OptFunction events under
     CodeGenPasses), then the same aggregated by stripped name;
  4. with --match REGEX (repeatable): the frontend time under instantiations whose name matches
     (outermost) and the backend time of the functions whose demangled name matches, e.g.
     --match 'strata::detail::record|backprop_leaves|reverse_steps|detail::send<|detail::tape<'
     for the code autograd recording instantiates.
Events shorter than the trace's granularity (-ftime-trace-granularity, 500 us by default) are
not in the file, so the per-name sums are lower bounds; the phase totals are exact.
"""
import argparse
import collections
import json
import re
import shutil
import subprocess


def load(path):
    with open(path) as f:
        data = json.load(f)
    events = data["traceEvents"] if isinstance(data, dict) else data
    return [e for e in events if e.get("ph") == "X" and "dur" in e]


INST = ("InstantiateFunction", "InstantiateClass")


def detail(e):
    return e.get("args", {}).get("detail", "")


def nest(events):
    """Gives each complete event its parent (the innermost enclosing event on its thread) and
    sets e['self'] = dur minus the durations of its direct children."""
    by_thread = collections.defaultdict(list)
    for e in events:
        if not e["name"].startswith("Total "):
            by_thread[e.get("tid")].append(e)
    for evs in by_thread.values():
        evs.sort(key=lambda e: (e["ts"], -e["dur"]))
        stack = []
        for e in evs:
            while stack and e["ts"] >= stack[-1]["ts"] + stack[-1]["dur"]:
                stack.pop()
            e["parent"] = stack[-1] if stack else None
            e["self"] = e["dur"]
            if stack:
                stack[-1]["self"] -= e["dur"]
            stack.append(e)
    return [e for evs in by_thread.values() for e in evs]


def ancestors(e):
    p = e.get("parent")
    while p is not None:
        yield p
        p = p.get("parent")


_OPERATOR = re.compile(r"operator(\(\)|\[\]|<=>|<<=|>>=|<<|>>|<=|>=|->\*|->|[-+*/%^&|~!=<>,]=?|\s+\w[\w:\s*&]*)")


def drop_groups(text, open_, close, kept):
    """text without its (nested) open_ ... close groups; at depth 0, kept(text, i, out) gives the
    length of a token to keep as it is there (an operator's own brackets), or 0."""
    out, depth, i = [], 0, 0
    while i < len(text):
        n = kept(text, i, out) if depth == 0 else 0
        if n:
            out.append(text[i:i + n])
            i += n
            continue
        c = text[i]
        if c == open_:
            depth += 1
        elif c == close and depth > 0:
            depth -= 1
        elif depth == 0:
            out.append(c)
        i += 1
    return "".join(out)


def strip_args(name):
    """`void ns::f<int, X<Y>>::g<3>(int) const` -> `ns::f::g`: drops template arguments, module
    attachments (`@strata.loop`), parameter lists, qualifiers and a demangled name's return
    type; lambdas become `{lambda}` and local classes `{anonymous}`."""
    name = re.sub(r"@[\w.:]+", "", name)
    name = re.sub(r"\(lambda at [^)]*\)", "{lambda}", name)
    name = re.sub(r"\(anonymous (class|struct|namespace)\)", "{anonymous}", name)
    name = re.sub(r"'lambda\d*'", "{lambda}", name)
    name = re.sub(r"\{lambda\(([^{}]*)\)#\d+\}", "{lambda}", name)
    # template argument lists (an operator's own < or > is kept)
    def operator_token(text, i, out):
        m = _OPERATOR.match(text, i)
        return m.end() - i if m and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")) else 0

    s = drop_groups(name, "<", ">", operator_token)
    # parameter lists: every (...) group except operator()'s own parentheses
    s = drop_groups(s, "(", ")", lambda text, i, out: 2 if text.startswith("()", i) and "".join(out).endswith("operator") else 0)
    s = re.sub(r"\s+(const|volatile|&&|&)(?=$|\s|::)", "", s).strip()
    # the return type: what precedes the last space that is not part of an operator's name
    parts = s.split(" ")
    while len(parts) > 1 and parts[-2].endswith("operator"):
        parts[-2:] = [parts[-2] + " " + parts[-1]]
    return parts[-1] or s


def demangle(names):
    names = sorted(set(n for n in names if n.startswith("_Z")))
    tool = shutil.which("llvm-cxxfilt-19") or shutil.which("llvm-cxxfilt") or shutil.which("c++filt")
    if not names or not tool:
        return {}
    out = subprocess.run([tool], input="\n".join(names) + "\n", capture_output=True, text=True).stdout
    return dict(zip(names, out.splitlines()))


def ms(us):
    return f"{us / 1000:9.1f}"


def short(s, width):
    s = re.sub(r"@[\w.:]+", "", s)
    return s if len(s) <= width else s[: width - 3] + "..."


def phases(events, totals):
    def total(name):
        return totals.get(name, 0)

    def sum_of(name):
        return sum(e["dur"] for e in events if e["name"] == name)

    rows = [
        ("whole compile (ExecuteCompiler)", total("ExecuteCompiler")),
        ("frontend (all Frontend events)", sum_of("Frontend")),
        ("  headers: Source (textual #includes)", total("Source")),
        ("  module loading: Module Load / ReadAST", total("Module Load") or total("ReadAST")),
        ("  ... of which Read Loaded AST (per module)", total("Read Loaded AST")),
        ("  parsing declarations and bodies, headers included (outermost)", total("ParseDeclarationOrFunctionDefinition")),
        ("  template instantiation: InstantiateFunction (outermost)", total("InstantiateFunction")),
        ("  template instantiation: InstantiateClass (outermost)", total("InstantiateClass")),
        ("  template instantiation, either kind (outermost)", sum(
            e["dur"] for e in events if e["name"] in INST and not any(p["name"] in INST for p in ancestors(e)))),
        ("  ... PerformPendingInstantiations (end of TU)", total("PerformPendingInstantiations")),
        ("  IR emission: CodeGen Function", total("CodeGen Function")),
        ("  constant evaluation: Evaluate*", sum(v for k, v in totals.items() if k.startswith("Evaluate"))),
        ("backend (Backend)", total("Backend")),
        ("  IR optimiser (Optimizer)", total("Optimizer")),
        ("  ... inliner + CGSCC simplification (ModuleToPostOrderCGSCCPassAdaptor)",
         total("ModuleToPostOrderCGSCCPassAdaptor")),
        ("  machine code generation (CodeGenPasses)", total("CodeGenPasses")),
    ]
    print("## phases (ms)")
    for label, v in rows:
        print(f"{ms(v)}  {label}")
    print("Declarations read lazily from the BMIs while parsing and instantiating are not traced as "
          "events of their own: they are inside the parse and instantiation times above.")


def instantiations(events, top, width):
    inst = [e for e in events if e["name"] in ("InstantiateFunction", "InstantiateClass")]
    for e in inst:
        e["stripped"] = strip_args(detail(e))
    agg = collections.defaultdict(lambda: [0, 0, 0])  # count, total (outermost of same name), self
    for e in inst:
        key = (e["name"].replace("Instantiate", ""), e["stripped"])
        a = agg[key]
        a[0] += 1
        a[2] += e["self"]
        if not any(p.get("stripped") == e["stripped"] and p["name"] == e["name"] for p in ancestors(e)):
            a[1] += e["dur"]
    spaces = collections.Counter()
    for e in inst:
        s = e["stripped"]
        spaces["strata::detail" if s.startswith("strata::detail::") else s.split("::")[0] if "::" in s else "(global)"] += e["self"]
    print("\n## instantiation self time by namespace (ms): " +
          ", ".join(f"{k} {v / 1000:.0f}" for k, v in spaces.most_common(6)))
    print(f"\n## template instantiations by name, arguments stripped: top {top} by total (ms)")
    print("    total      self  count  kind      template")
    for (kind, name), (n, t, s) in sorted(agg.items(), key=lambda kv: -kv[1][1])[:top]:
        print(f"{ms(t)} {ms(s)} {n:6d}  {kind:8s}  {short(name, width)}")
    print(f"\n## template instantiations by name: top {top} by self time (ms)")
    print("     self     total  count  kind      template")
    for (kind, name), (n, t, s) in sorted(agg.items(), key=lambda kv: -kv[1][2])[:top]:
        print(f"{ms(s)} {ms(t)} {n:6d}  {kind:8s}  {short(name, width)}")
    roots = [e for e in inst if not any(p["name"] in INST for p in ancestors(e))]
    print(f"\n## root instantiations (no instantiation encloses them: what the TU's own code asked "
          f"for), arguments kept: top {top} of {len(roots)} by total (ms)")
    print("    total  kind      instantiation")
    for e in sorted(roots, key=lambda e: -e["dur"])[:top]:
        print(f"{ms(e['dur'])}  {e['name'].replace('Instantiate', ''):8s}  {short(detail(e), width)}")
    print(f"\n## single instantiations, arguments kept: top {top} by self time (ms)")
    print("     self     total  kind      instantiation")
    for e in sorted(inst, key=lambda e: -e["self"])[:top]:
        print(f"{ms(e['self'])} {ms(e['dur'])}  {e['name'].replace('Instantiate', ''):8s}  {short(detail(e), width)}")


def functions(events, top, width):
    opt = collections.Counter()
    codegen = collections.Counter()
    for e in events:
        d = detail(e)
        if e["name"] == "PassManager<Function>":
            if not any(p["name"] == "PassManager<Function>" and detail(p) == d for p in ancestors(e)):
                opt[d] += e["dur"]
        elif e["name"] == "InlinerPass" and d.startswith("(") and "," not in d:
            opt[d.strip("()")] += e["dur"]
        elif e["name"] == "OptFunction":
            codegen[d] += e["dur"]
    names = demangle(list(opt) + list(codegen))
    total = collections.Counter()
    for d in set(opt) | set(codegen):
        total[d] = opt[d] + codegen[d]
    print(f"\n## functions by backend time: top {top} (ms; {len(total)} functions, "
          f"opt {sum(opt.values()) / 1000:.0f} + codegen {sum(codegen.values()) / 1000:.0f} ms listed)")
    print("    total       opt   codegen  function")
    for d, t in total.most_common(top):
        print(f"{ms(t)} {ms(opt[d])} {ms(codegen[d])}  {short(names.get(d, d), width)}")
    agg = collections.defaultdict(lambda: [0, 0, 0])
    for d, t in total.items():
        a = agg[strip_args(names.get(d, d))]
        a[0] += 1
        a[1] += opt[d]
        a[2] += codegen[d]
    print(f"\n## functions by backend time, aggregated by stripped name: top {top} (ms)")
    print("    total       opt   codegen  count  function")
    for name, (n, o, c) in sorted(agg.items(), key=lambda kv: -(kv[1][1] + kv[1][2]))[:top]:
        print(f"{ms(o + c)} {ms(o)} {ms(c)} {n:6d}  {short(name, width)}")


def matched(events, pattern):
    rx = re.compile(pattern)
    hit = [e for e in events if e["name"] in INST and rx.search(detail(e))]
    ids = set(map(id, hit))
    front = sum(e["dur"] for e in hit if not any(id(p) in ids for p in ancestors(e)))
    fns = [e for e in events if e["name"] in ("OptFunction", "PassManager<Function>")]
    names = demangle([detail(e) for e in fns])
    opt = codegen = 0
    for e in fns:
        if not rx.search(re.sub(r"@[\w.:]+", "", names.get(detail(e), detail(e)))):
            continue
        if e["name"] == "OptFunction":
            codegen += e["dur"]
        elif not any(p["name"] == e["name"] and detail(p) == detail(e) for p in ancestors(e)):
            opt += e["dur"]
    print(f"\n## /{pattern}/: instantiations {front / 1000:.0f} ms (outermost); "
          f"functions: opt {opt / 1000:.0f} + codegen {codegen / 1000:.0f} ms")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("trace", nargs="+")
    ap.add_argument("--top", type=int, default=25, help="rows in the instantiation tables")
    ap.add_argument("--top-functions", type=int, default=15, help="rows in the backend tables")
    ap.add_argument("--width", type=int, default=150, help="names are cut to this many characters")
    ap.add_argument("--match", action="append", default=[], metavar="REGEX",
                    help="also print the frontend time under instantiations whose name matches REGEX "
                         "(outermost) and the backend time of functions whose demangled name matches")
    args = ap.parse_args()
    for path in args.trace:
        raw = load(path)
        totals = {e["name"][len("Total "):]: e["dur"] for e in raw if e["name"].startswith("Total ")}
        events = nest(raw)
        print(f"# {path}")
        phases(events, totals)
        instantiations(events, args.top, args.width)
        functions(events, args.top_functions, args.width)
        for pattern in args.match:
            matched(events, pattern)


if __name__ == "__main__":
    main()
