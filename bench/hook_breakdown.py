#!/usr/bin/env python3
"""Where the hooks' instructions go (issue 12 §2): a Markdown table of the
instructions executed in libparlotrt per entry hook, per exit hook and per
event, by part of the hot path (TLS load, busy flag, function-ID lookup,
shadow stack, event count, encoder step, ...).

Input: a callgrind profile recorded with --dump-instr=yes, e.g.
  LD_PRELOAD=build/runtime/libparlotrt.so PARLOT_DIR=/tmp/t PARLOT_QUIET=1 \\
    valgrind --tool=callgrind --dump-instr=yes --callgrind-out-file=cg.out \\
    build/test/e2e/call_fixture_gcc_O2 loop
  bench/hook_breakdown.py cg.out build/runtime/libparlotrt.so runtime/hot_path/hooks.cpp 1200002
Each instruction executed at least --min times (default 100,000: the
per-event path) is assigned to a part by its inline chain (addr2line -i) and,
for lines of hooks.cpp, by the source line's text (pass the hooks.cpp the
library was built from). Counts per hook assume as many entries as exits
(events / 2 each).
"""
import argparse
import collections
import re
import subprocess


def instruction_costs(profile, library_name):
    """Self cost (Ir) per instruction address of the object whose path
    contains library_name (addresses as callgrind gives them: file offsets
    for shared objects)."""
    cost = collections.Counter()
    names = {}
    obj = None
    addr = 0
    in_call = False
    for raw in open(profile):
        line = raw.rstrip('\n')
        if not line:
            continue
        m = re.match(r'(ob|fl|fi|fe|fn|cob|cfi|cfl|cfn)=\((\d+)\)(?: (.*))?', line)
        if m:
            kind, index, name = m.groups()
            key = ('ob' if kind in ('ob', 'cob') else kind, index)
            if name:
                names[key] = name
            if kind == 'ob':
                obj = names.get(key)
            continue
        if line.startswith('calls='):
            in_call = True
            continue
        if line[0] in '0123456789+-*':
            fields = line.split()
            a = fields[0]
            if a.startswith('0x'):
                addr = int(a, 16)
            elif a[0] == '+':
                addr += int(a[1:])
            elif a[0] == '-':
                addr -= int(a[1:])
            if in_call:  # the inclusive cost of a call: not this instruction's
                in_call = False
                continue
            if len(fields) >= 3 and obj and library_name in obj:
                cost[addr] += int(fields[2])
    return cost


def inline_chain(library, addr):
    out = subprocess.run(['addr2line', '-i', '-f', '-C', '-e', library, hex(addr)],
                         capture_output=True, text=True, check=True).stdout.strip().split('\n')
    return [(out[i], out[i + 1]) for i in range(0, len(out) - 1, 2)]


def part_of(chain, hooks_lines):
    innermost_function, innermost_line = chain[0]
    files = [where.split('/')[-1] for _, where in chain]
    if any(f.startswith('function_ids.h') for f in files):
        return 'function-ID lookup (find)'
    if files[0].startswith('codec'):
        return 'encoder step (codec_v2.h, codec.h)'
    if files[0].startswith('shadow_stack'):
        return 'shadow stack push/pop'
    if re.search(r'\bput\b|emit_enter|emit_exit|rank_encoder', innermost_function):
        return 'event count, countdown, codec dispatch (thread_trace.h)'
    if re.search(r'on_enter|on_exit', innermost_function):
        return 'shadow stack push/pop'
    functions = ' '.join(f for f, _ in chain)
    for _, where in chain:
        if where.split('/')[-1].startswith('hooks.cpp'):
            number = int(where.split(':')[-1].split()[0])
            text = hooks_lines[number - 1] if 0 < number <= len(hooks_lines) else ''
            if re.search(r'raise_busy|end_hook|hooks_off', functions) or \
                    re.search(r'busy|hooks_off|deferred|resync_pending|signal_fence', text):
                return 'busy flag, fences, g_hooks_off, deferred signals, resync test'
            if re.search(r'seen|lookup|kExcluded|is_recorded', text):
                return 'function-ID lookup (find)'
            if re.search(r'tls_thread_trace|t == nullptr', text):
                return 'TLS load (thread trace pointer)'
            if 'last_excluded' in text:
                return 'record-filter test (last excluded)'
            if re.search(r'return_address|at_cfa', text):
                return 'shadow stack push/pop'
            return 'prologue, epilogue, arguments'
    return 'other: ' + innermost_function.split('(')[0] + ' ' + innermost_line.split('/')[-1]


def main():
    p = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    p.add_argument('profile')
    p.add_argument('library')
    p.add_argument('hooks_cpp')
    p.add_argument('events', type=int)
    p.add_argument('--min', type=int, default=100000)
    a = p.parse_args()
    hooks_lines = open(a.hooks_cpp).read().split('\n')
    costs = instruction_costs(a.profile, a.library.split('/')[-1].split('.so')[0])
    by_part = collections.Counter()
    by_hook = collections.Counter()
    for addr, n in costs.items():
        if n < a.min:
            continue
        chain = inline_chain(a.library, addr)
        part = part_of(chain, hooks_lines)
        outer = chain[-1][0]
        hook = 'enter' if 'func_enter' in outer else 'exit' if 'func_exit' in outer else 'other'
        by_part[part] += n
        by_hook[(part, hook)] += n
    half = a.events / 2
    print('| part | per entry hook | per exit hook | per event |')
    print('|---|---|---|---|')
    for part, n in by_part.most_common():
        print(f'| {part} | {by_hook[(part, "enter")] / half:.1f} | '
              f'{by_hook[(part, "exit")] / half:.1f} | {n / a.events:.2f} |')
    total = sum(by_part.values())
    print(f'| **total** | {sum(v for (_, h), v in by_hook.items() if h == "enter") / half:.1f} | '
          f'{sum(v for (_, h), v in by_hook.items() if h == "exit") / half:.1f} | '
          f'{total / a.events:.2f} |')


if __name__ == '__main__':
    main()
