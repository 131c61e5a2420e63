#!/usr/bin/env python3
"""The house's include rules, checked against the rooms table of docs/architecture.md.

A room is a folder of src/ (and include/vigil, the public API, named `vigil`). The rooms
table's last column says what each room depends on; this test fails, with file:line, when
  * a room includes a header of a room its row does not list,
  * a file includes another room's .c file,
  * a file includes another room's private header (a name containing `internal`), except
    the exceptions listed below with their reason,
  * the declared dependencies between rooms form a circle,
  * a header's include guard is not VIGIL_ and its path under src/ (src/live/alpha.h:
    VIGIL_LIVE_ALPHA_H), so a moved header cannot keep its old room's guard,
  * a room exists in src/ without a row, or a row names a room that does not exist.
The public API (include/vigil, `vigil/...`) may be included by any room.
So the table stays true as the code grows: adding an include of a new room means saying so
in the architecture.
"""
import os
import re
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), '..', '..'))

# (including room, included header): why it is allowed. Keep this list short (empty
# since src/live reads bound statements through query/bound.h).
PRIVATE_EXCEPTIONS = {}

INCLUDE = re.compile(r'^\s*#\s*include\s*"([a-z_]+)/([^"]+)"')


def rooms_table(text):
    """{room: set(declared dependencies)} from the table under '## Rooms'."""
    m = re.search(r'^## Rooms\n(.*?)(?=^## )', text, re.M | re.S)
    if not m:
        sys.exit('docs/architecture.md: no "## Rooms" section')
    rows = {}
    # A row may run over several lines: it starts with "| `" and ends with "|".
    joined, current = [], None
    for line in m.group(1).splitlines():
        if line.startswith('| `'):
            current = line
        elif current is not None:
            current += ' ' + line
        if current is not None and current.rstrip().endswith('|'):
            joined.append(current)
            current = None
    for line in joined:
        cell = re.match(r'^\| `(src/([a-z_]+)|include/vigil)/` \|', line)
        if not cell:
            continue
        name = cell.group(2) or 'vigil'
        deps_text = line.rstrip().rstrip('|').rsplit('|', 1)[-1]
        # "base (its arena), trace, lang (the model)": the first word of each item.
        deps_text = re.sub(r'\([^()]*\)', '', re.sub(r'\([^()]*\)', '', deps_text))
        deps = set()
        for item in deps_text.split(','):
            word = re.match(r'\s*`?(?:src/)?([a-z_]+)', item)
            if word:
                deps.add(word.group(1))
        rows[name] = deps
    return rows


def check(root):
    """The broken rules of the tree at root, as lines."""
    global ROOT
    ROOT = root
    with open(os.path.join(ROOT, 'docs', 'architecture.md'), encoding='utf-8') as f:
        table = rooms_table(f.read())
    src = os.path.join(ROOT, 'src')
    rooms = sorted(d for d in os.listdir(src) if os.path.isdir(os.path.join(src, d)))
    known = set(rooms) | {'vigil'}
    errors = []
    for room in rooms:
        if room not in table:
            errors.append(f'docs/architecture.md: the rooms table has no row for src/{room}/')
    for name in table:
        if name not in known:
            errors.append(f'docs/architecture.md: the rooms table names {name}/, which is not in src/')
    declared = {r: {d for d in table.get(r, set()) if d in known and d != r} for r in known}
    # The public API (include/vigil) is there for every room; it depends on libc only.
    public = {'vigil'}

    for room in rooms:
        for dirpath, _, files in os.walk(os.path.join(src, room)):
            for fn in sorted(files):
                if not fn.endswith(('.c', '.h')):
                    continue
                path = os.path.join(dirpath, fn)
                rel = os.path.relpath(path, ROOT)
                with open(path, encoding='utf-8', errors='replace') as f:
                    text = f.read()
                if fn.endswith('.h'):
                    want = 'VIGIL_' + re.sub(r'[/.]', '_', os.path.relpath(path, src)).upper()
                    guard = re.search(r'^#ifndef (\w+)\n#define \1$', text, re.M)
                    if not guard or guard.group(1) != want:
                        errors.append(f'{rel}:1: the include guard should be {want}')
                for no, line in enumerate(text.splitlines(), 1):
                    m = INCLUDE.match(line)
                    if not m or m.group(1) not in known or m.group(1) == room:
                        continue
                    other, header = m.group(1), f'{m.group(1)}/{m.group(2)}'
                    if header.endswith('.c'):
                        errors.append(f'{rel}:{no}: includes another room\'s source file '
                                      f'{header} (compile it in through CMake)')
                    elif 'internal' in m.group(2) and \
                            (room, header) not in PRIVATE_EXCEPTIONS:
                        errors.append(f'{rel}:{no}: includes {header}, a private header '
                                      f'of src/{other}/')
                    if other not in declared[room] and other not in public:
                        errors.append(f'{rel}:{no}: src/{room}/ includes {header}, but '
                                      f'docs/architecture.md\'s rooms table does not list '
                                      f'{other} among what {room} depends on')

    # The declared graph has no circle (depth-first search, colours).
    colour = {r: 0 for r in declared}
    stack = []

    def visit(r):
        colour[r] = 1
        stack.append(r)
        for d in sorted(declared[r]):
            if colour[d] == 1:
                cycle = stack[stack.index(d):] + [d]
                errors.append('docs/architecture.md: rooms depend on each other in a circle: '
                              + ' -> '.join(cycle))
            elif colour[d] == 0:
                visit(d)
        stack.pop()
        colour[r] = 2

    for r in sorted(declared):
        if colour[r] == 0:
            visit(r)

    return errors, len(rooms)


def self_test():
    """The checker on a made-up house: it must find each kind of broken rule."""
    import tempfile
    import shutil
    tmp = tempfile.mkdtemp(prefix='vigil-house-')
    try:
        os.makedirs(os.path.join(tmp, 'docs'))
        for room in ('a', 'b', 'c'):
            os.makedirs(os.path.join(tmp, 'src', room))
        with open(os.path.join(tmp, 'docs', 'architecture.md'), 'w') as f:
            f.write('# x\n\n## Rooms\n\n| folder | what | depends on |\n|---|---|---|\n'
                    '| `src/a/` | a | libc, c (its \n  header) |\n'
                    '| `src/b/` | b | a, libc |\n| `src/c/` | c | a |\n\n## Next\n')
        files = {
            'src/a/x.c': '#include "b/y.h"\n#include "c/z.h"\n#include "vigil/vigil.h"\n',
            'src/b/y.c': '#include "a/internal.h"\n#include "a/x.c"\n',
            'src/c/z.h': '#ifndef VIGIL_C_Z_H\n#define VIGIL_C_Z_H\n#include "a/x.h"\n#endif\n',
            'src/b/y.h': '#ifndef VIGIL_A_Y_H\n#define VIGIL_A_Y_H\n#endif\n',
        }
        for name, text in files.items():
            with open(os.path.join(tmp, name), 'w') as f:
                f.write(text)
        errors, _ = check(tmp)
        expected = [
            "src/a/x.c:1: src/a/ includes b/y.h, but docs/architecture.md's rooms table does "
            "not list b among what a depends on",
            "src/b/y.c:1: includes a/internal.h, a private header of src/a/",
            "src/b/y.c:2: includes another room's source file a/x.c (compile it in through CMake)",
            "docs/architecture.md: rooms depend on each other in a circle: a -> c -> a",
            "src/b/y.h:1: the include guard should be VIGIL_B_Y_H",
        ]
        if sorted(errors) != sorted(expected):
            print('self-test: the checker found\n  ' + '\n  '.join(errors) +
                  '\nexpected\n  ' + '\n  '.join(expected))
            return 1
        print(f'self-test: {len(expected)} broken rules found as expected')
        return 0
    finally:
        shutil.rmtree(tmp)


def main():
    if sys.argv[1:] == ['--self-test']:
        return self_test()
    errors, nrooms = check(ROOT)
    for e in errors:
        print(e)
    if errors:
        print(f'{len(errors)} include rule(s) broken')
        return 1
    print(f'{nrooms} rooms, include rules hold')
    return 0


if __name__ == '__main__':
    sys.exit(main())
