// Unit cube, unstructured tetrahedra; physical surfaces name the six faces, the volume the domain.
// Mesh: gmsh -3 -format msh41 cube.geo -o cube.msh   (-setnumber h 0.1 for a finer mesh)
SetFactory("OpenCASCADE");
DefineConstant[ h = {0.34, Name "mesh size"} ];
Box(1) = {0, 0, 0, 1, 1, 1};
Mesh.MeshSizeMin = h; Mesh.MeshSizeMax = h;
eps = 1e-6;
Physical Surface("xlo", 1) = Surface In BoundingBox{-eps, -eps, -eps, eps, 1 + eps, 1 + eps};
Physical Surface("xhi", 2) = Surface In BoundingBox{1 - eps, -eps, -eps, 1 + eps, 1 + eps, 1 + eps};
Physical Surface("ylo", 3) = Surface In BoundingBox{-eps, -eps, -eps, 1 + eps, eps, 1 + eps};
Physical Surface("yhi", 4) = Surface In BoundingBox{-eps, 1 - eps, -eps, 1 + eps, 1 + eps, 1 + eps};
Physical Surface("zlo", 5) = Surface In BoundingBox{-eps, -eps, -eps, 1 + eps, 1 + eps, eps};
Physical Surface("zhi", 6) = Surface In BoundingBox{-eps, -eps, 1 - eps, 1 + eps, 1 + eps, 1 + eps};
Physical Volume("domain", 10) = {1};
