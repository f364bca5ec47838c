#!/usr/bin/env python3
"""An HDF5 output as netCDF-4 (xarray, engine="h5netcdf") against the NetCDF output of the same run.

  h5netcdf_same.py FILE.h5 [FILE.nc] [--grid "LX LY [LZ]" "NX NY [NZ]"] [--names x,y,z] [--measured VAR,...]
  h5netcdf_same.py --batch JOBS     (one comparison per line of JOBS, in shell words; one Python start
                                     for all: xarray's import costs about 1.4 s a process)

FILE.h5 opened with xarray's h5netcdf engine (no phony_dims: every dimension must be an HDF5
dimension scale) must show the dimensions, sizes, coordinates, variables, values and attributes of
FILE.nc opened with the netCDF4 engine, and open as a whole in xarray.open_datatree where xarray has
it, no group with a phony dimension, each XDMF view /xdmf/NAME/r on NAME's dimensions with NAME[r]'s
values (attributes: all but the HDF5 layout's own `dimensions`;
global ones: the same names, and the same values but for the run's record: history and hpcsim_*,
time stamps, timings, ranks, identity, and the parameters, which name the format).  --grid checks the coordinates
against the cell centres (i + 1/2) L / N computed here from the parameter file's domain and grid
size, an independent reference (a build without NetCDF has no FILE.nc).  --measured names variables
whose values are the run's measurements (wall_time), compared by shape only.  Prints one line per check
and exits 1 on the first class of failure found.  --batch prints one line per job instead: "ok"
and the job's last line, or "FAIL" and its first failure; it exits 1 when any job failed.
"""
import argparse
import contextlib
import io
import re
import shlex
import sys

import numpy as np
import xarray as xr

RUN_OWN = re.compile(r"^(history|hpcsim_.*)$")  # the run's record: time stamps, timings, ranks, parameters (the format)


def fail(msg):
    print("FAIL " + msg)
    sys.exit(1)


def attrs_of(v):
    return {k: (a.tolist() if isinstance(a, np.ndarray) else a) for k, a in v.attrs.items() if k != "dimensions"}


def same_values(a, b):
    if a.dtype.kind in "fc":
        return a.shape == b.shape and np.array_equal(a, b, equal_nan=True)
    return a.shape == b.shape and np.array_equal(a, b)


def xdmf_views(path, tree, h):
    """The XDMF companion's views /xdmf/NAME/r (virtual datasets, one per record of NAME): each on
    NAME's own dimensions after the record one, named (they were phony_dim_N: no dimension scales),
    so that xarray gives them the root's coordinates, and holding NAME[r]."""
    nviews = 0
    for node in tree.subtree:
        own = node.to_dataset(inherit=False)
        phony = sorted({str(d) for v in own.variables.values() for d in v.dims if str(d).startswith("phony_dim")})
        if phony:
            fail(f"{path}: group {node.path} has datasets without dimension scales: {phony}")
        if node.parent is None or node.parent.path != "/xdmf" or node.name not in h.data_vars:
            continue
        src = h[node.name]
        views = sorted((int(k) for k in own.data_vars if str(k).isdigit()))
        if views != list(range(src.shape[0])):
            fail(f"{path}: {node.path} holds views {views[:5]}..., {src.name} {src.shape[0]} records")
        for r in views:
            v = node[str(r)]
            if v.dims != src.dims[1:]:
                fail(f"{path}: {node.path}/{r} is on {v.dims}, {src.name} on {src.dims} (after the record)")
            if not same_values(v.values, src[r].values):
                fail(f"{path}: {node.path}/{r} differs from {src.name}[{r}]")
            missing = [d for d in v.dims if d in h.coords and d not in v.coords]
            if missing:
                fail(f"{path}: {node.path}/{r} lacks the coordinates {missing}")
            nviews += 1
    if nviews:
        print(f"ok   {path}: {nviews} XDMF views on their variables' dimensions, with their values")


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("h5")
    ap.add_argument("nc", nargs="?")
    ap.add_argument("--grid", nargs=2, metavar=("LENGTHS", "COUNTS"))
    ap.add_argument("--names", default="x,y,z")
    ap.add_argument("--measured", default="")
    a = ap.parse_args(argv)
    # decode_times=False: the stored values are compared (times decode alike in both); phony_dims
    # named (older xarray refused datasets without dimension scales, newer ones warn and name them)
    try:
        h = xr.open_dataset(a.h5, engine="h5netcdf", decode_times=False, phony_dims="sort")
        h.load()
    except Exception as e:
        fail(f"{a.h5}: xarray (h5netcdf) cannot open it as netCDF-4: {type(e).__name__}: {' '.join(str(e).split())}")
    phony = [d for d in h.sizes if str(d).startswith("phony_dim")]
    if phony:
        fail(f"{a.h5}: datasets without dimension scales: xarray (h5netcdf) shows {phony} and coordinates {sorted(h.coords)}")
    if hasattr(xr, "open_datatree"):  # every group (the viewers' /xdmf too) opens, aligned with the root
        try:
            tree = xr.open_datatree(a.h5, engine="h5netcdf", decode_times=False, phony_dims="sort").load()
        except Exception as e:
            fail(f"{a.h5}: xarray.open_datatree (h5netcdf) fails: {type(e).__name__}: {' '.join(str(e).split())[:300]}")
        xdmf_views(a.h5, tree, h)
    print(f"ok   {a.h5}: xarray (h5netcdf) dims {dict(h.sizes)}, coords {sorted(h.coords)}")
    if a.grid:
        lengths = [float(x) for x in a.grid[0].split()]
        counts = [int(x) for x in a.grid[1].split()]
        for name, L, n in zip(a.names.split(","), lengths, counts):
            want = (np.arange(n) + 0.5) * L / n
            if name not in h.coords or h[name].dims != (name,):
                fail(f"{a.h5}: no coordinate {name}({name})")
            if not np.allclose(h[name].values, want, rtol=0, atol=1e-12 * L):
                fail(f"{a.h5}: {name} = {h[name].values[:4]}..., the cell centres are {want[:4]}...")
        names = a.names.split(",")[:len(counts)]
        for v in h.data_vars:  # a field on the whole grid: (..., z, y, x), the last dimensions
            grid_dims = [d for d in h[v].dims if d in names]
            if len(grid_dims) == len(names) and h[v].dims[-len(names):] != tuple(reversed(names)):
                fail(f"{a.h5}: {v}{h[v].dims} is not on the coordinates in file order")
        print(f"ok   {a.h5}: coordinates {','.join(names)} are the cell centres of {a.grid[0]} in {a.grid[1]} cells")
    if not a.nc:
        return
    n = xr.open_dataset(a.nc, engine="netcdf4", decode_times=False)
    n.load()
    if dict(h.sizes) != dict(n.sizes):
        fail(f"dimensions: {a.h5} {dict(h.sizes)}, {a.nc} {dict(n.sizes)}")
    if set(h.coords) != set(n.coords) or set(h.data_vars) != set(n.data_vars):
        fail(f"variables: {a.h5} coords {sorted(h.coords)} data {sorted(h.data_vars)}, "
             f"{a.nc} coords {sorted(n.coords)} data {sorted(n.data_vars)}")
    if h.encoding.get("unlimited_dims", set()) != n.encoding.get("unlimited_dims", set()):
        fail(f"unlimited dimensions: {a.h5} {h.encoding.get('unlimited_dims')}, {a.nc} {n.encoding.get('unlimited_dims')}")
    for v in n.variables:
        if h[v].dims != n[v].dims:
            fail(f"{v}: dimensions {h[v].dims} in {a.h5}, {n[v].dims} in {a.nc}")
        if attrs_of(h[v]) != attrs_of(n[v]):
            fail(f"{v}: attributes {attrs_of(h[v])} in {a.h5}, {attrs_of(n[v])} in {a.nc}")
        if list(attrs_of(h[v])) != list(attrs_of(n[v])):  # the order written (the .h5 listed them by name)
            fail(f"{v}: attributes in the order {list(attrs_of(h[v]))} in {a.h5}, {list(attrs_of(n[v]))} in {a.nc}")
        if v in a.measured.split(","):
            if h[v].shape != n[v].shape:
                fail(f"{v}: shape {h[v].shape} in {a.h5}, {n[v].shape} in {a.nc}")
        elif not same_values(h[v].values, n[v].values):
            fail(f"{v}: values differ")
    hg = {k: v for k, v in attrs_of(h).items() if not RUN_OWN.match(k)}
    ng = {k: v for k, v in attrs_of(n).items() if not RUN_OWN.match(k)}
    if list(hg) != list(ng):
        fail(f"global attributes in the order {list(hg)} in {a.h5}, {list(ng)} in {a.nc}")
    if set(attrs_of(h)) != set(attrs_of(n)) or str(sorted(hg.items())) != str(sorted(ng.items())):
        fail(f"global attributes: {sorted(set(attrs_of(h)) ^ set(attrs_of(n)))} in one file only, or values differ: "
             f"{[k for k in hg if hg.get(k) != ng.get(k)]}")
    print(f"ok   {a.h5} and {a.nc}: the same dimensions, coordinates, {len(n.variables)} variables (values and attributes) "
          f"and global attributes in xarray")


def batch(jobs):
    failed = 0
    with open(jobs) as f:
        lines = [line for line in f if line.strip()]
    for line in lines:
        out = io.StringIO()
        ok = True
        try:
            with contextlib.redirect_stdout(out):
                main(shlex.split(line))
        except SystemExit as e:
            ok = e.code in (0, None)
        except Exception as e:  # a job's own error, not the batch's
            ok = False
            out.write(f"FAIL {shlex.split(line)[0]}: {type(e).__name__}: {e}\n")
        said = out.getvalue().splitlines()
        if ok:
            print("ok " + (said[-1][2:].strip() if said else shlex.split(line)[0]))
        else:
            failed += 1
            print("FAIL " + " | ".join(x[5:] if x.startswith("FAIL ") else x for x in said if not x.startswith("ok"))[:600])
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--batch":
        batch(sys.argv[2])
    else:
        main()
