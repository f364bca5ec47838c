// Cantilever beam 10 x 1 x 1 m, unstructured tetrahedra: "clamped" at x = 0, "tip" at x = 10, "sides" the rest.
// Mesh: gmsh -3 -format msh41 -bin beam.geo -o beam.msh   (-setnumber h 0.25 for a finer mesh)
SetFactory("OpenCASCADE");
DefineConstant[ h = {0.5, Name "mesh size"} ];
Box(1) = {0, 0, 0, 10, 1, 1};
Mesh.MeshSizeMin = h;
Mesh.MeshSizeMax = h;
eps = 1e-6;
Physical Surface("clamped", 1) = Surface In BoundingBox{-eps, -eps, -eps, eps, 1 + eps, 1 + eps};
Physical Surface("tip", 2) = Surface In BoundingBox{10 - eps, -eps, -eps, 10 + eps, 1 + eps, 1 + eps};
Physical Surface("sides", 3) = Surface In BoundingBox{eps, -eps, -eps, 10 - eps, 1 + eps, 1 + eps};
Physical Volume("beam", 10) = {1};
