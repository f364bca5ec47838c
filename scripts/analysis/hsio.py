"""Shared reading and figure helpers of the analysis scripts: hpcsim's NetCDF and HDF5 outputs as xarray Datasets."""
import os
import sys

import numpy as np


def need(modules):
    """Import the modules the script needs, or exit 2 with the pip line."""
    missing = []
    for m in modules:
        try:
            __import__(m)
        except ImportError:
            missing.append(m)
    if missing:
        print(f"{os.path.basename(sys.argv[0])}: error: needs the Python package(s) {' '.join(missing)} "
              f"(make deps, or python3 -m pip install {' '.join(missing)})", file=sys.stderr)
        sys.exit(2)


def run(main):
    """Run a script's main() and return its exit status; a reader that closes the pipe early
    (`| head`) ends the script quietly with status 141, as it ends a Unix tool (SIGPIPE), where
    Python printed a BrokenPipeError traceback."""
    try:
        rc = main()
        sys.stdout.flush()
        return rc
    except BrokenPipeError:
        # stdout is gone: point it at /dev/null so that the interpreter's last flush stays quiet
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141


def die(msg, code=2):
    print(f"{os.path.basename(sys.argv[0])}: error: {msg}", file=sys.stderr)
    sys.exit(code)


def _text(v):
    if isinstance(v, bytes):
        return v.decode()
    if isinstance(v, np.ndarray) and v.dtype.kind in "SO":
        return _text(v.item() if v.size == 1 else v[0])
    return str(v)


# HDF5 dimension-scale bookkeeping (netCDF-4 hides it too), and the mark of a dimension-only scale
_SCALE_ATTRS = {"CLASS", "NAME", "REFERENCE_LIST", "DIMENSION_LIST", "_Netcdf4Dimid", "_Netcdf4Coordinates", "_nc3_strict"}
_DIM_ONLY = "This is a netCDF dimension but not a netCDF variable."


def _open_hdf5(path):
    """One of our HDF5 files (root datasets, each with a `dimensions` attribute, also dimension
    scales since hpcsim writes netCDF-4 dimensions; a plain file's datasets by their scales) as a Dataset."""
    import h5py
    import xarray as xr
    data_vars, coords, attrs, record = {}, {}, {}, None
    with h5py.File(path, "r") as f:
        for k, v in f.attrs.items():
            attrs[k] = _text(v) if isinstance(v, (bytes, np.bytes_)) or (isinstance(v, np.ndarray) and v.dtype.kind == "S") else v
        for name, obj in f.items():
            if not isinstance(obj, h5py.Dataset) or obj.dtype.kind not in "fiu":
                continue
            if "NAME" in obj.attrs and _text(obj.attrs["NAME"]).startswith(_DIM_ONLY):
                continue  # a dimension without a coordinate variable (bnds): no data
            dims = _text(obj.attrs["dimensions"]).split() if "dimensions" in obj.attrs else None
            if dims is None and obj.ndim > 0 and all(len(obj.dims[i]) for i in range(obj.ndim)):
                dims = [obj.dims[i][-1].name.split("/")[-1] for i in range(obj.ndim)]  # attached scales
            if dims is None:
                dims = [name] if obj.ndim == 1 else [f"{name}_dim{i}" for i in range(obj.ndim)]
            if len(dims) != obj.ndim:
                continue
            vattrs = {k: (_text(a) if isinstance(a, (bytes, np.bytes_, np.ndarray)) and getattr(a, "dtype", np.dtype("S")).kind in "SO"
                          else a) for k, a in obj.attrs.items() if k != "dimensions" and k not in _SCALE_ATTRS}
            if obj.maxshape and obj.maxshape[0] is None and record is None and obj.ndim >= 1:
                record = dims[0]
            arr = xr.Variable(dims, obj[()], vattrs)
            if obj.ndim == 1 and dims[0] == name:
                coords[name] = arr
            else:
                data_vars[name] = arr
    ds = xr.Dataset(data_vars, coords, attrs)
    ds.encoding["unlimited_dims"] = {record} if record else set()
    return ds


def open_output(path):
    """An hpcsim output file (NetCDF .nc, HDF5 .h5, or the .partial of a stopped run) as an xarray
    Dataset with times as plain numbers (seconds, or iterations) and the record dimension in
    ds.encoding["unlimited_dims"]."""
    import xarray as xr
    if not os.path.exists(path):
        die(f"{path}: no such file")
    if os.path.isdir(path):
        die(f"{path}: a directory, not an output file")
    with open(path, "rb") as f:
        magic = f.read(8)
    if magic.startswith(b"\x89HDF"):
        try:  # NetCDF-4 files are HDF5 files too: ours are read by h5py (no netCDF4 needed; times as numbers)
            import h5py
        except ImportError:
            h5py = None
        if h5py is not None:
            try:
                with h5py.File(path, "r") as f:
                    netcdf4 = "_NCProperties" in f.attrs
                if not netcdf4:
                    return _open_hdf5(path)
            except OSError as e:
                die(f"{path}: cannot read it as HDF5 or NetCDF-4: truncated or damaged ({e})")
        elif path.endswith((".h5", ".h5.partial")):
            die(f"{path}: reading HDF5 output needs the Python package h5py (make deps, or python3 -m pip install h5py)")
    try:
        import netCDF4  # noqa: F401
    except ImportError:
        die(f"{path}: reading NetCDF needs the Python package netCDF4 (make deps, or python3 -m pip install netCDF4)")
    try:
        return xr.open_dataset(path, decode_times=False, engine="netcdf4")
    except Exception as e:
        die(f"{path}: cannot read it as NetCDF or HDF5 ({e})")


def record_dim(ds):
    """The record (unlimited) dimension's name, or None."""
    unl = ds.encoding.get("unlimited_dims") or set()
    for d in unl:
        return d
    for d in ("time", "iteration"):
        if d in ds.dims:
            return d
    return None


def record_index(path, n, index):
    """A --time INDEX (from 0; negative from the end) checked against a file's n records, as 0 .. n-1:
    out of range, a clear message and exit 2 (numpy's IndexError was a traceback)."""
    if n == 0:
        die(f"{path}: no records")
    if not -n <= index < n:
        die(f"--time {index}: {path} has records 0 .. {n - 1}")
    return index % n


def fields(ds, min_spatial=1):
    """Data variables with at least min_spatial dimensions besides the record one (not bounds, not
    cell_area), the time-dependent ones first."""
    rec = record_dim(ds)
    timed, static = [], []
    for name, v in ds.data_vars.items():
        if name.endswith("_bnds") or v.dtype.kind not in "fiu" or name == "cell_area":
            continue
        spatial = [d for d in v.dims if d != rec]
        if len(spatial) >= min_spatial:
            (timed if rec in v.dims else static).append(name)
    return timed + static  # time-dependent fields first


def series(ds):
    """Scalar time series: data variables whose only dimension is the record one."""
    rec = record_dim(ds)
    return [n for n, v in ds.data_vars.items() if rec and v.dims == (rec,) and v.dtype.kind in "fiu"]


def label(v, name=None):
    """'long_name [units]' of a variable."""
    ln = v.attrs.get("long_name", name or v.name)
    u = v.attrs.get("units", "")
    return f"{ln} [{u}]" if u and u != "1" else str(ln)


def time_label(ds):
    rec = record_dim(ds)
    if rec and rec in ds.coords:
        u = str(ds[rec].attrs.get("units", ""))
        if " since " in u:
            return f"{rec} [{u.split(' since ')[0]}]"
        return rec
    return rec or "record"


def stem(path):
    base = os.path.basename(path)
    for ext in (".partial", ".nc", ".h5", ".json"):
        if base.endswith(ext):
            base = base[: -len(ext)]
    return base


def save(fig, out):
    """Write the figure as PNG and say where."""
    d = os.path.dirname(out)
    try:
        if d:
            os.makedirs(d, exist_ok=True)
        fig.savefig(out, dpi=110, bbox_inches="tight")
    except OSError as e:  # an unwritable folder: a message, not a traceback
        die(f"cannot write {out}: {e.strerror or e}", 1)
    print(f"wrote {out}")


def check_cmap(name):
    """A --cmap that matplotlib knows, or exit 2 naming a few it does (an unknown one was a traceback
    after the data had been read)."""
    import matplotlib
    if name not in matplotlib.colormaps:
        die(f"--cmap {name}: not a matplotlib colour map (e.g. viridis, plasma, coolwarm, RdBu_r, gray)")


def setup_matplotlib():
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt


def edges(ds, d, n):
    """Cell edges along dimension d (n cells): from the CF bounds when the file has them, else
    midway between coordinates (grid indices when there are none)."""
    if d in ds.coords and f"{d}_bnds" in ds.variables:
        b = ds[f"{d}_bnds"].values
        return np.concatenate([b[:, 0], b[-1:, 1]])
    c = ds[d].values.astype(float) if d in ds.coords else np.arange(n, dtype=float)
    if c.size == 1:
        return np.array([c[0] - 0.5, c[0] + 0.5])
    mid = (c[1:] + c[:-1]) / 2
    return np.concatenate([[2 * c[0] - mid[0]], mid, [2 * c[-1] - mid[-1]]])


def plane(field, slice_spec=None):
    """A field of 1 or 2 spatial dimensions as it is; a 3-D one cut at slice_spec ("z=INDEX") or the
    middle of its slowest dimension.  Returns the field and a note for the title."""
    if slice_spec and field.ndim != 3:
        die(f"--slice {slice_spec}: {field.name} has {field.ndim} spatial dimension(s), nothing to cut")
    if field.ndim == 3:
        if slice_spec:
            d, _, i = slice_spec.partition("=")
            if d not in field.dims:
                die(f"--slice {slice_spec}: the field has dimensions {', '.join(field.dims)}")
            try:
                i = int(i)
            except ValueError:
                die(f"--slice {slice_spec}: give DIM=INDEX, an integer index")
            if not 0 <= i < field.sizes[d]:
                die(f"--slice {slice_spec}: {d} has indices 0 .. {field.sizes[d] - 1}")
        else:
            d, i = field.dims[0], field.sizes[field.dims[0]] // 2
        return field.isel({d: i}), f", {d} index {i}"
    if field.ndim > 3:
        die(f"{field.name} has {field.ndim} spatial dimensions")
    return field, ""
