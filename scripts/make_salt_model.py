#!/usr/bin/env python3
"""Writes inputs/seismic_salt.nc: a 2D layered earth model with a salt-like body, for the seismic solver.

The model is 3000 m wide and 1500 m deep on a 10 m grid (301 x 151 points, z down): four
sedimentary layers whose interfaces dip gently, speeds rising with depth (1800 to 3400 m/s), and a
salt body (vp 4500 m/s, vs 2600 m/s, rho 2150 kg/m^3: fast and light, as salt is) made of a
rounded canopy on a stem rising from the base of the model.  Variables vp, vs, rho (float32) on
(z, x), with CF coordinates.  Deterministic: the same file on every run.

    python3 scripts/make_salt_model.py [OUTPUT.nc]
"""
import sys

import numpy as np

try:
    import netCDF4
except ImportError:  # the file is committed; the script is what made it
    sys.exit("make_salt_model.py needs the netCDF4 Python package (pip install netCDF4)")

NX, NZ, H = 301, 151, 10.0


def model():
    x = np.arange(NX) * H
    z = np.arange(NZ) * H
    X, Z = np.meshgrid(x, z)  # (z, x)
    # layer interfaces (m), dipping and gently undulating
    tops = [
        300 + 0.03 * X + 15 * np.sin(X / 400.0),
        650 + 0.05 * X + 20 * np.sin(X / 550.0 + 1.0),
        1000 + 0.02 * X - 25 * np.cos(X / 700.0),
    ]
    vp_l = [1800.0, 2300.0, 2800.0, 3400.0]
    vs_l = [900.0, 1250.0, 1600.0, 1950.0]
    rho_l = [2000.0, 2150.0, 2300.0, 2450.0]
    layer = np.zeros(X.shape, dtype=int)
    for t in tops:
        layer += (Z >= t).astype(int)
    vp = np.choose(layer, vp_l)
    vs = np.choose(layer, vs_l)
    rho = np.choose(layer, rho_l)
    # the salt: a canopy (a flattened ellipse) on a stem widening downwards
    cx, cz = 1700.0, 620.0
    canopy = ((X - cx) / 520.0) ** 2 + ((Z - cz) / 170.0) ** 2 <= 1.0
    half_width = 160.0 + 0.35 * np.maximum(Z - cz, 0)
    stem = (Z >= cz) & (np.abs(X - cx - 0.1 * (Z - cz)) <= half_width)
    salt = canopy | stem
    vp = np.where(salt, 4500.0, vp)
    vs = np.where(salt, 2600.0, vs)
    rho = np.where(salt, 2150.0, rho)
    return x, z, vp, vs, rho


def main():
    if len(sys.argv) > 2 or (len(sys.argv) == 2 and sys.argv[1].startswith("-")):
        # an option is not a file name ("--help" became a 27 KB file of that name)
        print(__doc__.strip(), file=sys.stdout if sys.argv[1] in ("-h", "--help") else sys.stderr)
        sys.exit(0 if sys.argv[1] in ("-h", "--help") else 2)
    out = sys.argv[1] if len(sys.argv) > 1 else "inputs/seismic_salt.nc"
    x, z, vp, vs, rho = model()
    with netCDF4.Dataset(out, "w", format="NETCDF4") as f:
        f.Conventions = "CF-1.8"
        f.title = "2D layered model with a salt body (hpcsim seismic example)"
        f.source = "scripts/make_salt_model.py"
        f.createDimension("z", NZ)
        f.createDimension("x", NX)
        vx = f.createVariable("x", "f8", ("x",))
        vx.units, vx.axis, vx.long_name = "m", "X", "x (horizontal)"
        vx[:] = x
        vz = f.createVariable("z", "f8", ("z",))
        vz.units, vz.axis, vz.long_name, vz.positive = "m", "Z", "depth", "down"
        vz[:] = z
        for name, data, units, long in (("vp", vp, "m s-1", "P-wave speed"), ("vs", vs, "m s-1", "S-wave speed"),
                                        ("rho", rho, "kg m-3", "density")):
            v = f.createVariable(name, "f4", ("z", "x"), zlib=True, complevel=6)
            v.units, v.long_name = units, long
            v[:] = data.astype(np.float32)
    print(f"wrote {out}: {NX} x {NZ} points, spacing {H} m")


if __name__ == "__main__":
    main()
