#!/usr/bin/env python3
"""Reader-side checks of hpcsim output files with real clients; exits 1 on any problem.

  check_output.py [--var NAME]... [--records N] [--no-cfchecks] [--strict] FILE...

FILE.nc  : opened with xarray (times decoded) or else netCDF4; CF essentials checked (Conventions,
           title, source, history, coordinate units/axis, time units/calendar, variable units);
           then `cfchecks` when installed.  cfchecker 4.1 knows CF up to 1.8: the file is checked
           as a copy whose Conventions names the newest version the checker knows.  Without network
           the official standard-name table cannot be fetched: a table built from the file's own
           standard names is used instead (so names are not validated; everything else is).
FILE.h5  : opened with h5py: attributes and datasets; its .xmf companion (same stem) is checked too.
FILE.xmf : parsed as XML; every HDF DataItem must name an existing dataset of the right size, every
           HyperSlab must lie inside its dataset, times must increase.
A missing Python module or tool is reported and skipped (an error with --strict).
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

problems = []
notices = []


def problem(msg):
    problems.append(msg)
    print("PROBLEM: " + msg)


def notice(msg):
    notices.append(msg)
    print("notice: " + msg)


def text(v):
    if isinstance(v, bytes):
        return v.decode("utf-8", "replace")
    if hasattr(v, "tobytes") and getattr(v, "dtype", None) is not None and v.dtype.kind == "S":
        return v.tobytes().decode("utf-8", "replace").rstrip("\0")
    return str(v)


# ---------------------------------------------------------------- NetCDF

def check_attrs_common(path, gattrs, var_attrs, dims_of, coords, data_vars, args):
    conv = gattrs.get("Conventions", "")
    if not conv.startswith("CF-"):
        problem(f"{path}: Conventions = {conv!r}, expected CF-x.y")
    for a in ("title", "source", "history"):
        if not gattrs.get(a):
            problem(f"{path}: global attribute {a} missing or empty")
    if not gattrs.get("source", "").startswith("hpcsim"):
        problem(f"{path}: source = {gattrs.get('source')!r} does not name hpcsim")
    for c in coords:
        at = var_attrs[c]
        if "units" not in at:
            problem(f"{path}: coordinate {c} has no units")
        if c != "time" and at.get("axis") not in ("X", "Y", "Z"):
            problem(f"{path}: coordinate {c} has axis {at.get('axis')!r}")
    if "time" in var_attrs:
        at = var_attrs["time"]
        if not re.match(r"^\w+ since ", at.get("units", "")):
            problem(f"{path}: time units {at.get('units')!r} are not 'UNIT since DATE'")
        if at.get("calendar") is None:
            problem(f"{path}: time has no calendar")
        if at.get("axis") != "T":
            problem(f"{path}: time axis is {at.get('axis')!r}")
    for v in data_vars:
        if "units" not in var_attrs[v]:
            problem(f"{path}: variable {v} has no units")
        if "long_name" not in var_attrs[v] and "standard_name" not in var_attrs[v]:
            problem(f"{path}: variable {v} has neither long_name nor standard_name")
        dims = dims_of[v]
        if "time" in dims and dims[0] != "time":
            problem(f"{path}: variable {v} has time as dimension {dims.index('time')}, not first")
    for v in args.var:
        if v not in var_attrs:
            problem(f"{path}: required variable {v} missing")


def check_nc_xarray(path, args):
    import xarray as xr
    with xr.open_dataset(path, decode_times=True) as ds:
        var_attrs = {k: dict(ds[k].attrs) for k in ds.variables}
        enc = {k: ds[k].encoding for k in ds.variables}
        for k in var_attrs:  # decoded attributes live in encoding
            for a in ("units", "calendar"):
                if a in enc[k] and a not in var_attrs[k]:
                    var_attrs[k][a] = enc[k][a]
        dims_of = {k: list(ds[k].dims) for k in ds.variables}
        coords = [c for c in ds.coords if c in ds.dims]
        data_vars = list(ds.data_vars)
        check_attrs_common(path, dict(ds.attrs), var_attrs, dims_of, coords, data_vars, args)
        if "time" in ds.variables:
            kind = ds["time"].dtype.kind
            if kind != "M" and ds["time"].dtype != object:
                problem(f"{path}: xarray did not decode time (dtype {ds['time'].dtype})")
            if args.records is not None and ds.sizes.get("time") != args.records:
                problem(f"{path}: {ds.sizes.get('time')} time records, expected {args.records}")
        for v in data_vars:
            ds[v].load()  # every value readable
    print(f"ok   {path}: opened with xarray ({len(data_vars)} variables)")


def check_nc_netcdf4(path, args):
    import netCDF4
    with netCDF4.Dataset(path) as ds:
        gattrs = {a: text(ds.getncattr(a)) for a in ds.ncattrs()}
        var_attrs = {k: {a: text(v.getncattr(a)) for a in v.ncattrs()} for k, v in ds.variables.items()}
        dims_of = {k: list(v.dimensions) for k, v in ds.variables.items()}
        coords = [k for k in ds.variables if k in ds.dimensions]
        data_vars = [k for k in ds.variables if k not in ds.dimensions]
        check_attrs_common(path, gattrs, var_attrs, dims_of, coords, data_vars, args)
        if args.records is not None and "time" in ds.dimensions and len(ds.dimensions["time"]) != args.records:
            problem(f"{path}: {len(ds.dimensions['time'])} time records, expected {args.records}")
        if "time" in ds.variables and len(ds.variables["time"]):
            netCDF4.num2date(ds.variables["time"][:], ds.variables["time"].units,
                             getattr(ds.variables["time"], "calendar", "standard"))
    print(f"ok   {path}: opened with netCDF4")


def minimal_tables(path, workdir):
    """Standard-name / area-type / region tables that need no network (see the module doc)."""
    import netCDF4
    entries = {}
    with netCDF4.Dataset(path) as ds:
        for v in ds.variables.values():
            if "standard_name" in v.ncattrs():
                entries[v.standard_name.split()[0]] = getattr(v, "units", "1")
    sn = os.path.join(workdir, "standard_names.xml")
    with open(sn, "w") as f:
        f.write('<?xml version="1.0"?>\n<standard_name_table>\n<version_number>0</version_number>\n'
                '<last_modified>offline</last_modified>\n')
        for name, units in entries.items():
            f.write(f'<entry id="{name}"><canonical_units>{units if name != "time" else "s"}'
                    '</canonical_units><grib></grib><amip></amip><description></description></entry>\n')
        f.write("</standard_name_table>\n")
    at = os.path.join(workdir, "area_types.xml")
    with open(at, "w") as f:
        f.write('<?xml version="1.0"?>\n<area_type_table><version_number>0</version_number><date>offline</date>'
                '<entry id="land"><description></description></entry></area_type_table>\n')
    rn = os.path.join(workdir, "regions.xml")
    with open(rn, "w") as f:
        f.write('<?xml version="1.0"?>\n<standardized_region_list><version_number>0</version_number>'
                '<date>offline</date><entry id="global"></entry></standardized_region_list>\n')
    return ["-s", sn, "-a", at, "-r", rn]


def cf_copy_for_checker(path, workdir):
    """A copy whose Conventions the installed checker knows, or the file itself."""
    try:
        from cfchecker import cfchecks as cfc
        known = [str(v) for v in cfc.cfVersions]
        newest = str(cfc.newest_version)
    except Exception:
        return path, None
    import netCDF4
    with netCDF4.Dataset(path) as ds:
        conv = getattr(ds, "Conventions", "")
    if conv in known or not conv.startswith("CF-"):
        return path, None
    copy = os.path.join(workdir, os.path.basename(path))
    shutil.copy(path, copy)
    with netCDF4.Dataset(copy, "a") as ds:
        ds.Conventions = newest
    return copy, f"cfchecks knows CF up to {newest}; {conv} file checked as {newest}"


def run_cfchecks(path, args):
    exe = shutil.which("cfchecks")
    if not exe:
        notice(f"{path}: cfchecks not installed (python3 -m pip install cfchecker), skipped")
        return
    with tempfile.TemporaryDirectory() as work:
        try:
            target, why = cf_copy_for_checker(path, work)
        except ImportError:
            target, why = path, None
        if why:
            notice(why)
        cmd = [exe, target]
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
        out = r.stdout + r.stderr
        if "urlopen error" in out or "URLError" in out:
            notice("cfchecks could not fetch the CF tables (no network): standard names checked against the file's own")
            r = subprocess.run([exe] + minimal_tables(path, work) + [target], capture_output=True, text=True, timeout=300)
            out = r.stdout + r.stderr
        m = re.search(r"ERRORS detected:\s*(\d+)", out)
        w = re.search(r"WARNINGS given:\s*(\d+)", out)
        if not m:
            problem(f"{path}: cfchecks did not finish:\n{out[-2000:]}")
            return
        errors = [l for l in out.splitlines() if l.startswith("ERROR")]
        warns = [l for l in out.splitlines() if l.startswith("WARN")]
        if int(m.group(1)) > 0:
            problem(f"{path}: cfchecks found {m.group(1)} errors:\n  " + "\n  ".join(errors))
        elif w and int(w.group(1)) > 0:
            problem(f"{path}: cfchecks gave {w.group(1)} warnings:\n  " + "\n  ".join(warns))
        else:
            print(f"ok   {path}: cfchecks: 0 errors, 0 warnings")


def check_nc(path, args):
    try:
        check_nc_xarray(path, args)
    except ImportError:
        try:
            check_nc_netcdf4(path, args)
        except ImportError:
            notice(f"{path}: neither xarray nor netCDF4 is installed, skipped")
            return
    if args.cfchecks:
        run_cfchecks(path, args)


# ---------------------------------------------------------------- HDF5 and XDMF

def check_h5(path, args):
    try:
        import h5py
    except ImportError:
        notice(f"{path}: h5py not installed, HDF5 content not checked")
        h5py = None
    if h5py:
        with h5py.File(path, "r") as f:
            conv = text(f.attrs.get("Conventions", b""))
            if not conv.startswith("CF-"):
                problem(f"{path}: Conventions = {conv!r}")
            for a in ("title", "source", "history"):
                if a not in f.attrs:
                    problem(f"{path}: root attribute {a} missing")
            for name, ds in f.items():
                if not isinstance(ds, h5py.Dataset):
                    continue
                if "units" not in ds.attrs:
                    problem(f"{path}: dataset {name} has no units")
                ds[()]  # readable
            for v in args.var:
                if v not in f:
                    problem(f"{path}: required dataset {v} missing")
            if args.records is not None and "time" in f and f["time"].shape[0] != args.records:
                problem(f"{path}: {f['time'].shape[0]} time records, expected {args.records}")
        print(f"ok   {path}: opened with h5py")
    stem = os.path.splitext(path)[0]
    xmf = stem + ".xmf"
    if os.path.exists(xmf):
        check_xmf(xmf, args)
    else:
        problem(f"{path}: XDMF companion {xmf} missing")


def dims_of(item):
    return [int(x) for x in item.get("Dimensions", "").split()]


def prod(xs):
    p = 1
    for x in xs:
        p *= x
    return p


def hdf_ref(xmf, item, cache):
    """(shape of the referenced dataset) or None after reporting a problem."""
    ref = (item.text or "").strip()
    if ":" not in ref:
        problem(f"{xmf}: HDF DataItem {ref!r} is not FILE:/DATASET")
        return None
    fname, dset = ref.rsplit(":", 1)
    full = os.path.join(os.path.dirname(os.path.abspath(xmf)), fname)
    if not os.path.exists(full):
        problem(f"{xmf}: references missing file {fname}")
        return None
    try:
        import h5py
    except ImportError:
        return dims_of(item)
    if full not in cache:
        cache[full] = h5py.File(full, "r")
    f = cache[full]
    if dset not in f:
        problem(f"{xmf}: references missing dataset {fname}:{dset}")
        return None
    shape = list(f[dset].shape)
    if prod(shape) != prod(dims_of(item)):
        problem(f"{xmf}: {fname}:{dset} has shape {shape}, the DataItem says {dims_of(item)}")
    return shape


def check_item(xmf, item, cache, npoints):
    if item.get("ItemType") == "HyperSlab":
        kids = item.findall("DataItem")
        if len(kids) != 2:
            problem(f"{xmf}: HyperSlab without its two DataItems")
            return
        sel = [int(x) for x in (kids[0].text or "").split()]
        shape = hdf_ref(xmf, kids[1], cache)
        if shape is None:
            return
        r = len(shape)
        if len(sel) != 3 * r:
            problem(f"{xmf}: HyperSlab selection has {len(sel)} numbers for a rank-{r} dataset")
            return
        start, stride, count = sel[:r], sel[r:2 * r], sel[2 * r:]
        for d in range(r):
            if start[d] + stride[d] * (count[d] - 1) >= shape[d]:
                problem(f"{xmf}: HyperSlab {sel} exceeds dataset shape {shape}")
                return
        if prod(count) != prod(dims_of(item)) or prod(count) != npoints:
            problem(f"{xmf}: HyperSlab of {prod(count)} values for a grid of {npoints} points")
    elif item.get("Format") == "HDF":
        if hdf_ref(xmf, item, cache) is not None and prod(dims_of(item)) != npoints:
            problem(f"{xmf}: attribute of {prod(dims_of(item))} values for a grid of {npoints} points")


def check_grid(xmf, grid, cache):
    topo = grid.find("Topology")
    geo = grid.find("Geometry")
    if topo is None or geo is None:
        problem(f"{xmf}: grid {grid.get('Name')} lacks Topology or Geometry")
        return None
    tdims = [int(x) for x in topo.get("Dimensions", "").split()]
    gitems = geo.findall("DataItem")
    if geo.get("GeometryType") in ("VXVYVZ", "VXVY"):
        lens = []
        for it in gitems:
            if it.get("Format") == "HDF":
                shape = hdf_ref(xmf, it, cache)
                lens.append(prod(shape) if shape else -1)
            else:
                lens.append(prod(dims_of(it)))
        if list(reversed(lens)) != tdims:
            problem(f"{xmf}: geometry lengths {lens} (x first) do not match topology {tdims} (slowest first)")
    for att in grid.findall("Attribute"):
        for item in att.findall("DataItem"):
            check_item(xmf, item, cache, prod(tdims))
    t = grid.find("Time")
    return float(t.get("Value")) if t is not None else None


def check_xmf(xmf, args):
    try:
        root = ET.parse(xmf).getroot()
    except ET.ParseError as e:
        problem(f"{xmf}: not well-formed XML: {e}")
        return
    if root.tag != "Xdmf" or root.get("Version") != "3.0":
        problem(f"{xmf}: root is <{root.tag} Version={root.get('Version')}>, expected <Xdmf Version=\"3.0\">")
    cache = {}
    try:
        grids = [g for g in root.iter("Grid") if g.get("GridType", "Uniform") == "Uniform"]
        if not grids:
            problem(f"{xmf}: no uniform grid")
        times = [check_grid(xmf, g, cache) for g in grids]
        times = [t for t in times if t is not None]
        if any(b <= a for a, b in zip(times, times[1:])):
            problem(f"{xmf}: times do not increase: {times}")
        if args.records is not None and times and len(times) != args.records:
            problem(f"{xmf}: {len(times)} time steps, expected {args.records}")
    finally:
        for f in cache.values():
            f.close()
    print(f"ok   {xmf}: {len(grids)} grid(s) checked")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("files", nargs="+")
    ap.add_argument("--var", action="append", default=[], help="a variable that must be present")
    ap.add_argument("--records", type=int, help="expected number of time records")
    ap.add_argument("--no-cfchecks", dest="cfchecks", action="store_false")
    ap.add_argument("--strict", action="store_true", help="missing modules or tools are problems")
    args = ap.parse_args()
    for path in args.files:
        if not os.path.exists(path):
            problem(f"{path}: no such file")
            continue
        ext = os.path.splitext(path)[1].lower()
        try:
            if ext == ".nc":
                check_nc(path, args)
            elif ext in (".h5", ".hdf5", ".hdf"):
                check_h5(path, args)
            elif ext == ".xmf":
                check_xmf(path, args)
            else:
                problem(f"{path}: unknown extension {ext}")
        except Exception as e:  # a client that cannot read the file is the finding
            problem(f"{path}: {type(e).__name__}: {e}")
    if args.strict and notices:
        problem("--strict: " + "; ".join(notices))
    print(f"check_output: {len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
