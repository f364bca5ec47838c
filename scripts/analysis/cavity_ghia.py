#!/usr/bin/env python3
"""Lid-driven cavity centre lines against Ghia, Ghia & Shin (1982): u(y) at x = 0.5 and v(x) at y = 0.5, as a PNG and a table.

usage: cavity_ghia.py FILE [--re RE] [--ghia TABLE] [--time INDEX] [--out PNG]

FILE is a Navier-Stokes cavity output of hpcsim (inputs/cavity_re100.ini, cavity_re1000.ini): the
cell-centred u and v of the record (default the last), interpolated linearly to the centre lines
(the wall values, u = lid speed at the top, 0 elsewhere, close the profiles), divided by the lid
speed.  The Reynolds number comes from the file's parameters (navier_stokes.re) unless --re says;
the table (tests/data/ghia1982_cavity.txt: Table I, u along x = 0.5; Table II, v along y = 0.5;
columns Re 100, 400, 1000) must have it.  Printed: each table point with ours and the difference,
entries the table marks as misprints ("*400" after a row) flagged, the largest and RMS differences.
At Re 1000 the spectral values of Botella & Peyret (1998) at the same points
(tests/data/botella1998_cavity_re1000.txt) are printed and drawn beside Ghia's, with our difference
from them: they are the sharper reference (Ghia's v entries near the right wall differ from them by
up to 0.019).  Default output: STEM_ghia.png beside FILE.
"""
import argparse
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import hsio  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_TABLE = os.path.join(HERE, "..", "..", "tests", "data", "ghia1982_cavity.txt")
BOTELLA_TABLE = os.path.join(HERE, "..", "..", "tests", "data", "botella1998_cavity_re1000.txt")
COLUMNS = {100: 0, 400: 1, 1000: 2}


def read_ghia(path, re_num):
    col = COLUMNS.get(int(round(re_num)))
    if col is None or abs(re_num - round(re_num)) > 1e-9:
        hsio.die(f"Ghia's table has Re = 100, 400, 1000, not {re_num:g}")
    u, v = [], []
    try:
        with open(path) as f:
            for line in f:
                w = line.split()
                if not w or w[0].startswith("#") or w[0] not in ("u", "v"):
                    continue
                misprint = f"*{int(round(re_num))}" in w[5:]
                (u if w[0] == "u" else v).append((float(w[1]), float(w[2 + col]), misprint))
    except OSError as e:
        hsio.die(f"--ghia {path}: {e.strerror or e}")
    except (ValueError, IndexError):
        hsio.die(f"--ghia {path}: a 'u' or 'v' row is not 'u|v POSITION RE100 RE400 RE1000'")
    if not u or not v:
        hsio.die(f"--ghia {path}: no 'u' and 'v' rows (the format of tests/data/ghia1982_cavity.txt)")
    return u, v


def read_botella(path):
    """Botella & Peyret's Re 1000 values as {("u"|"v", position): value}."""
    out = {}
    with open(path) as f:
        for line in f:
            w = line.split()
            if len(w) >= 3 and w[0] in ("u", "v"):
                out[(w[0], round(float(w[1]), 4))] = float(w[2])
    return out


def params(ds):
    text = str(ds.attrs.get("hpcsim_parameters", ""))
    sec, out = "", {}
    for line in text.splitlines():
        line = line.strip()
        m = re.match(r"\[(.*)\]", line)
        if m:
            sec = m.group(1)
        elif "=" in line:
            k, _, val = line.partition("=")
            out[f"{sec}.{k.strip()}"] = val.strip()
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], epilog="\n\n".join(__doc__.split("\n\n")[1:]),
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("file", metavar="FILE")
    ap.add_argument("--re", type=float, default=None, help="Reynolds number (default: the file's navier_stokes.re)")
    ap.add_argument("--ghia", default=DEFAULT_TABLE, help="the table (default tests/data/ghia1982_cavity.txt)")
    ap.add_argument("--time", type=int, default=-1, help="record index (default -1: the last)")
    ap.add_argument("--out", "-o", help="PNG file")
    a = ap.parse_args()
    hsio.need(["numpy", "xarray", "matplotlib"])
    import numpy as np
    plt = hsio.setup_matplotlib()
    ds = hsio.open_output(a.file)
    for need in ("u", "v"):
        if need not in ds.data_vars:
            hsio.die(f"{a.file} has no {need} (a Navier-Stokes cavity output has u and v)")
    p = params(ds)
    # shallow water and the spectral model write u and v too: with --re their files were compared
    # with the cavity's table as if they were one
    solver, model = p.get("run.solver"), p.get("cfd.model")
    if (solver is not None and solver != "cfd") or model in ("shallow_water", "spectral"):
        hsio.die(f"{a.file} is the output of {solver}{' ' + model if model else ''}, not of a lid-driven cavity "
                 "(cfd.model = navier_stokes or lbm)")
    def num(key, default):
        try:
            return float(str(p.get(key, default)).replace(",", " ").split()[0])
        except (ValueError, IndexError):
            return float("nan")

    if model == "lbm":
        # the lattice Boltzmann cavity: its lid moves at u_ref, and Re = u_ref L / nu (the file
        # holds no navier_stokes.re: "give --re" was asked of a file that said Re 100)
        lid_u = num("lbm.u_ref", "nan")
        re_file = lid_u * num("cfd.length", "1") / num("lbm.nu", "nan")
    else:
        re_file = num("navier_stokes.re", "nan")
        lid = p.get("navier_stokes.wall_velocity_yhi", "1 0").replace(",", " ").split()
        lid_u = float(lid[0]) if lid else 1.0
    re_num = a.re if a.re is not None else re_file
    if not np.isfinite(re_num):
        hsio.die("no Reynolds number in the file's parameters: give --re")
    if a.re is not None and np.isfinite(re_file) and abs(a.re - re_file) > 1e-6 * re_file:
        print(f"cavity_ghia.py: warning: --re {a.re:g} against a file whose parameters give Re = {re_file:.6g}: "
              f"the table of Re {a.re:g} is compared", file=sys.stderr)
    if lid_u == 0:
        hsio.die("the lid does not move (navier_stokes.wall_velocity_yhi): not a lid-driven cavity")
    rec = hsio.record_dim(ds)
    u, v = ds["u"], ds["v"]
    t = None
    if rec in u.dims:
        i = hsio.record_index(a.file, u.sizes[rec], a.time)
        t = float(ds[rec].values[i]) if rec in ds.coords else i
        u, v = u.isel({rec: i}), v.isel({rec: i})
    x, y = ds["x"].values, ds["y"].values
    L = float(ds["x_bnds"].values[-1, 1]) if "x_bnds" in ds.variables else 1.0
    # centre lines, closed with the wall values
    uv, vv2 = u.transpose("y", "x").values, v.transpose("y", "x").values
    uc = np.array([np.interp(0.5 * L, x, row) for row in uv]) / lid_u
    vc = np.array([np.interp(0.5 * L, y, col) for col in vv2.T]) / lid_u
    yy = np.concatenate([[0.0], y / L, [1.0]])
    uu = np.concatenate([[0.0], uc, [1.0]])
    xx = np.concatenate([[0.0], x / L, [1.0]])
    vv = np.concatenate([[0.0], vc, [0.0]])
    gu, gv = read_ghia(a.ghia, re_num)
    bp = read_botella(BOTELLA_TABLE) if int(round(re_num)) == 1000 and os.path.exists(BOTELLA_TABLE) else {}
    rows, diffs, bp_diffs = [], [], []
    for name, comp, pts, pos, prof in (("u(y), x = 0.5", "u", gu, yy, uu), ("v(x), y = 0.5", "v", gv, xx, vv)):
        for q, ref, misprint in pts:
            ours = float(np.interp(q, pos, prof))
            b = bp.get((comp, round(q, 4)))
            rows.append((name, q, ref, ours, ours - ref, misprint, b))
            if not misprint:
                diffs.append(ours - ref)
            if b is not None:
                bp_diffs.append(ours - b)
    print(f"cavity Re {re_num:g}, {u.shape[-1]}x{u.shape[0]} cells" + (f", t = {t:.6g}" if t is not None else "")
          + ", against Ghia et al. (1982)" + (" and Botella & Peyret (1998)" if bp else ""))
    print(f"{'line':16s} {'position':>9s} {'Ghia':>9s} {'ours':>9s} {'diff':>9s}" + (f" {'B&P':>10s} {'diff':>9s}" if bp else ""))
    for name, q, ref, ours, d, mp, b in rows:
        extra = f" {b:10.7f} {ours - b:+9.5f}" if b is not None else ""
        print(f"{name:16s} {q:9.4f} {ref:9.5f} {ours:9.5f} {d:+9.5f}{extra}{'  (misprint in the table: not counted)' if mp else ''}")
    d = np.abs(np.asarray(diffs))
    print(f"largest difference {d.max():.4f}, RMS {np.sqrt(np.mean(d * d)):.4f} over {d.size} table points")
    if bp_diffs:
        e = np.abs(np.asarray(bp_diffs))
        print(f"against Botella & Peyret: largest difference {e.max():.4f}, RMS {np.sqrt(np.mean(e * e)):.4f} over {e.size} points")
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 4.8))
    ax1.plot(uu, yy, "-", label="hpcsim")
    ax1.plot([r[1] for r in gu], [r[0] for r in gu], "o", mfc="none", color="k", label="Ghia et al. 1982")
    ax1.set_xlabel("u / U_lid at x = 0.5")
    ax1.set_ylabel("y")
    ax2.plot(xx, vv, "-", label="hpcsim")
    ax2.plot([r[0] for r in gv], [r[1] for r in gv], "o", mfc="none", color="k", label="Ghia et al. 1982")
    if bp:
        bu = sorted((q, val) for (c, q), val in bp.items() if c == "u")
        bv = sorted((q, val) for (c, q), val in bp.items() if c == "v")
        ax1.plot([r[1] for r in bu], [r[0] for r in bu], "x", color="tab:red", label="Botella & Peyret 1998")
        ax2.plot([r[0] for r in bv], [r[1] for r in bv], "x", color="tab:red", label="Botella & Peyret 1998")
    ax2.set_xlabel("x")
    ax2.set_ylabel("v / U_lid at y = 0.5")
    for ax in (ax1, ax2):
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
    fig.suptitle(f"lid-driven cavity, Re {re_num:g}, {u.shape[-1]}x{u.shape[0]} cells"
                 + (f", t = {t:.4g}" if t is not None else "") + f": largest difference {d.max():.3f}")
    fig.tight_layout()
    out = a.out or os.path.join(os.path.dirname(a.file), f"{hsio.stem(a.file)}_ghia.png")
    hsio.save(fig, out)
    return 0


if __name__ == "__main__":
    sys.exit(hsio.run(main))
