#!/usr/bin/env python3
"""Reader-side checks of hpcsim output files with real clients; exits 1 on any problem.

  check_output.py [--var NAME]... [--records N] [--no-cfchecks] [--strict] FILE...

FILE.nc  : opened with xarray (times decoded) or else netCDF4; CF essentials checked (Conventions,
           title, source, history, coordinate units/axis/bounds, the record axis: a CF time axis
           with units "UNIT since DATE" and a calendar, or a counter such as `iteration` with
           neither calendar nor time units; variable units); then `cfchecks` when installed,
           offline: with the CF standard-name table shipped in tests/data (its version in the file
           name) and the area-type / region tables there (--cf-tables DIR to use others).  The file
           must claim a CF version the checker knows (it checks that version).
FILE.h5  : opened with h5py: attributes and datasets (units on all but strings and cell bounds; a
           featureType timeSeries file: one timeseries_id dataset, coordinates that exist along the
           stations); netCDF-4 dimensions: every coordinate is the dimension scale of its own name,
           every axis of every dataset is attached to the one scale its `dimensions` attribute
           names, of its length; then, with h5netcdf installed, opened with h5netcdf (no phony
           dimensions) showing those dimensions; its .xmf companion (same stem) is checked too
           (none for series or station files).
FILE.xmf : parsed as XML; every HDF DataItem must name an existing dataset of the right size, in a
           file named without a directory (relative to the .xmf), every HyperSlab must lie inside
           its dataset, attributes must say their centring and match the grid's cells or nodes,
           times must increase.
A missing Python module or tool is reported and skipped (an error with --strict).
"""
import argparse
import gzip
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

def record_dim(dims_of, data_vars):
    """The record dimension: the first dimension of the data variables that have more than the
    spatial ones (time, or a counter such as iteration); None for a file without one."""
    for v in data_vars:
        if dims_of[v] and dims_of[v][0] in ("time", "iteration"):
            return dims_of[v][0]
    return None


def topology_role(attrs):
    """A UGRID or SGRID topology or connectivity variable (cf_role mesh_topology, grid_topology,
    *_connectivity, volume_shape_type): an index or a container of attributes, without units."""
    role = text(attrs.get("cf_role", ""))
    return role in ("mesh_topology", "grid_topology", "volume_shape_type") or role.endswith("_connectivity")


def check_attrs_common(path, gattrs, var_attrs, dims_of, coords, data_vars, args, rec=None):
    conv = gattrs.get("Conventions", "")
    if not conv.startswith("CF-"):
        problem(f"{path}: Conventions = {conv!r}, expected CF-x.y")
    for a in ("title", "source", "history"):
        if not gattrs.get(a):
            problem(f"{path}: global attribute {a} missing or empty")
    if not gattrs.get("source", "").startswith("hpcsim"):
        problem(f"{path}: source = {gattrs.get('source')!r} does not name hpcsim")
    bounds = {var_attrs[c]["bounds"] for c in coords if "bounds" in var_attrs[c]}
    data_vars = [v for v in data_vars if v not in bounds]
    rec = rec or record_dim(dims_of, data_vars)
    for c in coords:
        at = var_attrs[c]
        if "units" not in at:
            problem(f"{path}: coordinate {c} has no units")
        if c == rec:
            continue
        if at.get("axis") not in ("X", "Y", "Z"):
            problem(f"{path}: coordinate {c} has axis {at.get('axis')!r}")
        b = at.get("bounds")
        if b is None:
            problem(f"{path}: coordinate {c} has no bounds (CDO then assumes equal cell areas)")
        elif b not in var_attrs:
            problem(f"{path}: coordinate {c} names bounds {b!r}, which is missing")
        elif dims_of[b][:1] != [c] or len(dims_of[b]) != 2:
            problem(f"{path}: bounds {b} has dimensions {dims_of[b]}, expected ({c}, 2)")
    if rec in var_attrs:
        at = var_attrs[rec]
        timelike = bool(re.match(r"^\w+ since ", at.get("units", "")))
        if rec == "time" and not timelike:
            problem(f"{path}: time units {at.get('units')!r} are not 'UNIT since DATE'")
        if timelike:
            if at.get("calendar") is None:
                problem(f"{path}: {rec} has no calendar")
            if at.get("axis") != "T":
                problem(f"{path}: {rec} axis is {at.get('axis')!r}")
        else:
            for a in ("calendar", "axis", "standard_name"):
                if a in at:
                    problem(f"{path}: the counter axis {rec} has a time attribute {a} = {at[a]!r}")
    for v in data_vars:
        if "units" not in var_attrs[v] and not topology_role(var_attrs[v]):
            problem(f"{path}: variable {v} has no units")
        if "long_name" not in var_attrs[v] and "standard_name" not in var_attrs[v]:
            problem(f"{path}: variable {v} has neither long_name nor standard_name")
        dims = dims_of[v]
        if rec and rec in dims and dims[0] != rec:
            problem(f"{path}: variable {v} has {rec} as dimension {dims.index(rec)}, not first")
    for v in args.var:
        if v not in var_attrs:
            problem(f"{path}: required variable {v} missing")
    return rec


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
        rec = ds.encoding.get("unlimited_dims", set())
        rec = next(iter(rec)) if len(rec) == 1 else None
        rec = check_attrs_common(path, dict(ds.attrs), var_attrs, dims_of, coords, data_vars, args, rec)
        if rec == "time" or (rec and " since " in var_attrs[rec].get("units", "")):
            kind = ds[rec].dtype.kind
            if kind != "M" and ds[rec].dtype != object:
                problem(f"{path}: xarray did not decode {rec} (dtype {ds[rec].dtype})")
        if rec and args.records is not None and ds.sizes.get(rec) != args.records:
            problem(f"{path}: {ds.sizes.get(rec)} records along {rec}, expected {args.records}")
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
        unlim = [d for d, dim in ds.dimensions.items() if dim.isunlimited()]
        rec = check_attrs_common(path, gattrs, var_attrs, dims_of, coords, data_vars, args,
                                 unlim[0] if len(unlim) == 1 else None)
        if rec and args.records is not None and len(ds.dimensions[rec]) != args.records:
            problem(f"{path}: {len(ds.dimensions[rec])} records along {rec}, expected {args.records}")
        if rec in ds.variables and len(ds.variables[rec]) and " since " in getattr(ds.variables[rec], "units", ""):
            netCDF4.num2date(ds.variables[rec][:], ds.variables[rec].units,
                             getattr(ds.variables[rec], "calendar", "standard"))
    print(f"ok   {path}: opened with netCDF4")


CF_TABLES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "data")


def cf_tables(tables_dir, workdir):
    """cfchecks options for the standard-name, area-type and region tables in tables_dir (no
    network): the newest cf-standard-name-table-v*.xml(.gz) there, decompressed into workdir."""
    names = sorted((f for f in os.listdir(tables_dir) if re.match(r"cf-standard-name-table-v\d+\.xml(\.gz)?$", f)),
                   key=lambda f: int(re.search(r"v(\d+)", f).group(1)))
    if not names:
        raise FileNotFoundError(f"no cf-standard-name-table-vN.xml[.gz] in {tables_dir}")
    sn = os.path.join(tables_dir, names[-1])
    if sn.endswith(".gz"):
        plain = os.path.join(workdir, names[-1][:-3])
        with gzip.open(sn, "rb") as fin, open(plain, "wb") as fout:
            shutil.copyfileobj(fin, fout)
        sn = plain
    opts = ["-s", sn]
    for opt, name in (("-a", "cf-area-type-table.xml"), ("-r", "cf-standardized-region-list.xml")):
        path = os.path.join(tables_dir, name)
        if not os.path.exists(path):
            raise FileNotFoundError(f"{path} missing")
        opts += [opt, path]
    return opts, names[-1]


def run_cfchecks(path, args):
    exe = shutil.which("cfchecks")
    if not exe:
        notice(f"{path}: cfchecks not installed (python3 -m pip install cfchecker), skipped")
        return
    with tempfile.TemporaryDirectory() as work:
        try:
            opts, table = cf_tables(args.cf_tables, work)
        except (OSError, ValueError) as e:
            problem(f"{path}: CF tables for an offline cfchecks: {e}")
            return
        r = subprocess.run([exe] + opts + [path], capture_output=True, text=True, timeout=300)
        out = r.stdout + r.stderr
        m = re.search(r"ERRORS detected:\s*(\d+)", out)
        w = re.search(r"WARNINGS given:\s*(\d+)", out)
        if not m:
            problem(f"{path}: cfchecks did not finish:\n{out[-2000:]}")
            return
        errors = [l for l in out.splitlines() if l.startswith("ERROR")]
        warns = [l for l in out.splitlines() if l.startswith("WARN")]
        version = re.search(r"Using CF Checker Version\s*(\S+)", out)
        checked = re.search(r"Checking against CF Version\s*(\S+)", out)
        if int(m.group(1)) > 0:
            problem(f"{path}: cfchecks found {m.group(1)} errors:\n  " + "\n  ".join(errors))
        elif w and int(w.group(1)) > 0:
            problem(f"{path}: cfchecks gave {w.group(1)} warnings:\n  " + "\n  ".join(warns))
        else:
            print(f"ok   {path}: cfchecks {version.group(1) if version else '?'} against "
                  f"{checked.group(1) if checked else '?'} ({table}): 0 errors, 0 warnings")


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

DIM_ONLY = "This is a netCDF dimension but not a netCDF variable."


def dim_only(ds):
    """A netCDF-4 dimension without a coordinate variable: a dimension scale that holds no data."""
    return text(ds.attrs.get("CLASS", b"")) == "DIMENSION_SCALE" and text(ds.attrs.get("NAME", b"")).startswith(DIM_ONLY)


def check_h5_dims(path, f, h5py):
    """The file's netCDF-4 dimensions (HDF5 dimension scales), as netCDF-4 readers see them."""
    nds = 0
    for name, ds in f.items():
        if isinstance(ds, h5py.Dataset) and dim_only(ds) and ds.size and ds[()].any():
            problem(f"{path}: dimension {name} holds values other than 0 (bytes never written: a dimension has no data)")
        if not isinstance(ds, h5py.Dataset) or dim_only(ds) or ds.ndim == 0:
            continue
        if h5py.h5ds.is_scale(ds.id):
            if text(ds.attrs.get("NAME", b"")) != name:
                problem(f"{path}: dimension scale {name} is named {text(ds.attrs.get('NAME', b''))!r}")
            continue
        if "dimensions" not in ds.attrs:  # a coordinate variable: its own dimension
            problem(f"{path}: {name}({name}) is not a dimension scale (netCDF-4 readers see phony_dim_N)")
            continue
        want = text(ds.attrs["dimensions"]).split()
        if len(want) != ds.ndim:
            problem(f"{path}: {name} has {ds.ndim} dimensions, its `dimensions` attribute names {want}")
            continue
        for i in range(ds.ndim):
            got = [s.name.split("/")[-1] for s in ds.dims[i].values()]
            if got != want[i:i + 1]:
                problem(f"{path}: {name} axis {i} is attached to the dimension scales {got}, expected [{want[i]!r}]")
            elif f[want[i]].maxshape[0] is not None and f[want[i]].shape[0] != ds.shape[i]:
                problem(f"{path}: {name} axis {i} has {ds.shape[i]} points, its dimension {want[i]} {f[want[i]].shape[0]}")
        nds += 1
    try:
        import h5netcdf
    except ImportError:
        print(f"ok   {path}: netCDF-4 dimensions of {nds} datasets (dimension scales; h5netcdf not installed)")
        return
    try:
        with h5netcdf.File(path, "r") as g:
            for name, v in g.variables.items():
                want = tuple(text(f[name].attrs.get("dimensions", b"")).split()) if "dimensions" in f[name].attrs else (name,)
                if f[name].ndim and v.dimensions != want:
                    problem(f"{path}: h5netcdf shows {name}{v.dimensions}, expected {want}")
    except Exception as e:  # h5netcdf refuses datasets without scales (phony dimensions)
        problem(f"{path}: h5netcdf cannot read it as netCDF-4: {e}")
        return
    print(f"ok   {path}: netCDF-4 dimensions of {nds} datasets (dimension scales; h5netcdf reads them)")


def check_h5(path, args):
    try:
        import h5py
    except ImportError:
        notice(f"{path}: h5py not installed, HDF5 content not checked")
        h5py = None
    gridded = True
    if h5py:
        with h5py.File(path, "r") as f:
            gridded = any(isinstance(d, h5py.Dataset) and (text(d.attrs.get("axis", b"")) in ("X", "Y", "Z") or
                                                           text(d.attrs.get("cf_role", b"")) == "mesh_topology")
                          for d in f.values())
            conv = text(f.attrs.get("Conventions", b""))
            if not conv.startswith("CF-"):
                problem(f"{path}: Conventions = {conv!r}")
            for a in ("title", "source", "history"):
                if a not in f.attrs:
                    problem(f"{path}: root attribute {a} missing")
            bounds = {text(d.attrs["bounds"]) for d in f.values() if isinstance(d, h5py.Dataset) and "bounds" in d.attrs}
            for name, ds in f.items():
                if not isinstance(ds, h5py.Dataset) or dim_only(ds):
                    continue
                # CF: strings carry no units, and cell bounds take their coordinate's
                if "units" not in ds.attrs and ds.dtype.kind != "S" and not topology_role(ds.attrs) and name not in bounds:
                    problem(f"{path}: dataset {name} has no units")
                ds[()]  # readable
            if text(f.attrs.get("featureType", b"")) == "timeSeries":  # a CF DSG station file
                ids = [n for n, d in f.items() if text(d.attrs.get("cf_role", b"")) == "timeseries_id"]
                if len(ids) != 1:
                    problem(f"{path}: featureType timeSeries with {len(ids)} timeseries_id datasets, expected 1")
                for name, ds in f.items():
                    for c in text(ds.attrs.get("coordinates", b"")).split():
                        if c not in f:
                            problem(f"{path}: {name} names coordinate {c}, which is missing")
                        elif ids and f[c].shape[:1] != f[ids[0]].shape[:1]:
                            problem(f"{path}: {name}'s coordinate {c} is not along the station dimension")
            for v in args.var:
                if v not in f:
                    problem(f"{path}: required dataset {v} missing")
            if args.records is not None and "time" in f and f["time"].shape[0] != args.records:
                problem(f"{path}: {f['time'].shape[0]} time records, expected {args.records}")
            check_h5_dims(path, f, h5py)
        print(f"ok   {path}: opened with h5py")
    stem = os.path.splitext(path)[0]
    xmf = stem + ".xmf"
    if os.path.exists(xmf):
        check_xmf(xmf, args)
    elif h5py and not gridded:
        print(f"ok   {path}: a series without a spatial grid, so no XDMF companion")
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
    if "/" in fname or "\\" in fname:
        problem(f"{xmf}: reference {ref!r} names a directory; the HDF5 file must be named relative to the .xmf")
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
    ttype = topo.get("TopologyType", "")
    if ttype in ("Triangle", "Tetrahedron", "Quadrilateral", "Hexahedron"):  # an unstructured mesh
        per = {"Triangle": 3, "Tetrahedron": 4, "Quadrilateral": 4, "Hexahedron": 8}[ttype]
        ncells = int(topo.get("NumberOfElements", "0"))
        for it in topo.findall("DataItem"):
            if it.get("Format") == "HDF":
                hdf_ref(xmf, it, cache)
            if dims_of(it) != [ncells, per]:
                problem(f"{xmf}: {ttype} connectivity of dimensions {dims_of(it)}, expected [{ncells}, {per}]")
        ncomp = {"XYZ": 3, "XY": 2}.get(geo.get("GeometryType"))
        if ncomp is None or len(gitems) != 1:
            problem(f"{xmf}: mesh geometry {geo.get('GeometryType')} with {len(gitems)} items, expected XYZ or XY")
            return None
        if gitems[0].get("Format") == "HDF":
            hdf_ref(xmf, gitems[0], cache)
        npoints = prod(dims_of(gitems[0])) // ncomp
        for att in grid.findall("Attribute"):
            center = att.get("Center")
            if center not in ("Node", "Cell"):
                problem(f"{xmf}: attribute {att.get('Name')} has Center={center!r}, expected Node or Cell")
                continue
            for item in att.findall("DataItem"):
                check_item(xmf, item, cache, ncells if center == "Cell" else npoints)
        t = grid.find("Time")
        return float(t.get("Value")) if t is not None else None
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
    ncells = prod([max(t - 1, 1) for t in tdims]) if "RectMesh" in topo.get("TopologyType", "") else None
    for att in grid.findall("Attribute"):
        center = att.get("Center")
        if center not in ("Node", "Cell"):
            problem(f"{xmf}: attribute {att.get('Name')} has Center={center!r}, expected Node or Cell")
            continue
        if center == "Cell" and ncells is None:
            problem(f"{xmf}: cell-centred attribute {att.get('Name')} on a {topo.get('TopologyType')} grid")
            continue
        for item in att.findall("DataItem"):
            check_item(xmf, item, cache, ncells if center == "Cell" else prod(tdims))
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
        times = {id(g): check_grid(xmf, g, cache) for g in grids}
        # times increase within each temporal collection (one per grid of the file)
        series = [c for c in root.iter("Grid") if c.get("CollectionType") == "Temporal"] or [root.find("Domain")]
        for c in series:
            ts = [times[id(g)] for g in c.findall("Grid") if id(g) in times and times[id(g)] is not None]
            if any(b <= a for a, b in zip(ts, ts[1:])):
                problem(f"{xmf}: times do not increase in {c.get('Name')}: {ts}")
        times = [t for t in (times[id(g)] for g in (series[0].findall("Grid") if series[0] is not None else [])) if t is not None]
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
    ap.add_argument("--cf-tables", default=CF_TABLES, help="folder of the CF tables for cfchecks (default tests/data)")
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
