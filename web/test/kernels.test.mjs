// The module's SIMD128 skinning kernel (the one it runs unless told otherwise) gives the
// portable kernel's bits, float for float, on corpus models whose layouts reach all of its
// paths: a DPM with 384 blended influence sets (xon_zombie), one blending up to 8 bones, an SKM
// and IQMs; every mesh, with and without normals, unit or not, one mesh at a time (skinInto) and
// every mesh at once (skinViews).
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';

import { ErrorCode, OssaError, load } from '../node.js';
import { corpus, filesOf, noCorpus } from './helpers.mjs';

/** [directory, model, the files it is loaded from, load options]. */
const cases = [
  ['dpm', 'xon_zombie.dpm', ['xon_zombie.dpm', 'xon_zombie.dpm.framegroups'], {}],
  ['dpm', 'xon_okmale1.dpm', ['xon_okmale1.dpm', 'xon_okmale1.dpm.framegroups'], {}],
  ['skm', 'wsw05sdk_monada_tris.skm', ['wsw05sdk_monada_tris.skm', 'wsw05sdk_monada_tris.skp'], {}],
  ['iqm', 'asp_mrfixit.iqm', ['asp_mrfixit.iqm'], {}],
  ['iqm', 'raylib_guy.iqm', ['raylib_guy.iqm', 'raylib_guyanim.iqm'], { anims: ['raylib_guyanim.iqm'] }],
];

/** Frame 0, the last frame, and a blend of two frames (a pose no frame holds). */
function posesOf(model) {
  const last = Math.max(0, model.info.counts.frames - 1);
  return [
    ['frame 0', model.pose(0)],
    [`frame ${last}`, model.pose({ frame: last })],
    ['a blend', model.pose({ frames: [0, last >> 1], weights: [0.35, 0.65] })],
  ];
}

/** Asserts `got` and `want` hold the same bits, naming the first float that differs. */
function sameBits(got, want, what) {
  assert.equal(got === null, want === null, `${what}: normals given by one kernel only`);
  if (got === null) return;
  assert.equal(got.length, want.length, `${what}: length`);
  const a = new Uint32Array(got.buffer, got.byteOffset, got.length);
  const b = new Uint32Array(want.buffer, want.byteOffset, want.length);
  for (let i = 0; i < a.length; i++) {
    if (a[i] !== b[i]) assert.fail(`${what}: float ${i} is ${got[i]} with simd128, ${want[i]} with portable`);
  }
}

for (const [sub, name, names, options] of cases) {
  const dir = join(corpus, sub);
  const skip = noCorpus ?? (existsSync(join(dir, name)) ? undefined : `${join(dir, name)} is missing`);
  test(`simd128 skins as the portable kernel, bit for bit: ${name}`, { skip }, () => {
    const model = load(filesOf(dir, (p) => names.includes(p)), name, options);
    try {
      let floats = 0;
      for (const [pose, matrices] of posesOf(model)) {
        for (const normalize of [true, false]) {
          const all = model.skin(matrices, { normalize, kernel: 'simd128' });
          const allPortable = model.skin(matrices, { normalize, kernel: 'portable' });
          // The default kernel is simd128.
          const byDefault = model.skin(matrices, { normalize });
          all.forEach((m, i) => {
            const what = `${pose}, normalize ${normalize}, mesh ${i}`;
            sameBits(m.positions, allPortable[i].positions, `${what}, every mesh: positions`);
            sameBits(m.normals, allPortable[i].normals, `${what}, every mesh: normals`);
            sameBits(byDefault[i].positions, m.positions, `${what}, the default kernel: positions`);
            sameBits(byDefault[i].normals, m.normals, `${what}, the default kernel: normals`);
            for (const normals of [true, false]) {
              const one = model.skin(matrices, { mesh: i, normalize, normals, kernel: 'simd128' });
              const want = model.skin(matrices, { mesh: i, normalize, normals, kernel: 'portable' });
              sameBits(one.positions, want.positions, `${what}, normals ${normals}: positions`);
              sameBits(one.normals, want.normals, `${what}, normals ${normals}: normals`);
              floats += one.positions.length + (one.normals?.length ?? 0);
            }
          });
        }
      }
      assert.ok(floats > 0, `${name}: nothing skinned`);
      console.log(`${name}: ${floats} floats skinned one mesh at a time, the same bits both ways`);
    } finally {
      model.free();
    }
  });
}

test('a kernel the module lacks, or one that does not exist, is refused', { skip: noCorpus }, () => {
  const dir = join(corpus, 'iqm');
  const model = load(filesOf(dir, (p) => p === 'asp_mrfixit.iqm'), 'asp_mrfixit.iqm');
  try {
    const pose = model.pose(0);
    for (const [kernel, message] of [
      ['avx2', 'the avx2 skinning kernel does not run on this CPU'],
      ['neon', "no skinning kernel is called 'neon'"],
    ]) {
      assert.throws(
        () => model.skin(pose, { mesh: 0, kernel }),
        (e) => e instanceof OssaError && e.code === ErrorCode.INVALID_ARGUMENT && e.message === message,
        kernel,
      );
      assert.throws(
        () => model.skinViews(pose, true, kernel),
        (e) => e instanceof OssaError && e.code === ErrorCode.INVALID_ARGUMENT && e.message === message,
        kernel,
      );
    }
  } finally {
    model.free();
  }
});
