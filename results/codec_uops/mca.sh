#!/bin/bash
# results/codec_uops/mca.sh: static throughput model (llvm-mca and a port table) of the avx512 level's hot loops (results/codec_uops/mca.md)
#
# Usage, from anywhere in the checkout:  results/codec_uops/mca.sh [OUTDIR]     (default /tmp/mca)
# Needs gcc (through the mpicc of the build), python3, llvm-mca (LLVM 14 was used). Builds nothing of
# the project: it compiles src/core/codec_simd.c to assembly with the exact flags make uses for the
# avx512 level, cuts the hot loops (found by what they contain, not by label numbers), writes each
# as OUTDIR/<loop>.s, runs llvm-mca on it (icelake-server, sapphirerapids) and a port-table model of
# a server core (512-bit uops on ports 0 and 5 only), and prints the table of results/codec_uops/mca.md.
set -e
OUT=${1:-/tmp/mca}
mkdir -p "$OUT"
cd "$(dirname "$0")/.."

# The compile line of the avx512 object, as make would run it: make -n -W (what if the source
# were new; nothing is built). Not make -n -B: with -B make remakes the Makefile itself (runs
# automake and configure, even under -n), and config.status then blanks every .deps/*.Plo.
# So only on an up-to-date Makefile (make -n would remake an out-of-date one too).
for f in Makefile.in config.status configure Makefile.am; do
    if [ "$f" -nt Makefile ]; then
        echo "results/codec_uops/mca.sh: $f is newer than Makefile: run make first (this script will not)" >&2
        exit 1
    fi
done
line=$(env -u MAKEFLAGS -u MFLAGS make -n V=1 -W src/core/codec_simd.c \
    src/core/libapsmpi_codec_avx512_la-codec_simd.lo 2>/dev/null | grep -- '--mode=compile' | head -1)
[ -n "$line" ] || { echo "results/codec_uops/mca.sh: no compile line from make -n -W" >&2; exit 1; }
cc=$(echo "$line" | sed -e 's/.*--mode=compile //' -e 's/ -MT [^ ]*//' -e 's/ -MD//' -e 's/ -MP//' \
    -e 's/ -MF [^ ]*//' -e 's/ -c -o .*//')
echo "# compile: $cc -S -g0 -o $OUT/codec_simd.s src/core/codec_simd.c" >&2
$cc -S -g0 -o "$OUT/codec_simd.s" src/core/codec_simd.c
# codec_mx_simd.c's avx512 object has the same flags (libapsmpi_codec_avx512_la_CFLAGS)
$cc -S -g0 -o "$OUT/codec_mx_simd.s" src/core/codec_mx_simd.c
# The same machine code as the library's object (when that object is there and current)?
obj=src/core/.libs/libapsmpi_codec_avx512_la-codec_simd.o
if [ -f "$obj" ]; then
    as -o "$OUT/codec_simd.o" "$OUT/codec_simd.s"
    dis() { objdump -d --no-show-raw-insn "$1" | sed -n 's/^ *[0-9a-f]*:\t//p'; }
    if cmp -s <(dis "$OUT/codec_simd.o") <(dis "$obj"); then echo "# same instructions as $obj" >&2
    else echo "# WARNING: differs from $obj (stale object, or other flags)" >&2; fi
fi

python3 - "$OUT" <<'PYEOF'
import itertools, os, re, subprocess, sys
OUT = sys.argv[1]
SRC = {f: open(os.path.join(OUT, f + '.s')).read().split('\n') for f in ('codec_simd', 'codec_mx_simd')}

def function(name, src='codec_simd'):
    out, on = [], False
    for l in SRC[src]:
        if re.match(r'^%s:' % re.escape(name), l):
            on = True
        elif on and re.match(r'^\s*\.size\s+%s,' % re.escape(name), l):
            break
        if on and not l.strip().startswith(('.cfi', '.p2align', '#')) and l.strip():
            out.append(l.strip() if not l.startswith('.L') else l)
    return out

def is_label(l): return re.match(r'^\.L\w+:$', l) is not None

def trace(fl, head, w=None, wreg=None, limit=600):
    """The instructions of one pass through the loop that starts at label head: jmp followed,
    a conditional branch on 'cmp $imm, wreg' decided with the width w, any other taken only if
    it goes to head (the branch back), else not taken (an exit, or a rare case)."""
    lab = {l[:-1]: i for i, l in enumerate(fl) if is_label(l)}
    i, out, last_cmp = lab[head] + 1, [], None
    while len(out) < limit:
        l = fl[i]
        if is_label(l):
            if l[:-1] == head:
                return out
            i += 1
            continue
        out.append(l)
        m = re.match(r'^(j\w+)\s+(\.L\w+)$', l)
        if m:
            op, tgt = m.groups()
            if op == 'jmp':
                taken = True
            elif last_cmp and wreg and last_cmp[1] == wreg:
                k = w - last_cmp[0]   # cmp $imm, reg sets flags of reg - imm
                taken = {'jle': k <= 0, 'jg': k > 0, 'jl': k < 0, 'jge': k >= 0, 'je': k == 0, 'jne': k != 0}[op]
            else:
                taken = tgt == head
            if taken:
                if tgt == head:
                    return out
                i = lab[tgt] + 1
                continue
        mc = re.match(r'^cmp[lq]\s+\$(-?\d+),\s*(%\w+)$', l)
        last_cmp = (int(mc.group(1)), mc.group(2)) if mc else None
        i += 1
    raise SystemExit('trace from %s did not come back' % head)

def loops(fl):
    """The labels of fl that a later branch jumps back to (loop heads)."""
    lab = {l[:-1]: i for i, l in enumerate(fl) if is_label(l)}
    heads = []
    for i, l in enumerate(fl):
        m = re.match(r'^j\w+\s+(\.L\w+)$', l)
        if m and m.group(1) in lab and lab[m.group(1)] < i and m.group(1) not in heads:
            heads.append(m.group(1))
    return heads

def mn(i): return i.split()[0]

def pick(func, want, w=None, wreg=None, src='codec_simd'):
    """The one loop of func whose single pass satisfies want(list of instructions)."""
    fl = function(func, src)
    found = []
    for h in loops(fl):
        try:
            t = trace(fl, h, w, wreg)
        except (SystemExit, KeyError, IndexError):
            continue
        if want(t):
            found.append((h, t))
    # the same pass is reached from each label a branch comes back to (rotations of one cycle):
    # keep distinct cycles, each written from its first vector load
    uniq = {}
    for h, t in found:
        key = min(tuple(t[k:] + t[:k]) for k in range(len(t)))
        first = next((k for k, i in enumerate(t) if mn(i) in ('vbroadcasti128', 'vpmovzxbd', 'vcvtph2ps', 'vpandd')
                      and '(' in i), 0)
        uniq.setdefault(key, (h, t[first:] + t[:first]))
    if len(uniq) > 1:   # a cycle closed by a jmp back is a rare path that rejoins the loop (a NaN block, say)
        closed = {k: v for k, v in uniq.items() if not trace(fl, v[0], w, wreg)[-1].startswith('jmp')}
        if closed:
            uniq = closed
    if len(uniq) != 1:
        raise SystemExit('%s: %d loops match (%s)' % (func, len(uniq), ', '.join(v[0] for v in uniq.values())))
    (h, t), = uniq.values()
    return h, t

def has(t, *names): return all(any(mn(i) == n for i in t) for n in names)
def count(t, name): return sum(mn(i) == name for i in t)
def nobranch(t): return sum(mn(i).startswith('j') for i in t) == 1

# ---- the loops ----
L = {}
# encode8's nearest loops of ebits <= 7: e4m3 (FN: ovf_code = nan_code) takes the one without the NaN
# select (one compare to a mask, thr > y), e3m2 (IEEE) the one with it (two)
def compares(t): return sum(mn(i) in ('vpcmpd', 'vpcmpgtd', 'vpcmpud') for i in t)
def enc8_loop(t, counting, ncmp):
    return (nobranch(t) and has(t, 'vpmovdb', 'vaddps', 'vmulps') and has(t, 'vptestnmd') == counting
            and not has(t, 'vcvtps2ph') and compares(t) == ncmp)
L['enc8'] = pick('encode8', lambda t: enc8_loop(t, False, 2))
L['enc8_count'] = pick('encode8', lambda t: enc8_loop(t, True, 2))
L['enc8_one'] = pick('encode8', lambda t: enc8_loop(t, False, 1))
L['enc8_one_count'] = pick('encode8', lambda t: enc8_loop(t, True, 1))
L['sum8_one'] = pick('sum8', lambda t: nobranch(t) and has(t, 'vpmovdb') and count(t, 'vaddps') == 2 and not has(t, 'vpblendmd'))
# the 8-bit packed sum with its decode in 16-bit lanes (32 codes a pass); e4m3 takes the one
# without the inf/NaN choice (one compare of 16-bit lanes per operand, not two)
L['sum8_words_one'] = pick('sum8', lambda t: nobranch(t) and has(t, 'vpmullw', 'vpunpcklwd', 'vpackusdw', 'vpmovwb')
                           and count(t, 'vpcmpgtw') + count(t, 'vpcmpw') == 2 and not has(t, 'vpcmpeqw'))
L['dec8'] = pick('decode8', lambda t: nobranch(t) and has(t, 'vpmovzxbd', 'vmulps') and not has(t, 'vpsubd'))
L['pack6'] = pick('pack_codes_vec', lambda t: has(t, 'vpmovzxbd') and any(re.match(r'^movl\s+%e\w+,\s*-?\d*\(', i) for i in t)
                  and not any(mn(i) == 'movw' for i in t))
L['unpack6'] = pick('unpack_codes_vec', lambda t: has(t, 'vpshufb', 'vpackuswb'))
# widths 4 and 6 pack and unpack 32 codes a pass with simd_bytes.h (multiply-adds; one shuffle)
L['pack6_32'] = pick('pack_codes_vec', lambda t: has(t, 'vpmaddubsw', 'vpmaddwd'))
L['unpack6_32'] = pick('unpack_codes_vec', lambda t: has(t, 'vpshufb', 'vpermd') and not has(t, 'vpackuswb'))
# the bit-packed sum of a 6-bit IEEE format (e3m2: ovf_code != nan_code: sum_packed_small), width 6 in %r8d
def wreg_of(func):
    regs = set(re.findall(r'cmpl\s+\$8,\s*(%\w+)', '\n'.join(function(func))))
    if len(regs) != 1:
        raise SystemExit('%s: the width register is not one: %s' % (func, regs))
    return regs.pop()
wr = wreg_of('sum_packed_vec')
L['sum_packed6_32'] = pick('sum_packed_vec', lambda t: has(t, 'vpmaddubsw', 'vpmaddwd') and count(t, 'vaddps') == 4
                           and any(re.match(r'^vpcmpd\s+\$0,', i) for i in t), w=6, wreg=wr)
L['sum_packed6'] = pick('sum_packed_vec', lambda t: has(t, 'vpshufb') and count(t, 'vaddps') == 2
                        and any(re.match(r'^vpcmpd\s+\$0,', i) for i in t), w=6, wreg=wr)
L['enc16_fp16'] = pick('encode16', lambda t: nobranch(t) and has(t, 'vcvtps2ph', 'vpmovdw') and not has(t, 'vptestnmd'))
L['sum16_fp16'] = pick('sum16', lambda t: nobranch(t) and has(t, 'vcvtph2ps', 'vcvtps2ph'))
# calibration: the MX encode loops (codec_mx_simd.c, format constants compiled in), two 32-element
# blocks a pass, timed on the same Xeon (results/codec_xeon/README.md, second section); sh = 23 - mbits
def shift_by(t, n): return any(re.match(r'^vpsrld\s+\$%d,' % n, i) for i in t)
L['mx_enc8'] = pick('encode_vec', lambda t: has(t, 'vpmovdb', 'vaddps') and not has(t, 'vpmaddubsw') and shift_by(t, 20)
                    and not any(mn(i).startswith('vptest') or mn(i) == 'vpcmpeqd' for i in t), src='codec_mx_simd')
L['mx_enc6'] = pick('encode_vec', lambda t: has(t, 'vpmaddubsw', 'vaddps') and shift_by(t, 21)
                    and not any(mn(i).startswith('vptest') or mn(i) == 'vpcmpeqd' for i in t), src='codec_mx_simd')

for k, (h, t) in L.items():
    with open(os.path.join(OUT, k + '.s'), 'w') as f:
        f.write('# %s: gcc loop %s, one pass\n' % (k, h) + '\n'.join(t) + '\n')

# ---- llvm-mca ----
def mca(name, cpu):
    r = subprocess.run(['llvm-mca', '-mcpu=' + cpu, '-iterations=1000', '-bottleneck-analysis',
                        '-instruction-info=0', os.path.join(OUT, name + '.s')], capture_output=True, text=True)
    txt = r.stdout
    with open(os.path.join(OUT, '%s.%s.mca.txt' % (name, cpu)), 'w') as f:
        f.write(r.stderr + txt)
    cyc = int(re.search(r'Total Cycles:\s+(\d+)', txt).group(1)) / 1000.0
    uops = int(re.search(r'Total uOps:\s+(\d+)', txt).group(1)) / 1000.0
    ports = re.findall(r'- (\w+Port\d+)\s+\[\s*([\d.]+)%', txt)
    top = sorted(ports, key=lambda p: -float(p[1]))[:2]
    dd = re.search(r'Data Dependencies:\s+\[\s*([\d.]+)%', txt)
    pr = txt.split('Resource pressure per iteration:')[1].split('\n')[2].split()
    busiest = max(float(x) for x in pr if x != '-')   # cycles the busiest port is busy per pass
    return cyc, uops, top, float(dd.group(1)) if dd else 0.0, busiest

# ---- port-table model of a server core (Ice Lake SP / Sapphire Rapids) ----
# Each instruction's uops as the ports that can run them (uops.info for Ice Lake / Alder Lake P
# and Skylake-X for the 512-bit forms); while 512-bit uops are in flight port 1's vector ALU
# is fused with port 0's, so vector uops of such a loop run on ports 0 and 5 only (FMA-class
# 512-bit float ops on both, as on parts with two 512-bit FMA units). 'L' load, 'A' store
# address, 'D' store data.
VALU = set('vpaddd vpsubd vpaddq vpsubq vpandd vpandq vpand vpandn vpandnd vpor vpord vporq vpxor vpxord vpxorq '
           'vpternlogd vpternlogq vpblendmd vpminud vpminsd vpmaxud vpmaxsd vandpd vandps vorps vmovdqa32 vmovdqa64 '
           'vpabsd vmovdqa vpaddw vpsubw vpblendmw vmovdqu16'.split())   # vmovdqa here: register to register (a load is matched first)
SHUF = set('vpshufb vpermd vpermq vpermb vpermi2d vpermt2d vpermi2b vpermt2b vinserti64x4 vinserti128 vinserti32x4 '
           'vextracti128 vextracti64x4 vextracti64x2 vextracti32x4 vpackusdw vpackuswb vpshufd vpunpcklqdq '
           'vpsrldq vpslldq vpbroadcastd vpbroadcastq vshufi32x4 vshufi64x2 vpunpcklwd vpunpckhwd'.split())
def reg_kind(op):
    if op.startswith('%zmm'): return 'z'
    if op.startswith('%ymm'): return 'y'
    if op.startswith('%xmm'): return 'x'
    if op.startswith('%k'): return 'k'
    if op.startswith('%'): return 'g'
    if op.startswith('$'): return 'i'
    return 'm'
def operands(ins):
    s = ins.split(None, 1)[1] if len(ins.split(None, 1)) > 1 else ''
    s = re.sub(r'\{[^}]*\}', '', s)
    ops, depth, cur = [], 0, ''
    for ch in s:
        if ch == '(': depth += 1
        if ch == ')': depth -= 1
        if ch == ',' and depth == 0:
            ops.append(cur.strip()); cur = ''
        else:
            cur += ch
    if cur.strip(): ops.append(cur.strip())
    return ops
def uops_of(ins, wide):
    m, ops = mn(ins), operands(ins)
    kinds = [reg_kind(o) for o in ops]
    vec = '05' if wide else '015'
    fp = '05' if wide else '01'
    sh = '0' if wide else '01'
    dst, srcs = (kinds[-1] if kinds else None), kinds[:-1]
    u = []
    if dst == 'm':                                   # a store
        if m in ('vpmovdb', 'vpmovdw'):
            u += ['5', '5']
        return u + ['A', 'D']
    load = 'm' in srcs
    if m in ('vmovdqu32', 'vmovdqu', 'vmovdqu64', 'vmovdqu8', 'vmovdqa', 'vmovups', 'vbroadcasti128', 'movq', 'movl', 'movzbl',
             'vmovq') and load:
        return ['L']
    if load: u.append('L')
    if m in VALU: u.append(vec)
    elif m in ('vmulps', 'vaddps', 'vsubps', 'vfmadd231ps', 'vfmadd213ps'): u.append(fp if 'z' in kinds else ('01' if not wide else '0'))
    elif m in ('vpmaddubsw', 'vpmaddwd', 'vpmulld', 'vpmuludq', 'vpmullw'): u.append(fp if 'z' in kinds else ('01' if not wide else '0'))
    elif m in ('vpsrld', 'vpslld', 'vpsrlq', 'vpsllq', 'vpsrad', 'vpsrlw', 'vpsllw'):
        u += [sh, '5'] if (srcs and srcs[0] == 'x') else [sh]
    elif m in ('vpsrlvd', 'vpsllvd', 'vpsrlvq', 'vpsllvq'): u.append(sh)
    elif m in SHUF: u.append('5')
    elif m in ('vpcmpd', 'vpcmpud', 'vpcmpeqd', 'vpcmpgtd', 'vptestmd', 'vptestnmd', 'vpcmpw', 'vpcmpuw', 'vpcmpeqw',
               'vpcmpgtw'): u.append('5')
    elif m in ('vpmovdb', 'vpmovdw', 'vpmovqd', 'vpmovwb'): u += ['5', '5']
    elif m in ('vpmovzxbd', 'vpmovzxwd', 'vpmovzxbw', 'vpmovsxbw', 'vpmovsxbd'): u.append('5')
    elif m == 'vcvtps2ph': u += ['0', '5']
    elif m == 'vcvtph2ps': u += ['0'] if load else ['0', '5']
    elif m in ('vmovq', 'vmovd'): u.append('0' if dst == 'g' else '5')
    elif m.startswith('kmov'): u.append('0' if dst == 'g' else '5')
    elif m in ('sall', 'salq', 'shrq', 'shrl', 'sarq', 'shlq') and ops and ops[0] == '%cl': u += ['06', '06', '06']   # as llvm-mca counts them
    elif m in ('sall', 'salq', 'shrq', 'shrl', 'sarq', 'shlq'): u.append('06')
    elif m == 'jmp': u.append('6')
    elif m.startswith('j'): u.append('06')
    elif m in ('addq', 'addl', 'subq', 'subl', 'cmpq', 'cmpl', 'movb', 'orq', 'orl', 'andq', 'andl', 'xorl', 'xorq', 'movq',
               'movl', 'leaq', 'leal', 'testq', 'testl', 'incq', 'decq'):
        u.append('0156')
    else:
        raise SystemExit('port table: no entry for: ' + ins)
    return u
def port_model(t, cpu):
    """Cycles per pass, and what binds: min over port assignments of the busiest port (exact for a
    fractional assignment: the max over port sets S of the uops that must run in S, over |S|)."""
    wide = any('%zmm' in i for i in t)
    alu = ['0', '1', '5', '6'] + (['B'] if cpu == 'spr' else [])   # B: Sapphire Rapids' port 10
    us = []
    fused = 0
    prev = None
    for i in t:
        u = uops_of(i, wide)
        if cpu == 'spr':
            u = [x + 'B' if x == '0156' else x for x in u]
        us += u
        # rename (fused domain): one per instruction (load+op and store micro-fused), multi-uop
        # ALU instructions one per uop, cmp/test/add/sub + jcc one for both
        n = max(1, len([x for x in u if x not in ('L', 'A', 'D')]))
        if mn(i).startswith('j') and prev and mn(prev) in ('cmpq', 'cmpl', 'testq', 'testl', 'addq', 'subq'):
            n = 0
        fused += n
        prev = i
    best, why = 0.0, ''
    for r in range(1, len(alu) + 1):
        for S in itertools.combinations(alu, r):
            need = sum(1 for x in us if x not in ('L', 'A', 'D') and set(x) <= set(S))
            if need / r > best + 1e-9:
                best, why = need / r, 'p' + ''.join(S).replace('B', '10') + ' (%d uops)' % need
    nload = 3 if cpu == 'spr' else 2
    width = 6 if cpu == 'spr' else 5
    other = [(us.count('L') / nload, 'loads'), (us.count('A') / 2.0, 'store address'),
             (us.count('D') / 2.0, 'store data'), (fused / width, 'rename (%d fused uops)' % fused)]
    for c, w in other:
        if c > best + 1e-9:
            best, why = c, w
    p05 = sum(1 for x in us if x not in ('L', 'A', 'D') and set(x) <= set('05'))
    p5 = sum(1 for x in us if x == '5')
    return best, why, len([x for x in us if x not in ('A',)]), p05, p5

ELEMS = {'enc8': 16, 'enc8_count': 16, 'enc8_one': 16, 'enc8_one_count': 16, 'sum8_one': 16, 'sum8_words_one': 32, 'dec8': 16, 'pack6': 8, 'unpack6': 8, 'pack6_32': 32, 'unpack6_32': 32, 'sum_packed6_32': 32,
         'sum_packed6': 16, 'enc16_fp16': 16, 'sum16_fp16': 16, 'mx_enc8': 64, 'mx_enc6': 64}
print('\n# loop: gcc label, instructions per pass, elements per pass')
R = {}
for k, (h, t) in L.items():
    icx = mca(k, 'icelake-server'); spr = mca(k, 'sapphirerapids')
    pm_icx = port_model(t, 'icx'); pm_spr = port_model(t, 'spr')
    R[k] = (h, len(t), ELEMS[k], icx, spr, pm_icx, pm_spr)
    print('%-12s %-7s %3d insns %2d el | llvm-mca icx %6.2f c (busiest port %5.2f c; %5.1f uops; %s; data-dep %.0f%%) '
          'spr %6.2f c | port model icx %5.2f c [%s], spr %5.2f c [%s]; p05-only uops %d, p5-only %d' %
          (k, h, len(t), ELEMS[k], icx[0], icx[4], icx[1], ', '.join('%s %s%%' % p for p in icx[2]), icx[3], spr[0],
           pm_icx[0], pm_icx[1], pm_spr[0], pm_spr[1], pm_icx[3], pm_icx[4]))

# ---- the operations as bench_codec times them (per 16 elements) ----
OPS = [('e4m3 encode (uncounted, 113ce4c)', [('enc8_one', 1)]),
       ('e4m3 encode (counting, b93198f/7c860dc)', [('enc8_one_count', 1)]),
       ('e4m3 decode', [('dec8', 1)]),
       ('e4m3 packed sum', [('sum8_words_one', 0.5)]),
       ('e3m2 encode (uncounted)', [('enc8', 1), ('pack6_32', 0.5)]),
       ('e3m2 encode (counting)', [('enc8_count', 1), ('pack6_32', 0.5)]),
       ('e3m2 decode', [('unpack6_32', 0.5), ('dec8', 1)]),
       ('e3m2 packed sum', [('sum_packed6_32', 0.5)]),
       ('fp16 encode', [('enc16_fp16', 1)]),
       ('fp16 packed sum', [('sum16_fp16', 1)]),
       ('mxfp8 encode (calibration)', [('mx_enc8', 0.25)]),
       ('mxfp6 encode (calibration)', [('mx_enc6', 0.25)])]
print('\n# per 16 elements: llvm-mca icelake-server cycles, port model icx / spr cycles, and G elements/s = 16 * GHz / cycles at 2.0 and 3.0 GHz')
for name, parts in OPS:
    m = sum(R[k][3][0] * n for k, n in parts)
    pi = sum(R[k][5][0] * n for k, n in parts)
    ps = sum(R[k][6][0] * n for k, n in parts)
    print('%-42s mca %6.2f c (%.3f c/el: %.2f / %.2f G/s) | port model icx %6.2f c (%.3f c/el: %.2f / %.2f G/s) spr %6.2f c' %
          (name, m, m / 16, 32 / m, 48 / m, pi, pi / 16, 32 / pi, 48 / pi, ps))
PYEOF
