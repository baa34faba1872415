// Loading and skinning in WebAssembly against the native library's portable kernel, on corpus
// models: the medians of ROUNDS rounds each, and their ratio.
//
//   node bench.mjs [ROUNDS]     (after build.sh, which builds the module and native_ref)
//
// The module's load includes handing the files over (copied into its memory) and describing
// the model to JavaScript; its skinning includes copying the pose in and the positions and
// normals out into the caller's arrays (skinViews, as the viewer draws every frame).
import { join } from 'node:path';

import { load } from './node.js';
import { corpus, filesOf, native, noCorpus, noNative } from './test/helpers.mjs';

const rounds = Number(process.argv[2] ?? 30);
const why = noCorpus ?? noNative();
if (why) {
  console.log(`no benchmark: ${why}`);
  process.exit(0);
}

const models = [
  ['dpm', 'xon_zombie.dpm', ['xon_zombie.dpm', 'xon_zombie.dpm.framegroups'], {}],
  ['dpm', 'xon_okmale1.dpm', ['xon_okmale1.dpm', 'xon_okmale1.dpm.framegroups'], {}],
  ['dpm', 'xon_okrobot1.dpm', ['xon_okrobot1.dpm', 'xon_okrobot1.dpm.framegroups'], {}],
  ['skm', 'wsw05sdk_monada_tris.skm', ['wsw05sdk_monada_tris.skm', 'wsw05sdk_monada_tris.skp'], {}],
  ['iqm', 'asp_mrfixit.iqm', ['asp_mrfixit.iqm'], {}],
];

const median = (v) => v.sort((a, b) => a - b)[v.length >> 1];
const ns = (ms) => ms * 1e6;

console.log(`${rounds} rounds each; medians; wasm / native portable kernel`);
console.log('model                       verts   load wasm  native  ratio   skin wasm  native  ratio');
for (const [sub, name, names, options] of models) {
  const dir = join(corpus, sub);
  const files = filesOf(dir, (p) => names.includes(p));
  const loads = [];
  let model;
  for (let r = 0; r < rounds; r++) {
    model?.free();
    const t = performance.now();
    model = load(files, name, options);
    loads.push(ns(performance.now() - t));
  }
  const scene = model.scenes.length ? 0 : undefined;
  const time = scene === undefined ? 0 : model.scenes[0].duration * 0.37;
  const pose = scene === undefined ? model.pose(0) : model.pose({ scene, time });
  const out = model.meshes.map((m) => [new Float32Array(m.vertexCount * 3), new Float32Array(m.vertexCount * 3)]);
  const skins = [];
  for (let r = 0; r < rounds; r++) {
    const t = performance.now();
    model.skinViews(pose).forEach((v, i) => {
      out[i][0].set(v.positions);
      out[i][1].set(v.normals);
    });
    skins.push(ns(performance.now() - t));
  }
  const ref = native(dir, name, [...(scene === undefined ? ['--frame', '0'] : ['--pose', `0:${time}`]), '--bench', `${rounds}`]);
  const [l, s] = [median(loads), median(skins)];
  const row = [
    name.padEnd(26),
    `${model.counts.vertices}`.padStart(6),
    `${(l / 1e6).toFixed(2)} ms`.padStart(11),
    `${(ref.load_ns / 1e6).toFixed(2)} ms`.padStart(9),
    `${(l / ref.load_ns).toFixed(2)}x`.padStart(7),
    `${(s / model.counts.vertices).toFixed(1)} ns/v`.padStart(12),
    `${(ref.skin_ns / model.counts.vertices).toFixed(1)} ns/v`.padStart(11),
    `${(s / ref.skin_ns).toFixed(2)}x`.padStart(7),
  ];
  console.log(row.join(''));
  model.free();
}
