"""Imports a glTF file with Blender's glTF add-on and exports it again (PyPI `bpy`, no Blender
binary), custom properties included: the round trip an artist's edit takes.

    interop/.venv-blender/bin/python interop/blender_vitamoo.py IN.glb OUT.glb

Blender keeps node `extras` as custom properties of objects and bones and writes them back with
`export_extras`; the VitaMoo test (tests/gltf_vitamoo.rs) reads OUT.glb with ossa. Prints
"OUT.glb: N bytes"; exit status 0 when both steps ran. Install: see requirements-blender.txt.
"""

import os
import sys

import bpy


def main():
    if len(sys.argv) != 3:
        print(__doc__.strip().splitlines()[3].strip(), file=sys.stderr)
        return 2
    src, out = sys.argv[1:3]
    bpy.ops.wm.read_factory_settings(use_empty=True)
    bpy.ops.import_scene.gltf(filepath=src)
    bpy.ops.export_scene.gltf(
        filepath=out,
        export_format="GLB",
        export_yup=True,
        export_skins=True,
        export_animations=True,
        export_animation_mode="ACTIONS",
        export_apply=False,
        export_extras=True,
        # The keys where the import put them, not resampled at the scene's 24 fps: a skill's
        # frames come back on their own times.
        export_force_sampling=False,
    )
    print(f"{os.path.basename(out)}: {os.path.getsize(out)} bytes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
