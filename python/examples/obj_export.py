"""Poses a model at a frame and writes its skinned meshes as a Wavefront OBJ.

    python obj_export.py zombie.dpm 10 zombie.obj
"""

import sys

import ossa


def export(model_path: str, frame: int, obj_path: str) -> None:
    with ossa.load(model_path) as model, open(obj_path, "w") as obj:
        pose = model.pose(frame)
        first = 1  # OBJ numbers vertices from 1, across all its objects
        for mesh in model.meshes:
            positions, normals = model.skin(mesh, pose, normalize=True)
            obj.write(f"o {mesh.name or f'mesh{mesh.index}'}\n")
            obj.writelines(f"v {x:.6f} {y:.6f} {z:.6f}\n" for x, y, z in positions)
            obj.writelines(f"vn {x:.6f} {y:.6f} {z:.6f}\n" for x, y, z in normals)
            for a, b, c in mesh.indices + first:
                obj.write(f"f {a}//{a} {b}//{b} {c}//{c}\n")
            first += mesh.vertex_count


if __name__ == "__main__":
    export(sys.argv[1], int(sys.argv[2]), sys.argv[3])
