#!/usr/bin/env python3
"""Turn one time of an hpcsim output file (NetCDF .nc or HDF5 .h5) into a PNG.

usage: plot_field.py FILE [--var T] [--time INDEX] [--out PNG]
A 1D field is drawn as a line, a 2D field as an image, a 3D field as its middle z slice.
"""
import argparse
import sys

import numpy as np


def load(path, var, index):
    """The field at time record `index` (negative counts from the end), its coordinates and time."""
    if path.endswith(".nc"):
        import netCDF4
        with netCDF4.Dataset(path) as ds:
            v = ds.variables[var]
            dims = v.dimensions
            rec = dims[0] if dims and ds.dimensions[dims[0]].isunlimited() else None  # time or iteration
            data = np.asarray(v[index] if rec else v[:])
            spatial = [d for d in dims if d != rec]
            coords = [np.asarray(ds.variables[d][:]) if d in ds.variables else np.arange(ds.dimensions[d].size) for d in spatial]
            t = float(ds.variables[rec][index]) if rec in ds.variables else 0.0
            units = getattr(v, "units", "")
            return data, spatial, coords, t, units
    import h5py
    with h5py.File(path, "r") as f:
        d = f[var]
        dims = d.attrs.get("dimensions", b"")
        dims = (dims.decode() if isinstance(dims, bytes) else str(dims)).split()
        rec = dims[0] if dims and d.maxshape[0] is None else None  # time or iteration
        data = np.asarray(d[index] if rec else d[:])
        names = dims[1:] if rec else dims
        if not names:
            names = [n for n in ("z", "y", "x") if n in f][-data.ndim:]
        coords = [np.asarray(f[n]) for n in names]
        t = float(f[rec][index]) if rec in f else 0.0
        units = d.attrs.get("units", b"")
        units = units.decode() if isinstance(units, bytes) else str(units)
        return data, names, coords, t, units


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("file")
    ap.add_argument("--var", default="T")
    ap.add_argument("--time", type=int, default=-1, help="time record (default: the last)")
    ap.add_argument("--out", default=None)
    a = ap.parse_args()
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    data, names, coords, t, units = load(a.file, a.var, a.time)
    if data.ndim == 3:
        data, names, coords = data[data.shape[0] // 2], names[1:], coords[1:]
    fig, ax = plt.subplots(figsize=(6, 5))
    if data.ndim == 1:
        ax.plot(coords[0], data)
        ax.set_xlabel(names[0])
        ax.set_ylabel(f"{a.var} [{units}]")
    else:
        im = ax.pcolormesh(coords[1], coords[0], data, shading="auto")
        ax.set_xlabel(names[1])
        ax.set_ylabel(names[0])
        ax.set_aspect("equal")
        fig.colorbar(im, ax=ax, label=f"{a.var} [{units}]")
    ax.set_title(f"{a.var} at t = {t:.6g} s")
    out = a.out or a.file.rsplit(".", 1)[0] + f"_{a.var}.png"
    fig.savefig(out, dpi=100, bbox_inches="tight")
    print(out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
