#!/usr/bin/env python3
"""Parameter sweep generator: a base parameter file plus lists or ranges of section.key values make
one folder per member and a Slurm job array that runs them (scripts/slurm/collect.py tabulates them).

usage: sweep.py BASE.ini OUTDIR section.key=SPEC [section.key=SPEC ...] [options]

SPEC is
  a,b,c          a list of values (a value that holds commas or spaces, such as heat.n = 64 64:
                 separate the members with ';' instead: "heat.n=32 32;64 64")
  lo:hi:n        n evenly spaced values from lo to hi, both included (integers when lo and hi are
                 integers and the spacing is whole)
  lo:hi:n:log    n values evenly spaced in the logarithm (lo, hi > 0)
  (a single value that holds colons, such as run.walltime=00:10:00;, ends with ';')
Several keys make the Cartesian product of their values (--zip pairs them instead: equal counts).

Written:
  OUTDIR/members.tsv          member, folder, output file stem, then one column per swept key
  OUTDIR/member_NNN/overrides one section.key=value per line: the member's changes to BASE
  OUTDIR/sweep.sbatch         a job array (--array=0-(N-1), at most --max-parallel at once) whose
                              task i runs `hpcsim run BASE $(overrides)` in member_i (relative
                              input files resolve beside BASE), log member_i/job-%A_%a.out, through
                              hpcsim_preemptible.sbatch: a task signalled before its time limit
                              (or preempted) checkpoints to member_i/hpcsim-ARRAYJOBID_i.ckpt,
                              requeues itself alone and continues from that checkpoint (its
                              --signal, --requeue and --open-mode lines are copied from there)
Every member is validated with `hpcsim check` first (skip with --no-check): a typo in a key or a
value out of range stops here, before anything is queued.  A --time no longer than the checkpoint
signal's lead (300 s) plus Slurm's 60 s resolution is refused: every start would be signalled as it
began (give a longer --time, or a shorter lead with --sbatch=--signal=B:USR1@SECONDS).  Submit with `sbatch OUTDIR/sweep.sbatch`
(or --submit); then `scripts/slurm/collect.py OUTDIR`.
"""
import argparse
import configparser
import itertools
import math
import os
import re
import shlex
import shutil
import subprocess
import sys


def die(msg, code=2):
    print(f"sweep.py: error: {msg}", file=sys.stderr)
    sys.exit(code)


def fmt_num(x):
    """A number as hpcsim reads it: the shortest form that round-trips."""
    if float(x).is_integer() and abs(x) < 1e15:
        return str(int(x))
    return repr(float(x))


def is_int_text(s):
    return re.fullmatch(r"[+-]?\d+", s.strip()) is not None


def expand(spec):
    """The values of one SPEC (see the module help), as strings."""
    parts = spec.split(":")
    if len(parts) in (3, 4) and all(p.strip() for p in parts[:3]) and not (";" in spec or "," in spec):
        lo_s, hi_s, n_s = (p.strip() for p in parts[:3])
        try:
            lo, hi, n = float(lo_s), float(hi_s), int(n_s)
        except ValueError:
            die(f"range '{spec}': expected lo:hi:n with numbers lo, hi and a whole count n")
        if n < 1:
            die(f"range '{spec}': the count must be at least 1")
        if n > 1 and lo == hi:
            die(f"range '{spec}' has lo = hi (a value with colons, such as a time: end it with ';')")
        log = len(parts) == 4
        if log and parts[3].strip() != "log":
            die(f"range '{spec}': the fourth field may only be 'log'")
        if log and (lo <= 0 or hi <= 0):
            die(f"range '{spec}': a log range needs lo, hi > 0")
        if n == 1:
            vals = [lo]
        elif log:
            vals = [math.exp(math.log(lo) + (math.log(hi) - math.log(lo)) * i / (n - 1)) for i in range(n)]
        else:
            vals = [lo + (hi - lo) * i / (n - 1) for i in range(n)]
        if is_int_text(lo_s) and is_int_text(hi_s) and not log and (n == 1 or (int(hi) - int(lo)) % (n - 1) == 0):
            return [str(int(round(v))) for v in vals]
        return [fmt_num(v) for v in vals]
    sep = ";" if ";" in spec else ","
    vals = [v.strip() for v in spec.split(sep)]
    if sep == ";" and len(vals) > 1 and vals[-1] == "":
        vals = vals[:-1]
    if not vals or any(v == "" for v in vals):
        die(f"list '{spec}': an empty value")
    return vals


def parse_key_spec(arg):
    m = re.fullmatch(r"([A-Za-z0-9_]+)\.([A-Za-z0-9_]+)=(.*)", arg, re.S)
    if not m:
        die(f"'{arg}' is not section.key=SPEC")
    return f"{m.group(1)}.{m.group(2)}", expand(m.group(3))


def member_value(base, overrides, section, key, default):
    """section.key of a member: its override, else BASE's value, else hpcsim's default."""
    for k, v in overrides:
        if k == f"{section}.{key}":
            return v
    cp = configparser.ConfigParser(inline_comment_prefixes=("#", ";"), strict=False, interpolation=None)
    try:
        cp.read(base)
        if cp.has_option(section, key):
            return cp.get(section, key).strip().strip('"')
    except configparser.Error:
        pass
    return default


def output_stem(base, overrides):
    """output.path of a member: its override, else BASE's [output] path, else hpcsim's default."""
    return member_value(base, overrides, "output", "path", "output")


def check_shared_paths(base, members):
    """Each member runs in its own folder, so relative paths are its own; an absolute output or
    checkpoint path that several members share would have them overwrite one file (and collect.py
    read one member's results for all)."""
    for section, key, default in (("output", "path", "output"), ("checkpoint", "path", "checkpoint.h5")):
        seen = {}
        for i, ov in enumerate(members):
            v = member_value(base, ov, section, key, default)
            if os.path.isabs(v):
                if v in seen:
                    die(f"{section}.{key} = {v} is absolute and the same for members {seen[v]} and {i}: they would write "
                        f"one file; give a relative path (each member runs in its own folder) or sweep it")
                seen[v] = i


def find_hpcsim(given):
    if given:
        return os.path.abspath(given) if os.path.exists(given) else given
    env = os.environ.get("HS_BIN")
    if env:
        return os.path.abspath(env) if os.path.exists(env) else env
    repo_bin = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bin", "hpcsim")
    if os.path.exists(repo_bin):
        return os.path.realpath(repo_bin)
    return shutil.which("hpcsim") or "hpcsim"


PREEMPTIBLE = os.path.join(os.path.dirname(os.path.realpath(__file__)), "hpcsim_preemptible.sbatch")

SBATCH = """#!/bin/bash
# Job array written by scripts/slurm/sweep.py: task i runs member i of the sweep in {outdir}/member_i
# through hpcsim_preemptible.sbatch (checkpoint on a signal, requeue of this task alone, restart from
# its own checkpoint: see its --help); the lines from --signal to --open-mode are its own.
#SBATCH --job-name="{name}"
#SBATCH --array=0-{last}%{parallel}
#SBATCH --ntasks={ntasks}
#SBATCH --cpus-per-task={cpus}
#SBATCH --time={time}
{requeue}#SBATCH --output="{outdir_sb}/member_%{width}a/job-%A_%a.out"
{extra}set -u
member=$(printf 'member_%0{width}d' "${{SLURM_ARRAY_TASK_ID:?not a job array task}}")
cd {outdir_q}/"$member" || exit 1
mapfile -t overrides < overrides
export HS_BIN=${{HS_BIN:-{hpcsim_q}}}
echo "sweep {name}, $member (array job ${{SLURM_ARRAY_JOB_ID:-?}} task ${{SLURM_ARRAY_TASK_ID}}): ${{overrides[*]}}"
# exec: the batch shell that Slurm signals becomes the preemptible script, whose trap forwards the signal
exec {preemptible_q} {base_q} "${{overrides[@]}}"
"""


def requeue_lines():
    """The #SBATCH lines that make hpcsim_preemptible.sbatch's checkpoint-and-requeue work (--signal,
    --requeue, --open-mode), read from that script so that they are written in one place."""
    try:
        with open(PREEMPTIBLE) as f:
            lines = [ln for ln in f if re.match(r"#SBATCH --(signal|requeue|open-mode)\b", ln)]
    except OSError as e:
        die(f"cannot read {PREEMPTIBLE}: {e.strerror}", 1)
    if len(lines) != 3:
        die(f"{PREEMPTIBLE}: expected its --signal, --requeue and --open-mode #SBATCH lines, found {len(lines)}", 1)
    return lines


def slurm_seconds(t):
    """A Slurm time (minutes, minutes:seconds, hours:minutes:seconds, days-hours,
    days-hours:minutes, days-hours:minutes:seconds) in seconds; None for UNLIMITED or an unknown form
    (sbatch then judges it)."""
    m = re.fullmatch(r"(?:(\d+)-)?(\d+)(?::(\d+))?(?::(\d+))?", t.strip())
    if not m:
        return None
    d, a, b, c = (int(x) if x is not None else None for x in m.groups())
    if d is not None:  # days-hours[:minutes[:seconds]]
        return d * 86400 + a * 3600 + (b or 0) * 60 + (c or 0)
    if c is not None:
        return a * 3600 + b * 60 + c
    if b is not None:
        return a * 60 + b
    return a * 60


def signal_lead(options):
    """The seconds before the time limit at which the last of the sbatch options (or #SBATCH lines)
    --signal=[R:|B:]SIG[@SECONDS] signals: SECONDS, Slurm's default 60 without one, None without a
    --signal."""
    lead = None
    for o in options:
        m = re.fullmatch(r"(?:#SBATCH\s+)?--signal=(?:[RB]+:)?\w+(?:@(\d+))?", o.strip())
        if m:
            lead = int(m.group(1)) if m.group(1) else 60
    return lead


def main():
    ap = argparse.ArgumentParser(prog="sweep.py", description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog="\n\n".join(__doc__.split("\n\n")[1:]))
    ap.add_argument("base", metavar="BASE.ini", help="the base parameter file")
    ap.add_argument("outdir", metavar="OUTDIR", help="the sweep's folder (created; must be empty or new)")
    ap.add_argument("keys", metavar="section.key=SPEC", nargs="+", help="a swept key and its values")
    ap.add_argument("--zip", action="store_true", help="pair the keys' values (equal counts) instead of their product")
    ap.add_argument("--set", action="append", default=[], metavar="section.key=value",
                    help="a fixed override for every member (repeatable)")
    ap.add_argument("--name", default=None, help="the job name (default: sweep-OUTDIR)")
    ap.add_argument("--ntasks", type=int, default=1, help="MPI ranks per member (default 1)")
    ap.add_argument("--cpus-per-task", type=int, default=1, help="OpenMP threads per rank (default 1)")
    ap.add_argument("--time", default="01:00:00", help="time limit per member (default 01:00:00; more than the checkpoint signal's lead + 60 s)")
    ap.add_argument("--max-parallel", type=int, default=64, help="members running at once (default 64)")
    ap.add_argument("--sbatch", action="append", default=[], metavar="OPTION",
                    help="an extra #SBATCH option for the array script, e.g. --sbatch=--partition=gpu (repeatable)")
    ap.add_argument("--hpcsim", default=None, help="the hpcsim binary (default: $HS_BIN, the repository's bin/hpcsim, PATH)")
    ap.add_argument("--no-check", action="store_true", help="do not validate the members with hpcsim check")
    ap.add_argument("--submit", action="store_true", help="submit the array with sbatch when written")
    a = ap.parse_args()
    # the job's geometry before anything is written (--ntasks 0 and --max-parallel 0 wrote an array
    # Slurm refuses, or one that never runs)
    for opt, v in (("--ntasks", a.ntasks), ("--cpus-per-task", a.cpus_per_task), ("--max-parallel", a.max_parallel)):
        if v < 1:
            die(f"{opt} {v}: give at least 1")

    base = os.path.abspath(a.base)
    if not os.path.isfile(base):
        die(f"base parameter file {a.base} not found")
    swept = [parse_key_spec(k) for k in a.keys]
    names = [k for k, _ in swept]
    if len(set(names)) != len(names):
        die("a key is swept twice")
    fixed = []
    for s in a.set:
        m = re.fullmatch(r"([A-Za-z0-9_]+\.[A-Za-z0-9_]+)=(.*)", s, re.S)
        if not m:
            die(f"--set '{s}' is not section.key=value")
        if m.group(1) in names:
            die(f"--set {m.group(1)} is also swept")
        fixed.append((m.group(1), m.group(2)))
    if a.zip:
        counts = {len(v) for _, v in swept}
        if len(counts) != 1:
            die("--zip needs the same number of values for every key: " + ", ".join(f"{k} has {len(v)}" for k, v in swept))
        combos = list(zip(*[v for _, v in swept]))
    else:
        combos = list(itertools.product(*[v for _, v in swept]))
    check_shared_paths(base, [fixed + list(zip(names, combo)) for combo in combos])
    outdir = os.path.abspath(a.outdir)
    if '"' in outdir or "\n" in outdir:
        die(f"{a.outdir}: a folder name with a double quote or a newline cannot be written into #SBATCH lines")
    if os.path.exists(outdir) and os.listdir(outdir):
        die(f"{a.outdir} exists and is not empty")
    hpcsim = find_hpcsim(a.hpcsim)
    can_check = not a.no_check and (os.path.exists(hpcsim) or shutil.which(hpcsim))
    requeue = requeue_lines()
    # Slurm signals when the time left reaches the lead, checking about once a minute: a limit not
    # longer than both signals a task as it starts, and each requeued start again (up to HS_MAX_REQUEUES)
    limit, lead = slurm_seconds(a.time), signal_lead(requeue + a.sbatch)
    if limit is not None and lead is not None and limit <= lead + 60:
        die(f"--time {a.time} ({limit} s) is not longer than the checkpoint signal's lead ({lead} s) and Slurm's "
            f"60 s resolution: each start of a member would be signalled as it began; give a longer --time, or "
            f"a shorter lead with --sbatch=--signal=B:USR1@SECONDS")

    os.makedirs(outdir, exist_ok=True)
    width = max(3, len(str(len(combos) - 1)))
    rows = []
    for i, combo in enumerate(combos):
        folder = f"member_{i:0{width}d}"
        mdir = os.path.join(outdir, folder)
        os.makedirs(mdir)
        ov = fixed + list(zip(names, combo))
        with open(os.path.join(mdir, "overrides"), "w") as f:
            for k, v in ov:
                f.write(f"{k}={v}\n")
        if can_check:
            r = subprocess.run([hpcsim, "check", base] + [f"{k}={v}" for k, v in ov] + ["--quiet"], cwd=mdir,
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
            if r.returncode != 0:
                shutil.rmtree(outdir)
                die(f"member {i} ({' '.join(f'{k}={v}' for k, v in zip(names, combo))}): hpcsim check says:\n"
                    + r.stderr.strip(), r.returncode)
        rows.append([str(i), folder, output_stem(base, ov)] + list(combo))
    with open(os.path.join(outdir, "members.tsv"), "w") as f:
        f.write("\t".join(["member", "folder", "output"] + names) + "\n")
        for r in rows:
            f.write("\t".join(r) + "\n")
    name = a.name or "sweep-" + os.path.basename(outdir.rstrip("/"))
    extra = "".join(f"#SBATCH {o}\n" for o in a.sbatch)
    script = SBATCH.format(requeue="".join(requeue), preemptible_q=shlex.quote(PREEMPTIBLE), outdir=outdir, outdir_sb=outdir.replace("%", "%%"), outdir_q=shlex.quote(outdir), name=name, last=len(combos) - 1,
                           parallel=a.max_parallel, ntasks=a.ntasks, cpus=a.cpus_per_task, time=a.time,
                           extra=extra, width=width, hpcsim_q=shlex.quote(hpcsim), base_q=shlex.quote(base))
    path = os.path.join(outdir, "sweep.sbatch")
    with open(path, "w") as f:
        f.write(script)
    os.chmod(path, 0o755)
    print(f"sweep.py: {len(combos)} members in {a.outdir} ({' x '.join(f'{k}: {len(v)}' for k, v in swept)}"
          f"{', zipped' if a.zip else ''}){'' if can_check else ' (not checked: no hpcsim binary found)'}")
    if a.submit:
        r = subprocess.run(["sbatch", "--parsable", path], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        if r.returncode != 0:
            die("sbatch failed: " + r.stderr.strip(), 1)
        print(f"sweep.py: submitted job array {r.stdout.strip().split(';')[0]}")
    else:
        print(f"submit with: sbatch {path}")


if __name__ == "__main__":
    main()
