// Reader "three": skinned positions as three.js computes them (GLTFLoader, AnimationMixer,
// SkinnedMesh.getVertexPosition). Only JOINTS_0/WEIGHTS_0 count here: three.js reads no more.
import * as THREE from 'three';
import { GLTFLoader } from 'three/addons/loaders/GLTFLoader.js';

const GLB_MAGIC = 0x46546c67; // "glTF"
const JSON_CHUNK = 0x4e4f534a; // "JSON"

// Node has no DOM to decode images with, and positions do not depend on materials, so the GLB is
// re-packed with its JSON chunk stripped of images, textures, samplers and materials (and every
// reference to them) before three.js sees it. The BIN chunk is copied unchanged.
function withoutMaterials(glb) {
  const view = new DataView(glb.buffer, glb.byteOffset, glb.byteLength);
  const jsonLength = view.getUint32(12, true);
  if (view.getUint32(0, true) !== GLB_MAGIC || view.getUint32(16, true) !== JSON_CHUNK) {
    throw new Error('not a GLB with a JSON chunk first');
  }
  const json = JSON.parse(new TextDecoder().decode(glb.subarray(20, 20 + jsonLength)));
  for (const key of ['images', 'textures', 'samplers', 'materials']) delete json[key];
  for (const mesh of json.meshes ?? []) {
    for (const primitive of mesh.primitives) delete primitive.material;
  }
  const encoded = new TextEncoder().encode(JSON.stringify(json));
  const jsonBytes = new Uint8Array(Math.ceil(encoded.length / 4) * 4).fill(0x20); // space padding
  jsonBytes.set(encoded);
  const rest = glb.subarray(20 + jsonLength); // the BIN chunk, header included, if any
  const out = new Uint8Array(20 + jsonBytes.length + rest.length);
  const outView = new DataView(out.buffer);
  outView.setUint32(0, GLB_MAGIC, true);
  outView.setUint32(4, 2, true);
  outView.setUint32(8, out.length, true);
  outView.setUint32(12, jsonBytes.length, true);
  outView.setUint32(16, JSON_CHUNK, true);
  out.set(jsonBytes, 20);
  out.set(rest, 20 + jsonBytes.length);
  return out.buffer;
}

export async function openThree(glb) {
  const gltf = await new Promise((resolve, reject) =>
    new GLTFLoader().parse(withoutMaterials(glb), '', resolve, reject));
  const { scene, parser } = gltf;
  // glTF mesh i is the one scene object that parser.associations maps back to mesh i.
  const objects = (parser.json.meshes ?? []).map((def, i) => {
    if (def.primitives.length !== 1) {
      throw new Error(`mesh ${i} has ${def.primitives.length} primitives, expected 1`);
    }
    const found = [];
    scene.traverse((o) => {
      if (o.isMesh && parser.associations.get(o)?.meshes === i) found.push(o);
    });
    if (found.length !== 1) throw new Error(`mesh ${i} is in the scene ${found.length} times, expected once`);
    return found[0];
  });
  // The mixer writes into the scene's objects: every sample starts again from the file's TRS.
  const rest = [];
  scene.traverse((o) => rest.push([o, o.position.clone(), o.quaternion.clone(), o.scale.clone()]));

  return {
    meshes: objects.map((o, i) => ({
      name: parser.json.meshes[i].name,
      vertexCount: o.geometry.attributes.position.count,
    })),

    positions(sample) {
      for (const [o, p, q, s] of rest) {
        o.position.copy(p);
        o.quaternion.copy(q);
        o.scale.copy(s);
      }
      if (sample.animation !== null) {
        const clips = gltf.animations.filter((c) => c.name === sample.animation);
        if (clips.length !== 1) {
          throw new Error(`${clips.length} animations named ${JSON.stringify(sample.animation)}, expected 1`);
        }
        const action = new THREE.AnimationMixer(scene).clipAction(clips[0]);
        // Play once and hold the last key, so a sample at the clip's duration gives that key.
        action.setLoop(THREE.LoopOnce);
        action.clampWhenFinished = true;
        action.play();
        action.getMixer().setTime(sample.time);
      }
      scene.updateMatrixWorld(true);
      // getVertexPosition reads the bones' matrixWorld directly, so skeleton.update() is not needed.
      const v = new THREE.Vector3();
      return objects.map((o) => {
        const count = o.geometry.attributes.position.count;
        const out = new Float64Array(count * 3);
        for (let i = 0; i < count; i++) {
          o.getVertexPosition(i, v).applyMatrix4(o.matrixWorld);
          out[i * 3] = v.x;
          out[i * 3 + 1] = v.y;
          out[i * 3 + 2] = v.z;
        }
        return out;
      });
    },
  };
}
