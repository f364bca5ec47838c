#!/usr/bin/env bash
# The seismic solver's SEG-Y files read back by segyio (an independent reader): the same traces and
# header geometry (source and receiver coordinates, depths, offsets, sample interval and count, trace
# numbers, format code, revision) as the NetCDF seismograms, in 2D and 3D.  Skipped (77) without
# segyio (`pip install segyio`, or `make deps`) or without NetCDF.
set -u
. "$(dirname "$0")/lib.sh"
if ! python3 -c "import segyio, netCDF4, numpy" 2>/dev/null; then
    echo "SKIP: python3 segyio (or netCDF4) is not installed (pip install segyio)"
    exit 77
fi
if ! "$HS_BIN" --version | grep -q '+netcdf'; then
    echo "SKIP: this build writes no NetCDF"
    exit 77
fi

cat > check.py <<'PY'
"""Compare a SEG-Y file with the NetCDF seismograms of the same run."""
import sys

import netCDF4
import numpy as np
import segyio

nc_path, sgy_path, var, ndim = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
nc = netCDF4.Dataset(nc_path)
data = np.asarray(nc[var][:])  # (time, receiver)
t = np.asarray(nc["time"][:])
rx, ry, rz = (np.asarray(nc[f"receiver_{c}"][:]) for c in "xyz")
sx, sz = nc.source_x, nc.source_z
sy = nc.source_y if ndim == 3 else 0.0
dt = nc.sample_interval
errors = []


def expect(cond, what):
    if not cond:
        errors.append(what)


with segyio.open(sgy_path, ignore_geometry=True, endian="big") as f:
    ntr, ns = f.tracecount, len(f.samples)
    expect(ntr == data.shape[1], f"{ntr} traces, NetCDF has {data.shape[1]} receivers")
    expect(ns == data.shape[0], f"{ns} samples, NetCDF has {data.shape[0]}")
    expect(f.bin[segyio.BinField.Format] == 5, "format code is not 5 (IEEE float)")
    # bytes 3501-3502 = 0x0100: segyio reads the major revision byte (1) and the minor one (0) apart
    expect(f.bin[segyio.BinField.SEGYRevision] == 1, f"revision {f.bin[segyio.BinField.SEGYRevision]}")
    expect(f.bin[segyio.BinField.SEGYRevisionMinor] == 0, f"minor revision {f.bin[segyio.BinField.SEGYRevisionMinor]}")
    expect(f.bin[segyio.BinField.Interval] == round(dt * 1e6), "binary header sample interval")
    expect(abs(segyio.tools.dt(f) - dt * 1e6) < 1e-6, f"segyio's dt {segyio.tools.dt(f)} us, NetCDF {dt * 1e6} us")
    expect(np.allclose(f.samples, t * 1e3), "sample times (ms) differ from NetCDF time")
    text = segyio.tools.wrap(f.text[0])
    expect("HPCSIM" in text and "C40 END TEXTUAL HEADER" in text, "textual header")
    for r in range(min(ntr, data.shape[1])):
        h = f.header[r]
        tr = np.asarray(f.trace[r])
        if not np.array_equal(tr, data[:, r].astype(np.float32)):
            errors.append(f"trace {r}: samples differ (max {np.abs(tr - data[:, r]).max():.3e})")
        sc = h[segyio.TraceField.SourceGroupScalar]
        se = h[segyio.TraceField.ElevationScalar]
        scale = (1.0 / -sc if sc < 0 else sc) if sc else 1.0
        escale = (1.0 / -se if se < 0 else se) if se else 1.0
        tol = 0.5 * scale + 1e-9
        expect(h[segyio.TraceField.TRACE_SEQUENCE_FILE] == r + 1, f"trace {r}: sequence number")
        expect(h[segyio.TraceField.TRACE_SEQUENCE_LINE] == r + 1, f"trace {r}: sequence number in line")
        expect(h[segyio.TraceField.FieldRecord] == 1, f"trace {r}: field record")
        expect(h[segyio.TraceField.TraceNumber] == r + 1, f"trace {r}: trace number")
        expect(h[segyio.TraceField.TRACE_SAMPLE_COUNT] == ns, f"trace {r}: sample count")
        expect(h[segyio.TraceField.TRACE_SAMPLE_INTERVAL] == round(dt * 1e6), f"trace {r}: sample interval")
        expect(abs(h[segyio.TraceField.SourceX] * scale - sx) <= tol, f"trace {r}: source x")
        expect(abs(h[segyio.TraceField.SourceY] * scale - sy) <= tol, f"trace {r}: source y")
        expect(abs(h[segyio.TraceField.GroupX] * scale - rx[r]) <= tol, f"trace {r}: group x {h[segyio.TraceField.GroupX] * scale} vs {rx[r]}")
        expect(abs(h[segyio.TraceField.GroupY] * scale - ry[r]) <= tol, f"trace {r}: group y")
        expect(abs(-h[segyio.TraceField.ReceiverGroupElevation] * escale - rz[r]) <= 0.5 * escale + 1e-9, f"trace {r}: receiver depth")
        expect(abs(h[segyio.TraceField.SourceDepth] * escale - sz) <= 0.5 * escale + 1e-9, f"trace {r}: source depth")
        off = np.hypot(rx[r] - sx, ry[r] - sy) if ndim == 3 else rx[r] - sx  # horizontal; signed on a 2D line
        expect(abs(h[segyio.TraceField.offset] - off) <= 0.5 + 1e-9, f"trace {r}: offset")
        expect(abs(h[segyio.TraceField.CDP_X] * scale - 0.5 * (sx + rx[r])) <= tol, f"trace {r}: CDP x")
for e in errors[:10]:
    print(e)
sys.exit(1 if errors else 0)
PY

cat > s2.ini <<EOF
[run]
solver = seismic
device = $DEVICE
[seismic]
ndim = 2
n = 81 51
spacing = 10
pml = 10
t_end = 0.3
f0 = 12
source_position = 397.3 203.9
receivers = line
receiver_start = 120.37 0
receiver_end = 700.11 240.5
receiver_count = 17
record_every = 2
[output]
format = none
EOF
if "$HS_BIN" run s2.ini -q >run.log 2>&1 && python3 check.py seismograms.nc seismograms.sgy p 2; then
    ok "2D acoustic: segyio reads the same 17 traces, coordinates, depths, offsets and sample interval as the NetCDF"
else
    bad "2D acoustic: $(tail -3 run.log)"
fi

cat > s3.ini <<EOF
[run]
solver = seismic
device = $DEVICE
[seismic]
ndim = 3
n = 31 29 27
spacing = 10
pml = 8
order = 4
t_end = 0.15
f0 = 15
source_position = 151.5 143.2 131.7
receivers = grid
receiver_start = 90.25 85.5 100.125
receiver_step = 41.5 37.25 20
receiver_count = 3 4 2
[output]
format = none
EOF
if "$HS_BIN" run s3.ini -q seismic.seismograms=shot3 >run3.log 2>&1 && python3 check.py shot3.nc shot3.sgy p 3; then
    ok "3D acoustic: segyio reads the same 24 traces and header geometry (x, y, depth) as the NetCDF"
else
    bad "3D acoustic: $(tail -3 run3.log)"
fi

echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
