#!/usr/bin/env bash
# The fem solver end to end: the three inputs run and print what beam theory and the series solution
# say; the mesh file (UGRID in ncdump, the XDMF companion, VTU + .pvd) holds the fields; 1, 2 and 4
# ranks give the same file (to the CG tolerance); a heat restart continues bitwise; bad meshes and
# parameters exit 2 naming the file and line; a Gmsh binary mesh made here reads like the shipped one.
set -u
. "$(dirname "$0")/lib.sh"
SRC=$ROOT
cp -r "$SRC/inputs/meshes" .
NOFILES=0
"$HS_BIN" --version | grep -Eq '\+netcdf|\+hdf5' || NOFILES=1

# 1. the inputs: the square's maximum against the series value 0.0736713 (P2, refined once: 0.05 %),
#    the beam's tip against Timoshenko's 0.020153 m (within 2 %), the heat sink warms and stays finite
sed "s|^mesh = |mesh = $WORK/|" "$SRC/inputs/fem_poisson_square.ini" > sq.ini
if "$HS_BIN" run sq.ini run.device=$DEVICE output.path=sq >"$CAP/o" 2>&1; then
    umax=$(sed -n 's/.*u range \[[^,]*, \([^]]*\)\].*/\1/p' "$CAP/o")
    python3 -c "import sys; v=float('$umax'); sys.exit(abs(v-0.0736713)/0.0736713 > 2e-3)" && ok "poisson square: max u = $umax (series 0.0736713)" ||
        bad "poisson square: max u = $umax, not 0.0736713 within 0.2 %"
else bad "poisson square failed: $(tail -3 "$CAP/o")"; fi
sed "s|^mesh = |mesh = $WORK/|" "$SRC/inputs/fem_cantilever.ini" > beam.ini
if "$HS_BIN" run beam.ini run.device=$DEVICE fem.refine=0 output.path=beam >"$CAP/o" 2>&1; then
    tip=$(sed -n 's/.*mean uy at the largest x: \([^ ]*\) m.*/\1/p' "$CAP/o")
    python3 -c "import sys; v=-float('$tip'); sys.exit(abs(v-0.020153)/0.020153 > 0.02)" && ok "cantilever: tip $tip m (Timoshenko -0.020153)" ||
        bad "cantilever: tip $tip m is not within 2 % of Timoshenko's -0.020153"
    grep -q "AMG" "$CAP/o" && ok "cantilever: AMG with rigid-body modes reports its levels" || bad "cantilever: no AMG report"
else bad "cantilever failed: $(tail -3 "$CAP/o")"; fi
sed "s|^mesh = |mesh = $WORK/|" "$SRC/inputs/fem_heat_sink.ini" > sink.ini
if "$HS_BIN" run sink.ini run.device=$DEVICE fem.t_end=120 output.every_time=60 output.path=sink >"$CAP/o" 2>&1; then
    grep -q "T range \[" "$CAP/o" && ok "heat sink: 60 Crank-Nicolson steps, $(grep -o 'T range.*' "$CAP/o")" || bad "heat sink: no range line"
else bad "heat sink failed: $(tail -3 "$CAP/o")"; fi
# temperatures below absolute zero in the run's units are bad input (initial = -5 K ran and wrote T = -5 K)
"$HS_BIN" check sink.ini fem.temperature_units=K fem.initial=-5 >"$CAP/c" 2>&1; rc=$?
[ $rc = 2 ] && grep -qF "fem.initial: -5 K is below absolute zero (0 K" "$CAP/c" && ok "heat: initial = -5 K refused (below absolute zero)" ||
    bad "initial -5 K: exit $rc: $(grep error "$CAP/c")"
"$HS_BIN" check sink.ini fem.robin_value=-300 >"$CAP/c" 2>&1; rc=$?
[ $rc = 2 ] && grep -qF "fem.robin_value: -300 degC is below absolute zero (-273.15 degC" "$CAP/c" && ok "heat: robin_value = -300 degC refused" ||
    bad "robin_value -300 degC: exit $rc: $(grep error "$CAP/c")"
"$HS_BIN" check sink.ini fem.initial=-20 >"$CAP/c" 2>&1 && ok "heat: initial = -20 degC accepted" || bad "initial -20 degC refused: $(grep error "$CAP/c")"
# the heat sink's temperatures are in C (temperature_units = degC): T said K, so CF tools read 20 C as 20 K
if [ $NOFILES = 0 ]; then
    "$HS_BIN" summary sink.$EXT >"$CAP/s" 2>&1
    awk '$1 == "T" && $(NF - 2) == "degC" { found = 1 } END { exit !found }' "$CAP/s" && ok "heat sink: T in degC, as its inputs" ||
        bad "heat sink T units: $(grep '^  T ' "$CAP/s")"
fi

# 2. the files: UGRID topology and fields in ncdump, the XDMF companion, VTU and .pvd
if [ $NOFILES = 0 ]; then
    [ -s beam.$EXT ] && ok "beam.$EXT written" || bad "no beam.$EXT"
    if [ $EXT = nc ] && command -v ncdump >/dev/null; then
        h=$(ncdump -h beam.nc)
        for s in 'cf_role = "mesh_topology"' 'double ux(time, nmesh_node)' 'double von_mises(time, nmesh_volume)' 'mesh_region(nmesh_volume)'; do
            grep -qF "$s" <<<"$h" && ok "ncdump beam.nc: $s" || bad "ncdump beam.nc lacks $s"
        done
    fi
    "$HS_BIN" run beam.ini run.device=$DEVICE fem.refine=0 output.format=hdf5 output.path=beamh >/dev/null 2>&1
    if [ -s beamh.xmf ]; then
        for s in 'TopologyType="Tetrahedron"' 'Name="von_mises" AttributeType="Scalar" Center="Cell"' 'Name="uy" AttributeType="Scalar" Center="Node"' 'Name="region"'; do
            grep -qF "$s" beamh.xmf && ok "XDMF: $s" || bad "XDMF lacks $s"
        done
    else bad "no beamh.xmf"; fi
    ls beam_000000.vtu beam.pvd >/dev/null 2>&1 && grep -q 'Name="von_mises"' beam_000000.vtu && ok "VTU and .pvd with von_mises" ||
        bad "VTU/.pvd missing"
    [ "$(ls sink_*.vtu 2>/dev/null | wc -l)" = 3 ] && grep -c '<DataSet' sink.pvd | grep -q 3 && ok "heat sink: 3 VTU records in sink.pvd" ||
        bad "heat sink: expected 3 VTU records"
fi

# 3. 1, 2 and 4 ranks: the same file (P2 Poisson with two regions and a Robin side, elasticity)
cat > two.ini <<EOF2
[run]
solver = fem
device = $DEVICE
[fem]
mesh = meshes/heat_sink.msh
order = 2
regions = chip aluminium
conductivity = 148 205
source = 2.5e6 0
robin = air
robin_h = 25
robin_value = 20
rtol = 1e-12
EOF2
if [ $HAVE_MPI = 1 ] && [ $NOFILES = 0 ]; then
    "$HS_BIN" run two.ini output.path=r1 >/dev/null 2>&1
    for np in 2 4; do
        for part in rcb auto; do
            "${MPIRUN[@]}" -n $np "$HS_BIN" run two.ini run.allow_shared_gpu=true fem.partition=$part output.path=r$np$part >"$CAP/o" 2>&1
            "$HS_BIN" compare r1.$EXT r$np$part.$EXT u 1e-9 >"$CAP/c" 2>&1 && ok "$np ranks ($part partition) match 1 rank: $(tail -1 "$CAP/c")" ||
                bad "$np ranks ($part): $(cat "$CAP/c" "$CAP/o" | tail -4)"
        done
    done
    "$HS_BIN" compare --all r1.$EXT r4auto.$EXT 1e-9 >"$CAP/c" 2>&1 && ok "4 ranks: every variable of the file (mesh, regions, u) matches" ||
        bad "4 ranks: compare --all: $(tail -3 "$CAP/c")"
    "$HS_BIN" run beam.ini run.device=$DEVICE fem.refine=0 fem.rtol=1e-12 output.path=e1 >/dev/null 2>&1
    "${MPIRUN[@]}" -n 2 "$HS_BIN" run beam.ini run.device=$DEVICE run.allow_shared_gpu=true fem.refine=0 fem.rtol=1e-12 output.path=e2 >/dev/null 2>&1
    "$HS_BIN" compare e1.$EXT e2.$EXT uy 1e-9 >"$CAP/c" 2>&1 && "$HS_BIN" compare e1.$EXT e2.$EXT von_mises 1e-8 >>"$CAP/c" 2>&1 &&
        ok "elasticity: 2 ranks match 1 rank (uy, von_mises)" || bad "elasticity 2 ranks: $(cat "$CAP/c")"
fi

# 4. a heat restart continues bitwise
if [ $NOFILES = 0 ]; then
    "$HS_BIN" run sink.ini run.device=$DEVICE fem.t_end=120 output.every_time=60 output.path=full --quiet >/dev/null 2>&1
    "$HS_BIN" run sink.ini run.device=$DEVICE fem.t_end=120 output.every_time=60 output.path=part checkpoint.every_steps=20 \
        checkpoint.path=ck run.max_steps=50 --quiet >/dev/null 2>&1
    ck=$(ls ck* 2>/dev/null | head -1)
    if [ -n "$ck" ] && "$HS_BIN" run sink.ini run.device=$DEVICE fem.t_end=120 output.every_time=60 output.path=part run.restart="$ck" --quiet >"$CAP/o" 2>&1; then
        "$HS_BIN" compare full.$EXT part.$EXT T >"$CAP/c" 2>&1 && ok "heat restart from $ck is bitwise (every record)" || bad "restart differs: $(cat "$CAP/c")"
    else bad "restart: $(cat "$CAP/o" 2>/dev/null | tail -3)"; fi
fi

# 5. bad meshes name the file and line, exit 2; check says what run says
mesh22() { # a valid 2-triangle square; $1 replaces the version line, $2 the element lines' sed
    cat <<M
\$MeshFormat
${1:-2.2 0 8}
\$EndMeshFormat
\$PhysicalNames
3
1 1 "left"
1 2 "right"
2 10 "domain"
\$EndPhysicalNames
\$Nodes
4
1 0 0 0
2 1 0 0
3 1 1 0
4 0 1 0
\$EndNodes
\$Elements
4
1 1 2 1 1 4 1
2 1 2 2 2 2 3
3 2 2 10 1 1 2 3
4 2 2 10 1 1 3 4
\$EndElements
M
}
printf '[run]\nsolver = fem\n[fem]\nmesh = bad.msh\ndirichlet = left\n[output]\npath = never\n' > bad.ini
expect() { # name, expected message fragment
    local rc_c rc_r
    "$HS_BIN" check bad.ini >"$CAP/c" 2>&1; rc_c=$?
    "$HS_BIN" run bad.ini >"$CAP/r" 2>&1; rc_r=$?
    if [ $rc_c = 2 ] && [ $rc_r = 2 ] && grep -qF -- "$2" "$CAP/r" && ! ls never* >/dev/null 2>&1; then ok "$1: exit 2, '$(grep -m1 error "$CAP/r" | cut -c1-110)'"
    else bad "$1: check $rc_c run $rc_r: $(cat "$CAP/r" | head -2)"; fi
}
mesh22 "3.0 0 8" > bad.msh; expect "version 3.0" "bad.msh:2: MSH format version 3 is not supported"
mesh22 | sed '/\$Elements/,$d' > bad.msh; expect "no \$Elements" "the \$Elements section is missing"
mesh22 | sed 's/^4 2 2 10 1 1 3 4$/4 2 2 10 1 1 3 9/' > bad.msh; expect "node out of range" "bad.msh:22: element 4 names node 9, which is not in \$Nodes"
# a boundary line to a node no triangle uses: said once (each of its nodes raised it again, and the
# message was printed twice)
mesh22 | sed -e '/^\$Nodes$/{n;s/^4$/6/}' -e '/^\$Elements$/{n;s/^4$/5/}' -e 's/^4 0 1 0$/4 0 1 0\n5 2 2 0\n6 3 2 0/' \
    -e 's/^4 2 2 10 1 1 3 4$/4 2 2 10 1 1 3 4\n5 1 2 1 1 5 6/' > bad.msh
expect "a boundary line off the triangles" "a boundary line uses a node that no triangle uses"
[ "$(grep -c 'a boundary line uses a node' "$CAP/r")" = 1 ] && ok "... said once" || bad "the boundary-line message $(grep -c 'a boundary line uses' "$CAP/r") times"
# a mesh with a UTF-8 byte-order mark, or classic-Mac (bare CR) line ends, reads as its LF twin
# (both were refused: "a section ($Name) was expected, found '\xef\xbb\xbf$MeshFormat'")
mesh22 > lfm.msh
{ printf '\357\273\277'; cat lfm.msh; } > bomm.msh
tr '\n' '\r' < lfm.msh > crm.msh
for m in lfm bomm crm; do
    printf '[run]\nsolver = fem\n[fem]\nmesh = %s.msh\ndirichlet = left\nneumann = right\nneumann_value = 1\n[output]\npath = o_%s\n' $m $m > $m.ini
    "$HS_BIN" run $m.ini --quiet >/dev/null 2>"$CAP/e_$m" || bad "$m mesh: $(cat "$CAP/e_$m")"
done
"$HS_BIN" compare o_lfm.$EXT o_bomm.$EXT u 0 >"$CAP/c" 2>&1 && "$HS_BIN" compare o_lfm.$EXT o_crm.$EXT u 0 >>"$CAP/c" 2>&1 &&
    ok "meshes with a byte-order mark and bare-CR line ends solve as their LF twin, bitwise" || bad "BOM/CR meshes: $(cat "$CAP/c")"
# a node tag of 0 (Gmsh numbers nodes from 1; it was taken)
mesh22 | sed -e 's/^1 0 0 0$/0 0 0 0/' -e 's/^1 1 2 1 1 4 1$/1 1 2 1 1 4 0/' -e 's/^3 2 2 10 1 1 2 3$/3 2 2 10 1 0 2 3/' > bad.msh
expect "node tag 0" "node tag 0: Gmsh's node tags are positive"
# a triangle off the plane, named by the file's node tags (it named our own vertex numbers)
mesh22 | sed 's/^3 1 1 0$/3 1 1 0.05/' > bad.msh; expect "a node off the plane" "the triangles do not lie in one plane z = const (node 3 has z = 0.05, node 1 z = 0)"
# a coordinate in hexadecimal (strtod read 0x1p-1 as 0.5; parameter files refuse it)
mesh22 | sed 's/^3 1 1 0$/3 0x1p0 1 0/' > bad.msh; expect "hexadecimal coordinate" "bad.msh:14: '0x1p0' is not a number"
mesh22 | sed 's/^4 2 2 10 1 1 3 4$/4 3 2 10 1 1 2 3 4/' > bad.msh; expect "quadrangle" "bad.msh:22: element 4 has Gmsh type 3 (4-node quadrangle), which is not supported"
mesh22 > bad.msh; printf '[run]\nsolver = fem\n[fem]\nmesh = bad.msh\ndirichlet = left wall\n[output]\npath = never\n' > bad.ini
expect "group not in the mesh" "physical group 'wall' is not in the mesh bad.msh (its boundary groups: 'left', 'right')"
# one name on two groups of a dimension: `dirichlet = wall` took the first (tag 1) and left the other
# wall free, exit 0; both tags named, at the second's line.  The same name in two dimensions is fine.
mesh22 | sed -e 's/^1 1 "left"$/1 1 "wall"/' -e 's/^1 2 "right"$/1 2 "wall"/' > bad.msh
printf '[run]\nsolver = fem\n[fem]\nmesh = bad.msh\ndirichlet = wall\n[output]\npath = never\n' > bad.ini
expect "one physical name on two boundary groups" \
    "bad.msh:7: physical name 'wall' is given to two groups of dimension 1, tags 1 and 2: a group chosen by this name would be ambiguous (name them apart)"
mesh22 | sed -e 's/^1 1 "left"$/1 1 "domain"/' > dim.msh
printf '[run]\nsolver = fem\n[fem]\nmesh = dim.msh\ndirichlet = domain\n[output]\nformat = none\n' > dim.ini
"$HS_BIN" check dim.ini >"$CAP/c" 2>&1 && ok "one physical name on a boundary and a cell group: accepted (dirichlet = domain takes the boundary's)" ||
    bad "a name shared across dimensions refused: $(grep error "$CAP/c")"
# a boundary side repeated in its group (a hand-merged file) doubled its flux: right's flux 1 with u = 0
# on the left is u = x (k = 1), and the repeat made it 2x; a side in two groups keeps both
mesh22 | sed -e '18s/^4$/5/' -e 's/^4 2 2 10 1 1 3 4$/4 2 2 10 1 1 3 4\n5 1 2 2 2 2 3/' > rep.msh
printf '[run]\nsolver = fem\n[fem]\nmesh = rep.msh\ndirichlet = left\nneumann = right\nneumann_value = 1\n[output]\nformat = none\n' > rep.ini
r=$("$HS_BIN" run rep.ini 2>&1 | grep -o 'u range.*')
[ "$r" = "u range [0.000000e+00, 1.000000e+00] at t = 0" ] && ok "a side repeated in its group takes its flux once (u = x: $r)" || bad "repeated side: '$r', want u = x in [0, 1]"
# a binary 4.1 node block whose size is 2^63 or more (a damaged file) passed the size check as a
# negative count, and its tags were written past the node arrays: abort (exit 134), not exit 2
cat > bin41.py <<'PY'
import struct, sys
Q = lambda *v: struct.pack("<%dQ" % len(v), *v)
I = lambda *v: struct.pack("<%di" % len(v), *v)
D = lambda *v: struct.pack("<%dd" % len(v), *v)
nb = int(sys.argv[1], 0) if len(sys.argv) > 1 else 4  # the node block's size as written
edim, par = (int(sys.argv[2]), int(sys.argv[3])) if len(sys.argv) > 3 else (2, 0)  # the node block's entity
out = b"$MeshFormat\n4.1 1 8\n" + I(1) + b"\n$EndMeshFormat\n"
out += b'$PhysicalNames\n3\n1 1 "left"\n1 2 "right"\n2 10 "domain"\n$EndPhysicalNames\n'
out += b"$Entities\n" + Q(0, 2, 1, 0)
out += I(1) + D(0, 0, 0, 0, 1, 0) + Q(1) + I(1) + Q(0)
out += I(2) + D(1, 0, 0, 1, 1, 0) + Q(1) + I(2) + Q(0)
out += I(1) + D(0, 0, 0, 1, 1, 0) + Q(1) + I(10) + Q(0) + b"\n$EndEntities\n"
out += b"$Nodes\n" + Q(1, 4, 1, 4) + I(edim, 1, par) + Q(nb) + Q(1, 2, 3, 4) + D(0, 0, 0, 1, 0, 0, 1, 1, 0, 0, 1, 0) + b"\n$EndNodes\n"
out += b"$Elements\n" + Q(3, 4, 1, 4)
out += I(1, 1, 1) + Q(1) + Q(1, 4, 1) + I(1, 2, 1) + Q(1) + Q(2, 2, 3)
out += I(2, 1, 2) + Q(2) + Q(3, 1, 2, 3) + Q(4, 1, 3, 4) + b"\n$EndElements\n"
sys.stdout.buffer.write(out)
PY
python3 bin41.py > bin41.msh
printf '[run]\nsolver = fem\n[fem]\nmesh = bin41.msh\ndirichlet = left\nneumann = right\nneumann_value = 1\n[output]\nformat = none\n' > bin41.ini
r=$("$HS_BIN" run bin41.ini 2>&1 | grep -o 'u range.*')
[ "$r" = "u range [0.000000e+00, 1.000000e+00] at t = 0" ] && ok "a binary 4.1 square written here solves u = x ($r)" || bad "binary 4.1 square: '$r'"
python3 bin41.py 0x8000000000000004 > bad.msh
expect "binary 4.1 node block of 2^63 + 4 nodes" "bad.msh:15: the node blocks hold more than the 4 nodes announced"
python3 bin41.py 0xffffffffffffffff > bad.msh
expect "binary 4.1 node block of 2^64 - 1 nodes" "bad.msh:15: the node blocks hold more than the 4 nodes announced"
# a node block's entity dimension sizes its records (u, v, w when parametric): 6 read 9 numbers into a
# buffer of 6, -20 a negative size (stack corruption); both refused
python3 bin41.py 4 6 1 > bad.msh
expect "binary 4.1 node block of entity dimension 6" "bad.msh:15: a node block of entity dimension 6 with parametric flag 1 (0..3 and 0 or 1)"
python3 bin41.py 4 -20 1 > bad.msh
expect "binary 4.1 node block of entity dimension -20" "bad.msh:15: a node block of entity dimension -20 with parametric flag 1"
mesh22 > bad.msh
# a group of the other dimension is named as such (the error said it was not in the mesh)
printf '[run]\nsolver = fem\n[fem]\nmesh = bad.msh\ndirichlet = domain\n[output]\npath = never\n' > bad.ini
expect "a cell group as a boundary" "bad.ini:5: fem.dirichlet: physical group 'domain' of the mesh bad.msh has dimension 2, but fem.dirichlet takes boundary groups (dimension 1: 'left', 'right')"
printf '[run]\nsolver = fem\n[fem]\nmesh = bad.msh\ndirichlet = left\nregions = right\n[output]\npath = never\n' > bad.ini
expect "a boundary group as a region" "bad.ini:6: fem.regions: physical group 'right' of the mesh bad.msh has dimension 1, but fem.regions takes cell groups (dimension 2: 'domain')"
printf '$MeshFormat\n2.2 0 8\n$EndMeshFormat\n$PhysicalNames\n2\n2 1 "face"\n3 2 "body"\n$EndPhysicalNames\n$Nodes\n4\n1 0 0 0\n2 1 0 0\n3 0 1 0\n4 0 0 1\n$EndNodes\n$Elements\n2\n1 2 2 1 1 1 2 3\n2 4 2 2 1 1 3 2 4\n$EndElements\n' > bad.msh
printf '[run]\nsolver = fem\n[fem]\nmesh = bad.msh\ndirichlet = face\n[output]\npath = never\n' > bad.ini
expect "inverted tetrahedron" "bad.msh:19: tetrahedron 1 is inverted"

# run INI, whose exact solution on the unit square is u = x (max 1): ok WHAT, or bad LABEL
max_u_is_1() {
    if "$HS_BIN" run "$1" >"$CAP/o" 2>&1; then
        local umax
        umax=$(grep -o 'u range \[[^]]*\]' "$CAP/o" | sed 's/.*, *//; s/\]//')
        awk -v u="$umax" 'BEGIN { exit !(u > 1 - 1e-10 && u < 1 + 1e-10) }' && ok "$2: max u = $umax (exact 1)" ||
            bad "$3: max u = $umax, not 1"
    else bad "$3: $(grep -m1 error "$CAP/o" || tail -2 "$CAP/o")"; fi
}

# a boundary group without elements, a boundary line that is no side of a triangle, more groups
# than a list takes, a node count the file cannot hold (it failed with exit 1, out of memory)
mesh22 | sed -e 's/^3$/4/' -e 's/^2 10 "domain"$/2 10 "domain"\n1 7 "hole"/' > bad.msh
printf '[run]\nsolver = fem\n[fem]\nmesh = bad.msh\ndirichlet = left hole\n[output]\npath = never\n' > bad.ini
expect "empty boundary group" "bad.ini:5: fem.dirichlet: physical group 'hole' has no lines in the mesh"
mesh22 | sed -e 's/^3$/4/' -e 's/^2 10 "domain"$/2 10 "domain"\n1 5 "cut"/' -e '18s/^4$/5/' -e 's/^4 2 2 10 1 1 3 4$/4 2 2 10 1 1 3 4\n5 1 2 5 5 2 4/' > bad.msh
printf '[run]\nsolver = fem\n[fem]\nmesh = bad.msh\ndirichlet = left cut\n[output]\npath = never\n' > bad.ini
expect "facet not a side" "bad.msh:24: this boundary line is not a side of any triangle"
mesh22 > bad.msh
printf '[run]\nsolver = fem\n[fem]\nmesh = bad.msh\ndirichlet = %s\n[output]\npath = never\n' "$(for i in $(seq 65); do printf 'left '; done)" > bad.ini
expect "65 groups" "bad.ini:5: fem.dirichlet: names 65 groups: 64 at most"
# keys the problem, the conditions or the preconditioner would ignore are refused (elasticity's
# dirichlet_value = 0.01 ran clamped at 0, young under poisson and dt under a static problem ran
# without a word); a file's leftover under a problem switched on the command line passes
mesh22 > bad.msh
printf '[run]\nsolver = fem\n[fem]\nmesh = bad.msh\nproblem = elasticity\ndirichlet = left\ndirichlet_value = 0.01\n[output]\npath = never\n' > bad.ini
expect "elasticity with dirichlet_value" "bad.ini:7: fem.dirichlet_value: is set, but fem.problem = elasticity clamps its dirichlet groups"
printf '[run]\nsolver = fem\n[fem]\nmesh = bad.msh\ndirichlet = left\nyoung = 2e11\n[output]\npath = never\n' > bad.ini
expect "young under poisson" "bad.ini:6: fem.young: is not used with fem.problem = poisson"
printf '[run]\nsolver = fem\n[fem]\nmesh = bad.msh\ndirichlet = left\ndt = 0.5\n[output]\npath = never\n' > bad.ini
expect "dt under poisson" "bad.ini:6: fem.dt: is not used with fem.problem = poisson"
# a heat step longer than twice t_end was 0 steps, a "whole number": dt = 1e12 beside t_end = 600
# took one step of 1e12 s and called its steady state t = 600 (and 1e300 overflowed the system)
for dt in 1e12 1e300; do
    printf '[run]\nsolver = fem\n[fem]\nmesh = bad.msh\nproblem = heat\nt_end = 600\ndt = %s\n[output]\npath = never\n' $dt > bad.ini
    expect "heat dt = $dt beside t_end = 600" "bad.ini:7: fem.dt: $(printf '%g' $dt) is longer than fem.t_end = 600"
done
printf '[run]\nsolver = fem\n[fem]\nmesh = bad.msh\nproblem = heat\nt_end = 1\ndt = 0.5\n[output]\nevery_time = 0.1\npath = never\n' > bad.ini
expect "output.every_time below a heat step" "bad.ini:9: output.every_time: 0.1 is shorter than one step of fem.dt = 0.5"
printf '[run]\nsolver = fem\n[fem]\nmesh = bad.msh\ndirichlet = left\nrobin_value = 20\n[output]\npath = never\n' > bad.ini
expect "robin_value without robin groups" "bad.ini:6: fem.robin_value: is set, but fem.robin names no group"
printf '[run]\nsolver = fem\n[fem]\nmesh = bad.msh\ndirichlet = left\nprecond = jacobi\namg_theta = 0.1\n[output]\npath = never\n' > bad.ini
expect "amg_theta under jacobi" "bad.ini:7: fem.amg_theta: is not used with fem.precond = jacobi"
printf '[run]\nsolver = fem\n[fem]\nmesh = bad.msh\ndirichlet = left\nvtu = true\n[output]\nformat = none\npath = never\n' > bad.ini
expect "vtu = true with output.format = none (no VTU was written)" "bad.ini:6: fem.vtu: is not used with output.format = none"
printf '[run]\nsolver = fem\n[fem]\nmesh = bad.msh\ndirichlet = left\ndirichlet_value = 1\nconductivity = 3\n[output]\nformat = none\n' > left.ini
"$HS_BIN" check left.ini fem.problem=elasticity >"$CAP/c" 2>&1 && ok "a file's poisson keys under fem.problem=elasticity on the command line: accepted (leftovers)" \
    || bad "leftovers refused: $(grep error "$CAP/c")"
# a cell in two groups that fem.regions both names has two sets of coefficients: refused, naming the
# mesh file, the element(s) and both groups (each cell was kept in its first group: air's k = 100
# ran as k = 1, without a word).  MSH 2.2 repeats the element for each group (element 4 of 'domain'
# is element 5 of 'air'); in MSH 4.1 one entity is in both groups (one element).
mesh22 | sed -e '5s/^3$/4/' -e 's/^2 10 "domain"$/2 10 "domain"\n2 11 "air"/' -e '18s/^4$/5/' -e 's/^4 2 2 10 1 1 3 4$/4 2 2 10 1 1 3 4\n5 2 2 11 1 1 3 4/' > bad.msh
printf '[run]\nsolver = fem\n[fem]\nmesh = bad.msh\ndirichlet = left\nregions = domain air\nconductivity = 1 100\n[output]\npath = never\n' > bad.ini
expect "a cell in two named regions (MSH 2.2: the element repeated)" \
    "bad.ini:6: fem.regions: the triangle of element 4 (bad.msh:23, physical group 'domain') is element 5 too (line 24, physical group 'air'), both groups named here"
mesh22 | sed -e '5s/^3$/4/' -e 's/^2 10 "domain"$/2 10 "domain"\n2 11 "air"/' -e 's/^4 2 2 10 1 1 3 4$/4 2 2 11 1 1 3 4/' > air.msh
"$HS_BIN" check bad.ini fem.mesh=air.msh >"$CAP/c" 2>&1 && ok "a region with a cell of its own is accepted" || bad "air with its own cell refused: $(grep error "$CAP/c")"
{ printf '$MeshFormat\n4.1 0 8\n$EndMeshFormat\n$PhysicalNames\n4\n1 1 "left"\n1 2 "right"\n2 10 "domain"\n2 11 "air"\n$EndPhysicalNames\n'
  printf '$Entities\n0 2 2 0\n1 0 0 0 0 1 0 1 1 0\n2 1 0 0 1 1 0 1 2 0\n1 0 0 0 1 1 0 1 10 0\n2 0 0 0 1 1 0 2 10 11 0\n$EndEntities\n'
  printf '$Nodes\n1 4 1 4\n2 1 0 4\n1\n2\n3\n4\n0 0 0\n1 0 0\n1 1 0\n0 1 0\n$EndNodes\n'
  printf '$Elements\n4 4 1 4\n1 1 1 1\n1 4 1\n1 2 1 1\n2 2 3\n2 1 2 1\n3 1 2 3\n2 2 2 1\n4 1 3 4\n$EndElements\n'; } > both41.msh
printf '[run]\nsolver = fem\n[fem]\nmesh = both41.msh\ndirichlet = left\nregions = domain air\nconductivity = 1 100\n[output]\npath = never\n' > bad.ini
expect "a cell in two named regions (MSH 4.1: an entity in both groups)" \
    "bad.ini:6: fem.regions: the triangle of element 4 (both41.msh:39) is in physical groups 'domain' and 'air', both named here"
# a group fem.regions does not name carries no coefficients and may overlap the named ones (a group
# of every cell, listed first: the cells were kept in it, and the run refused 'all' as a region
# without coefficients): the named group's k holds, refined too (k = 2, flux 2 on the right, u = 0
# on the left: u = x; k = 1 would give 2 x)
mesh22 | sed -e '5s/^3$/4/' -e 's/^2 10 "domain"$/2 10 "domain"\n2 11 "all"/' -e '18s/^4$/6/' \
    -e 's/^3 2 2 10 1 1 2 3$/3 2 2 11 1 1 2 3\n4 2 2 11 1 1 3 4\n5 2 2 10 1 1 2 3/' -e 's/^4 2 2 10 1 1 3 4$/6 2 2 10 1 1 3 4/' > over.msh
printf '[run]\nsolver = fem\n[fem]\nmesh = over.msh\nrefine = 1\ndirichlet = left\nneumann = right\nneumann_value = 2\nregions = domain\nconductivity = 2\n[output]\nformat = none\n' > over.ini
max_u_is_1 over.ini "cells in a named and an unnamed group take the named one's k" "a named group overlapping an unnamed one"
# cells in no physical group (Gmsh's Mesh.SaveAll keeps them; MSH 4.1: an entity without groups)
# beside fem.regions cannot be named there: the message said "the cells of physical group (no
# physical group) (tag 0) have no coefficients: name it here"; now it says so, at the first such
# cell's line; a group left out of fem.regions is named with its first cell's line
nogroup41() { # the square, its second triangle in surface 2 with physical groups "$1" (count and tags)
    printf '$MeshFormat\n4.1 0 8\n$EndMeshFormat\n$PhysicalNames\n4\n1 1 "left"\n1 2 "right"\n2 10 "domain"\n2 11 "air"\n$EndPhysicalNames\n'
    printf '$Entities\n0 2 2 0\n1 0 0 0 0 1 0 1 1 0\n2 1 0 0 1 1 0 1 2 0\n1 0 0 0 1 1 0 1 10 0\n2 0 0 0 1 1 0 %s 0\n$EndEntities\n' "$1"
    printf '$Nodes\n1 4 1 4\n2 1 0 4\n1\n2\n3\n4\n0 0 0\n1 0 0\n1 1 0\n0 1 0\n$EndNodes\n'
    printf '$Elements\n4 4 1 4\n1 1 1 1\n1 4 1\n1 2 1 1\n2 2 3\n2 1 2 1\n3 1 2 3\n2 2 2 1\n4 1 3 4\n$EndElements\n'
}
nogroup41 0 > bad.msh
printf '[run]\nsolver = fem\n[fem]\nmesh = bad.msh\ndirichlet = left\nregions = domain\n[output]\npath = never\n' > bad.ini
expect "cells in no physical group beside fem.regions" \
    "bad.ini:6: fem.regions: cells of bad.msh are in no physical group (the first on line 39;"
nogroup41 "1 11" > bad.msh
expect "a cell group fem.regions leaves out" \
    "bad.ini:6: fem.regions: the cells of physical group 'air' (tag 11; the first on bad.msh:39) have no coefficients: name it here"
printf '[run]\nsolver = fem\n[fem]\nmesh = nope.msh\ndirichlet = left\n[output]\npath = never\n' > bad.ini
expect "missing mesh file" "bad.ini:4: fem.mesh: cannot open mesh file nope.msh: No such file or directory"
mesh22 | sed '11s/^4$/100000000000/' > bad.msh
printf '[run]\nsolver = fem\n[fem]\nmesh = bad.msh\ndirichlet = left\n[output]\npath = never\n' > bad.ini
expect "huge node count" "bad.msh:11: 100000000000 nodes are announced but the rest of the file"

# an entry too many on a node or element line is refused on that line, naming that record (it was
# read as the next record's first field: "type 10 not supported", "fewer nodes" or "node tag 0
# appears twice", about other records on other lines); a 4.1 $Elements header total the blocks do
# not reach is refused as the $Nodes one is (it was accepted)
mesh41() { # the square of mesh22 in MSH 4.1 ASCII
    cat <<M
\$MeshFormat
4.1 0 8
\$EndMeshFormat
\$PhysicalNames
3
1 1 "left"
1 2 "right"
2 10 "domain"
\$EndPhysicalNames
\$Entities
0 2 1 0
1 0 0 0 0 1 0 1 1 0
2 1 0 0 1 1 0 1 2 0
1 0 0 0 1 1 0 1 10 0
\$EndEntities
\$Nodes
1 4 1 4
2 1 0 4
1
2
3
4
0 0 0
1 0 0
1 1 0
0 1 0
\$EndNodes
\$Elements
3 4 1 4
1 1 1 1
1 4 1
1 2 1 1
2 2 3
2 1 2 2
3 1 2 3
4 1 3 4
\$EndElements
M
}
mesh41 > bad.msh
printf '[run]\nsolver = fem\n[fem]\nmesh = bad.msh\ndirichlet = left\n[output]\nformat = none\n' > good41.ini
"$HS_BIN" check good41.ini >"$CAP/o" 2>&1 && ok "the MSH 4.1 square of these cases is valid" || bad "the MSH 4.1 square is refused: $(head -2 "$CAP/o")"
printf '[run]\nsolver = fem\n[fem]\nmesh = bad.msh\ndirichlet = left\n[output]\npath = never\n' > bad.ini
mesh41 | sed 's/^3 4 1 4$/3 5 1 5/' > bad.msh; expect "4.1 \$Elements total above the blocks" "bad.msh:28: the element blocks hold 4 elements, the header announced 5"
mesh22 | sed 's/^3 2 2 10 1 1 2 3$/3 2 2 10 1 1 2 3 4/' > bad.msh
expect "2.2 element with an extra entry" "bad.msh:21: element 3 has more entries than a 3-node triangle with 2 tags (3 nodes)"
mesh41 | sed 's/^3 1 2 3$/3 1 2 3 4/' > bad.msh
expect "4.1 element with an extra entry" "bad.msh:35: element 3 has more entries than a 3-node triangle (3 nodes)"
mesh22 | sed 's/^2 1 0 0$/2 1 0 0 7/' > bad.msh
expect "2.2 node with an extra entry" "bad.msh:13: node 2 has more entries than a tag and 3 coordinates"
mesh41 | sed 's/^1 0 0$/1 0 0 7/' > bad.msh
expect "4.1 node with an extra coordinate" "bad.msh:24: node 2 has more entries than 3 coordinates"
mesh41 | sed 's/^2$/2 3/' > bad.msh
expect "4.1 node tag line with two tags" "bad.msh:20: node tag 2 has more entries on its line than one tag"
# tags outside the header's smallest..largest (Gmsh sizes its tables by the largest tag and fails)
mesh41 | sed 's/^1 4 1 4$/1 4 1 3/' > bad.msh
expect "4.1 node tag above the header's largest" "bad.msh:22: node tag 4 lies outside the range 1..3 that its section's header announces"
mesh41 | sed 's/^1 4 1 4$/1 4 5 4/' > bad.msh
expect "4.1 \$Nodes smallest tag above the largest" "bad.msh:16: the \$Nodes header announces tags from 5 to 4"
mesh41 | sed 's/^3 4 1 4$/3 4 2 4/' > bad.msh
expect "4.1 element tag below the header's smallest" "element tag 1 lies outside the range 2..4"
# and an entry too few: it was taken from the next line ("node 2 has more entries" about node 3's
# line, or "'\$EndNodes' is not a finite number" after the last node)
mesh22 | sed 's/^2 1 0 0$/2 1 0/' > bad.msh
expect "2.2 node with two coordinates" "bad.msh:13: node 2 has fewer entries than a tag and 3 coordinates"
mesh22 | sed 's/^4 0 1 0$/4 0 1/' > bad.msh
expect "2.2 last node with two coordinates" "bad.msh:15: node 4 has fewer entries than a tag and 3 coordinates"
mesh41 | sed 's/^1 1 0$/1 1/' > bad.msh
expect "4.1 node with two coordinates" "bad.msh:25: node 3 has fewer entries than 3 coordinates"
mesh41 | sed 's/^4 1 3 4$/4 1 3/' > bad.msh
expect "4.1 last element with two nodes" "bad.msh:36: element 4 has fewer nodes than a 3-node triangle (3)"
mesh22 | sed 's/^4 2 2 10 1 1 3 4$/4 2 2 10 1 1 3/' > bad.msh
expect "2.2 last element with two nodes" "bad.msh:22: element 4 has fewer nodes than a 3-node triangle (3)"
mesh22 | sed 's/^4 2 2 10 1 1 3 4$/4 2 2/' > bad.msh
expect "2.2 last element without its tags" "bad.msh:22: element 4 has fewer entries than its type, number of tags, tags and nodes"
# the same for a 4.1 entity line (the errors named the \$EndEntities line)
mesh41 | sed 's/^1 0 0 0 0 1 0 1 1 0$/1 0 0 0 0 1 0 1 1/' > bad.msh
expect "4.1 entity without its bounding count" "bad.msh:12: entity 1 (of dimension 1) has fewer entries than its box, physical tags and bounding entities"
mesh41 | sed 's/^1 0 0 0 1 1 0 1 10 0$/1 0 0 0 1 1 0 1 10/' > bad.msh
expect "4.1 last entity without its bounding count" "bad.msh:14: entity 1 (of dimension 2) has fewer entries than its box"
mesh41 | sed 's/^1 0 0 0 0 1 0 1 1 0$/1 0 0 0 0 1 0 1 1 0 7/' > bad.msh
expect "4.1 entity with an extra entry" "bad.msh:12: entity 1 (of dimension 1) has more entries than its box"
# a 2.2 \$ParametricNodes section (Mesh.SaveParametric) is read as \$Nodes: node, entity dimension and
# tag, u on a curve, u v on a surface (it was refused as "\$Nodes is missing")
mesh22 | sed -e 's/^\$Nodes$/$ParametricNodes/' -e 's/^\$EndNodes$/$EndParametricNodes/' -e 's/^1 0 0 0$/1 0 0 0 0 1/' \
    -e 's/^2 1 0 0$/2 1 0 0 1 1 0.5/' -e 's/^3 1 1 0$/3 1 1 0 2 1 0.25 0.75/' -e 's/^4 0 1 0$/4 0 1 0 3 1/' > par.msh
mesh22 > plain.msh
a=$("$HS_BIN" run good41.ini fem.mesh=plain.msh fem.neumann=right fem.neumann_value=2 2>&1 | grep -o 'u range.*')
b=$("$HS_BIN" run good41.ini fem.mesh=par.msh fem.neumann=right fem.neumann_value=2 2>&1 | grep -o 'u range.*\|error.*')
[ -n "$a" ] && [ "$a" = "$b" ] && ok "2.2 \$ParametricNodes: the same answer as \$Nodes ($a)" || bad "2.2 \$ParametricNodes: '$b' vs '$a'"
mesh22 | sed -e 's/^\$Nodes$/$ParametricNodes/' -e 's/^\$EndNodes$/$EndParametricNodes/' -e 's/^1 0 0 0$/1 0 0 0 0 1/' \
    -e 's/^2 1 0 0$/2 1 0 0 1 1/' -e 's/^3 1 1 0$/3 1 1 0 2 1 0.25 0.75/' -e 's/^4 0 1 0$/4 0 1 0 3 1/' > bad.msh
expect "2.2 parametric node without its u" "bad.msh:13: node 2 has fewer entries than a tag, 3 coordinates, an entity's dimension and tag and the parametric coordinates"
printf '[run]\nsolver = fem\n[fem]\nmesh = bad.msh\ndirichlet = left\n[output]\npath = never\n' > bad.ini

# a folded mesh is refused on the line of the cell out of place: in a 2 x 2 grid of 8 triangles node 5
# moved from (0.5, 0.5) to (0.95, 0.3) inverts triangle 6 (element 14, line 39); turned around on its
# own it overlapped its neighbours and check and run passed with a wrong u (u = x not reproduced).
# Two positive tetrahedra on the same side of their shared face fold the same way. A mesh whose
# triangles are all clockwise is still turned and solved (u = x, as anticlockwise)
grid22() { # $1: node 5's coordinates; $2: sed for the triangles
    printf '$MeshFormat\n2.2 0 8\n$EndMeshFormat\n$PhysicalNames\n3\n1 2 "right"\n1 4 "left"\n2 10 "domain"\n$EndPhysicalNames\n'
    printf '$Nodes\n9\n1 0 0 0\n2 0 0.5 0\n3 0 1 0\n4 0.5 0 0\n5 %s 0\n6 0.5 1 0\n7 1 0 0\n8 1 0.5 0\n9 1 1 0\n$EndNodes\n' "${1:-0.5 0.5}"
    printf '$Elements\n12\n1 1 2 2 2 7 8\n2 1 2 2 2 8 9\n3 1 2 4 4 2 1\n4 1 2 4 4 3 2\n'
    printf '5 2 2 10 1 1 4 5\n6 2 2 10 1 1 5 2\n7 2 2 10 1 2 5 6\n8 2 2 10 1 2 6 3\n9 2 2 10 1 4 7 8\n10 2 2 10 1 4 8 5\n'
    printf '11 2 2 10 1 5 8 9\n12 2 2 10 1 5 9 6\n$EndElements\n'
}
printf '[run]\nsolver = fem\n[fem]\nmesh = bad.msh\ndirichlet = left right\ndirichlet_value = 0 1\n[output]\npath = never\n' > bad.ini
grid22 "0.95 0.3" > bad.msh
expect "folded triangles" "bad.msh:33: triangle 6 folds over triangle 1 (line 28): both lie on the same side of their shared side through (0.5, 0) and (0.95, 0.3)"
printf '$MeshFormat\n2.2 0 8\n$EndMeshFormat\n$PhysicalNames\n2\n2 1 "face"\n3 2 "body"\n$EndPhysicalNames\n$Nodes\n5\n1 0 0 0\n2 1 0 0\n3 0 1 0\n4 0 0 1\n5 0.2 0.2 0.5\n$EndNodes\n$Elements\n3\n1 2 2 1 1 1 2 4\n2 4 2 2 1 1 2 3 4\n3 4 2 2 1 1 2 3 5\n$EndElements\n' > bad.msh
printf '[run]\nsolver = fem\n[fem]\nmesh = bad.msh\ndirichlet = face\n[output]\npath = never\n' > bad.ini
expect "folded tetrahedra" "bad.msh:21: tetrahedron 2 folds over tetrahedron 1 (line 20)"
printf '[run]\nsolver = fem\n[fem]\nmesh = %s.msh\ndirichlet = left right\ndirichlet_value = 0 1\nrtol = 1e-12\n[output]\nformat = none\n' ccw > ccw.ini
sed 's/ccw/cw/' ccw.ini > cw.ini
grid22 "0.4 0.6" > ccw.msh
grid22 "0.4 0.6" | sed -E 's/^([0-9]+ 2 2 10 1) ([0-9]+) ([0-9]+) ([0-9]+)$/\1 \2 \4 \3/' > cw.msh
a=$("$HS_BIN" run ccw.ini 2>&1 | grep -o 'u range.*'); b=$("$HS_BIN" run cw.ini 2>&1 | grep -o 'u range.*')
if grep -q ' 1 4 5 8$' cw.msh && [ -n "$b" ] && [ "$a" = "$b" ] && [[ $b == *"[0.000000e+00, 1.000000e+00]"* ]]; then
    ok "a mesh of clockwise triangles only is turned and solved as the anticlockwise one ($b)"
else bad "clockwise mesh: '$b' vs anticlockwise '$a'"; fi
if [ $NOFILES = 0 ]; then
    "$HS_BIN" run ccw.ini output.format=$FMT fem.vtu=false output.path=ccw >/dev/null 2>&1
    "$HS_BIN" run cw.ini output.format=$FMT fem.vtu=false output.path=cw >/dev/null 2>&1
    "$HS_BIN" compare ccw.$EXT cw.$EXT u 1e-12 >"$CAP/c" 2>&1 && ok "clockwise mesh: the same u as anticlockwise at every node" ||
        bad "clockwise mesh: u differs: $(tail -2 "$CAP/c")"
fi
printf '[run]\nsolver = fem\n[fem]\nmesh = bad.msh\ndirichlet = left\n[output]\npath = never\n' > bad.ini

# a problem without a unique solution is refused by check as by run (check passed, then CG failed in
# the run with exit 1): robin_h = 0 and no dirichlet; two squares whose shared side has its nodes twice
# (not merged) leave the right one floating, for poisson and elasticity. Heat (its mass matrix) and the
# merged squares are accepted
crack() { # two unit squares side by side; the right one's nodes 5 and 8 repeat 2 and 3
    printf '$MeshFormat\n2.2 0 8\n$EndMeshFormat\n$PhysicalNames\n2\n1 1 "left"\n2 10 "domain"\n$EndPhysicalNames\n'
    printf '$Nodes\n8\n1 0 0 0\n2 1 0 0\n3 1 1 0\n4 0 1 0\n5 1 0 0\n6 2 0 0\n7 2 1 0\n8 1 1 0\n$EndNodes\n'
    printf '$Elements\n5\n1 1 2 1 1 4 1\n2 2 2 10 1 1 2 3\n3 2 2 10 1 1 3 4\n4 2 2 10 1 5 6 7\n5 2 2 10 1 5 7 8\n$EndElements\n'
}
mesh22 > bad.msh
printf '[run]\nsolver = fem\n[fem]\nmesh = bad.msh\nrobin = left\nrobin_h = 0\nsource = 1\n[output]\npath = never\n' > bad.ini
expect "robin_h = 0 without dirichlet" "bad.ini: fem.dirichlet: the mesh has no dirichlet facet and no robin facet with robin_h > 0"
crack > bad.msh
printf '[run]\nsolver = fem\n[fem]\nmesh = bad.msh\ndirichlet = left\nsource = 1\n[output]\npath = never\n' > bad.ini
expect "unmerged interface (poisson)" "bad.ini:5: fem.dirichlet: the mesh falls into 2 pieces that share no node, and the one holding the triangle at bad.msh:25 (2 of 4 cells) has no dirichlet facet"
printf '[run]\nsolver = fem\n[fem]\nmesh = bad.msh\nproblem = elasticity\ndirichlet = left\n[output]\npath = never\n' > bad.ini
expect "unmerged interface (elasticity)" "bad.ini:6: fem.dirichlet: the mesh falls into 2 pieces joined by no side, and the one holding the triangle at bad.msh:25 (2 of 4 cells) has no clamped (dirichlet) facet"
# elasticity: a square hinged at one corner node to the clamped one turns about it (singular; the
# node-joined pieces let it through); poisson on the same mesh is held through the node
crack | sed -e 's/^5 1 0 0$/5 1 1 0/' -e 's/^6 2 0 0$/6 2 1 0/' -e 's/^7 2 1 0$/7 2 2 0/' -e 's/^8 1 1 0$/8 1 2 0/' \
    -e 's/^4 2 2 10 1 5 6 7$/4 2 2 10 1 3 6 7/' -e 's/^5 2 2 10 1 5 7 8$/5 2 2 10 1 3 7 8/' > bad.msh
printf '[run]\nsolver = fem\n[fem]\nmesh = bad.msh\nproblem = elasticity\ndirichlet = left\n[output]\npath = never\n' > bad.ini
expect "a square hinged at a node (elasticity)" "bad.ini:6: fem.dirichlet: the mesh falls into 2 pieces joined by no side, and the one holding the triangle at bad.msh:25 (2 of 4 cells) has no clamped (dirichlet) facet: it can move freely, or turn about a node it shares with a held piece"
printf '[run]\nsolver = fem\n[fem]\nmesh = bad.msh\ndirichlet = left\nsource = 1\n[output]\nformat = none\n' > hinge.ini
"$HS_BIN" check hinge.ini >/dev/null 2>&1 && "$HS_BIN" run hinge.ini >"$CAP/o" 2>&1 && ok "poisson on the hinged squares: accepted and solved ($(grep -o 'u range.*' "$CAP/o"))" ||
    bad "poisson on the hinged squares refused: $(tail -2 "$CAP/o")"
crack > bad.msh
printf '[run]\nsolver = fem\n[fem]\nmesh = bad.msh\nproblem = heat\nt_end = 0.1\nrobin = left\nrobin_h = 0\nsource = 1\n[output]\nformat = none\n' > heat0.ini
"$HS_BIN" check heat0.ini >/dev/null 2>&1 && "$HS_BIN" run heat0.ini >"$CAP/o" 2>&1 && ok "heat on the unmerged squares without dirichlet: accepted and solved ($(grep -o 'T range.*' "$CAP/o"))" ||
    bad "heat on the unmerged squares refused: $(tail -2 "$CAP/o")"
crack | sed -e 's/^4 2 2 10 1 5 6 7$/4 2 2 10 1 2 6 7/' -e 's/^5 2 2 10 1 5 7 8$/5 2 2 10 1 2 7 3/' > merged.msh
printf '[run]\nsolver = fem\n[fem]\nmesh = merged.msh\ndirichlet = left\nsource = 1\n[output]\nformat = none\n' > merged.ini
"$HS_BIN" check merged.ini >/dev/null 2>&1 && "$HS_BIN" run merged.ini >"$CAP/o" 2>&1 && ok "the merged squares: accepted and solved ($(grep -o 'u range.*' "$CAP/o"))" ||
    bad "merged squares: $(tail -2 "$CAP/o")"
printf '[run]\nsolver = fem\n[fem]\nmesh = merged.msh\nproblem = elasticity\ndirichlet = left\n[output]\nformat = none\n' > merged_el.ini
"$HS_BIN" check merged_el.ini >/dev/null 2>&1 && "$HS_BIN" run merged_el.ini >"$CAP/o" 2>&1 &&
    ok "the merged squares, elasticity: accepted and solved" || bad "merged squares, elasticity: $(tail -2 "$CAP/o")"
printf '[run]\nsolver = fem\n[fem]\nmesh = bad.msh\ndirichlet = left\n[output]\npath = never\n' > bad.ini

# a group name with a blank, quoted in a list of names (fem.dirichlet and the others split on blanks,
# and the parameter reader took `"left wall", right` for an unclosed quote); unquoted, the error says
# how to name it; a quote not closed is an error at the key's line
mesh22 | sed 's/^1 1 "left"$/1 1 "left wall"/' > wall.msh
printf '[run]\nsolver = fem\n[fem]\nmesh = wall.msh\ndirichlet = "left wall", right # x\ndirichlet_value = 0 1\n[output]\nformat = none\n' > wall.ini
"$HS_BIN" check wall.ini >"$CAP/c" 2>&1 && "$HS_BIN" run wall.ini >"$CAP/o" 2>&1 && grep -q 'u range \[0.000000e+00, 1.000000e+00\]' "$CAP/o" &&
    grep -q '^dirichlet = "left wall", right  *# wall.ini:5' "$CAP/c" && ok "dirichlet = \"left wall\", right: u from 0 to 1, check shows the value as given" ||
    bad "quoted group name: $(tail -2 "$CAP/c" "$CAP/o")"
"$HS_BIN" run wall.ini 'fem.dirichlet="left wall"' fem.dirichlet_value=3 >"$CAP/o" 2>&1 && grep -q 'u range \[3.000000e+00, 3.000000e+00\]' "$CAP/o" &&
    ok "override fem.dirichlet='\"left wall\"' (the whole value one quoted name): u = 3" || bad "quoted name override: $(tail -2 "$CAP/o")"
mesh22 | sed 's/^1 1 "left"$/1 1 "left wall"/' > bad.msh
printf '[run]\nsolver = fem\n[fem]\nmesh = bad.msh\ndirichlet = left wall\n[output]\npath = never\n' > bad.ini
expect "unquoted name with a blank" "bad.ini:5: fem.dirichlet: physical group 'left' is not in the mesh bad.msh (its boundary groups: 'left wall', 'right'); a name with blanks or commas goes in double quotes"
printf '[run]\nsolver = fem\n[fem]\nmesh = bad.msh\ndirichlet = right, "left wall\n[output]\npath = never\n' > bad.ini
expect "unclosed quote in a list of names" "bad.ini:5: fem.dirichlet: a name's opening double quote is not closed"
printf '[run]\nsolver = fem\n[fem]\nmesh = bad.msh\ndirichlet = right,, "left wall"\n[output]\npath = never\n' > bad.ini
expect "an empty name between commas" "bad.ini:5: fem.dirichlet: an empty name (a comma with no name before or after it)"
printf '[run]\nsolver = fem\n[fem]\nmesh = bad.msh\ndirichlet = left\n[output]\npath = never\n' > bad.ini

# MSH 2.2 repeats an element for each physical group it is in: assembled once (it was twice: with a
# flux on the right and u = 0 on the left the linear solution u = x came out as x / 2)
mesh22 | sed -e 's/^3$/4/' -e 's/^2 10 "domain"$/2 10 "domain"\n2 11 "all"/' -e '18s/^4$/6/' \
    -e 's/^4 2 2 10 1 1 3 4$/4 2 2 10 1 1 3 4\n5 2 2 11 1 1 2 3\n6 2 2 11 1 1 3 4/' > twice.msh
printf '[run]\nsolver = fem\n[fem]\nmesh = twice.msh\ndirichlet = left\nneumann = right\nneumann_value = 2\nconductivity = 2\n[output]\nformat = none\n' > twice.ini
max_u_is_1 twice.ini "an element in two physical groups (MSH 2.2) is assembled once" "element in two groups"

# a well-shaped triangle 1e-7 across in a unit square (graded meshes have them: "degenerate" was a
# bound on the whole mesh's box), and 70 triangles of 70 physical groups without fem.regions (one
# set of coefficients for all; the 65th group's cells were refused): both give u = x exactly
{ printf '$MeshFormat\n2.2 0 8\n$EndMeshFormat\n$PhysicalNames\n3\n1 1 "left"\n1 2 "right"\n2 10 "domain"\n$EndPhysicalNames\n'
  printf '$Nodes\n6\n1 0 0 0\n2 1 0 0\n3 1 1 0\n4 0 1 0\n5 1e-7 0 0\n6 0 1e-7 0\n$EndNodes\n'
  printf '$Elements\n7\n1 1 2 1 1 4 6\n2 1 2 1 1 6 1\n3 1 2 2 2 2 3\n4 2 2 10 1 1 5 6\n5 2 2 10 1 5 2 3\n6 2 2 10 1 5 3 6\n7 2 2 10 1 6 3 4\n$EndElements\n'
} > graded.msh
awk 'BEGIN { n = 35; printf "$MeshFormat\n2.2 0 8\n$EndMeshFormat\n$PhysicalNames\n2\n1 1 \"left\"\n1 2 \"right\"\n$EndPhysicalNames\n$Nodes\n%d\n", 2 * (n + 1)
    for (i = 0; i <= n; i++) printf "%d %g 0 0\n%d %g 1 0\n", 2 * i + 1, i / n, 2 * i + 2, i / n
    printf "$EndNodes\n$Elements\n%d\n1 1 2 1 1 1 2\n2 1 2 2 2 %d %d\n", 2 * n + 2, 2 * n + 1, 2 * n + 2
    for (i = 0; i < n; i++) printf "%d 2 2 %d 1 %d %d %d\n%d 2 2 %d 1 %d %d %d\n", 2 * i + 3, 100 + 2 * i, 2 * i + 1, 2 * i + 3, 2 * i + 4,
        2 * i + 4, 101 + 2 * i, 2 * i + 1, 2 * i + 4, 2 * i + 2
    printf "$EndElements\n" }' > tags70.msh
for m in graded tags70; do
    printf '[run]\nsolver = fem\n[fem]\nmesh = %s.msh\ndirichlet = left right\ndirichlet_value = 0 1\n[output]\nformat = none\n' $m > $m.ini
    if "$HS_BIN" check $m.ini >/dev/null 2>&1 && "$HS_BIN" run $m.ini >"$CAP/o" 2>&1 && grep -q 'u range \[0.000000e+00, 1.000000e+00\]' "$CAP/o"; then
        ok "$m.msh: check and run accept it, $(grep -o 'u range [^ ]* [^ ]*' "$CAP/o")"
    else bad "$m.msh: $(tail -2 "$CAP/o")"; fi
done

# cells over one another without sharing a side or face were accepted (the fold check sees neighbours
# only) and the solver summed both layers: a triangle whose vertices lie inside the square it hangs
# from, a square piece inside another's interior (2-D, P2 and 3-D), two strips crossing, a strip
# wound 1.3 turns over its own start, a tetrahedron poking through a cube's face. Refused as fem.mesh
# input errors on an overlapping cell's line. Meshes that only touch pass: an annulus with an island
# in its hole, squares side by side with unmerged non-matching nodes and corner to corner, a P2 copy,
# cubes touching along a face or an edge, a hollow cube with a cube floating in its cavity, a thin
# jittered strip
cat > meshgen.py <<'PY'
import math, random, sys
def grid2(nx, ny, x0=0, y0=0, lx=1, ly=1):
    nodes = [(x0 + lx * i / nx, y0 + ly * j / ny, 0) for j in range(ny + 1) for i in range(nx + 1)]
    cells = []
    for j in range(ny):
        for i in range(nx):
            a = j * (nx + 1) + i
            cells += [(a, a + 1, a + nx + 2), (a, a + nx + 2, a + nx + 1)]
    return nodes, cells
def grid3(n, x0=(0, 0, 0), L=1):
    nodes = [(x0[0] + L * i / n, x0[1] + L * j / n, x0[2] + L * k / n) for k in range(n + 1) for j in range(n + 1) for i in range(n + 1)]
    cells = []
    for k in range(n):
        for j in range(n):
            for i in range(n):
                for p in ((0, 1, 2), (0, 2, 1), (1, 0, 2), (1, 2, 0), (2, 0, 1), (2, 1, 0)):
                    v = [i, j, k]; t = [(k * (n + 1) + j) * (n + 1) + i]
                    for ax in p:
                        v[ax] += 1; t.append((v[2] * (n + 1) + v[1]) * (n + 1) + v[0])
                    cells.append(tuple(t))
    return nodes, cells
def ring(turns, nt=24):
    N = int(round(turns * nt))
    nodes = [(r * math.cos(2 * math.pi * i / nt), r * math.sin(2 * math.pi * i / nt), 0) for i in range(N + 1) for r in (1, 2)]
    cells = [c for i in range(N) for c in ((2 * i, 2 * i + 2, 2 * i + 3), (2 * i, 2 * i + 3, 2 * i + 1))]
    if turns == 1:  # closed: the last sector's nodes are the first's
        nodes = nodes[:-2]; cells = [tuple(v % (2 * N) for v in c) for c in cells]
    return nodes, cells
def join(*pieces):
    nodes, cells = [], []
    for n, c in pieces:
        cells += [tuple(v + len(nodes) for v in t) for t in c]; nodes += n
    return nodes, cells
def p2(nodes, cells):  # 6-node triangles: the edge midpoints as nodes
    nodes = list(nodes); mid = {}; out = []
    for t in cells:
        m = []
        for a, b in ((t[0], t[1]), (t[1], t[2]), (t[2], t[0])):
            k = (min(a, b), max(a, b))
            if k not in mid:
                mid[k] = len(nodes); nodes.append(tuple((nodes[a][d] + nodes[b][d]) / 2 for d in range(3)))
            m.append(mid[k])
        out.append(tuple(t) + tuple(m))
    return nodes, out
def write(nodes, cells):
    def vol(t):
        a, b, c, d = (nodes[i] for i in t)
        e = [[q[k] - a[k] for k in range(3)] for q in (b, c, d)]
        return (e[0][0] * (e[1][1] * e[2][2] - e[1][2] * e[2][1]) - e[0][1] * (e[1][0] * e[2][2] - e[1][2] * e[2][0])
                + e[0][2] * (e[1][0] * e[2][1] - e[1][1] * e[2][0]))
    cells = [(t[0], t[1], t[3], t[2]) if len(t) == 4 and vol(t) < 0 else t for t in cells]
    print('$MeshFormat\n2.2 0 8\n$EndMeshFormat\n$Nodes\n%d' % len(nodes))
    for i, x in enumerate(nodes): print('%d %.17g %.17g %.17g' % (i + 1, x[0], x[1], x[2]))
    print('$EndNodes\n$Elements\n%d' % len(cells))
    for e, t in enumerate(cells): print('%d %d 2 10 1 %s' % (e + 1, {3: 2, 4: 4, 6: 9}[len(t)], ' '.join(str(v + 1) for v in t)))
    print('$EndElements')
case = sys.argv[1]
if case == 'tri_over':    # a triangle hanging from the square's corner node 1, its other vertices inside
    n, c = grid2(4, 4); write(n + [(0.3, 0.3, 0), (0.6, 0.35, 0)], c + [(0, 25, 26)])
elif case == 'nested':    write(*join(grid2(8, 8), grid2(2, 2, 0.3, 0.3, 0.2, 0.2)))
elif case == 'nested_p2': write(*p2(*join(grid2(4, 4), grid2(2, 2, 0.3, 0.3, 0.2, 0.2))))
elif case == 'cross':     write(*join(grid2(10, 1, 0, 0, 2, 0.2), grid2(1, 10, 0.9, -0.9, 0.2, 2)))
elif case == 'ring13':    write(*ring(1.3))
elif case == 'nested3':   write(*join(grid3(3), grid3(1, (0.4, 0.4, 0.4), 0.2)))
elif case == 'poke3':
    n, c = grid3(2); write(n + [(0.9, 0.4, 0.4), (1.5, 0.2, 0.2), (1.5, 0.9, 0.2), (1.5, 0.5, 0.9)], c + [(27, 28, 29, 30)])
elif case == 'island':    write(*join(ring(1), grid2(2, 2, -0.5, -0.5, 1, 1)))
elif case == 'touching':  write(*join(grid2(4, 4), grid2(6, 6, 1, 0), grid2(2, 2, 2, 1)))
elif case == 'touching_p2': write(*p2(*join(grid2(4, 4), grid2(6, 6, 1, 0), grid2(2, 2, 2, 1))))
elif case == 'cubes':     write(*join(grid3(2), grid3(3, (1, 0, 0)), grid3(2, (1, 1, 0))))
elif case == 'hollow':
    n, c = grid3(4)
    c = [t for i, t in enumerate(c) if not all(1 <= q < 3 for q in (i // 6 % 4, i // 24 % 4, i // 96))]
    write(*join((n, c), grid3(1, (0.3, 0.3, 0.3), 0.3)))
elif case == 'thin':
    rnd = random.Random(7); n, c = grid2(400, 4, 0, 0, 1, 1e-3)
    n = [(x + (rnd.uniform(-0.3, 0.3) / 400 if 0 < x < 1 else 0), y + (rnd.uniform(-0.3, 0.3) * 2.5e-4 if 0 < y < 1e-3 else 0), 0) for x, y, z in n]
    write(n, c)
PY
printf '[run]\nsolver = fem\n[fem]\nmesh = bad.msh\nproblem = heat\nt_end = 0.01\n[output]\npath = never\n' > bad.ini
python3 meshgen.py tri_over > bad.msh
expect "a triangle over the square it hangs from" "bad.msh:68: fem.mesh: triangle 33 overlaps triangle 11 (line 46): the point (0.4455, 0.32175), inside it near its boundary side from (0.6, 0.35) to (0.3, 0.3), lies inside both"
python3 meshgen.py nested > bad.msh
expect "a square inside another square" "bad.msh:227: fem.mesh: triangle 129 overlaps triangle 37 (line 135): the point (0.3505, 0.301)"
python3 meshgen.py nested_p2 > bad.msh
expect "a square inside another, P2 (6-node) triangles" "bad.msh:147: fem.mesh: triangle 33 overlaps triangle 11 (line 125)"
python3 meshgen.py cross > bad.msh
expect "two strips crossing" "bad.msh:82: fem.mesh: triangle 30 overlaps triangle 9 (line 61): its boundary side from (0.9, 0.1) to (0.9, -0.1) crosses the boundary side from (0.8, 0) to (1, 0) of the other"
python3 meshgen.py ring13 > bad.msh
expect "a strip wound 1.3 turns over its start (one piece)" "bad.msh:73: fem.mesh: triangle 1 overlaps triangle 49 (line 121)"
python3 meshgen.py nested3 > bad.msh
expect "a cube inside another cube" "bad.msh:243: fem.mesh: tetrahedron 163 overlaps tetrahedron 79 (line 159): the point (0.598, 0.532, 0.466)"
python3 meshgen.py poke3 > bad.msh
expect "a tetrahedron poking through a cube's face" "bad.msh:88: fem.mesh: tetrahedron 49 overlaps tetrahedron 7 (line 46): its boundary face through (0.9, 0.4, 0.4), (1.5, 0.5, 0.9) and (1.5, 0.9, 0.2) cuts through the boundary face through (1, 0, 0), (1, 0.5, 0) and (1, 0.5, 0.5) of the other"
for m in island touching touching_p2 cubes hollow thin; do
    python3 meshgen.py $m > $m.msh
    printf '[run]\nsolver = fem\n[fem]\nmesh = %s.msh\nproblem = heat\nt_end = 0.01\nsource = 1\n[output]\nformat = none\n' $m > $m.ini
    if "$HS_BIN" check $m.ini >"$CAP/c" 2>&1 && "$HS_BIN" run $m.ini >"$CAP/o" 2>&1; then ok "$m.msh (touching, not overlapping): check and run accept it, $(grep -o 'T range [^ ]* [^ ]*' "$CAP/o")"
    else bad "$m.msh refused: $(grep -h error "$CAP/c" "$CAP/o" | head -1)"; fi
done
printf '[run]\nsolver = fem\n[fem]\nmesh = bad.msh\ndirichlet = left\n[output]\npath = never\n' > bad.ini

# 6. a binary 4.1 mesh made here by Gmsh reads like the shipped ASCII 2.2 one
if command -v gmsh >/dev/null; then
    gmsh -2 -format msh41 -bin meshes/square.geo -o sqb.msh >/dev/null 2>&1
    a=$("$HS_BIN" run sq.ini fem.refine=0 output.format=none 2>&1 | grep -o 'u range.*')
    b=$("$HS_BIN" run sq.ini fem.refine=0 fem.mesh=sqb.msh output.format=none 2>&1 | grep -o 'u range.*')
    [ -n "$a" ] && [ "$a" = "$b" ] && ok "gmsh -format msh41 -bin: the same answer as the shipped 2.2 ASCII mesh ($a)" || bad "binary 4.1: '$b' vs '$a'"
    # MSH 2.2 saved with Mesh.SaveParametric has \$ParametricNodes instead of \$Nodes: read, ASCII and
    # binary, to the same answer as the plain file (it was refused: "\$Nodes is missing")
    gmsh -2 -format msh22 meshes/square.geo -o sq22.msh >/dev/null 2>&1
    a=$("$HS_BIN" run sq.ini fem.refine=0 fem.mesh=sq22.msh output.format=none 2>&1 | grep -o 'u range.*')
    for bin in "" -bin; do
        gmsh -2 -format msh22 -save_parametric $bin meshes/square.geo -o sqp.msh >/dev/null 2>&1
        b=$("$HS_BIN" run sq.ini fem.refine=0 fem.mesh=sqp.msh output.format=none 2>&1 | grep -o 'u range.*\|error.*')
        grep -q ParametricNodes sqp.msh && [ -n "$a" ] && [ "$a" = "$b" ] && ok "gmsh -format msh22 -save_parametric $bin: the same answer as without ($a)" \
            || bad "msh22 -save_parametric $bin: '$b' vs '$a'"
    done
    # a partitioned mesh's elements name partition entities: refused, not read without its groups
    gmsh -2 -format msh41 -part 2 meshes/square.geo -o bad.msh >/dev/null 2>&1
    printf '[run]\nsolver = fem\n[fem]\nmesh = bad.msh\ndirichlet = left\n[output]\npath = never\n' > bad.ini
    expect "partitioned mesh" "a partitioned mesh (\$PartitionedEntities)"
else
    echo "skipped: gmsh is not installed (binary mesh made here)"
fi

# fem.refine past the memory: 8 refinements of the cube (6e9 tetrahedra, hundreds of GB) are bad
# input from check and run alike, before any refinement (they failed with exit 1, out of memory,
# or woke the OOM killer). Under a 6 GB address-space limit so that a regression fails quickly.
if [ "$(awk '/MemAvailable/ { print int($2 / 1048576) }' /proc/meminfo)" -lt 200 ]; then
    printf '[run]\nsolver = fem\ndevice = cpu\n[fem]\nmesh = %s/inputs/meshes/cube.msh\nrefine = 8\ndirichlet = xlo\n[output]\npath = big\n' "$SRC" > big.ini
    # AddressSanitizer reserves terabytes of shadow address space and cannot start under the limit;
    # there its own allocator fails a regression's huge allocation instead
    limit="ulimit -v 6000000"
    [ -n "${ASAN_OPTIONS:-}" ] && limit=":"
    ($limit; "$HS_BIN" check big.ini >/dev/null 2>"$CAP/e1"); rc1=$?
    ($limit; "$HS_BIN" run big.ini >/dev/null 2>"$CAP/e2"); rc2=$?
    if [ $rc1 = 2 ] && [ $rc2 = 2 ] && grep -q "big.ini:6: fem.refine: 8 refinements make" "$CAP/e2" && ! ls big.* 2>/dev/null | grep -qv big.ini; then
        ok "fem.refine beyond the memory refused by check and run ($(grep -o 'make [^,]*' "$CAP/e2"))"
    else bad "fem.refine = 8 of the cube: exits $rc1 / $rc2: $(head -2 "$CAP/e1" "$CAP/e2")"; fi
else echo "skip fem.refine beyond the memory (this machine has 200 GB or more available)"; fi

# a mesh whose physical groups have no $PhysicalNames (older files, meshio): each group is named by its
# tag, so dirichlet = 1 2 3 4 is the square's four sides; the file was unusable ("boundary groups: none")
awk '/^\$PhysicalNames/ { skip = 1 } !skip { print } /^\$EndPhysicalNames/ { skip = 0 }' "$SRC/inputs/meshes/square.msh" > noname.msh
"$HS_BIN" run "$SRC/inputs/fem_poisson_square.ini" --quiet run.device=$DEVICE fem.mesh="$SRC/inputs/meshes/square.msh" fem.refine=0 output.path=sqnamed >/dev/null 2>"$CAP/e1"
"$HS_BIN" run "$SRC/inputs/fem_poisson_square.ini" --quiet run.device=$DEVICE fem.mesh="$WORK/noname.msh" fem.refine=0 fem.dirichlet="1 2 3 4" output.path=sqtags >/dev/null 2>"$CAP/e2"
if [ $NOFILES = 0 ]; then
    "$HS_BIN" compare sqnamed.$EXT sqtags.$EXT u 0 >"$CAP/o" 2>&1 && ok "unnamed physical groups by their tags: the same solution as the named mesh" ||
        bad "unnamed groups: $(cat "$CAP/e1" "$CAP/e2" "$CAP/o" | head -3)"
fi

# an output.path that fits PATH.nc.partial but not its VTU pieces' PATH_000000.vtu.partial (240 + 19 >
# 255): check and run refuse it, nothing written (the run failed at the first piece, exit 1)
long=$(printf 'v%.0s' $(seq 240))
for cmd in check run; do
    "$HS_BIN" $cmd sink.ini run.device=$DEVICE fem.t_end=20 output.path=$long >/dev/null 2>"$CAP/e"
    rc=$?
    [ $rc = 2 ] && grep -q "output.path: the VTU file's file name, with the 19 characters" "$CAP/e" && ! ls ${long}* >/dev/null 2>&1 &&
        ok "$cmd: an output.path too long for the VTU pieces: exit 2, nothing written" ||
        bad "$cmd with a long output.path: exit $rc, $(head -2 "$CAP/e"), $(ls ${long}* 2>/dev/null | wc -l) files"
done
# a VTU piece failing on a full disk: exit 1, no piece half-written under its name, and the NetCDF
# file kept as .partial (it was left finished, with a 118 of 150 kB piece); needs a tmpfs (root)
full=$(mktemp -d)
if "$HS_BIN" --version | grep -q '+netcdf' && mount -t tmpfs -o size=600k tmpfs "$full" 2>/dev/null; then
    "$HS_BIN" run sink.ini run.device=$DEVICE fem.t_end=20 output.every_time=4 output.format=netcdf output.path="$full/f" >/dev/null 2>"$CAP/e"
    rc=$?
    sizes=$(for v in "$full"/f_*.vtu; do [ -f "$v" ] && stat -c %s "$v"; done | sort -u | wc -l)
    if [ $rc = 1 ] && grep -q "VTU: writing .*failed: No space left on device" "$CAP/e" && [ -f "$full/f.nc.partial" ] &&
        [ ! -f "$full/f.nc" ] && [ "$sizes" -le 1 ] && ! ls "$full"/*.vtu.partial >/dev/null 2>&1; then
        ok "VTU on a full disk: exit 1, whole pieces only, the NetCDF file kept as .partial"
    else bad "VTU on a full disk: exit $rc, $(ls -l "$full" | tail -n +2 | tr '\n' ' ') $(grep error "$CAP/e")"; fi
    umount "$full"
else
    echo "skip  VTU on a full disk (no NetCDF or no tmpfs mount here)"
fi
rmdir "$full" 2>/dev/null

echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
