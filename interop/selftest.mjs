// node selftest.mjs: shows that check.mjs works before ossa's exporter exists. Builds two small
// skinned GLBs with @gltf-transform/core, computes their skinned positions here with its own
// small affine code (independent of both readers), writes the references, and runs check.mjs on
// them: as written (must pass), with one expected value changed in each (must fail), the
// 6-influence file judged by three.js, which reads only 4 (must fail), and an empty folder.
import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { crc32, deflateSync } from 'node:zlib';
import { Document, NodeIO } from '@gltf-transform/core';

const deg = Math.PI / 180;

// Affine transforms { m: 3x3 matrix as rows, t: translation }.
function axisAngle([x, y, z], a) {
  const c = Math.cos(a);
  const s = Math.sin(a);
  const C = 1 - c;
  return [
    [c + x * x * C, x * y * C - z * s, x * z * C + y * s],
    [y * x * C + z * s, c + y * y * C, y * z * C - x * s],
    [z * x * C - y * s, z * y * C + x * s, c + z * z * C],
  ];
}
function quaternionToMatrix(q) {
  const [x, y, z, w] = q.map((v) => v / Math.hypot(...q));
  const sinHalf = Math.hypot(x, y, z);
  if (sinHalf === 0) return axisAngle([1, 0, 0], 0);
  return axisAngle([x / sinHalf, y / sinHalf, z / sinHalf], 2 * Math.atan2(sinHalf, w));
}
const quaternion = ([x, y, z], a) => [x * Math.sin(a / 2), y * Math.sin(a / 2), z * Math.sin(a / 2), Math.cos(a / 2)];
const apply = (m, p) => m.map((row) => row[0] * p[0] + row[1] * p[1] + row[2] * p[2]);
const transform = (a, p) => apply(a.m, p).map((v, i) => v + a.t[i]);
const product = (a, b) => a.map((row) => [0, 1, 2].map((j) => row[0] * b[0][j] + row[1] * b[1][j] + row[2] * b[2][j]));
const compose = (a, b) => ({ m: product(a.m, b.m), t: transform(a, b.t) });
const local = (t, r, s) => ({ m: r.map((row) => row.map((v, j) => v * s[j])), t });
function invertRigid({ m, t }) {
  const mt = [0, 1, 2].map((i) => m.map((row) => row[i]));
  return { m: mt, t: apply(mt, t).map((v) => -v) };
}

// The skeleton: parents come before their children. The 4-influence file uses the first two.
const JOINTS = [
  { name: 'root', parent: null, t: [0, 0, 0] },
  { name: 'tip', parent: 0, t: [0, 1, 0] },
  { name: 'side', parent: 0, t: [1, 0, 0] },
  { name: 'tip_end', parent: 1, t: [0, 0.5, 0], axis: [0, 1, 0], angle: 20 * deg },
  { name: 'low', parent: 0, t: [-1, 0.5, 0] },
  { name: 'end', parent: 3, t: [0, 0.5, 0] },
];

// Rotation keys are given as axis and angles (LINEAR, STEP: about one axis, so the slerp is a
// linear change of angle) or as quaternions with tangents (CUBICSPLINE: [in, value, out]).
const ANIMATIONS = {
  bend: [
    { joint: 1, path: 'rotation', interpolation: 'LINEAR', times: [0, 0.25, 1], axis: [0, 0, 1], angles: [0, 30 * deg, 90 * deg] },
    { joint: 0, path: 'translation', interpolation: 'LINEAR', times: [0, 0.25, 1], values: [[0.5, 0, 0], [0.5, 0.2, 0], [1.5, 0, 0]] },
    { joint: 3, path: 'rotation', interpolation: 'STEP', times: [0, 0.4], axis: [1, 0, 0], angles: [0, 40 * deg] },
  ],
  sway: [
    {
      joint: 1, path: 'rotation', interpolation: 'CUBICSPLINE', times: [0, 2],
      keys: [
        [[0, 0, 0, 0], [0, 0, 0, 1], [-0.2, 0.1, 0, 0]],
        [[-0.1, 0, 0.05, 0], quaternion([1, 0, 0], -45 * deg), [0, 0, 0, 0]],
      ],
    },
    {
      joint: 0, path: 'translation', interpolation: 'CUBICSPLINE', times: [0, 1, 2],
      keys: [
        [[0, 0, 0], [0, 0, 0], [0, 0, 2]],
        [[0.5, 0, 0], [0, 0, 1], [0, -1, 0]],
        [[0, 0, 0], [0, 0, 0], [0, 0, 0]],
      ],
    },
    { joint: 0, path: 'scale', interpolation: 'STEP', times: [0, 0.6], values: [[1, 1, 1], [1.5, 1, 1]] },
  ],
};

const SAMPLES = [
  { animation: null, time: 0 },
  { animation: 'bend', time: 0 },
  { animation: 'bend', time: 0.5 },
  { animation: 'bend', time: 1 },
  { animation: 'sway', time: 0.5 },
  { animation: 'sway', time: 1.5 },
  { animation: 'sway', time: 3 }, // after the last key
];

// A strip of 6 vertices in 3 rows along +Y, 2 quads.
const POSITIONS = [0, 1, 2].flatMap((y) => [[-0.25, y, 0], [0.25, y, 0]]);
const INDICES = [0, 1, 3, 0, 3, 2, 2, 3, 5, 2, 5, 4];

// Per vertex: [joint, weight] over every influence.
const FOUR = [[1, 0], [1, 0], [0.6, 0.4], [0.4, 0.6], [0.25, 0.75], [0.1, 0.9]].map((w) => w.map((v, j) => [j, v]));
// Six influences per vertex, weights in 255ths (exact in both UNSIGNED_BYTE and UNSIGNED_SHORT).
const SIX = POSITIONS.map((_, v) => [60, 50, 40, 35, 40, 30].map((_, j, base) => [j, base[(j + v) % 6] / 255]));

// The value of a channel at time t: a translation, a scale or a rotation matrix.
function channelValue(ch, t) {
  const rotation = ch.path === 'rotation';
  const keyValue = (k) => {
    if (ch.keys) return rotation ? quaternionToMatrix(ch.keys[k][1]) : ch.keys[k][1];
    return rotation ? axisAngle(ch.axis, ch.angles[k]) : ch.values[k];
  };
  const last = ch.times.length - 1;
  if (t <= ch.times[0]) return keyValue(0);
  if (t >= ch.times[last]) return keyValue(last);
  let k = 0;
  while (ch.times[k + 1] <= t) k++;
  const td = ch.times[k + 1] - ch.times[k];
  const s = (t - ch.times[k]) / td;
  if (ch.interpolation === 'STEP') return keyValue(k);
  if (ch.interpolation === 'LINEAR') {
    if (rotation) return axisAngle(ch.axis, ch.angles[k] + s * (ch.angles[k + 1] - ch.angles[k]));
    return ch.values[k].map((v, i) => v + s * (ch.values[k + 1][i] - v));
  }
  // CUBICSPLINE, the Hermite form of the spec.
  const [, p0, b0] = ch.keys[k];
  const [a1, p1] = ch.keys[k + 1];
  const h = [2 * s ** 3 - 3 * s ** 2 + 1, s ** 3 - 2 * s ** 2 + s, -2 * s ** 3 + 3 * s ** 2, s ** 3 - s ** 2];
  const p = p0.map((_, i) => h[0] * p0[i] + td * h[1] * b0[i] + h[2] * p1[i] + td * h[3] * a1[i]);
  return rotation ? quaternionToMatrix(p) : p;
}

function worlds(joints, animation, time) {
  const trs = joints.map((j) => ({ t: j.t, r: axisAngle(j.axis ?? [1, 0, 0], j.angle ?? 0), s: [1, 1, 1] }));
  for (const ch of animation ? ANIMATIONS[animation] : []) {
    // 'translation', 'rotation', 'scale' set t, r, s.
    if (ch.joint < joints.length) trs[ch.joint][ch.path[0]] = channelValue(ch, time);
  }
  const out = [];
  joints.forEach((j, i) => {
    const l = local(trs[i].t, trs[i].r, trs[i].s);
    out.push(j.parent === null ? l : compose(out[j.parent], l));
  });
  return out;
}

function expectedPositions(joints, influences, sample) {
  const bind = worlds(joints, null, 0).map(invertRigid);
  const skin = worlds(joints, sample.animation, sample.time).map((w, j) => compose(w, bind[j]));
  return POSITIONS.flatMap((p, v) => {
    const sum = [0, 0, 0];
    for (const [j, w] of influences[v]) transform(skin[j], p).forEach((c, i) => { sum[i] += w * c; });
    return sum;
  });
}

// A 1x1 RGBA PNG: a real embedded image, which three.js cannot decode under node.
function png([r, g, b, a]) {
  const chunk = (type, data) => {
    const out = Buffer.alloc(12 + data.length);
    out.writeUInt32BE(data.length, 0);
    out.write(type, 4, 'latin1');
    data.copy(out, 8);
    out.writeUInt32BE(crc32(out.subarray(4, 8 + data.length)), 8 + data.length);
    return out;
  };
  const header = Buffer.from([0, 0, 0, 1, 0, 0, 0, 1, 8, 6, 0, 0, 0]); // 1x1, 8 bits, RGBA
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', header), chunk('IDAT', deflateSync(Buffer.from([0, r, g, b, a]))), chunk('IEND', Buffer.alloc(0)),
  ]);
}

// The GLB: one skinned mesh "strip" at the scene root, its joints' root also at the scene root,
// and a textured material.
function buildDocument(joints, influences, weightArrays) {
  const doc = new Document();
  const buffer = doc.createBuffer();
  const accessor = (type, array, normalized = false) =>
    doc.createAccessor().setType(type).setArray(array).setNormalized(normalized).setBuffer(buffer);
  const nodes = joints.map((j) => doc.createNode(j.name).setTranslation(j.t)
    .setRotation(quaternion(j.axis ?? [1, 0, 0], j.angle ?? 0)));
  joints.forEach((j, i) => { if (j.parent !== null) nodes[j.parent].addChild(nodes[i]); });
  const bind = worlds(joints, null, 0).map(invertRigid);
  // Inverse bind matrices, column-major.
  const ibm = bind.flatMap(({ m, t }) => [m[0][0], m[1][0], m[2][0], 0, m[0][1], m[1][1], m[2][1], 0, m[0][2], m[1][2], m[2][2], 0, ...t, 1]);
  const skin = doc.createSkin('skeleton').setSkeleton(nodes[0]).setInverseBindMatrices(accessor('MAT4', new Float32Array(ibm)));
  nodes.forEach((n) => skin.addJoint(n));

  const texture = doc.createTexture('skin').setImage(png([200, 150, 120, 255])).setMimeType('image/png');
  const primitive = doc.createPrimitive()
    .setAttribute('POSITION', accessor('VEC3', new Float32Array(POSITIONS.flat())))
    .setAttribute('TEXCOORD_0', accessor('VEC2', new Float32Array(POSITIONS.flatMap(([x, y]) => [x + 0.25, y / 2]))))
    .setIndices(accessor('SCALAR', new Uint16Array(INDICES)))
    .setMaterial(doc.createMaterial('skin').setBaseColorTexture(texture));
  // Integer weights are normalized: stored as round(w * max). Unused slots are joint 0, weight 0.
  weightArrays.forEach(({ joints: JointArray, weights: WeightArray }, set) => {
    const max = WeightArray === Float32Array ? 1 : 2 ** (8 * WeightArray.BYTES_PER_ELEMENT) - 1;
    const slot = (v, c) => {
      const influence = influences[v][set * 4 + c];
      return influence && influence[1] !== 0 ? influence : [0, 0];
    };
    const ids = POSITIONS.flatMap((_, v) => [0, 1, 2, 3].map((c) => slot(v, c)[0]));
    const ws = POSITIONS.flatMap((_, v) => [0, 1, 2, 3].map((c) => slot(v, c)[1] * max));
    primitive.setAttribute(`JOINTS_${set}`, accessor('VEC4', new JointArray(ids)))
      .setAttribute(`WEIGHTS_${set}`, accessor('VEC4', new WeightArray(ws.map((w) => (max === 1 ? w : Math.round(w)))), max !== 1));
  });
  const meshNode = doc.createNode('strip').setMesh(doc.createMesh('strip').addPrimitive(primitive)).setSkin(skin);
  doc.getRoot().setDefaultScene(doc.createScene('scene').addChild(meshNode).addChild(nodes[0]));

  for (const [name, channels] of Object.entries(ANIMATIONS)) {
    const animation = doc.createAnimation(name);
    for (const ch of channels.filter((c) => c.joint < joints.length)) {
      const output = ch.keys ? ch.keys.flat(2)
        : ch.path === 'rotation' ? ch.angles.flatMap((a) => quaternion(ch.axis, a)) : ch.values.flat();
      const sampler = doc.createAnimationSampler()
        .setInput(accessor('SCALAR', new Float32Array(ch.times)))
        .setOutput(accessor(ch.path === 'rotation' ? 'VEC4' : 'VEC3', new Float32Array(output)))
        .setInterpolation(ch.interpolation);
      animation.addSampler(sampler).addChannel(doc.createAnimationChannel()
        .setTargetNode(nodes[ch.joint]).setTargetPath(ch.path).setSampler(sampler));
    }
  }
  return doc;
}

async function writeModel(dir, base, { joints, influences, weightArrays, reader, excluded = [] }) {
  writeFileSync(join(dir, `${base}.glb`), await new NodeIO().writeBinary(buildDocument(joints, influences, weightArrays)));
  const lo = [0, 1, 2].map((i) => Math.min(...POSITIONS.map((p) => p[i])));
  const hi = [0, 1, 2].map((i) => Math.max(...POSITIONS.map((p) => p[i])));
  const floats = SAMPLES.flatMap((s) => {
    const positions = expectedPositions(joints, influences, s);
    // Excluded vertices get nonsense: the check must not look at them.
    for (const v of excluded) positions.splice(v * 3, 3, 1e6, 1e6, 1e6);
    return positions;
  });
  const perSample = POSITIONS.length * 3;
  writeFileSync(join(dir, `${base}.ref.json`), JSON.stringify({
    glb: `${base}.glb`,
    reader,
    size: Math.hypot(...hi.map((h, i) => h - lo[i])),
    tolerance: 1e-5,
    meshes: [{ name: 'strip', vertex_count: POSITIONS.length, excluded }],
    samples: SAMPLES.map((s, i) => ({ ...s, offset: i * perSample })),
  }, null, 2));
  writeFileSync(join(dir, `${base}.ref.bin`), new Float32Array(floats));
}

// Adds delta to float `index` of a .ref.bin.
function corrupt(path, index, delta) {
  const bytes = readFileSync(path);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  view.setFloat32(index * 4, view.getFloat32(index * 4, true) + delta, true);
  writeFileSync(path, bytes);
}

const check = join(dirname(fileURLToPath(import.meta.url)), 'check.mjs');
let passed = 0;
let failed = 0;
function expect(what, dir, status, lastLine) {
  const run = spawnSync(process.execPath, [check, dir], { encoding: 'utf8' });
  const output = (run.stdout + run.stderr).trimEnd();
  const ok = run.status === status && (!lastLine || output.split('\n').at(-1) === lastLine);
  console.log(`${ok ? 'ok  ' : 'FAIL'} ${what}: check.mjs exit ${run.status}, expected ${status}`);
  console.log(output.replace(/^/gm, '    | '));
  if (ok) passed++;
  else failed++;
}

const work = mkdtempSync(join(tmpdir(), 'ossa-interop-'));
const good = join(work, 'good');
mkdirSync(good);
await writeModel(good, 'strip4', {
  joints: JOINTS.slice(0, 2),
  influences: FOUR,
  weightArrays: [{ joints: Uint8Array, weights: Float32Array }],
  reader: 'three',
});
await writeModel(good, 'strip6', {
  joints: JOINTS,
  influences: SIX,
  weightArrays: [{ joints: Uint8Array, weights: Uint8Array }, { joints: Uint16Array, weights: Uint16Array }],
  reader: 'all-sets',
  excluded: [5],
});
expect('exports as written pass', good, 0, '2 passed, 0 failed');

const bad = join(work, 'bad');
cpSync(good, bad, { recursive: true });
const perSample = POSITIONS.length * 3;
corrupt(join(bad, 'strip4.ref.bin'), 2 * perSample + 4 * 3 + 1, 0.01); // "bend" t=0.5, vertex 4, y
corrupt(join(bad, 'strip6.ref.bin'), 5 * perSample + 2 * 3, -0.01); // "sway" t=1.5, vertex 2, x
expect('one changed value in each reference fails', bad, 1, '0 passed, 2 failed');

const threeOnSix = join(work, 'three-on-six');
mkdirSync(threeOnSix);
for (const f of ['strip6.glb', 'strip6.ref.bin']) cpSync(join(good, f), join(threeOnSix, f));
const ref = JSON.parse(readFileSync(join(good, 'strip6.ref.json'), 'utf8'));
writeFileSync(join(threeOnSix, 'strip6.ref.json'), JSON.stringify({ ...ref, reader: 'three' }));
expect('the 6-influence file read by three.js (4 influences) fails', threeOnSix, 1, '0 passed, 1 failed');

const empty = join(work, 'empty');
mkdirSync(empty);
expect('a folder without .glb fails', empty, 2);

if (failed === 0) rmSync(work, { recursive: true });
else console.log(`files kept in ${work}`);
console.log(`selftest: ${passed} passed, ${failed} failed`);
process.exit(failed === 0 ? 0 : 1);
