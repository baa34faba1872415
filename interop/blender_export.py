"""Exports Blender scenes to glTF with Blender's own exporter (PyPI `bpy`, no Blender binary).

    interop/.venv-blender/bin/python interop/blender_export.py SRC_DIR OUT_DIR

For every NAME.blend in SRC_DIR, in name order: opens it and writes OUT_DIR/NAME.glb with the
glTF add-on's defaults for what a game model needs (skins, every action as an animation, +Y up),
then prints "NAME.glb: N bytes". The glTF import tests read these files with ossa and with
three.js. Exit status 0 when every scene exported, 1 otherwise. Install: see
requirements-blender.txt.
"""

import os
import sys

import bpy


def export(path, materials):
    bpy.ops.export_scene.gltf(
        filepath=path,
        export_format="GLB",
        export_yup=True,
        export_skins=True,
        export_animations=True,
        export_animation_mode="ACTIONS",
        export_apply=False,
        export_materials=materials,
    )


def main():
    if len(sys.argv) != 3:
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    src, out = sys.argv[1:3]
    os.makedirs(out, exist_ok=True)
    failed = 0
    for name in sorted(os.listdir(src)):
        if not name.endswith(".blend"):
            continue
        path = os.path.join(out, name[: -len(".blend")] + ".glb")
        note = ""
        try:
            bpy.ops.wm.open_mainfile(filepath=os.path.join(src, name))
            try:
                export(path, "EXPORT")
            except Exception as e:
                # The add-on's material search fails on some node trees (5.0.21: a node group
                # without a Group Output, in 03_skinned_cylinder.blend); positions do not depend
                # on materials, so the scene is exported without them.
                note = f" (without materials: the add-on's material export failed: {type(e).__name__})"
                export(path, "NONE")
            print(f"{os.path.basename(path)}: {os.path.getsize(path)} bytes{note}")
        except Exception as e:  # one scene's failure must not hide the others'
            failed += 1
            print(f"{name}: {e}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
