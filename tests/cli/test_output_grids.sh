#!/usr/bin/env bash
# Staggered grids and unstructured meshes: the same files at 1, 2 and 4 ranks by either path (hpcsim compare --all, ncdump, h5dump, .xmf, .vtu), SGRID/UGRID attributes in ncdump, check_output.py, cfchecks, and ParaView (XDMF readers, PVD/VTU) showing each grid and the mesh with the file's values.
# Parts skip without their tool (pvpython, cfchecks, ncdump, h5dump); the whole test skips without the generator or MPI.
set -u
BUILD=${BUILD:-build}
GEN=$(realpath "$BUILD/tests/mpi/test_output_grids_mpi" 2>/dev/null)
. "$(dirname "$0")/lib.sh"
if [ ! -x "$GEN" ]; then
    echo "SKIP $BUILD/tests/mpi/test_output_grids_mpi is not built (make tests)"
    exit 77
fi
if [ $HAVE_MPI = 0 ]; then
    echo "SKIP no MPI build (or no mpirun)"
    exit 77
fi

dump() { # without what differs by design: h5dump's file name line, time stamps, and the file addresses
    # in the dimension scales' object references (DATASET 1234 "/x": storage detail, see test_output_parallel.sh)
    case "$1" in
    *.nc) ncdump "$1" | sed 1d ;;
    *.h5) h5dump -w 0 "$1" | sed 1d | sed -E 's/DATASET [0-9]+ /DATASET /g' ;;
    *) cat "$1" ;;
    esac | sed -E 's/[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z/TIME/g'
}

# 1. the files at 1, 2 and 4 ranks, collectively (auto) and through rank 0 (off)
for np in 1 2 4; do
    mkdir -p np$np
    if HS_KEEP_OUTPUT=$WORK/np$np "${MPIRUN[@]}" -n $np "$GEN" >gen$np.log 2>&1; then
        ok "test_output_grids_mpi at $np ranks (both paths, resumed, checked against the exact fields)"
    else
        bad "test_output_grids_mpi at $np ranks: $(tail -5 gen$np.log)"
    fi
done
shopt -s nullglob
ref=(np1/off/*.nc np1/off/*.h5)
shopt -u nullglob
[ ${#ref[@]} -gt 0 ] || bad "no reference files in np1/off"
for f in "${ref[@]}"; do
    name=$(basename "$f")
    stem=${name%.*}
    for other in np1/auto np2/off np2/auto np4/off np4/auto; do
        g=$other/$name
        if "$HS_BIN" compare --all "$f" "$g" >cmp.txt 2>&1; then
            ok "$g: $(tail -1 cmp.txt) (hpcsim compare --all against np1/off)"
        else
            bad "$g: hpcsim compare --all: $(grep -v agree cmp.txt | head -5)"
        fi
        tool=ncdump
        [ "${name##*.}" = h5 ] && tool=h5dump
        if command -v $tool >/dev/null; then
            if diff <(dump "$f") <(dump "$g") >dump.diff; then ok "$g: the $tool output equals the reference's"
            else bad "$g: $tool output differs: $(head -6 dump.diff)"; fi
        fi
        if [ "${name##*.}" = h5 ]; then
            if cmp -s "np1/off/$stem.xmf" "$other/$stem.xmf"; then ok "$other/$stem.xmf equals the reference's"
            else bad "$other/$stem.xmf differs"; fi
        fi
        if [ -f "np1/off/$stem.pvd" ]; then
            same=1
            for v in np1/off/${stem}_*.vtu np1/off/$stem.pvd; do cmp -s "$v" "$other/$(basename "$v")" || same=0; done
            if [ $same = 1 ]; then ok "$other/$stem.pvd and its .vtu files equal the reference's"
            else bad "$other/$stem VTU files differ"; fi
        fi
    done
done

# compare --all reports a difference and a variable in one file only (exit 1)
if [ -f np1/off/mac.nc ] && [ -f np1/off/tri2.nc ]; then
    "$HS_BIN" compare --all np1/off/mac.nc np1/off/tri2.nc >cmp.txt 2>&1
    rc=$?
    if [ $rc = 1 ] && grep -q '^u: only in np1/off/mac.nc' cmp.txt && grep -q '^fem: only in np1/off/tri2.nc' cmp.txt &&
        grep -q '^time: 3 values, 0 not bitwise equal' cmp.txt; then
        ok "compare --all of two different files: exit 1, variables of one file named, the shared time agrees"
    else
        bad "compare --all of two different files: exit $rc: $(head -5 cmp.txt)"
    fi
fi

# 2. the conventions as ncdump shows them
if command -v ncdump >/dev/null && [ -f np1/off/mac.nc ]; then
    ncdump -h np1/off/mac.nc >mac.cdl
    if grep -q 'int grid ;' mac.cdl && grep -q 'grid:cf_role = "grid_topology"' mac.cdl &&
        grep -q 'grid:node_dimensions = "x_face y_face z_face"' mac.cdl &&
        grep -q 'grid:volume_dimensions = "x: x_face (padding: none) y: y_face (padding: high) z: z_face (padding: none)"' mac.cdl &&
        grep -q 'double u(time, z, y, x_face)' mac.cdl && grep -q 'u:location = "face1"' mac.cdl &&
        grep -q 'double w(time, z_face, y, x)' mac.cdl && grep -q 'w:location = "face3"' mac.cdl &&
        grep -q 'x_face:c_grid_axis_shift = -0.5' mac.cdl && grep -q ':Conventions = "CF-1.8 SGRID-0.3"' mac.cdl; then
        ok "ncdump -h mac.nc: SGRID topology, face dimensions, locations, COMODO shift"
    else
        bad "ncdump -h mac.nc lacks SGRID pieces: $(grep -c grid mac.cdl) lines name grid"
    fi
    ncdump -h np1/off/tri3.nc >tri3.cdl
    if grep -q 'fem:cf_role = "mesh_topology"' tri3.cdl && grep -q 'fem:volume_node_connectivity = "fem_volume_nodes"' tri3.cdl &&
        grep -q 'int fem_volume_nodes(nfem_volume, nfem_volume_nodes)' tri3.cdl && grep -q 'fem_volume_nodes:start_index = 0' tri3.cdl &&
        grep -q 'fem:volume_shape_type = "fem_volume_types"' tri3.cdl && grep -q 'double T(time, nfem_node)' tri3.cdl &&
        grep -q 'T:location = "node"' tri3.cdl && grep -q 'q:location = "volume"' tri3.cdl &&
        grep -q ':Conventions = "CF-1.8 UGRID-1.0"' tri3.cdl; then
        ok "ncdump -h tri3.nc: UGRID-1.0 mesh topology, volume connectivity, node and volume data"
    else
        bad "ncdump -h tri3.nc lacks UGRID pieces"
    fi
else
    echo "notice: ncdump not installed; attribute checks left out"
fi

# 3. check_output.py (CF essentials, h5py, the XDMF references) and cfchecks.  cfchecker 4.1 checks
#    CF-1.8, whose cf_role values are the discrete-sampling ones; UGRID's and SGRID's (mesh_topology,
#    grid_topology, *_connectivity, volume_shape_type; CF-1.11 took in UGRID) are its only errors
#    allowed here, one per such variable, and no warning.
for f in "${ref[@]}"; do
    if python3 "$ROOT/scripts/check_output.py" --no-cfchecks "$f" >check.txt 2>&1 && ! grep -q '^notice' check.txt; then
        ok "check_output.py $f"
    else
        bad "check_output.py $f: $(grep -v '^ok' check.txt | head -5)"
    fi
done
if command -v cfchecks >/dev/null && python3 -c "import netCDF4" 2>/dev/null; then
    sn=$(ls "$ROOT"/tests/data/ | grep -E '^cf-standard-name-table-v[0-9]+\.xml(\.gz)?$' | sort -V | tail -1)
    zcat -f "$ROOT/tests/data/$sn" >sn.xml
    for f in np1/off/*.nc; do
        [ -f "$f" ] || { echo "notice: no NetCDF files (a build without NetCDF); cfchecks left out"; break; }
        cfchecks -s sn.xml -a "$ROOT/tests/data/cf-area-type-table.xml" -r "$ROOT/tests/data/cf-standardized-region-list.xml" \
            "$f" >cf.txt 2>&1
        roles=$(python3 -c "
import netCDF4, sys
d = netCDF4.Dataset(sys.argv[1])
print(sum(1 for v in d.variables.values() if 'cf_role' in v.ncattrs() and v.cf_role not in ('timeseries_id', 'profile_id', 'trajectory_id')))
" "$f")
        errs=$(grep -c '^ERROR:' cf.txt)
        other=$(grep '^ERROR:' cf.txt | grep -vc 'Invalid value for cf_role attribute')
        warns=$(sed -n 's/.*WARNINGS given: *\([0-9]*\).*/\1/p' cf.txt)
        if grep -q 'Checking against CF Version CF-1.8' cf.txt && [ "$errs" = "$roles" ] && [ "$other" = 0 ] && [ "${warns:-x}" = 0 ]; then
            ok "cfchecks $f: 0 warnings; errors only the $roles UGRID/SGRID cf_role values CF-1.8 predates"
        else
            bad "cfchecks $f: $errs errors ($other other than cf_role, $roles expected), ${warns:-?} warnings: $(grep -E '^(ERROR|WARN)' cf.txt | sort | uniq -c | head -5)"
        fi
    done
else
    echo "notice: cfchecks or python3 netCDF4 not installed; cfchecks left out"
fi

# 4. ParaView: each grid of the staggered file and the meshes, by both XDMF readers and the PVD
#    reader, with the cell counts and value ranges the files hold (read back with h5py / netCDF4)
if command -v pvpython >/dev/null && python3 -c "import h5py, netCDF4" 2>/dev/null; then
    probe() { # file reader -> probe line (pvpython can abort at start-up: tried three times)
        local out try
        for try in 1 2 3; do
            out=$(cd "$(dirname "$1")" && timeout 300 pvpython "$ROOT/scripts/probe_paraview.py" "./$(basename "$1")" "$2" 2>/dev/null | grep '^probe: ')
            [ -n "$out" ] && break
        done
        echo "${out#probe: }"
    }
    # every reader once on the staggered file, the meshes by one XDMF reader each and their VTU
    for stem_reader in mac:Xdmf3ReaderS mac:XDMFReader tri2:Xdmf3ReaderS tri2:PVDReader tri3:XDMFReader tri3:PVDReader; do
        stem=${stem_reader%:*} reader=${stem_reader#*:}
        {
            file=np4/auto/$stem.xmf
            [ $reader = PVDReader ] && file=np4/auto/$stem.pvd
            [ -f "$file" ] || { bad "$file missing"; continue; }
            probe "$file" $reader >probe.json
            if python3 - "$file" probe.json $reader <<'EOF' >verdict.txt 2>&1; then
import json, sys
import h5py, netCDF4
path, probe, reader = sys.argv[1], json.load(open(sys.argv[2])), sys.argv[3]
stem = path.rsplit(".", 1)[0]
bad = []
# what the file holds: from the HDF5 file for the .xmf, from the NetCDF file for the VTU (either format's VTU
# comes from the file's values)
import os
if path.endswith(".xmf") or not os.path.exists(stem + ".nc"):  # a build without NetCDF writes its VTU from HDF5
    f = h5py.File(stem + ".h5", "r")
    get = lambda n: f[n][()]
    times = list(f["time"][()])
else:
    f = netCDF4.Dataset(stem + ".nc")
    f.set_auto_mask(False)
    get = lambda n: f.variables[n][:]
    times = list(f.variables["time"][:])
if [round(t, 12) for t in probe["times"]] != [round(float(t), 12) for t in times]:
    bad.append(f"times {probe['times']} != {times}")
def rng(a):
    a = a[-1] if a.ndim > 1 or (a.ndim == 1 and False) else a
    return [float(a.min()), float(a.max())]
def last(name, record):
    a = get(name)
    return a[-1] if record else a
blocks = probe["blocks"]
if "mac" in stem:
    want = [("p", 1), ("u", 1), ("v", 1), ("w", 1), ("pc", 0)]
    if len(blocks) != 5:
        bad.append(f"{len(blocks)} blocks, expected 5 (the cells and 4 extra grids)")
    for b, (v, rec) in zip(blocks, want):
        a = last(v, rec)
        if b["cells"] != a.size:
            bad.append(f"block {b['name']!r}: {b['cells']} cells, {v} has {a.size} values")
        got = b["cell"].get(v)
        if got is None or abs(got[0] - a.min()) > 1e-12 or abs(got[1] - a.max()) > 1e-12:
            bad.append(f"block {b['name']!r}: {v} range {got}, the file's {[a.min(), a.max()]}")
else:
    b = blocks[0] if len(blocks) == 1 else None
    if b is None:
        bad.append(f"{len(blocks)} blocks, expected 1")
    else:
        dim = 3 if "tri3" in stem else 2
        nn = get("fem_node_x").size
        nc = get("fem_region").size
        if (b["points"], b["cells"], b.get("celltype")) != (nn, nc, 10 if dim == 3 else 5):
            bad.append(f"points/cells/type {b['points']}/{b['cells']}/{b.get('celltype')}, expected {nn}/{nc}/{10 if dim == 3 else 5}")
        for kind, v, rec in (("point", "T", 1), ("point", "h", 0), ("cell", "q", 1), ("cell", "fem_region", 0)):
            a = last(v, rec)
            name = "region" if v == "fem_region" else v
            got = b[kind].get(name)
            if got is None or abs(got[0] - a.min()) > 1e-6 * max(1, abs(a.min())) or abs(got[1] - a.max()) > 1e-6 * max(1, abs(a.max())):
                bad.append(f"{kind} array {name}: range {got}, the file's {[float(a.min()), float(a.max())]}")
        x, y = get("fem_node_x"), get("fem_node_y")
        want_b = [x.min(), x.max(), y.min(), y.max()]
        if any(abs(p - q) > 1e-12 for p, q in zip(b["bounds"][:4], want_b)):
            bad.append(f"bounds {b['bounds']} vs nodes {want_b}")
print("; ".join(bad) if bad else f"{len(blocks)} block(s): " + ", ".join(f"{b['name'] or '-'} {b['cells']} cells" for b in blocks))
sys.exit(1 if bad else 0)
EOF
                ok "ParaView $reader on $file: $(cat verdict.txt)"
            else
                bad "ParaView $reader on $file: $(cat verdict.txt | tail -3)"
            fi
        }
    done
else
    echo "notice: pvpython (or python3 h5py/netCDF4) not installed; ParaView checks left out"
fi

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
