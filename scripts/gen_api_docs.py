#!/usr/bin/env python3
"""gen_api_docs.py - writes docs/api.md, the C API reference, from the
comments in include/tilec/tilec.h, so that the reference cannot drift from
the header.

    python3 scripts/gen_api_docs.py                 # print the reference
    python3 scripts/gen_api_docs.py -o docs/api.md  # rewrite the file
    python3 scripts/gen_api_docs.py --check docs/api.md
                                    # exit 1 with a diff if it is stale

How the header is read (the conventions tilec.h already follows):

- The first comment of the file is the introduction.
- A comment of the form  /* ---- title ---- */  starts a section.  What
  comes before the first one is the section "Types and constants".
- A declaration runs to the ';' that ends it at brace depth 0, so enums
  and structs are one declaration with their member comments.
  `#define` lines other than the include guard are declarations too.
- Declarations on consecutive lines form one group; a blank line or a
  comment ends the group.  The comment directly above a group (no blank
  line between) documents it.  A comment with a blank line after it is a
  note and is printed where it stands.
- Comments at the end of a declaration's line stay in its code block.

Checked (the script fails, naming the header line, when one is broken), so
that no function is shown under a comment that describes another one:

- Every function has a comment: the group it is in is documented.
- In a group of several declarations, the comment is about the first one;
  every later function (or function-pointer type) of the group must be
  named in it.  A function added below a documented one without a comment
  of its own (or a blank line and a comment) breaks this rule.

Only the standard library is used (python3 on Debian 12).
"""
import argparse
import difflib
import os
import re
import sys

HEADER = "include/tilec/tilec.h"
FIRST_SECTION = "Types and constants"
SECTION_RE = re.compile(r"^/\*\s*-{2,}\s*(.*?)\s*-{2,}\s*\*/$")
# API names (tc_split, TC_OK, TILEC_VERSION) and environment variables
# ($HOME, TILEC_CACHE=0) in comment prose, shown as code
IDENT_RE = re.compile(r"(?<![\w$])(?:\$[A-Za-z_]\w*(?:/\.?\w+)*|(?:tc|TC|TILEC)_\w+)(?:=\w+)?")


def comment_text(lines):
    """The text of a /* ... */ comment given as source lines: the
    delimiters and leading ' * ' removed, as a list of paragraphs (each a
    list of stripped lines)."""
    body = "\n".join(lines).strip()
    body = body[2:] if body.startswith("/*") else body
    body = body[:-2] if body.endswith("*/") else body
    paras, cur = [], []
    for raw in body.split("\n"):
        line = raw.strip()
        if line.startswith("*"):
            line = line[1:].strip()
        if line:
            cur.append(line)
        elif cur:
            paras.append(cur)
            cur = []
    if cur:
        paras.append(cur)
    return paras


def decl_names(code):
    """The names a declaration introduces, and its kind."""
    text = re.sub(r"/\*.*?\*/", " ", code, flags=re.S)
    text = " ".join(text.split())
    m = re.match(r"#\s*define\s+(\w+)", text)
    if m:
        return [m.group(1)], "macro"
    if text.startswith("typedef"):
        m = re.search(r"\(\s*\*\s*(\w+)\s*\)\s*\(", text)  # a function pointer type
        if m:
            return [m.group(1)], "type"
        if "{" in text:
            kind = "enum" if re.match(r"typedef\s+enum\b", text) else "struct"
            m = re.search(r"}\s*(\w+)\s*;$", text)
        else:
            kind, m = "type", re.search(r"(\w+)\s*;$", text)
    elif re.match(r"(?:struct|union|enum)\s+\w+\s*{", text):
        kind, m = text.split()[0], re.match(r"\w+\s+(\w+)", text)
    elif "(" in text:
        kind, m = "function", re.search(r"(\w+)\s*\(", text)
    else:
        kind, m = "variable", re.search(r"(\w+)\s*(?:\[[^\]]*\])?\s*;$", text)
    if not m:
        raise SystemExit("gen_api_docs: cannot tell what this declares:\n" + code)
    return [m.group(1)], kind


def strip_trailing_comment(line):
    return re.sub(r"/\*.*?\*/", "", line).rstrip()


def parse(src):
    """Returns (intro paragraphs, sections); a section is (title, items);
    an item is ("note", paragraphs) or ("group", paragraphs, decls) where
    decls is a list of (code, names, kind, line number)."""
    lines = src.split("\n")
    n = len(lines)
    intro = None
    sections = [(FIRST_SECTION, [])]
    pending = None  # the comment just read, waiting to see what follows
    group = None
    i = 0

    def flush_pending():
        nonlocal pending
        if pending is not None:
            sections[-1][1].append(("note", pending))
            pending = None

    def end_group():
        nonlocal group
        if group is not None:
            sections[-1][1].append(("group", group[0], group[1]))
            group = None

    while i < n:
        line = lines[i]
        s = line.strip()
        if not s:
            end_group()
            flush_pending()
            i += 1
            continue
        if s.startswith("/*"):
            end_group()
            flush_pending()
            j = i
            while "*/" not in lines[j]:
                j += 1
            block = lines[i:j + 1]
            i = j + 1
            m = SECTION_RE.match(s) if len(block) == 1 else None
            if m:
                title = m.group(1)
                sections.append((title[:1].upper() + title[1:], []))
            elif intro is None:
                intro = comment_text(block)
            else:
                pending = comment_text(block)
            continue
        if s.startswith("#"):
            m = re.match(r"#\s*define\s+(\w+)", s)
            if not m or m.group(1).endswith("_H"):
                i += 1  # include guards, #include, #ifdef __cplusplus ...
                continue
            code, j = [line.rstrip()], i
        elif s in ('extern "C" {', "}"):
            i += 1
            continue
        else:
            j, depth, code = i, 0, []
            while True:
                code.append(lines[j].rstrip())
                bare = strip_trailing_comment(lines[j])
                depth += bare.count("{") - bare.count("}")
                if depth == 0 and bare.rstrip().endswith(";"):
                    break
                j += 1
                if j >= n:
                    raise SystemExit("gen_api_docs: unterminated declaration at line %d" % (i + 1))
        names, kind = decl_names("\n".join(code))
        if group is None:
            group = (pending or [], [])
            pending = None
        group[1].append(("\n".join(code), names, kind, i + 1))
        i = j + 1
    end_group()
    flush_pending()
    return intro or [], [s for s in sections if s[1]]


def undocumented(sections, header_path):
    """The rule breaks described at the top: one message per function that
    has no comment, or that sits in a group whose comment does not name
    it (so the reference would show it under another function's
    comment)."""
    errors = []
    for _, items in sections:
        for it in items:
            if it[0] != "group":
                continue
            _, doc, decls = it
            text = " ".join(" ".join(p) for p in doc)
            first = decls[0][1][0]
            for k, (code, names, kind, line) in enumerate(decls):
                if kind != "function" and not (kind == "type" and "(" in code):
                    continue  # enums, structs, plain typedefs and macros may go undescribed
                for nm in names:
                    where = "%s:%d: %s" % (header_path, line, nm)
                    if not doc:
                        errors.append("%s has no comment; write one directly above it" % where)
                    elif k > 0 and not re.search(r"(?<!\w)%s(?!\w)" % re.escape(nm), text):
                        errors.append(
                            "%s follows %s with no blank line or comment between, so the reference "
                            "would show it under %s's comment, which does not name it; give it a "
                            "comment of its own, or name it in that comment" % (where, first, first))
    return errors


def inline_md(text, known):
    """Markdown for one paragraph of comment prose: identifiers become code
    (linked when the reference documents them), and the characters that
    Markdown would take as markup are escaped."""
    out = []
    for k, part in enumerate(re.split(r"(`[^`]*`)", text)):
        if k % 2 == 1:
            out.append(part)
            continue
        pos = 0
        for m in IDENT_RE.finditer(part):
            out.append(escape(part[pos:m.start()]))
            name = m.group(0)
            out.append("[`%s`](#%s)" % (name, name.lower()) if name in known else "`%s`" % name)
            pos = m.end()
        out.append(escape(part[pos:]))
    return "".join(out)


def escape(text):
    """Backslash-escapes '\\', '*', '<', and '_' where it is not inside a
    word (the only places CommonMark would read them as markup here)."""
    text = re.sub(r"([\\*<])", r"\\\1", text)
    return re.sub(r"(?<![A-Za-z0-9])_|_(?![A-Za-z0-9])", r"\\_", text)


def paragraphs_md(paras, known):
    return ["%s\n" % inline_md(" ".join(p), known) for p in paras]


def anchor(title):
    return re.sub(r"[^a-z0-9 -]", "", title.lower()).replace(" ", "-")


def render(intro, sections, header_path):
    known = set()
    for _, items in sections:
        for it in items:
            if it[0] == "group":
                for _, names, _, _ in it[2]:
                    known.update(names)
    out = []
    out.append("# tilec C API reference\n")
    out.append("<!-- Generated by scripts/gen_api_docs.py from %s; do not edit by hand.\n"
               "     Regenerate with: python3 scripts/gen_api_docs.py -o docs/api.md -->\n"
               % header_path)
    out.append("Everything here is declared in `%s`: include it as\n"
               "`#include <tilec/tilec.h>` and link with `-ltilec` (see the\n"
               "[tutorial](tutorial.md), and `pkg-config --cflags --libs tilec` for an\n"
               "installed copy). Each entry shows a group of declarations as the\n"
               "header has them (consecutive lines) and, below it, the comment that\n"
               "stands above that group in the header.\n" % header_path)
    out.extend(paragraphs_md(intro, known))
    out.append("## Contents\n")
    for title, items in sections:
        names = [nm for it in items if it[0] == "group" for _, ns, _, _ in it[2] for nm in ns]
        out.append("- [%s](#%s): %s" % (title, anchor(title),
                                         ", ".join("[`%s`](#%s)" % (nm, nm.lower()) for nm in names)))
    out.append("")
    for title, items in sections:
        out.append("## %s\n" % title)
        for it in items:
            if it[0] == "note":
                out.extend("> %s\n" % p.rstrip("\n") for p in paragraphs_md(it[1], known))
                continue
            _, doc, decls = it
            names = [nm for _, ns, _, _ in decls for nm in ns]
            out.append("".join('<a id="%s"></a>' % nm.lower() for nm in names))
            out.append("### %s\n" % ", ".join("`%s`" % nm for nm in names))
            out.append("```c")
            out.extend(code for code, _, _, _ in decls)
            out.append("```\n")
            out.extend(paragraphs_md(doc, known))
    text = "\n".join(out)
    return re.sub(r"\n{3,}", "\n\n", text).rstrip("\n") + "\n"


def main():
    ap = argparse.ArgumentParser(description="Generate docs/api.md from include/tilec/tilec.h.")
    ap.add_argument("--header", default=None, help="the header (default: %s)" % HEADER)
    ap.add_argument("-o", "--output", help="write the reference to this file")
    ap.add_argument("--check", metavar="FILE",
                    help="compare FILE with the generated reference; exit 1 with a diff if they differ")
    args = ap.parse_args()
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    header = args.header or os.path.join(root, HEADER)
    shown = HEADER if args.header is None else args.header
    with open(header, encoding="utf-8") as fh:
        intro, sections = parse(fh.read())
    errors = undocumented(sections, shown)
    if errors:
        for e in errors:
            print("gen_api_docs: " + e, file=sys.stderr)
        print("gen_api_docs: %d declaration(s) of %s lack a description of their own; nothing "
              "written" % (len(errors), shown), file=sys.stderr)
        return 1
    text = render(intro, sections, shown)
    if args.check:
        try:
            with open(args.check, encoding="utf-8") as fh:
                old = fh.read()
        except OSError as e:
            print("gen_api_docs: cannot read %s: %s" % (args.check, e), file=sys.stderr)
            return 1
        if old == text:
            return 0
        sys.stdout.writelines(difflib.unified_diff(
            old.splitlines(True), text.splitlines(True), args.check, "generated from " + HEADER))
        print("gen_api_docs: %s is out of date; run: python3 scripts/gen_api_docs.py -o %s"
              % (args.check, args.check), file=sys.stderr)
        return 1
    if args.output:
        with open(args.output, "w", encoding="utf-8") as fh:
            fh.write(text)
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
