#!/usr/bin/env python3
"""Writes crates/fiojob/src/table.rs: every option fio 3.x knows, from fio's own sources.

    git clone https://github.com/axboe/fio && \
      crates/fiojob/tools/gen_fio_table.py fio/.git > crates/fiojob/src/table.rs

For every release tag fio-3.* and the checked-out HEAD, the script reads the `struct fio_option`
arrays of options.c (the core options), engines/*.c (each engine's options, tied to the engines
whose `struct ioengine_ops` names the array in `.options`) and profiles/*.c (the profiles'
options, which fio registers next to the core ones), and the engine names of every
`struct ioengine_ops`. It keeps the union over the releases, so an option that one 3.x release
knew is known. Only names, aliases, the kind of value and the scope are taken; no fio code.
"""
import re
import subprocess
import sys

GIT = sys.argv[1] if len(sys.argv) > 1 else '.git'


def git(*args):
    return subprocess.run(['git', '--git-dir=' + GIT] + list(args),
                          capture_output=True, text=True, check=True).stdout


TOKENS = re.compile(r'"(?:\\.|[^"\\])*"|\'(?:\\.|[^\'\\])*\'|/\*.*?\*/|//[^\n]*', re.S)


def no_comments(src):
    return TOKENS.sub(lambda m: m.group(0) if m.group(0)[0] in '"\'' else ' ', src)


def blocks(body):
    """Top-level {...} blocks of an initializer list (body starts after its opening brace)."""
    out, depth, start, i = [], 0, None, 0
    while i < len(body):
        c = body[i]
        if c in '"\'':
            j = i + 1
            while j < len(body) and body[j] != c:
                j += 2 if body[j] == '\\' else 1
            i = j + 1
            continue
        if c == '{':
            if depth == 0:
                start = i
            depth += 1
        elif c == '}':
            depth -= 1
            if depth == 0:
                out.append(body[start:i + 1])
            if depth < 0:
                break
        i += 1
    return out


def fields(block):
    """The designated initializers at the block's own level (.name = ..., .type = ...)."""
    flat, depth, i = '', 0, 0
    while i < len(block):
        c = block[i]
        if c in '"\'':
            j = i + 1
            while j < len(block) and block[j] != c:
                j += 2 if block[j] == '\\' else 1
            if depth == 1:
                flat += block[i:j + 1]
            i = j + 1
            continue
        if c == '{':
            depth += 1
        elif c == '}':
            depth -= 1
        elif depth == 1:
            flat += c
        i += 1
    out = {}
    for k in ('name', 'alias', 'type', 'options'):
        m = re.search(r'\.' + k + r'\s*=\s*("[^"]*"|[A-Za-z_0-9]+)', flat)
        if m and m.group(1) != 'NULL':
            out[k] = m.group(1).strip('"')
    return out


ARRAY = re.compile(r'struct\s+fio_option\s+(\w+)\s*\[[^\]]*\]\s*=\s*\{')
OPS = re.compile(r'struct\s+ioengine_ops\s+\w+\s*=\s*\{')

tags = sorted((t for t in git('tag').split() if re.fullmatch(r'fio-3\.\d+', t)),
              key=lambda t: int(t.split('.')[1]))
head = git('rev-parse', 'HEAD').strip()
revs = tags + [head]

options = {}   # name -> {aliases, types, scope: set of 'core' | 'profile:X' | 'engine'}
engines = {}   # engine name -> set of option names
for rev in revs:
    files = [f for f in git('ls-tree', '-r', '--name-only', rev).split()
             if f.endswith('.c') and f != 'engines/skeleton_external.c'
             and (f == 'options.c' or f.startswith(('engines/', 'profiles/')))]
    arrays = {}
    srcs = {f: no_comments(git('show', f'{rev}:{f}')) for f in files}
    # Options defined by macros in engine headers (cmdprio.h's CMDPRIO_OPTIONS): the macro's
    # first definition is put in where an array uses it.
    macros = {}
    for h in git('ls-tree', '-r', '--name-only', rev).split():
        if h.startswith('engines/') and h.endswith('.h'):
            text = no_comments(git('show', f'{rev}:{h}')).replace('\\\n', ' ')
            for m in re.finditer(r'#define\s+(\w+)\([^)]*\)([^\n]*)', text):
                if '.name' in m.group(2):
                    macros.setdefault(m.group(1), m.group(2))
    for f in srcs:
        for name, body in macros.items():
            srcs[f] = re.sub(name + r'\([^)]*\)', lambda _m, b=body: b, srcs[f])
    for f, src in srcs.items():
        for m in ARRAY.finditer(src):
            names = []
            for b in blocks(src[m.end():]):
                fl = fields(b)
                if 'name' not in fl:
                    continue
                names.append(fl['name'])
                o = options.setdefault(fl['name'], {'aliases': set(), 'types': set(), 'scope': set()})
                if 'alias' in fl:
                    o['aliases'].add(fl['alias'])
                if o.get('rev') != rev:
                    o['rev'], o['last'] = rev, set()
                if 'type' in fl:
                    o['types'].add(fl['type'])
                    o['last'].add(fl['type'])
                if f == 'options.c':
                    o['scope'].add('core')
                elif f.startswith('profiles/'):
                    o['scope'].add('profile:' + f[len('profiles/'):-2])
                else:
                    o['scope'].add('engine')
            arrays[(f, m.group(1))] = names
            arrays.setdefault(m.group(1), names)
    for f, src in srcs.items():
        for m in OPS.finditer(src):
            fl = fields(blocks(src[m.end() - 1:])[0])
            if 'name' not in fl:
                continue
            e = engines.setdefault(fl['name'], set())
            arr = arrays.get((f, fl.get('options'))) or arrays.get(fl.get('options')) or []
            e.update(arr)

engine_of = {}
for e, opts in engines.items():
    for o in opts:
        engine_of.setdefault(o, set()).add(e)


def rs(s):
    return '"' + s.replace('\\', '\\\\').replace('"', '\\"') + '"'


print('// Generated by crates/fiojob/tools/gen_fio_table.py from fio\'s sources (options.c,')
print('// engines/*.c, profiles/*.c) of every release %s … %s and commit %s.' % (tags[0], tags[-1], head[:12]))
print('// Do not edit: run the script again (then cargo fmt).')
print()
print('use crate::options::{FioOption, Scope, CURRENT, DEPRECATED, FLAG, VALUE};')
print()
print('/// Every option fio 3.x knows, sorted by name.')
print('pub const TABLE: &[FioOption] = &[')
for name in sorted(options):
    o = options[name]
    if 'core' in o['scope']:
        scope = 'Scope::Core'
    elif any(s.startswith('profile:') for s in o['scope']):
        scope = 'Scope::Profile(%s)' % rs(sorted(s for s in o['scope'] if s.startswith('profile:'))[0][8:])
    else:
        scope = 'Scope::Engine(&[%s])' % ', '.join(rs(e) for e in sorted(engine_of.get(name, ())))
    flag = 'FIO_OPT_STR_SET' in o['types']
    # Deprecated (accepted and ignored by fio) in the latest source that has it.
    deprecated = bool(o['last'] & {'FIO_OPT_DEPRECATED', 'FIO_OPT_SOFT_DEPRECATED'})
    print('    FioOption::new(%s, &[%s], %s, %s, %s),' % (
        rs(name), ', '.join(rs(a) for a in sorted(o['aliases'])),
        'FLAG' if flag else 'VALUE', 'DEPRECATED' if deprecated else 'CURRENT', scope))
print('];')
print()
print('/// Every engine name fio 3.x has built in (`ioengine=`), sorted.')
print('pub const ENGINES: &[&str] = &[')
for e in sorted(engines):
    print('    %s,' % rs(e))
print('];')
