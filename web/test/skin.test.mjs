// Posed and skinned by the WebAssembly build (its SIMD128 kernel), the corpus models land
// where the native library (its fastest kernel here, through the OS filesystem's sidecar route)
// puts them: bone matrices and positions within 1e-6 of the model's size, unit normals within
// 1e-5; the names and counts native_ref reads agree too.
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';

import { load } from '../node.js';
import { corpus, filesOf, native, noCorpus, noNative, sizeOf } from './helpers.mjs';

/** [name, directory, model, load options; native_ref's options follow from them]. */
const cases = [
  ['DPM with framegroups', 'dpm', 'xon_zombie.dpm', {}],
  ['DPM blending 8 bones', 'dpm', 'xon_okmale1.dpm', {}],
  ['SKM with its SKP', 'skm', 'wsw05sdk_monada_tris.skm', {}],
  ['SKM LOD with the base SKP', 'skm', 'wsw05sdk_monada_tris_2.skm', {}],
  ['IQM', 'iqm', 'asp_mrfixit.iqm', {}],
  ['IQM with animation-only IQMs', 'iqm', 'rea_RE_Player_male.iqm', { anims: ['rea_player_boost_forward.iqm', 'rea_player_dead.iqm'] }],
  ['IQM with an animation-only IQM', 'iqm', 'raylib_guy.iqm', { anims: ['raylib_guyanim.iqm'] }],
  ['Sims 1998 colonel dressed, with a skill', 'sims/proto1998', 'colonelsuit.CMX', { suit: 'colonel', skills: ['adult-greet01.cmx'] }],
  ['glTF from Blender', 'gltf/blender/roundtrip/03_all_animations', '03_all_animations.gltf', {}],
];

const skip = noCorpus ?? noNative();

/** The poses to hold the builds to: frame 0, and the first, middle and last scene at a time
 * that falls between frames. */
function posesOf(info) {
  const poses = [{ frame: 0 }];
  const n = info.scenes.length;
  for (const s of new Set([0, n >> 1, n - 1].filter((s) => s >= 0 && s < n))) {
    poses.push({ scene: s, time: info.scenes[s].duration * 0.37 + 0.001 });
  }
  return poses;
}

function close(got, want, tolerance, what) {
  assert.equal(got.length, want.length, `${what}: length`);
  let worst = 0;
  let at = -1;
  for (let i = 0; i < got.length; i++) {
    const d = Math.abs(got[i] - want[i]);
    if (!(d <= worst)) {
      worst = d;
      at = i;
    }
  }
  assert.ok(worst <= tolerance, `${what}: float ${at} is ${got[at]}, natively ${want[at]} (off ${worst}, allowed ${tolerance})`);
  return worst;
}

for (const [title, sub, name, options] of cases) {
  const dir = join(corpus, sub);
  const here = skip ?? (existsSync(join(dir, name)) ? undefined : `${join(dir, name)} is missing`);
  test(`skinned as natively: ${title} (${name})`, { skip: here }, () => {
    const model = load(filesOf(dir), name, options);
    try {
      const poses = posesOf(model.info);
      const args = [];
      if (options.suit) args.push('--suit', options.suit);
      for (const s of options.skills ?? []) args.push('--skills', s);
      for (const a of options.anims ?? []) args.push('--anims', a);
      for (const p of poses) args.push(...(p.scene === undefined ? ['--frame', `${p.frame}`] : ['--pose', `${p.scene}:${p.time}`]));
      const ref = native(dir, name, args);
      const got = model.info;
      assert.equal(got.format, ref.format);
      assert.deepEqual(
        [got.counts.bones, got.counts.meshes, got.counts.vertices, got.counts.triangles, got.counts.frames, got.counts.scenes],
        [ref.counts.bones, ref.counts.meshes, ref.counts.vertices, ref.counts.triangles, ref.counts.frames, ref.counts.scenes],
      );
      assert.deepEqual(got.bones.map((b) => b.name), ref.bones);
      assert.deepEqual(got.meshes.map((m) => m.name), ref.meshes);
      assert.deepEqual(got.scenes.map((s) => s.name), ref.scenes);
      assert.deepEqual(got.warnings, ref.warnings);
      assert.deepEqual(got.bounds, ref.bounds);
      const size = sizeOf(ref.bounds);
      let worst = 0;
      poses.forEach((p, k) => {
        const pose = model.pose(p);
        const what = p.scene === undefined ? `frame ${p.frame}` : `scene ${p.scene} at ${p.time} s`;
        for (let b = 0; b < pose.length; b += 12) {
          const rot = [0, 1, 2, 4, 5, 6, 8, 9, 10].map((i) => b + i);
          const tr = [3, 7, 11].map((i) => b + i);
          close(rot.map((i) => pose[i]), rot.map((i) => ref.poses[k].bones[i]), 1e-6, `${what}: bone ${b / 12} rotation`);
          close(tr.map((i) => pose[i]), tr.map((i) => ref.poses[k].bones[i]), 1e-6 * size, `${what}: bone ${b / 12} translation`);
        }
        model.skin(pose).forEach((m, i) => {
          // One mesh skinned alone (skinInto) is what skinning them all (skinViews) gives it.
          const alone = model.skin(pose, { mesh: i });
          assert.deepEqual([alone.positions, alone.normals], [m.positions, m.normals]);
          const want = ref.poses[k].meshes[i];
          worst = Math.max(worst, close(m.positions, want.positions, 1e-6 * size, `${what}: mesh ${i} positions`));
          close(m.normals, want.normals, 1e-5, `${what}: mesh ${i} normals`);
        });
      });
      console.log(`${name}: ${poses.length} poses, worst position ${(worst / size).toExponential(2)} of the size ${size}`);
    } finally {
      model.free();
    }
  });
}
