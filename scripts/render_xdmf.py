"""Renders an XDMF file with one of ParaView's readers and checks that the picture shows the field.

  xvfb-run -a pvpython scripts/render_xdmf.py FILE.xmf --reader Xdmf3ReaderS --var T --png OUT.png

--reader is XDMFReader (ParaView's legacy Xdmf2 reader), Xdmf3ReaderS or Xdmf3ReaderT (XDMF 3).
The last time step is shown coloured by --var with the Jet colour map (a 2D grid seen from +z; a
3D one cut by a slice through its centre, normal z, seen from +z), saved as a PNG, and read back:
the script fails (exit 1) unless the reader produced the array with a non-constant range, the data
set spans --ndim dimensions, and the image has a large area of saturated (non-grey) pixels in many
distinct colours, from both ends of the map (blue-dominant and red/green-dominant: the field
varies on screen).  Prints one `render:` line of measurements either way.
"""
import argparse
import os
import sys

from paraview import simple as pv
from paraview import servermanager as sm


def analyse_png(path):
    """(pixels, coloured pixels, distinct colours among them, blue-dominant, warm) of an RGB(A) PNG."""
    from vtkmodules.vtkIOImage import vtkPNGReader
    r = vtkPNGReader()
    r.SetFileName(path)
    r.Update()
    img = r.GetOutput()
    sc = img.GetPointData().GetScalars()
    nc = sc.GetNumberOfComponents()
    n = sc.GetNumberOfTuples()
    coloured = blue = warm = 0
    colours = set()
    for i in range(n):
        px = [int(sc.GetComponent(i, c)) for c in range(min(3, nc))]
        if max(px) - min(px) > 40:  # saturated: a colour-map colour, not grey shading or background
            coloured += 1
            colours.add((px[0] >> 2, px[1] >> 2, px[2] >> 2))
            if px[2] > max(px[0], px[1]):
                blue += 1
            else:
                warm += 1
    return n, coloured, len(colours), blue, warm


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("xmf")
    ap.add_argument("--reader", default="Xdmf3ReaderS", choices=["XDMFReader", "Xdmf3ReaderS", "Xdmf3ReaderT"])
    ap.add_argument("--var", required=True)
    ap.add_argument("--ndim", type=int, choices=[2, 3], required=True, help="dimensions the grid must span")
    ap.add_argument("--png", required=True)
    ap.add_argument("--min-coloured", type=float, default=0.10, help="least fraction of saturated pixels")
    ap.add_argument("--min-colours", type=int, default=16, help="least number of distinct colours")
    args = ap.parse_args()

    reader = getattr(pv, args.reader)(**{"FileNames" if args.reader == "XDMFReader" else "FileName": [args.xmf]})
    times = list(getattr(reader, "TimestepValues", []) or [])
    t = times[-1] if times else 0.0
    reader.UpdatePipeline(t)
    info = reader.GetDataInformation()
    bounds = info.GetBounds()
    extent = [bounds[2 * i + 1] - bounds[2 * i] for i in range(3)]
    spans = sum(1 for e in extent if e > 0)
    arr, assoc = None, None
    for a, where in ((reader.CellData, "CELLS"), (reader.PointData, "POINTS")):
        if args.var in a.keys():
            arr, assoc = a[args.var], where
            break
    rng = arr.GetRange() if arr else (0.0, 0.0)

    shown = reader
    if args.ndim == 3:
        shown = pv.Slice(Input=reader)
        shown.SliceType = "Plane"
        shown.SliceType.Origin = [(bounds[0] + bounds[1]) / 2, (bounds[2] + bounds[3]) / 2, (bounds[4] + bounds[5]) / 2]
        shown.SliceType.Normal = [0, 0, 1]
        shown.UpdatePipeline(t)
    view = pv.GetActiveViewOrCreate("RenderView")
    view.ViewSize = [400, 300]
    view.OrientationAxesVisibility = 0
    view.Background = [1.0, 1.0, 1.0]
    if hasattr(view, "UseColorPaletteForBackground"):
        view.UseColorPaletteForBackground = 0
    view.ViewTime = t
    disp = pv.Show(shown, view)
    disp.SetRepresentationType("Surface")  # structured 3D grids default to an outline
    if arr:
        pv.ColorBy(disp, (assoc, args.var))
        lut = pv.GetColorTransferFunction(args.var)
        lut.ApplyPreset("Jet", True)
        lut.RescaleTransferFunction(rng[0], rng[1])
        disp.SetScalarBarVisibility(view, False)
    view.CameraPosition = [0, 0, 1]
    view.CameraFocalPoint = [0, 0, 0]
    view.CameraViewUp = [0, 1, 0]
    pv.ResetCamera(view)
    pv.Render(view)
    pv.SaveScreenshot(args.png, view, ImageResolution=[400, 300])

    n, coloured, ncol, blue, warm = analyse_png(args.png)
    print(f"render: reader={args.reader} file={os.path.basename(args.xmf)} times={len(times)} "
          f"points={info.GetNumberOfPoints()} cells={info.GetNumberOfCells()} extent={extent} "
          f"array={'%s on %s' % (args.var, assoc) if arr else 'missing'} range={rng} "
          f"coloured={coloured / n:.3f} colours={ncol} blue={blue / n:.3f} warm={warm / n:.3f}")
    why = []
    if not arr:
        why.append(f"no array {args.var} (point arrays {list(reader.PointData.keys())}, "
                   f"cell arrays {list(reader.CellData.keys())})")
    elif not rng[1] > rng[0]:
        why.append(f"{args.var} is constant {rng}")
    if spans != args.ndim:
        why.append(f"the data set spans {spans} dimensions (extent {extent}), expected {args.ndim}")
    if coloured < args.min_coloured * n:
        why.append(f"only {coloured / n:.1%} of the image is coloured (at least {args.min_coloured:.0%} wanted)")
    if ncol < args.min_colours:
        why.append(f"only {ncol} distinct colours (at least {args.min_colours} wanted)")
    if min(blue, warm) < 0.002 * n:
        why.append(f"the picture does not span the colour map (blue {blue / n:.1%}, warm {warm / n:.1%} of the pixels)")
    for w in why:
        print("render: FAIL " + w)
    return 1 if why else 0


if __name__ == "__main__":
    code = main()
    sys.stdout.flush()
    os._exit(code)  # ParaView's teardown under Xvfb can abort (GLXBadContext) after the work is done
