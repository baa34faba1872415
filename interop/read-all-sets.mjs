// Reader "all-sets": skinned positions evaluated here, per the glTF 2.0 spec and independently of
// three.js, over every JOINTS_n/WEIGHTS_n set. @gltf-transform/core only parses the file.
import { NodeIO } from '@gltf-transform/core';

// Accessor values as floats. getArray() is the raw typed array; normalized integers are decoded
// here per the spec rather than relying on the library's getElement.
const decoded = new WeakMap();
function values(accessor) {
  if (!decoded.has(accessor)) {
    const raw = accessor.getArray();
    const out = Float64Array.from(raw);
    if (accessor.getNormalized()) {
      const decode = {
        5120: (c) => Math.max(c / 127, -1), // BYTE
        5121: (c) => c / 255, // UNSIGNED_BYTE
        5122: (c) => Math.max(c / 32767, -1), // SHORT
        5123: (c) => c / 65535, // UNSIGNED_SHORT
      }[accessor.getComponentType()];
      if (!decode) throw new Error(`normalized accessor of component type ${accessor.getComponentType()}`);
      for (let i = 0; i < out.length; i++) out[i] = decode(raw[i]);
    }
    decoded.set(accessor, out);
  }
  return decoded.get(accessor);
}

// 4x4 matrices, column-major like glTF.
function fromTRS([tx, ty, tz], [x, y, z, w], [sx, sy, sz]) {
  return [
    (1 - 2 * (y * y + z * z)) * sx, 2 * (x * y + z * w) * sx, 2 * (x * z - y * w) * sx, 0,
    2 * (x * y - z * w) * sy, (1 - 2 * (x * x + z * z)) * sy, 2 * (y * z + x * w) * sy, 0,
    2 * (x * z + y * w) * sz, 2 * (y * z - x * w) * sz, (1 - 2 * (x * x + y * y)) * sz, 0,
    tx, ty, tz, 1,
  ];
}

function multiply(a, b) {
  const c = new Array(16);
  for (let col = 0; col < 4; col++) {
    for (let row = 0; row < 4; row++) {
      let sum = 0;
      for (let k = 0; k < 4; k++) sum += a[k * 4 + row] * b[col * 4 + k];
      c[col * 4 + row] = sum;
    }
  }
  return c;
}

// Shortest-path slerp, as the spec's reference implementation.
function slerp(a, b, s) {
  let d = a[0] * b[0] + a[1] * b[1] + a[2] * b[2] + a[3] * b[3];
  const sign = d < 0 ? -1 : 1;
  d *= sign;
  if (d > 0.9995) {
    const q = a.map((v, i) => v + s * (sign * b[i] - v));
    const n = Math.hypot(...q);
    return q.map((v) => v / n);
  }
  const theta0 = Math.acos(d);
  const theta = theta0 * s;
  const scale1 = Math.sin(theta) / Math.sin(theta0);
  const scale0 = Math.cos(theta) - d * scale1;
  return a.map((v, i) => scale0 * v + scale1 * sign * b[i]);
}

// The value of an animation sampler at time t, clamped to its first and last keys.
function sampleAt(sampler, t, rotation) {
  const times = values(sampler.getInput());
  const out = values(sampler.getOutput());
  const interpolation = sampler.getInterpolation();
  const cubic = interpolation === 'CUBICSPLINE';
  const n = out.length / times.length / (cubic ? 3 : 1); // components per key
  // For CUBICSPLINE every key is in-tangent, value, out-tangent.
  const value = (k) => Array.from(out.subarray((cubic ? 3 * k + 1 : k) * n, (cubic ? 3 * k + 2 : k + 1) * n));
  const last = times.length - 1;
  if (t <= times[0]) return value(0);
  if (t >= times[last]) return value(last);
  let k = 0;
  while (times[k + 1] <= t) k++;
  if (interpolation === 'STEP') return value(k);
  const td = times[k + 1] - times[k];
  const s = (t - times[k]) / td;
  const a = value(k);
  const b = value(k + 1);
  if (interpolation === 'LINEAR') return rotation ? slerp(a, b, s) : a.map((v, i) => v + s * (b[i] - v));
  if (!cubic) throw new Error(`unknown interpolation ${interpolation}`);
  const outTangent = out.subarray((3 * k + 2) * n, (3 * k + 3) * n);
  const inTangent = out.subarray((3 * (k + 1)) * n, (3 * (k + 1) + 1) * n);
  const s2 = s * s;
  const s3 = s2 * s;
  const p = a.map((v, i) =>
    (2 * s3 - 3 * s2 + 1) * v + td * (s3 - 2 * s2 + s) * outTangent[i] +
    (-2 * s3 + 3 * s2) * b[i] + td * (s3 - s2) * inTangent[i]);
  if (!rotation) return p;
  const norm = Math.hypot(...p);
  return p.map((v) => v / norm);
}

export async function openAllSets(glb) {
  const root = (await new NodeIO().readBinary(glb)).getRoot();
  const scene = root.getDefaultScene() ?? root.listScenes()[0];
  const sceneNodes = [];
  scene.traverse((node) => sceneNodes.push(node));

  const meshes = root.listMeshes().map((mesh, i) => {
    const primitives = mesh.listPrimitives();
    if (primitives.length !== 1) throw new Error(`mesh ${i} has ${primitives.length} primitives, expected 1`);
    const [primitive] = primitives;
    if (primitive.listTargets().length > 0) throw new Error(`mesh ${i} has morph targets, not supported`);
    const users = sceneNodes.filter((node) => node.getMesh() === mesh);
    if (users.length !== 1) throw new Error(`mesh ${i} is in the scene ${users.length} times, expected once`);
    const sets = [];
    for (let n = 0; primitive.getAttribute(`JOINTS_${n}`) || primitive.getAttribute(`WEIGHTS_${n}`); n++) {
      const joints = primitive.getAttribute(`JOINTS_${n}`);
      const weights = primitive.getAttribute(`WEIGHTS_${n}`);
      if (!joints || !weights) throw new Error(`mesh ${i} has JOINTS_${n} or WEIGHTS_${n} without the other`);
      sets.push({ joints: values(joints), weights: values(weights) });
    }
    const node = users[0];
    const skin = node.getSkin();
    if (sets.length > 0 && !skin) throw new Error(`mesh ${i} has joints and weights but its node has no skin`);
    return { name: mesh.getName(), node, skin, sets, position: values(primitive.getAttribute('POSITION')) };
  });

  return {
    meshes: meshes.map((m) => ({ name: m.name, vertexCount: m.position.length / 3 })),

    positions(sample) {
      const trs = new Map(root.listNodes().map((node) => [node, [node.getTranslation(), node.getRotation(), node.getScale()]]));
      if (sample.animation !== null) {
        const animations = root.listAnimations().filter((a) => a.getName() === sample.animation);
        if (animations.length !== 1) {
          throw new Error(`${animations.length} animations named ${JSON.stringify(sample.animation)}, expected 1`);
        }
        for (const channel of animations[0].listChannels()) {
          if (!channel.getTargetNode()) continue; // the spec: a channel without a node is ignored
          const path = ['translation', 'rotation', 'scale'].indexOf(channel.getTargetPath());
          if (path < 0) throw new Error(`animation channel path ${channel.getTargetPath()} not supported`);
          trs.get(channel.getTargetNode())[path] = sampleAt(channel.getSampler(), sample.time, path === 1);
        }
      }
      const worlds = new Map();
      const world = (node) => {
        if (!worlds.has(node)) {
          const local = fromTRS(...trs.get(node));
          const parent = node.getParentNode();
          worlds.set(node, parent ? multiply(world(parent), local) : local);
        }
        return worlds.get(node);
      };

      return meshes.map(({ node, skin, sets, position }) => {
        const count = position.length / 3;
        const out = new Float64Array(count * 3);
        const add = (v, m, w) => {
          const x = position[v * 3];
          const y = position[v * 3 + 1];
          const z = position[v * 3 + 2];
          out[v * 3] += w * (m[0] * x + m[4] * y + m[8] * z + m[12]);
          out[v * 3 + 1] += w * (m[1] * x + m[5] * y + m[9] * z + m[13]);
          out[v * 3 + 2] += w * (m[2] * x + m[6] * y + m[10] * z + m[14]);
        };
        if (!skin) {
          // An unskinned mesh is placed by its node; a skinned one only by its joints.
          const m = world(node);
          for (let v = 0; v < count; v++) add(v, m, 1);
          return out;
        }
        const ibm = skin.getInverseBindMatrices();
        const jointMatrices = skin.listJoints().map((joint, j) =>
          (ibm ? multiply(world(joint), Array.from(values(ibm).subarray(j * 16, j * 16 + 16))) : world(joint)));
        for (let v = 0; v < count; v++) {
          for (const { joints, weights } of sets) {
            for (let c = 0; c < 4; c++) {
              const w = weights[v * 4 + c];
              if (w === 0) continue;
              const m = jointMatrices[joints[v * 4 + c]];
              if (!m) throw new Error(`vertex ${v} uses joint ${joints[v * 4 + c]}, the skin has ${jointMatrices.length}`);
              add(v, m, w);
            }
          }
        }
        return out;
      });
    },
  };
}
