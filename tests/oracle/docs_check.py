"""Provenance of the figures in the docs (issue #42): every paragraph, list item or table
of README.md and doc/*.md that holds a measured figure of time, speed, ratio, share or
memory must name what produces it: a make target, a script or binary of the tree
(tests/..., bench/..., build/..., examples/...), a backquoted command line, the
`JITANON_*` macro that sets it, or an explicit "(measured: COMMAND)".  A table or list
item may have it in the paragraph that leads into it.  Settings ("default 64 MiB") are not
measurements.  A guess about time ("~1 min", "about 12 minutes") fails wherever it stands,
and the README's Start section must name `make demo`, `make test` and `make unit`, with a
time figure only in a paragraph (or on a code line) that says how it was measured
("(measured: ...)" or `/usr/bin/time`).

usage: docs_check.py [--readme FILE] [--makefile Makefile] [FILE...]
Prints one "FAIL docs ...: FILE:LINE: ..." line per offence, else a PASS line per check.
Exit status 0 either way (the oracles' convention: the lines are the result).
"""
import re, sys

NUM = r'(?<![\w.,/=-])\d+(?:[.,]\d+)*'
# what a measurement looks like: a time, a ratio, a share, an amount of memory or a rate
FIGURE = re.compile(NUM + r'(?:\s?(?:ms|µs|us|ns|s|min|minutes?|seconds?|hours?)\b'
                    r'|x\b|\s?%|\s?(?:[KMGT]B|[MGT]iB)(?:/s)?\b)')
TIME = re.compile(NUM + r'\s?(?:ms|µs|us|ns|s|min|minutes?|seconds?|hours?)\b')
GUESS = re.compile(r'(?:~\s?|\b(?:about|around|roughly|approximately|some)\s)'
                   + r'\d+(?:[.,]\d+)*\s?(?:ms|s|min|minutes?|seconds?|hours?)\b')
# a figure that is a setting, not a measurement: "default 64 MiB", "`--follow-idle` (60 s)"
SETTING = re.compile(r'(?:\bdefaults?(?: is| to)?:?\s*|`--[\w-]+`\s\()$')
PROGRAMS = ('perf', 'make', 'node', 'python3', 'python3.12', 'python3.13', 'java', 'erl',
            'deno', 'bun', 'php', 'jitanon-inject', 'jitanon-record', 'symbolize', 'jitgen',
            'jitdump-cat', 'perfdata-cat', 'jitdump-elf', 'jitanon-script', 'tinyjit',
            'bench-micro', 'valgrind', 'time', '/usr/bin/time', 'strace', 'hotspot-perfparser',
            'go', 'cp', 'ls', 'du', 'sh', 'bash', 'gdb', 'readelf', 'objdump', 'eu-elflint')
# scripts and programs of the tree (not its headers, libraries or other docs)
PATHS = re.compile(r'(?:\btests/[\w./-]+\.(?:sh|py|c|js)\b|\bbench/[\w.-]+\.(?:sh|c)\b|'
                   r'\b(?:build|examples)/[\w-]+(?![\w.-]*\.(?:so|md|h)\b)|\.ci/run|'
                   r'\b[\w-]+\.(?:sh|py)\b|\(measured: [^)]+\))')
SPAN = re.compile(r'`([^`]+)`')
ENV = re.compile(r'^(?:[A-Z_][A-Z0-9_]*=\S*\s+)+')


def make_targets(path):
    try:
        with open(path) as f:
            return {m.group(1) for m in (re.match(r'^([a-z][\w-]*):', l) for l in f) if m}
    except OSError:
        return {'demo', 'test', 'unit', 'bench', 'fuzz', 'fuzz-run', 'all', 'install'}


def names_command(text, targets):
    """Does TEXT name what produces a figure?"""
    if PATHS.search(text):
        return True
    if re.search(r'\bmake (?:[A-Z_]+=\S+ )*(?:%s)\b' % '|'.join(map(re.escape, sorted(targets))), text):
        return True
    for m in SPAN.finditer(text):
        if re.match(r'^JITANON_\w+$', m.group(1)):
            return True  # a figure the header sets: the macro is where it comes from
        words = ENV.sub('', m.group(1).strip()).split()
        if not words or words[0] not in PROGRAMS:
            continue
        # a command line, not the mention of a tool (`jitanon-inject`, `perf report`); and
        # `perf inject --jit` is what the figures are compared with, not what measures them
        if words[0] != 'make' and len(words) < (3 if words[0] == 'perf' else 2):
            continue
        if words == ['perf', 'inject', '--jit']:
            continue
        return True
    return False


def figures(text):
    """The figures in TEXT that look measured (code spans and settings left out)."""
    plain = SPAN.sub(lambda m: ' ' * len(m.group(0)), text)
    return [m.group(0) for m in FIGURE.finditer(plain)
            if not SETTING.search(text[:m.start()]) and not text.startswith(' by default', m.end())]


def units(lines):
    """Split markdown into units: (kind, first line number, text, lead-in text).  kind is
    para, table, item or code; a table's or item's lead-in is the paragraph just before."""
    out = []
    cur, kind, start = [], None, 0
    lead = ''        # the last paragraph, while only tables and items follow it
    in_code = False

    def flush():
        nonlocal cur, kind, lead
        if cur:
            text = '\n'.join(cur)
            out.append((kind, start, text, lead if kind in ('table', 'item') else ''))
            if kind == 'para':
                lead = text
            elif kind == 'code':
                lead = ''
        cur, kind = [], None

    for i, line in enumerate(lines, 1):
        if line.lstrip().startswith('```'):
            if in_code:
                cur.append(line)
                flush()
                in_code = False
            else:
                flush()
                in_code, kind, start, cur = True, 'code', i, [line]
            continue
        if in_code:
            cur.append(line)
            continue
        if not line.strip():
            if kind != 'item':
                flush()
            continue
        if line.startswith('#'):
            flush()
            lead = ''
            out.append(('heading', i, line, ''))
            continue
        k = 'table' if line.lstrip().startswith('|') else \
            'item' if re.match(r'^\s*(?:[-*]|\d+\.)\s', line) else None
        if k == 'item' or (k == 'table') != (kind == 'table') or \
                (kind == 'item' and k is None and not line.startswith((' ', '\t'))):
            flush()
        if not cur:
            kind, start = k or 'para', i
        cur.append(line)
    flush()
    return out


def check(path, lines, targets, readme, fails, counts):
    for kind, start, text, lead in units(lines):
        for n, line in enumerate(text.split('\n')):
            for g in GUESS.finditer(line):
                if '(measured:' not in line:
                    fails.append(('docs guesses', '%s:%d: "%s" is a guess about time: say which '
                                  'command measured it, or drop it' % (path, start + n, g.group(0))))
        if kind in ('code', 'heading'):
            continue
        found = figures(text)
        if not found:
            continue
        counts[0] += 1
        if names_command(text, targets) or names_command(lead, targets):
            continue
        fails.append(('docs provenance', '%s:%d: %s with %s names no command that measures it '
                      '(a make target, a tests/ or bench/ script, a backquoted command, or '
                      '"(measured: COMMAND)")' % (path, start, 'a ' + {'para': 'paragraph', 'item':
                      'list item', 'table': 'table'}[kind], ', '.join('"%s"' % f for f in found[:4]))))
    if readme:
        check_start(path, lines, fails)


def check_start(path, lines, fails):
    """The README's Start section: the three commands, and a time figure only in a
    paragraph (or on a code line) that names how it was measured."""
    first = next((i for i, l in enumerate(lines, 1) if re.match(r'^## Start\b', l)), 0)
    if not first:
        fails.append(('docs start', '%s: no "## Start" section' % path))
        return
    end = next((i for i, l in enumerate(lines, 1) if i > first and l.startswith('## ')), len(lines) + 1)
    sec = lines[first:end - 1]
    for cmd in ('make demo', 'make test', 'make unit'):
        if cmd not in '\n'.join(sec):
            fails.append(('docs start', '%s:%d: the Start section does not name `%s`' % (path, first, cmd)))
    for kind, start, text, _ in units(sec):
        # each code line is a command of its own; a paragraph is one statement
        parts = enumerate(text.split('\n')) if kind == 'code' else [(0, text)]
        for n, part in parts:
            if '(measured:' in part or '/usr/bin/time' in part:
                continue
            for m in TIME.finditer(part):
                fails.append(('docs start', '%s:%d: "%s" in the Start section without the command '
                              'that measured it' % (path, first + start + n, m.group(0))))


def main(argv):
    readme, makefile, files = None, 'Makefile', []
    i = 0
    while i < len(argv):
        if argv[i] == '--readme':
            readme = argv[i + 1]; i += 2
        elif argv[i] == '--makefile':
            makefile = argv[i + 1]; i += 2
        else:
            files.append(argv[i]); i += 1
    targets = make_targets(makefile)
    fails, counts = [], [0]
    for path in ([readme] if readme else []) + files:
        with open(path, encoding='utf-8') as f:
            lines = f.read().split('\n')
        check(path, lines, targets, path == readme, fails, counts)
    for name, msg in fails:
        print('FAIL %s: %s' % (name, msg))
    bad = {name for name, _ in fails}
    n = len(files) + (1 if readme else 0)
    if 'docs provenance' not in bad:
        print('PASS docs provenance: each of %d paragraphs, items and tables with a measured figure '
              'in %d files names the command that measures it' % (counts[0], n))
    if 'docs guesses' not in bad:
        print('PASS docs guesses: no "~N min" or "about N s" in %d files' % n)
    if readme and 'docs start' not in bad:
        print('PASS docs start: %s\'s Start section names make demo, make test and make unit, '
              'with no unmeasured time' % readme)


if __name__ == '__main__':
    main(sys.argv[1:])
