// 2-D cross-section of a finned heat sink (units: m): an aluminium base 50 x 5 mm with five fins 2 x 20 mm,
// a silicon chip 20 x 2 mm set into the base's underside.  Physical groups: surfaces "aluminium" and
// "chip"; curves "bottom" (y = 0, insulated) and "air" (every other outer side, convective).
// Mesh: gmsh -2 -format msh22 heat_sink.geo -o heat_sink.msh
SetFactory("OpenCASCADE");
DefineConstant[ h = {0.0015, Name "mesh size"} ];
Rectangle(1) = {0, 0, 0, 0.05, 0.005};
For i In {0:4}
  Rectangle(10 + i) = {0.004 + 0.0095 * i, 0.005, 0, 0.002, 0.02};
EndFor
Rectangle(20) = {0.015, 0, 0, 0.02, 0.002};
body() = BooleanUnion{ Surface{1}; Delete; }{ Surface{10:14}; Delete; };
BooleanFragments{ Surface{body()}; Delete; }{ Surface{20}; Delete; }
Mesh.MeshSizeMin = h / 3;
Mesh.MeshSizeMax = h;
eps = 1e-7;
chip() = Surface In BoundingBox{0.015 - eps, -eps, -eps, 0.035 + eps, 0.002 + eps, eps};
all() = Surface{:};
alu() = all();
alu() -= chip();
bottom() = Curve In BoundingBox{-eps, -eps, -eps, 0.05 + eps, eps, eps};
outer() = Abs(CombinedBoundary{ Surface{:}; });
air() = outer();
air() -= bottom();
Physical Surface("aluminium", 1) = alu();
Physical Surface("chip", 2) = chip();
Physical Curve("bottom", 11) = bottom();
Physical Curve("air", 12) = air();
