#!/usr/bin/env python3
"""Collector of a parameter sweep (scripts/slurm/sweep.py): one row per member with its swept values,
how its run ended and its diagnostics at the last record, as a table and a CSV file.

usage: collect.py OUTDIR [--csv FILE] [--hpcsim BIN]

For each member of OUTDIR/members.tsv the output file member_NNN/OUTPUT.nc (or .h5; the
.partial of a run that has not finished) is read with `hpcsim summary`: the row has the member's
swept values, the state (finished, max_steps, walltime, signal, failed for a state that stopped
being finite, running/killed for a file never closed; with no file: failed: no output when the
member's newest job log has an hpcsim error (its first line in the column error), no output when a
job ran, missing when none did); the newest of the member's files counts (a resubmitted run's
.partial beside an older finished file), the step, the simulated time and the wall time, then every
diagnostic: a scalar series as NAME, a field as NAME_min, NAME_max and NAME_mean.  The table goes
to standard output, the CSV to OUTDIR/summary.csv (or --csv).  Exit status 0 when every member
finished, 1 when some did not (the table is written either way), 2 on bad usage.
"""
import argparse
import csv
import glob
import os
import re
import shutil
import subprocess
import sys


def mtime(path):
    """A file's modification time, or None: a running member renames its .partial between a listing
    and a look at it, and a file gone in between is left out rather than a traceback."""
    try:
        return os.path.getmtime(path)
    except OSError:
        return None


def find_hpcsim(given):
    if given:  # named: that one or none (a wrong --hpcsim fell back to another binary)
        return os.path.realpath(given) if os.path.exists(given) else given
    for cand in (os.environ.get("HS_BIN"),
                 os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bin", "hpcsim")):
        if cand and os.path.exists(cand):
            return os.path.realpath(cand)
    return shutil.which("hpcsim") or "hpcsim"


def parse_summary(text):
    """The state, step, time, wall time and diagnostics of `hpcsim summary` output."""
    row = {}
    m = re.search(r"^  stopped      : (\S+)", text, re.M)
    if m:
        row["state"] = m.group(1)
        if row["state"] == "not":  # "not recorded: the run never closed this file"
            row["state"] = "running/killed"
    m = re.search(r"^  at           : step (\d+), t = (\S+) of end time", text, re.M)
    if m:
        row["step"], row["time"] = m.group(1), m.group(2)
    m = re.search(r"^  timings      : wall (\S+) s", text, re.M)
    if m:
        row["wall_s"] = m.group(1)
    diag = False
    for line in text.splitlines():
        if line.startswith("diagnostics at the last record"):
            diag = True
            continue
        if diag and not line.startswith("  "):
            break
        if not diag:
            continue
        m = re.match(r"^  (\S+)\s+min (\S+)  max (\S+)  mean (\S+)", line)
        if m:
            row[m.group(1) + "_min"], row[m.group(1) + "_max"], row[m.group(1) + "_mean"] = m.group(2, 3, 4)
            continue
        m = re.match(r"^  (\S+)\s+(\S+)", line)
        if m:
            row[m.group(1)] = m.group(2)
    return row


def main():
    ap = argparse.ArgumentParser(prog="collect.py", description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog="\n\n".join(__doc__.split("\n\n")[1:]))
    ap.add_argument("outdir", metavar="OUTDIR", help="the sweep's folder (made by sweep.py)")
    ap.add_argument("--csv", default=None, help="the CSV file to write (default OUTDIR/summary.csv)")
    ap.add_argument("--hpcsim", default=None, help="the hpcsim binary (default: $HS_BIN, the repository's bin/hpcsim, PATH)")
    a = ap.parse_args()
    table = os.path.join(a.outdir, "members.tsv")
    if not os.path.isfile(table):
        print(f"collect.py: error: {table} not found (not a sweep made by sweep.py?)", file=sys.stderr)
        return 2
    hpcsim = find_hpcsim(a.hpcsim)
    if not (os.path.exists(hpcsim) or shutil.which(hpcsim)):  # it ended in a FileNotFoundError traceback
        print(f"collect.py: error: no hpcsim binary ({hpcsim}): give --hpcsim BIN or set HS_BIN", file=sys.stderr)
        return 2
    with open(table) as f:
        members = list(csv.DictReader(f, delimiter="\t"))
    keys = [k for k in members[0].keys() if k not in ("member", "folder", "output")] if members else []
    rows, extra_cols, unfinished = [], [], 0
    for mem in members:
        row = {"member": mem["member"]}
        row.update({k: mem[k] for k in keys})
        folder = os.path.join(a.outdir, mem["folder"])
        stem = os.path.join(folder, mem["output"])
        # the newest of the member's files: a finished file stays beside the .partial of a run that
        # started again (resubmitted, then killed or still running), and was reported as finished
        stamped = [(t, f) for f in (stem + sfx for sfx in (".nc", ".h5", ".nc.partial", ".h5.partial")) if (t := mtime(f)) is not None]
        found = max(stamped)[1] if stamped else None
        if not found:
            # a job that ran and wrote no output (bad input, a failure before the first record) is
            # not one that has not run yet
            logs = sorted(glob.glob(os.path.join(folder, "job-*.out")), key=os.path.getmtime)
            row["state"] = "missing"
            if logs:
                with open(logs[-1], errors="replace") as f:
                    errs = [ln.strip() for ln in f if ln.startswith("hpcsim: error:")]
                row["state"] = "failed: no output" if errs else "no output"
                if errs:
                    row["error"] = errs[0][len("hpcsim: error:"):].strip()
        else:
            r = subprocess.run([hpcsim, "summary", found], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            if r.returncode != 0:
                row["state"] = "unreadable"
            else:
                row.update(parse_summary(r.stdout))
        if row.get("state") not in ("finished", "max_steps"):
            unfinished += 1
        for k in row:
            if k not in extra_cols and k not in keys and k != "member":
                extra_cols.append(k)
        rows.append(row)
    fixed = ["state", "step", "time", "wall_s"]
    cols = ["member"] + keys + [c for c in fixed if c in extra_cols] + [c for c in extra_cols if c not in fixed]
    out = a.csv or os.path.join(a.outdir, "summary.csv")
    with open(out, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=cols, restval="")
        w.writeheader()
        w.writerows(rows)
    widths = [max(len(c), *(len(str(r.get(c, ""))) for r in rows)) if rows else len(c) for c in cols]
    print("  ".join(c.ljust(wd) for c, wd in zip(cols, widths)))
    for r in rows:
        print("  ".join(str(r.get(c, "")).ljust(wd) for c, wd in zip(cols, widths)))
    print(f"collect.py: {len(rows)} members, {len(rows) - unfinished} finished; table in {out}", file=sys.stderr)
    return 1 if unfinished else 0


if __name__ == "__main__":
    sys.exit(main())
