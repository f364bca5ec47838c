"""Opens a file with one of ParaView's readers and prints what ParaView sees, as one JSON line.

  pvpython scripts/probe_paraview.py FILE READER

READER is Xdmf3ReaderS, Xdmf3ReaderT or XDMFReader (.xmf), PVDReader (.pvd) or
XMLUnstructuredGridReader (.vtu).  At the last time step, for every leaf data set (every grid of a
multi-grid XDMF file): its name, point and cell counts, first cell type, bounds and the range of each
point and cell array.  Prints `probe: {"times": [...], "blocks": [...]}`; tests compare it with what
the file holds (read with h5py or netCDF4, which pvpython may lack).
"""
import json
import os
import sys

from paraview import servermanager as sm
from paraview import simple as pv
from vtkmodules.vtkCommonDataModel import vtkCompositeDataSet


def open_reader(path, reader):
    if reader == "XDMFReader":
        return pv.XDMFReader(FileNames=[path])
    if reader == "PVDReader":
        return pv.PVDReader(FileName=path)
    return getattr(pv, reader)(FileName=[path])


def leaf(ds, name):
    b = {"name": name, "points": ds.GetNumberOfPoints(), "cells": ds.GetNumberOfCells(), "point": {}, "cell": {},
         "bounds": list(ds.GetBounds())}
    for kind, data in (("point", ds.GetPointData()), ("cell", ds.GetCellData())):
        for i in range(data.GetNumberOfArrays()):
            a = data.GetArray(i)
            b[kind][a.GetName()] = list(a.GetRange())
    if ds.GetNumberOfCells():
        b["celltype"] = ds.GetCellType(0)
    return b


def main():
    path, reader = sys.argv[1], sys.argv[2]
    r = open_reader(path, reader)
    times = list(getattr(r, "TimestepValues", []) or [])
    r.UpdatePipeline(times[-1] if times else 0.0)
    d = sm.Fetch(r)
    out = {"times": times, "blocks": []}
    if d.IsA("vtkCompositeDataSet"):
        it = d.NewIterator()
        it.InitTraversal()
        while not it.IsDoneWithTraversal():
            md = it.GetCurrentMetaData()
            name = md.Get(vtkCompositeDataSet.NAME()) if md and md.Has(vtkCompositeDataSet.NAME()) else ""
            out["blocks"].append(leaf(it.GetCurrentDataObject(), name))
            it.GoToNextItem()
    else:
        out["blocks"].append(leaf(d, ""))
    print("probe: " + json.dumps(out))
    return 0


if __name__ == "__main__":
    code = main()
    sys.stdout.flush()
    os._exit(code)  # ParaView's teardown can abort after the work is done
