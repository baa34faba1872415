// node sample-gltf.mjs FILE OUT.json: world positions of every vertex of every mesh primitive of
// a glTF from any tool (FILE: .gltf with its buffers beside it, or .glb), as three.js computes
// them (GLTFLoader, AnimationMixer, Mesh.getVertexPosition), at the file's node pose and, for
// every animation, at each of its key times and halfway between two keys. The glTF import tests
// compare ossa's skinned positions with these.
//
// OUT.json: {"primitives": [{"mesh", "primitive", "name", "vertexCount"}],
//            "samples": [{"animation": name or null, "time", "positions": [[x, y, z, ...] per
//            primitive]}]}
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import * as THREE from 'three';
import { GLTFLoader } from 'three/addons/loaders/GLTFLoader.js';

const GLB_MAGIC = 0x46546c67; // "glTF"

// FILE as one GLB: its buffers (external files beside it, data URIs, a GLB's BIN chunk) joined
// into one BIN chunk, and its images, textures, samplers and materials taken out (node has no
// image decoder, and positions do not depend on them). three.js then reads no other file.
function asGlb(file) {
  const bytes = readFileSync(file);
  let json;
  let bin = null;
  if (bytes.readUInt32LE(0) === GLB_MAGIC) {
    const jsonLength = bytes.readUInt32LE(12);
    json = JSON.parse(bytes.subarray(20, 20 + jsonLength).toString('utf8'));
    const at = 20 + jsonLength;
    if (at + 8 <= bytes.length) bin = bytes.subarray(at + 8, at + 8 + bytes.readUInt32LE(at));
  } else {
    json = JSON.parse(bytes.toString('utf8'));
  }
  const parts = [];
  const bases = [];
  let length = 0;
  for (const [i, buffer] of (json.buffers ?? []).entries()) {
    let data;
    if (buffer.uri === undefined) data = bin;
    else if (buffer.uri.startsWith('data:')) data = Buffer.from(buffer.uri.split(',')[1], 'base64');
    else data = readFileSync(join(dirname(file), decodeURIComponent(buffer.uri)));
    if (data === null) throw new Error(`buffer ${i} has no data`);
    bases.push(length);
    parts.push(data);
    length += data.length;
    const pad = (4 - (length % 4)) % 4;
    parts.push(Buffer.alloc(pad));
    length += pad;
  }
  for (const view of json.bufferViews ?? []) {
    view.byteOffset = (view.byteOffset ?? 0) + bases[view.buffer];
    view.buffer = 0;
  }
  json.buffers = length ? [{ byteLength: length }] : [];
  for (const key of ['images', 'textures', 'samplers', 'materials']) delete json[key];
  for (const mesh of json.meshes ?? []) {
    for (const primitive of mesh.primitives) delete primitive.material;
  }
  const text = Buffer.from(JSON.stringify(json));
  const jsonChunk = Buffer.concat([text, Buffer.alloc((4 - (text.length % 4)) % 4, 0x20)]);
  const binChunk = Buffer.concat(parts);
  const header = (size, type) => {
    const h = Buffer.alloc(8);
    h.writeUInt32LE(size, 0);
    h.writeUInt32LE(type, 4);
    return h;
  };
  const chunks = [header(jsonChunk.length, 0x4e4f534a), jsonChunk];
  if (length) chunks.push(header(binChunk.length, 0x004e4942), binChunk);
  const body = Buffer.concat(chunks);
  const head = Buffer.alloc(12);
  head.writeUInt32LE(GLB_MAGIC, 0);
  head.writeUInt32LE(2, 4);
  head.writeUInt32LE(12 + body.length, 8);
  const glb = Buffer.concat([head, body]);
  return [json, glb.buffer.slice(glb.byteOffset, glb.byteOffset + glb.length)];
}

async function main() {
  const [file, out] = process.argv.slice(2);
  if (!file || !out) {
    console.error('usage: node sample-gltf.mjs FILE OUT.json');
    process.exit(2);
  }
  const [json, glb] = asGlb(file);
  const gltf = await new Promise((resolve, reject) => new GLTFLoader().parse(glb, '', resolve, reject));
  const { scene, parser } = gltf;
  const objects = [];
  scene.traverse((o) => {
    const link = parser.associations.get(o);
    if (o.isMesh && link?.meshes !== undefined) objects.push([link.meshes, link.primitives ?? 0, o]);
  });
  objects.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  const rest = [];
  scene.traverse((o) => rest.push([o, o.position.clone(), o.quaternion.clone(), o.scale.clone()]));

  // Each animation's key times (every track's), and the times halfway between two of them.
  const times = (a) => {
    const found = new Set();
    for (const track of gltf.animations[a].tracks) for (const t of track.times) found.add(t);
    const keys = [...found].sort((x, y) => x - y);
    const all = [];
    keys.forEach((t, i) => {
      all.push(t);
      if (i + 1 < keys.length) all.push((t + keys[i + 1]) / 2);
    });
    return all;
  };

  const positions = (clip, time) => {
    for (const [o, p, q, s] of rest) {
      o.position.copy(p);
      o.quaternion.copy(q);
      o.scale.copy(s);
    }
    if (clip !== null) {
      const action = new THREE.AnimationMixer(scene).clipAction(clip);
      action.setLoop(THREE.LoopOnce);
      action.clampWhenFinished = true;
      action.play();
      action.getMixer().setTime(time);
    }
    scene.updateMatrixWorld(true);
    const v = new THREE.Vector3();
    return objects.map(([, , o]) => {
      const count = o.geometry.attributes.position.count;
      const flat = new Array(count * 3);
      for (let i = 0; i < count; i++) {
        o.getVertexPosition(i, v).applyMatrix4(o.matrixWorld);
        flat[i * 3] = v.x;
        flat[i * 3 + 1] = v.y;
        flat[i * 3 + 2] = v.z;
      }
      return flat;
    });
  };

  const samples = [{ animation: null, time: 0, positions: positions(null, 0) }];
  gltf.animations.forEach((clip, a) => {
    for (const t of times(a)) samples.push({ animation: clip.name, time: t, positions: positions(clip, t) });
  });
  const report = {
    primitives: objects.map(([m, p, o]) => ({
      mesh: m,
      primitive: p,
      name: json.meshes[m].name ?? null,
      vertexCount: o.geometry.attributes.position.count,
    })),
    samples,
  };
  writeFileSync(out, JSON.stringify(report));
  console.log(`${file}: ${objects.length} primitives, ${samples.length} samples`);
}

main().catch((e) => {
  console.error(e.stack ?? String(e));
  process.exit(1);
});
