"""Checks ossa's glTF exports with Blender's own glTF importer (PyPI `bpy`, no Blender binary).

    interop/.venv-blender/bin/python interop/blender_check.py [--max-animations N] DIR

For every NAME.glb in DIR with a NAME.ref.json (and NAME.ref.bin) beside it, in a fresh empty
scene: imports the file with bpy.ops.import_scene.gltf, checks the armature, its bones and the
actions against the file's JSON, then evaluates the skinned meshes in Blender for the reference's
samples (the file's node pose, and each animation at its sample times) and compares the world
positions with NAME.ref.bin. The reference format is the one interop/check.mjs reads.

One line per file, then "N passed, M failed". Exit status: 0 all passed, 1 some failed,
2 nothing to check (no NAME.glb with a NAME.ref.json in DIR).

Install (see requirements-blender.txt):
    python3 -m venv interop/.venv-blender
    interop/.venv-blender/bin/pip install -r interop/requirements-blender.txt

What Blender 5.0's importer does, and so what this script relies on (read from the importer's
source, io_scene_gltf2 5.0.21 in bpy 5.0.1, and checked on the exports):
  * Axes: glTF (x, y, z) becomes Blender (x, -z, y); positions read back are mapped to glTF's
    axes with (X, Y, Z) -> (X, Z, -Y).
  * Vertices: with merge_vertices=False (the default, passed explicitly) nothing is welded. Each
    primitive contributes the vertices its indices reference, in increasing index order
    (numpy.unique over the indices), so with one primitive per mesh, Blender vertex k is glTF
    vertex unique(indices)[k]; a vertex no index references is not imported at all and cannot be
    compared. The order is confirmed on the node pose: if it did not line up, vertices are
    matched by nearest position instead and the line says so.
  * Skinning: every JOINTS_n/WEIGHTS_n set becomes vertex-group weights (no limit of 4 per
    vertex on import); the Armature modifier blends them linearly (no preserve-volume), dividing
    by the sum of the weights. With guess_original_bind_pose=True (the default, passed
    explicitly) the bones' rest pose is the bind pose taken from the inverse bind matrices, and
    the mesh is "skinned into" it (vertex' = sum w * bind * IBM * vertex), which is the identity
    when the IBMs are rigid, as ossa writes them. With it off, the rest pose would be the nodes'
    TRS and the mesh would be pre-skinned into it, which blends twice wherever the nodes' TRS is
    not the bind pose.
  * Animations: one action per glTF animation, named exactly after the animation (or Anim_<i>
    when it has none), with one slot per animated object (the armature for bones). Every action
    is also pushed to a muted NLA track of the same name on each object it animates; the first
    animation is left assigned as the active action. This script selects an animation the way the
    importer's own "restore animation" does: per object, the action and slot of the strip on the
    track named after the animation, or no action. Key frames are time * fps * fps_base (scene
    fps at import), so the scene runs at fps=1, fps_base=1 before the import: a key's frame is then
    its glTF time, and sample time t is frame floor(t) + subframe.
  * Interpolation: LINEAR keys become linear F-curves per component. For rotations that is nlerp,
    not glTF's slerp: see NLERP_NOTE for the small, computed allowance this needs.
  * bone_heuristic: BLENDER, the most precise here; see REST_NOTE.
  * The node pose: the importer leaves the first animation assigned, and Blender evaluates it
    within the import operator, overwriting the pose bones' values. The nodes' own TRS is
    recorded through the importer's user-extension hook before the animations are made (see
    RestPoseHook), and restored before every sample.
"""

import argparse
import contextlib
import json
import math
import os
import re
import struct
import sys
import tempfile
import time

import bpy
import numpy as np
from mathutils import kdtree

IMPORT_OPTIONS = dict(
    merge_vertices=False,  # keep the file's vertices one to one (the default, made explicit)
    guess_original_bind_pose=True,  # rest pose = bind pose from the IBMs (the default, explicit)
    bone_heuristic='BLENDER',  # the most precise here; see REST_NOTE (the default, explicit)
    disable_bone_shape=True,  # BLENDER would add a bone-shape mesh object to the scene
    import_shading='NORMALS',  # the file's normals (the default); positions do not depend on it
)

# REST_NOTE: why bone_heuristic='BLENDER', and why Blender is not exact to the last bit.
# Every heuristic only chooses which way each edit bone points (its +Y axis) and compensates
# with a rotation in the pose bones and the children, so in exact arithmetic the positions do not
# depend on it, and none keeps the bones exactly as the glTF nodes. But Blender stores a bone's
# rest orientation as head, tail and roll in float32, relative to its parent, and rebuilds the
# matrix from them (vec_roll_to_mat3); for a bone that points (almost) opposite to its parent,
# i.e. along -Y in its parent's frame, that rebuild is off by up to ~1e-4 rad. The importer
# computes the pose-bone values for the orientation it asked for, so the difference cancels in
# the node pose and shows in animated poses, scaled by the pose rotation. Measured worst over the
# 24 exports: TEMPERANCE 3.7e-5 of size (its bones point at their children, so a pelvis that
# points up under a root that points down hits the case), FORTUNE 6.3e-6, BLENDER 3.8e-6
# (every bone's +Y is the glTF joint's own +Y axis, so it hits the case only where a joint's
# own frame is flipped against its parent's). three.js, for comparison: up to 6.4e-7. All are
# within the tolerance 1e-4, so it is not loosened for this. The importer's hidden switch
# bpy.app.debug_value = 100 (no bone rotation at all) is far worse here: errors up to 1.3x size
# (not investigated further).

# NLERP_NOTE: between keys, Blender interpolates a quaternion F-curve per component and
# normalizes when it builds the bone matrix (nlerp); glTF, and so the references, use slerp. No
# importer option changes it (the importer has no animation options in 5.0; it only writes
# LINEAR F-curves, CONSTANT for STEP). At a key, and halfway between two keys, nlerp and slerp
# agree exactly; elsewhere, for keys a quaternion angle a apart (half the rotation angle) and a
# fraction s of the way, the rotation differs by e = 2 |atan2(s sin a, 1 - s + s cos a) - s a|
# radians (about 0.0041 theta^3 at worst, theta the rotation between the keys: 2e-5 rad for
# 10 degrees, 6e-4 rad for 30). For each sample this script adds to the tolerance, for every
# rotation channel sampled between keys, e times the largest distance from that joint to a
# compared vertex (every vertex moves by at most e times its distance from the joint), relative
# to size. At halfway samples, the only between-key samples in the current references, e is 0
# and the tolerance is the file's own. CUBICSPLINE keys would not be reproduced at all (the
# importer keeps the values and drops the tangents, making AUTO Bezier handles); ossa writes
# none, and a file with them gets a note.

GLB_MAGIC = 0x46546C67
JSON_CHUNK = 0x4E4F534A
BIN_CHUNK = 0x004E4942

MAX_NAME_BYTES = 63  # Blender's ID, bone and NLA track names hold at most 63 bytes


def read_glb(path):
    """The GLB's JSON (parsed) and its BIN chunk (bytes, or b'')."""
    data = open(path, 'rb').read()
    magic, version, length = struct.unpack_from('<III', data, 0)
    if magic != GLB_MAGIC or version != 2:
        raise ValueError('not a glTF 2.0 GLB')
    json_length, json_type = struct.unpack_from('<II', data, 12)
    if json_type != JSON_CHUNK:
        raise ValueError('the first chunk is not JSON')
    gltf = json.loads(data[20:20 + json_length].decode('utf-8'))
    at = 20 + json_length
    binary = b''
    if at + 8 <= len(data):
        bin_length, bin_type = struct.unpack_from('<II', data, at)
        if bin_type == BIN_CHUNK:
            binary = data[at + 8:at + 8 + bin_length]
    return gltf, binary


COMPONENT_DTYPES = {5120: np.int8, 5121: np.uint8, 5122: np.int16, 5123: np.uint16,
                    5125: np.uint32, 5126: np.float32}
TYPE_COMPONENTS = {'SCALAR': 1, 'VEC2': 2, 'VEC3': 3, 'VEC4': 4, 'MAT2': 4, 'MAT3': 9, 'MAT4': 16}


def accessor(gltf, binary, index):
    """An accessor's raw values as an array of shape (count, components). Normalized integers
    are decoded per the spec; sparse accessors and external buffers are not supported."""
    acc = gltf['accessors'][index]
    if 'sparse' in acc:
        raise ValueError(f'accessor {index} is sparse')
    dtype = np.dtype(COMPONENT_DTYPES[acc['componentType']]).newbyteorder('<')
    n = TYPE_COMPONENTS[acc['type']]
    count = acc['count']
    view = gltf['bufferViews'][acc['bufferView']]
    if view['buffer'] != 0 or 'uri' in gltf['buffers'][0]:
        raise ValueError(f'accessor {index} is not in the GLB BIN chunk')
    start = view.get('byteOffset', 0) + acc.get('byteOffset', 0)
    stride = view.get('byteStride') or n * dtype.itemsize
    rows = np.lib.stride_tricks.as_strided(
        np.frombuffer(binary, dtype=np.uint8, offset=start),
        shape=(count, n * dtype.itemsize), strides=(stride, 1)) if count else np.zeros((0, 0), np.uint8)
    out = np.ascontiguousarray(rows).view(dtype).reshape(count, n)
    if acc.get('normalized'):
        scale = {5120: 127, 5121: 255, 5122: 32767, 5123: 65535}[acc['componentType']]
        out = np.maximum(out.astype(np.float64) / scale, -1.0)
    return out


def blender_name(name):
    """A name as Blender stores it: cut to 63 bytes without splitting a UTF-8 character."""
    raw = name.encode('utf-8')
    if len(raw) <= MAX_NAME_BYTES:
        return name
    return raw[:MAX_NAME_BYTES].decode('utf-8', errors='ignore')


@contextlib.contextmanager
def captured_output():
    """Sends what Blender and the importer print (to the C-level stdout/stderr too) to a temporary
    file; yields a function that returns it, for a failure's report."""
    sys.stdout.flush()
    sys.stderr.flush()
    saved = os.dup(1), os.dup(2)
    with tempfile.TemporaryFile(mode='w+b') as log:
        os.dup2(log.fileno(), 1)
        os.dup2(log.fileno(), 2)
        text = []
        try:
            yield lambda: ''.join(text)
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
            os.dup2(saved[0], 1)
            os.dup2(saved[1], 2)
            os.close(saved[0])
            os.close(saved[1])
            log.seek(0)
            text.append(log.read().decode('utf-8', errors='replace'))


class RestPoseHook:
    """A user extension of the importer (its documented glTF2ImportUserExtension API): records
    every object's and pose bone's transform as the importer set it from the nodes' TRS, after
    the nodes are made and before the animations. That is the pose of the samples without an
    animation, and the start of every animated sample (a channel that an animation does not drive
    keeps the node's TRS, as in glTF). It cannot be read after the import: the importer leaves the
    first animation assigned, and Blender evaluates it at the current frame within the import
    operator, which writes the animated values back into the pose bones."""

    rest = None

    def gather_import_scene_after_nodes_hook(self, gltf_scene, blender_scene, gltf):
        rest = []
        for obj in bpy.data.objects:
            items = [obj] + (list(obj.pose.bones) if obj.type == 'ARMATURE' else [])
            for item in items:
                rest.append((item, item.rotation_mode, item.location.copy(), item.rotation_quaternion.copy(),
                             item.rotation_euler.copy(), item.scale.copy()))
        RestPoseHook.rest = rest


HOOK_MODULE = 'ossa_blender_check_rest_pose'


def install_hook():
    """The importer takes its user extensions from the enabled add-ons' modules, by the name in
    the preferences; this registers a stand-in module under that name."""
    import types
    if HOOK_MODULE not in sys.modules:
        module = types.ModuleType(HOOK_MODULE)
        module.glTF2ImportUserExtension = RestPoseHook
        sys.modules[HOOK_MODULE] = module
    addons = bpy.context.preferences.addons
    if HOOK_MODULE not in addons:
        addons.new().module = HOOK_MODULE


def fresh_scene():
    bpy.ops.wm.read_factory_settings(use_empty=True)
    install_hook()
    scene = bpy.context.scene
    # Key frames are glTF time * fps * fps_base: at 1 and 1 a frame number is the time in seconds.
    scene.render.fps = 1
    scene.render.fps_base = 1.0
    scene.frame_set(0)
    return scene


def spread(items, limit):
    """At most `limit` of the items, chosen evenly, first and last included."""
    if limit is None or len(items) <= limit:
        return list(items)
    if limit == 1:
        return [items[0]]
    picks = sorted({round(i * (len(items) - 1) / (limit - 1)) for i in range(limit)})
    return [items[i] for i in picks]


class FileCheck:
    def __init__(self, directory, name, max_animations):
        self.dir = directory
        self.name = name
        self.max_animations = max_animations
        self.problems = []
        self.notes = []

    def problem(self, text):
        self.problems.append(text)

    def note(self, text):
        self.notes.append(text)

    # ---- the import and the structure ----

    def load(self):
        stem = self.name[:-len('.glb')]
        self.gltf, self.binary = read_glb(os.path.join(self.dir, self.name))
        with open(os.path.join(self.dir, stem + '.ref.json'), encoding='utf-8') as f:
            self.ref = json.load(f)
        self.expected = np.fromfile(os.path.join(self.dir, stem + '.ref.bin'), dtype='<f4')
        if self.ref.get('glb') not in (None, self.name):
            self.problem(f'the reference is for {self.ref["glb"]}')

    def import_file(self):
        self.scene = fresh_scene()
        path = os.path.abspath(os.path.join(self.dir, self.name))
        started = time.perf_counter()
        RestPoseHook.rest = None
        with captured_output() as log:
            try:
                result = bpy.ops.import_scene.gltf(filepath=path, **IMPORT_OPTIONS)
            except Exception as e:  # the operator raises RuntimeError on its errors
                result = {f'raised {type(e).__name__}: {e}'}
        self.import_seconds = time.perf_counter() - started
        if result != {'FINISHED'}:
            self.problem(f'import returned {sorted(result)}; importer output:\n{log()}')
            return False
        if RestPoseHook.rest is None:
            self.problem('the importer did not call the rest-pose hook')
            return False
        self.rest, RestPoseHook.rest = RestPoseHook.rest, None
        return True

    def check_structure(self):
        gltf = self.gltf
        nodes = gltf.get('nodes', [])
        skins = gltf.get('skins', [])
        animations = gltf.get('animations', [])
        self.bone_count = 0

        def node_name(i):
            return nodes[i].get('name') or f'Node_{i}'

        # glTF mesh i -> the Blender object that instantiates it (matched later by name).
        self.mesh_nodes = {}
        for i, node in enumerate(nodes):
            if 'mesh' in node:
                self.mesh_nodes.setdefault(node['mesh'], []).append(i)

        armatures = [o for o in bpy.data.objects if o.type == 'ARMATURE']
        self.armature_of_skin = {}
        if skins and not armatures:
            self.problem('the file has skins, Blender made no armature')
        for si, skin in enumerate(skins):
            joints = skin['joints']
            names = [node_name(j) for j in joints]
            long = [n for n in names if blender_name(n) != n]
            if long:
                self.note(f'{len(long)} joint names longer than {MAX_NAME_BYTES} bytes, '
                          f'which Blender shortens: {long[:3]}')
            # The armature of this skin: the one holding the first joint's bone (match_meshes
            # checks that the meshes with this skin are deformed by it).
            candidates = [a for a in armatures if blender_name(names[0]) in a.data.bones]
            if len(candidates) != 1:
                self.problem(f'skin {si}: {len(candidates)} armatures have a bone {blender_name(names[0])!r}')
                continue
            arma = candidates[0]
            self.armature_of_skin[si] = arma
            bones = arma.data.bones
            self.bone_count += len(bones)
            if len(bones) != len(joints):
                extra = sorted(set(b.name for b in bones) - {blender_name(n) for n in names})
                self.problem(f'skin {si}: armature {arma.name!r} has {len(bones)} bones, the skin '
                             f'{len(joints)} joints' + (f' (bones that are no joint: {extra[:5]})' if extra else ''))
            missing = [n for n in names if blender_name(n) not in bones]
            if missing:
                self.problem(f'skin {si}: {len(missing)} joints are no bone of {arma.name!r}: {missing[:5]}')

        # Actions: Blender 5.0's importer makes one action per glTF animation, named exactly after
        # the animation (Anim_<i> when unnamed; no object or armature name is appended, unlike
        # the per-object actions of importers before 4.4), so the names must match exactly, as
        # Blender stores them (at most 63 bytes).
        self.track_of = {}
        for ai, anim in enumerate(animations):
            wanted = blender_name(anim.get('name') or f'Anim_{ai}')
            if anim.get('name') and wanted != anim['name']:
                self.note(f'animation name {anim["name"]!r} is longer than {MAX_NAME_BYTES} bytes; '
                          f'Blender shortens it')
            self.track_of[anim.get('name')] = wanted
            if wanted not in bpy.data.actions:
                self.problem(f'no action named {wanted!r} for animation {ai}')
        if len(bpy.data.actions) != len(animations):
            self.problem(f'{len(bpy.data.actions)} actions for {len(animations)} animations')

    # ---- meshes and vertices ----

    def match_meshes(self):
        """self.meshes[i] = (Blender object, glTF vertex indices it holds, Blender vertex index
        of each) for glTF mesh i; self.skip[i] = which of those not to compare."""
        gltf = self.gltf
        ref_meshes = self.ref['meshes']
        gl_meshes = gltf.get('meshes', [])
        if len(ref_meshes) != len(gl_meshes):
            self.problem(f'the file has {len(gl_meshes)} meshes, the reference {len(ref_meshes)}')
            return False
        objects = [o for o in bpy.data.objects if o.type == 'MESH']
        nodes = gltf.get('nodes', [])
        taken = set()
        self.meshes = []
        self.skip = []
        for mi, (mesh, ref_mesh) in enumerate(zip(gl_meshes, ref_meshes)):
            if len(mesh['primitives']) != 1:
                self.problem(f'mesh {mi} has {len(mesh["primitives"])} primitives; the references '
                             f'are written for one')
                return False
            prim = mesh['primitives'][0]
            count = gltf['accessors'][prim['attributes']['POSITION']]['count']
            if count != ref_mesh['vertex_count']:
                self.problem(f'mesh {mi} has {count} vertices, the reference {ref_mesh["vertex_count"]}')
                return False
            if 'indices' in prim:
                order = np.unique(accessor(gltf, self.binary, prim['indices']).ravel()).astype(np.int64)
            else:
                order = np.arange(count)
            # Blender names the mesh data after the glTF mesh (Mesh_<i> when unnamed), adding
            # .001 and so on when the name is taken.
            base = blender_name(mesh.get('name') or f'Mesh_{mi}')
            pattern = re.compile(re.escape(base) + r'(\.\d{3,})?$')
            found = [o for o in objects if o.name not in taken and pattern.match(o.data.name)]
            if not found:
                self.problem(f'no Blender mesh object for glTF mesh {mi} ({base!r})')
                return False
            # Should several match, take one with the right vertex count, in name order (the
            # order the importer made them in); a wrong pick shows in the comparison.
            found.sort(key=lambda o: (len(o.data.vertices) != len(order), o.data.name))
            obj = found[0]
            taken.add(obj.name)
            if len(obj.data.vertices) != len(order):
                self.problem(f'mesh {mi}: Blender has {len(obj.data.vertices)} vertices, the file '
                             f'references {len(order)} of its {count}')
                return False
            skins = {nodes[n].get('skin') for n in self.mesh_nodes.get(mi, [])}
            for si in skins - {None}:
                arma = self.armature_of_skin.get(si)
                deformers = [m.object for m in obj.modifiers if m.type == 'ARMATURE']
                if arma is not None and deformers != [arma]:
                    self.problem(f'mesh {mi} ({obj.name!r}) is deformed by {[o and o.name for o in deformers]}, '
                                 f'its skin\'s armature is {arma.name!r}')
            unreferenced = count - len(order)
            if unreferenced:
                self.note(f'mesh {mi}: {unreferenced} vertices that no triangle uses are not imported by '
                          f'Blender, so not compared')
            skip = set(ref_mesh.get('excluded') or [])
            # A "three" reference only counts JOINTS_0/WEIGHTS_0; Blender applies every set.
            if self.ref['reader'] == 'three' and 'JOINTS_1' in prim['attributes']:
                extra = np.zeros(count, bool)
                n = 1
                while f'WEIGHTS_{n}' in prim['attributes']:
                    extra |= (accessor(gltf, self.binary, prim['attributes'][f'WEIGHTS_{n}']) != 0).any(axis=1)
                    n += 1
                skip |= set(np.nonzero(extra)[0].tolist())
                self.note(f'mesh {mi}: {int(extra.sum())} vertices with influences beyond JOINTS_0 are '
                          f'not compared with a "three" reference')
            # Blender vertex perm[k] is glTF vertex order[k]: the identity unless compare() finds
            # that the node pose does not line up.
            self.meshes.append((obj, order, np.arange(len(order))))
            self.skip.append(np.array([v in skip for v in order.tolist()], dtype=bool))
        return True

    def evaluated_positions(self):
        """World positions of every matched mesh's vertices, in glTF axes, as float64 arrays."""
        depsgraph = bpy.context.evaluated_depsgraph_get()
        out = []
        for obj, _order, _perm in self.meshes:
            evaluated = obj.evaluated_get(depsgraph)
            mesh = evaluated.to_mesh()
            co = np.empty(len(mesh.vertices) * 3, dtype=np.float32)
            mesh.vertices.foreach_get('co', co)
            world = np.array(evaluated.matrix_world, dtype=np.float64)
            evaluated.to_mesh_clear()
            co = co.reshape(-1, 3).astype(np.float64)
            p = co @ world[:3, :3].T + world[:3, 3]
            out.append(np.stack([p[:, 0], p[:, 2], -p[:, 1]], axis=1))  # Blender -> glTF axes
        return out

    # ---- poses ----

    def pose(self, animation, seconds):
        for item, mode, loc, quat, euler, scale in self.rest:
            item.rotation_mode = mode
            item.location = loc
            item.rotation_quaternion = quat
            item.rotation_euler = euler
            item.scale = scale
        track = None if animation is None else self.track_of.get(animation)
        if animation is not None and track is None:
            raise LookupError(f'no animation named {animation!r} in the file')
        owners = [o for o in bpy.data.objects] + [k for k in bpy.data.shape_keys]
        assigned = 0
        for owner in owners:
            data = owner.animation_data
            if data is None:
                continue
            strip = None
            for t in data.nla_tracks:
                if track is not None and t.name == track and len(t.strips):
                    strip = t.strips[0]
                    break
            if strip is None:
                if data.action is not None:
                    data.action_slot = None
                data.action = None
            else:
                data.action = strip.action
                data.action_slot = strip.action_slot
                assigned += 1
        if animation is not None and not assigned:
            raise LookupError(f'no NLA track {track!r} on any object')
        frame = math.floor(seconds)
        self.scene.frame_set(frame, subframe=seconds - frame)

    # ---- the comparison ----

    def compare(self):
        ref = self.ref
        size, tolerance = ref['size'], ref['tolerance']
        per_sample = sum(3 * m['vertex_count'] for m in ref['meshes'])
        samples = ref['samples']
        by_animation = {}
        for s in samples:
            if s['animation'] is not None:
                by_animation.setdefault(s['animation'], []).append(s)
        chosen = spread(list(by_animation), self.max_animations)
        if len(chosen) < len(by_animation):
            self.note(f'{len(chosen)} of {len(by_animation)} animations checked, chosen evenly '
                      f'(--max-animations)')
        keep = set(chosen)
        todo = [s for s in samples if s['animation'] is None or s['animation'] in keep]
        # The node pose first: it also confirms the vertex order.
        todo.sort(key=lambda s: s['animation'] is not None)
        self.sample_count = len(todo)
        self.worst = (-1.0, None)
        self.allowance = 0.0
        over = 0
        for si, sample in enumerate(todo):
            at = sample['offset']
            if at + per_sample > len(self.expected):
                self.problem(f'sample needs floats {at}..{at + per_sample}, the .ref.bin has {len(self.expected)}')
                continue
            try:
                self.pose(sample['animation'], sample['time'])
            except LookupError as e:
                self.problem(str(e))
                continue
            actual = self.evaluated_positions()
            wants = []
            for ref_mesh, (_obj, order, _perm) in zip(ref['meshes'], self.meshes):
                wants.append(self.expected[at:at + 3 * ref_mesh['vertex_count']].reshape(-1, 3)[order].astype(np.float64))
                at += 3 * ref_mesh['vertex_count']
            allowances = self.nlerp_allowance(sample, wants)
            for mi, (want, (obj, order, perm)) in enumerate(zip(wants, self.meshes)):
                compared = ~self.skip[mi]
                d = self.distances(actual[mi][perm], want, compared)
                if si == 0 and sample['animation'] is None and d.max(initial=0) > tolerance:
                    # The node pose does not line up vertex for vertex: match by nearest position.
                    nearest = self.nearest(actual[mi], want, compared)
                    if nearest is not None:
                        perm = nearest
                        self.meshes[mi] = (obj, order, perm)
                        self.note(f'mesh {mi}: the vertices did not line up in order; matched by '
                                  f'nearest node-pose position')
                        d = self.distances(actual[mi][perm], want, compared)
                allowance = np.where(compared, allowances[mi], 0.0)
                self.allowance = max(self.allowance, float(allowance.max(initial=0)))
                over += int((d > tolerance + allowance).sum())
                if len(d):
                    k = int(np.argmax(d))
                    if d[k] > self.worst[0]:
                        self.worst = (float(d[k]), (sample, mi, int(order[k]), want[k], actual[mi][perm][k]))
        if over:
            _d, (sample, mi, v, want, got) = self.worst
            xyz = lambda p: '(' + ', '.join(f'{c:.7g}' for c in p) + ')'
            self.problem(f'{over} vertex positions over the tolerance {tolerance:.3g} of size {size:.7g}'
                         f'{" (plus the nlerp allowance)" if self.allowance > 0.01 * tolerance else ""}; '
                         f'worst at {describe(sample)}, mesh {mi} vertex {v}: expected {xyz(want)}, '
                         f'Blender gives {xyz(got)}')

    def rotation_channels(self, animation):
        """(target node, key times, unit quaternions, interpolation) of an animation's rotation
        channels."""
        cache = self.__dict__.setdefault('_rotation_channels', {})
        if animation not in cache:
            gltf = self.gltf
            anim = next(a for a in gltf['animations'] if a.get('name') == animation)
            channels = []
            for channel in anim['channels']:
                target = channel['target']
                if target.get('path') != 'rotation' or 'node' not in target:
                    continue
                sampler = anim['samplers'][channel['sampler']]
                keys = accessor(gltf, self.binary, sampler['input']).ravel()
                values = accessor(gltf, self.binary, sampler['output']).astype(np.float64)
                interpolation = sampler.get('interpolation', 'LINEAR')
                if interpolation == 'CUBICSPLINE':
                    values = values[1::3]
                values /= np.linalg.norm(values, axis=1, keepdims=True)
                channels.append((target['node'], keys, values, interpolation))
            cache[animation] = channels
        return cache[animation]

    def nlerp_allowance(self, sample, wants):
        """Per mesh, per vertex: the distance (relative to size) by which Blender's nlerp may
        move the vertex from its slerp position at this sample; see NLERP_NOTE."""
        allowances = [np.zeros(len(w)) for w in wants]
        if sample['animation'] is None:
            return allowances
        t = np.float32(sample['time'])  # Blender's scene time is a float32 frame number
        for node, keys, values, interpolation in self.rotation_channels(sample['animation']):
            if interpolation == 'STEP' or not keys[0] < t < keys[-1]:
                continue
            if interpolation == 'CUBICSPLINE' and 'cubic' not in self.__dict__:
                self.cubic = True
                self.note('CUBICSPLINE rotations: Blender\'s importer drops the tangents')
            i = int(np.searchsorted(keys, t, side='right')) - 1
            if keys[i] == t:
                continue
            fraction = float((t - keys[i]) / (keys[i + 1] - keys[i]))
            half = math.acos(min(1.0, abs(float(values[i] @ values[i + 1]))))
            error = 2 * abs(math.atan2(fraction * math.sin(half), 1 - fraction + fraction * math.cos(half))
                            - fraction * half)
            if error == 0.0:
                continue
            joint = self.joint_position(node)
            for allowance, want in zip(allowances, wants):
                reach = np.linalg.norm(want - joint, axis=1) if joint is not None else 2 * self.ref['size']
                allowance += error * reach
        # 5% over the first-order bound, for the second-order terms and rounding.
        return [1.05 * a / self.ref['size'] for a in allowances]

    def joint_position(self, node):
        """World position, in glTF axes, of a node as Blender evaluated it (a bone's head or an
        object's origin); None if it cannot be found."""
        name = blender_name(self.gltf['nodes'][node].get('name') or f'Node_{node}')
        depsgraph = bpy.context.evaluated_depsgraph_get()
        for obj in bpy.data.objects:
            if obj.type == 'ARMATURE' and name in obj.pose.bones:
                evaluated = obj.evaluated_get(depsgraph)
                p = evaluated.matrix_world @ evaluated.pose.bones[name].head
                break
        else:
            obj = bpy.data.objects.get(name)
            if obj is None:
                return None
            p = obj.evaluated_get(depsgraph).matrix_world.translation
        return np.array([p[0], p[2], -p[1]], dtype=np.float64)

    def distances(self, got, want, compared):
        d = np.linalg.norm(got - want, axis=1) / self.ref['size']
        d[np.isnan(d)] = np.inf
        return np.where(compared, d, 0.0)

    @staticmethod
    def nearest(got, want, compared):
        """For each wanted position, the nearest Blender vertex (itself where not compared);
        None unless that is one to one."""
        tree = kdtree.KDTree(len(got))
        for k, p in enumerate(got):
            tree.insert(p, k)
        tree.balance()
        perm = np.array([tree.find(p)[1] if c else k for k, (p, c) in enumerate(zip(want, compared))],
                        dtype=np.int64)
        return perm if len(np.unique(perm)) == len(perm) else None

    def run(self):
        started = time.perf_counter()
        try:
            self.load()
            if self.import_file():
                self.check_structure()
                if self.match_meshes():
                    self.compare()
        except Exception as e:  # report and go on with the next file
            import traceback
            self.problem(f'{type(e).__name__}: {e}\n{traceback.format_exc()}')
        self.seconds = time.perf_counter() - started
        return not self.problems

    def line(self):
        parts = []
        if hasattr(self, 'bone_count'):
            parts.append(f'{self.bone_count} bones')
            parts.append(f'{len(self.gltf.get("animations", []))} animations')
        if hasattr(self, 'sample_count'):
            parts.append(f'{self.sample_count} samples')
        if getattr(self, 'worst', (-1, None))[1] is not None:
            d, (sample, mi, v, _w, _g) = self.worst
            parts.append(f'worst {d:.2g} of size ({describe(sample)}, mesh {mi} vertex {v})')
        if getattr(self, 'allowance', 0.0) > 0.01 * self.ref.get('tolerance', 0):
            parts.append(f'nlerp allowance up to {self.allowance:.2g}')
        parts.append(f'{self.seconds:.1f} s' + (f' (import {self.import_seconds:.1f} s)'
                                                  if hasattr(self, 'import_seconds') else ''))
        head = f'{"FAIL" if self.problems else "ok  "} {self.name}: {", ".join(parts)}'
        lines = [head] + [f'       note: {n}' for n in self.notes] + [f'       {p}' for p in self.problems]
        return '\n'.join(lines)


def describe(sample):
    if sample['animation'] is None:
        return 'node pose'
    return f'{json.dumps(sample["animation"])} t={sample["time"]:.6g}'


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('dir')
    parser.add_argument('--max-animations', type=int, default=None,
                        help='check at most N animations per file, chosen evenly (default: all)')
    args = parser.parse_args()
    names = sorted(n for n in os.listdir(args.dir) if n.endswith('.glb')
                   and os.path.exists(os.path.join(args.dir, n[:-4] + '.ref.json'))) \
        if os.path.isdir(args.dir) else []
    if not names:
        print(f'no NAME.glb with a NAME.ref.json in {args.dir}: nothing checked', file=sys.stderr)
        return 2
    print(f'Blender {bpy.app.version_string}, glTF importer '
          f'{".".join(map(str, __import__("io_scene_gltf2").bl_info["version"]))}', flush=True)
    passed = 0
    for name in names:
        check = FileCheck(args.dir, name, args.max_animations)
        ok = check.run()
        passed += ok
        print(check.line(), flush=True)
    print(f'{passed} passed, {len(names) - passed} failed', flush=True)
    return 0 if passed == len(names) else 1


if __name__ == '__main__':
    sys.exit(main())
