// Every model of the corpus, loaded by the WebAssembly build from its directory's files, holds
// what `ossa info --json` (the native CLI) says it holds: the same format, counts, names,
// scenes, bounds and warnings; a file the CLI refuses is refused with the same code and line.
import assert from 'node:assert/strict';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';

import { load } from '../node.js';
import { cliInfo, cliLine, corpus, filesOf, noCorpus, noNative } from './helpers.mjs';

/** [directory, model path in it] of every model the test loads. */
function models() {
  const out = [];
  const each = (sub, pattern, pick = (names) => names) => {
    const dir = join(corpus, sub);
    if (!existsSync(dir)) return;
    const names = readdirSync(dir).filter((n) => pattern.test(n)).sort();
    for (const n of pick(names)) out.push([dir, n]);
  };
  each('dpm', /\.dpm$/);
  each('skm', /\.(skm|skp)$/);
  each('iqm', /\.iqm$/);
  each('sims', /\.(cmx|bcf|skn|bmf)$/i);
  // The 1998 prototype's 288 character files and 272 meshes: a few of each.
  each('sims/proto1998', /\.cmx$/i, (n) => n.filter((x) => /colonel|greet01|skeleton|Ross-idle1/i.test(x)));
  each('sims/proto1998', /\.msh$/i, (n) => n.filter((x) => /colonel-HEAD/i.test(x)));
  const gltf = join(corpus, 'gltf/blender/roundtrip');
  if (existsSync(gltf)) {
    for (const d of readdirSync(gltf).sort()) each(`gltf/blender/roundtrip/${d}`, /\.gltf$/);
  }
  return out;
}

const skip = noCorpus ?? noNative();
const dirFiles = new Map();
const filesIn = (dir) => {
  if (!dirFiles.has(dir)) dirFiles.set(dir, filesOf(dir, (p) => !p.includes('/')));
  return dirFiles.get(dir);
};

test('the WebAssembly build loads every corpus model as the native CLI does', { skip }, async (t) => {
  const list = models();
  assert.ok(list.length > 60, `only ${list.length} corpus models found`);
  let refused = 0;
  for (const [dir, name] of list) {
    await t.test(name, () => {
      const file = join(dir, name);
      const native = cliInfo(file);
      let model;
      try {
        model = load(filesIn(dir), name);
      } catch (e) {
        if (native.info) throw e;
        refused++;
        assert.equal(e.name, 'OssaError');
        assert.equal(cliLine(file, e), native.stderr);
        return;
      }
      try {
        assert.ok(native.info, `the CLI refuses ${name}: ${native.stderr}`);
        const want = native.info;
        const got = model.info;
        assert.equal(got.format, want.format);
        const c = want.counts;
        assert.deepEqual(
          [got.counts.bones, got.counts.meshes, got.counts.vertices, got.counts.triangles, got.counts.frames],
          [c.bones, c.meshes, c.vertices, c.triangles, c.frames],
        );
        assert.deepEqual(
          [got.counts.scenes, got.counts.events, got.counts.textures, got.counts.materials, got.counts.suits],
          [c.animations, c.events, c.textures, c.materials, c.suits],
        );
        assert.equal(got.maxInfluences, want.max_influences);
        assert.equal(got.upAxis, want.up_axis);
        assert.equal(got.handedness, want.handedness);
        const bones = [...want.bones].sort((a, b) => a.index - b.index);
        assert.deepEqual(
          got.bones.map((b) => [b.name, b.parent < 0 ? null : b.parent, b.attachment, b.synthetic]),
          bones.map((b) => [b.name, b.parent, b.attachment, b.synthetic]),
        );
        assert.deepEqual(
          got.meshes.map((m) => [m.name, m.shader, m.vertexCount, m.triangleCount, m.maxInfluences]),
          want.meshes.map((m) => [m.name, m.shader, m.vertices, m.triangles, m.max_influences]),
        );
        assert.deepEqual(
          got.scenes.map((s) => [s.name, s.firstFrame, s.frameCount, s.fps, s.looping, s.moving, s.distance]),
          want.animations.map((s) => [s.name, s.first_frame, s.frame_count, s.fps, s.looping, s.moving, s.distance]),
        );
        assert.deepEqual(
          got.scenes.map((s) => s.events.map((e) => [e.time, e.key, e.value, e.bone < 0 ? null : e.bone])),
          want.animations.map((s) => s.events.map((e) => [e.time, e.key, e.value, e.bone])),
        );
        assert.deepEqual(
          got.suits.map((s) => [s.name, s.type, s.skins.map((k) => [k.mesh, k.bone])]),
          want.suits.map((s) => [s.name, s.type, s.skins.map((k) => [k.mesh, k.bone])]),
        );
        if (want.bounds.of === 'bind pose') assert.deepEqual(got.bounds, { min: want.bounds.min, max: want.bounds.max });
        else assert.equal(got.bounds, null);
        assert.deepEqual(got.warnings, want.warnings);
      } finally {
        model.free();
      }
    });
  }
  assert.ok(refused >= 1, 'the corpus holds a file both refuse (asp_InvalidMeshOffset.iqm)');
});
