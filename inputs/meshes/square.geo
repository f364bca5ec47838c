// Unit square, unstructured triangles; physical curves name the four sides, the surface the domain.
// Mesh: gmsh -2 -format msh22 square.geo -o square.msh   (-setnumber h 0.05 for a finer mesh)
DefineConstant[ h = {0.125, Name "mesh size"} ];
Point(1) = {0, 0, 0, h};
Point(2) = {1, 0, 0, h};
Point(3) = {1, 1, 0, h};
Point(4) = {0, 1, 0, h};
Line(1) = {1, 2};
Line(2) = {2, 3};
Line(3) = {3, 4};
Line(4) = {4, 1};
Curve Loop(1) = {1, 2, 3, 4};
Plane Surface(1) = {1};
Physical Curve("bottom", 1) = {1};
Physical Curve("right", 2) = {2};
Physical Curve("top", 3) = {3};
Physical Curve("left", 4) = {4};
Physical Surface("domain", 10) = {1};
