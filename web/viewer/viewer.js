// The ossa viewer: files dropped or picked are handed to ossa (WebAssembly, inside this
// bundle), which finds the model's sidecars among them, loads it and skins it every frame;
// three.js draws the skinned vertices. Nothing is fetched from anywhere.
import * as THREE from 'three';
import { OrbitControls } from 'three/examples/jsm/controls/OrbitControls.js';

import wasm from '../pkg/ossa_web_bg.wasm';
import { OssaError, characterFile, initSync, load, modelFiles } from '../index.js';

initSync(wasm);

const $ = (id) => document.getElementById(id);
const ui = {
  status: $('status'),
  model: $('model'),
  suit: $('suit'),
  skeleton: $('skeleton'),
  skills: $('skills'),
  anims: $('anims'),
  scene: $('scene'),
  play: $('play'),
  time: $('time'),
  timeLabel: $('time-label'),
  bones: $('bones'),
  wireframe: $('wireframe'),
  textures: $('textures'),
  format: $('format'),
  download: $('download'),
  error: $('error'),
  summary: $('summary'),
  boneTree: $('bone-tree'),
  meshList: $('mesh-list'),
  warnings: $('warnings'),
  stage: $('stage'),
  canvas: $('view'),
  hint: $('drop-hint'),
};

const BACKGROUND = 0x303030;

// ---------------------------------------------------------------------------------------------
// three.js: renderer, camera, lights
// ---------------------------------------------------------------------------------------------

const renderer = new THREE.WebGLRenderer({ canvas: ui.canvas, antialias: true, preserveDrawingBuffer: true });
renderer.setPixelRatio(window.devicePixelRatio);
renderer.setClearColor(BACKGROUND);
const scene3 = new THREE.Scene();
const camera = new THREE.PerspectiveCamera(35, 1, 0.01, 1000);
const controls = new OrbitControls(camera, ui.canvas);
scene3.add(new THREE.AmbientLight(0xffffff, 0.9));
const light = new THREE.DirectionalLight(0xffffff, 1.6);
light.position.set(0.3, 0.5, 1);
camera.add(light);
scene3.add(camera);

function resize() {
  const { clientWidth: w, clientHeight: h } = ui.stage;
  if (ui.canvas.width !== Math.floor(w * renderer.getPixelRatio()) || ui.canvas.height !== Math.floor(h * renderer.getPixelRatio())) {
    renderer.setSize(w, h, false);
    camera.aspect = w / Math.max(h, 1);
    camera.updateProjectionMatrix();
    state.dirty = true;
  }
}

// ---------------------------------------------------------------------------------------------
// State
// ---------------------------------------------------------------------------------------------

const state = {
  /** path -> Uint8Array of every file given. */
  files: new Map(),
  /** path -> what characterFile says of each Sims character file. */
  characters: new Map(),
  model: null,
  path: '',
  /** The three.js group the model's meshes hang in, and per mesh its geometry's buffers. */
  group: null,
  meshes: [],
  boneLines: null,
  scene: 0,
  time: 0,
  playing: true,
  /** The picture needs drawing again (a new pose or view). */
  dirty: true,
  last: 0,
  /** Frames drawn, for tests. */
  frames: 0,
  /** Bumped at every load that ends (well or not), for tests. */
  loads: 0,
};

function showError(e) {
  const text = e instanceof OssaError ? `${e.codeName}: ${e.message}` : `${e?.message ?? e}`;
  ui.error.textContent = text;
  ui.error.hidden = false;
  return text;
}

function clearError() {
  ui.error.textContent = '';
  ui.error.hidden = true;
}

// ---------------------------------------------------------------------------------------------
// Files in: drop, pick
// ---------------------------------------------------------------------------------------------

/** Every file under a dropped entry, with its path. */
async function entryFiles(entry, prefix, out) {
  if (entry.isFile) {
    const file = await new Promise((ok, fail) => entry.file(ok, fail));
    out.push([prefix + entry.name, file]);
  } else if (entry.isDirectory) {
    const reader = entry.createReader();
    for (;;) {
      const batch = await new Promise((ok, fail) => reader.readEntries(ok, fail));
      if (!batch.length) break;
      for (const e of batch) await entryFiles(e, `${prefix}${entry.name}/`, out);
    }
  }
}

async function openFiles(list) {
  const files = new Map();
  for (const [path, file] of list) files.set(path, new Uint8Array(await file.arrayBuffer()));
  useFiles(files);
}

ui.stage.addEventListener('dragover', (e) => {
  e.preventDefault();
  ui.stage.classList.add('dragging');
});
ui.stage.addEventListener('dragleave', () => ui.stage.classList.remove('dragging'));
ui.stage.addEventListener('drop', async (e) => {
  e.preventDefault();
  ui.stage.classList.remove('dragging');
  const list = [];
  const entries = [...(e.dataTransfer.items ?? [])].map((i) => i.webkitGetAsEntry?.()).filter(Boolean);
  if (entries.length) {
    for (const entry of entries) await entryFiles(entry, '', list);
  } else {
    for (const f of e.dataTransfer.files) list.push([f.name, f]);
  }
  await openFiles(list);
});
for (const input of [$('pick-files'), $('pick-folder')]) {
  input.addEventListener('change', async () => {
    await openFiles([...input.files].map((f) => [f.webkitRelativePath || f.name, f]));
    input.value = '';
  });
}

// ---------------------------------------------------------------------------------------------
// Choosing what to load among the files
// ---------------------------------------------------------------------------------------------

const stem = (p) => p.split('/').pop().replace(/\.(cmx\.bcf|[^.]+)$/i, '');
const isCharacter = (p) => /\.(cmx|bcf)$/i.test(p);

function option(select, value, text, selected = false) {
  const o = document.createElement('option');
  o.value = value;
  o.textContent = text;
  o.selected = selected;
  select.append(o);
}

function checkboxes(box, paths) {
  box.replaceChildren();
  for (const p of paths) {
    const label = document.createElement('label');
    const input = document.createElement('input');
    input.type = 'checkbox';
    input.value = p;
    input.addEventListener('change', () => loadChosen());
    label.append(input, ` ${p}`);
    box.append(label);
  }
  box.parentElement.hidden = paths.length === 0;
}

const checked = (box) => [...box.querySelectorAll('input:checked')].map((i) => i.value);

function useFiles(files) {
  state.files = files;
  state.characters = new Map();
  for (const [path, bytes] of files) {
    if (!isCharacter(path)) continue;
    try {
      state.characters.set(path, characterFile(bytes));
    } catch {
      // Not a character file after all: it is offered as a model, and loading it will say why.
    }
  }
  const models = modelFiles(files.keys());
  ui.model.replaceChildren();
  // The one to show first: a Sims file with a skeleton and suits (a character ready to
  // dress), else a file that is not a Sims skill file, else the first.
  const chars = (p) => state.characters.get(p);
  const pick =
    models.find((p) => chars(p)?.skeletons.length && chars(p)?.suits.length) ??
    models.find((p) => !chars(p) || chars(p).skeletons.length || chars(p).suits.length) ??
    models[0];
  for (const p of models) option(ui.model, p, p, p === pick);
  ui.status.textContent = `${files.size} files, ${models.length} models`;
  ui.hint.hidden = models.length > 0;
  if (!models.length) {
    clear();
    showError(new Error(`no model among the ${files.size} files (.dpm .skm .iqm .skn .bmf .msh .cmx .bcf .skel .mod .dmf .glb .gltf)`));
    state.loads++;
    return;
  }
  offerParts();
  loadChosen();
}

/** The suits, skeletons, skills and animation files that go with the chosen model. */
function offerParts() {
  const path = ui.model.value;
  const own = state.characters.get(path);
  ui.suit.replaceChildren();
  option(ui.suit, '', '(none)');
  const suits = [];
  if (own) for (const s of own.suits) suits.push(s.name);
  // Suit files: NAME.cmx holding suit NAME, which loading finds by name.
  for (const [p, c] of state.characters) {
    if (p !== path && !c.skeletons.length) for (const s of c.suits) if (s.name.toLowerCase() === stem(p).toLowerCase()) suits.push(s.name);
  }
  const uniqueSuits = [...new Set(suits)];
  uniqueSuits.forEach((s, i) => option(ui.suit, s, s, i === 0 && own?.skeletons.length > 0));
  $('suit-row').hidden = uniqueSuits.length === 0;

  ui.skeleton.replaceChildren();
  option(ui.skeleton, '', '(its own)');
  const skeletons = [...state.files.keys()].filter(
    (p) => p !== path && (/\.(skp|skel)$/i.test(p) || state.characters.get(p)?.skeletons.length),
  );
  for (const p of skeletons) option(ui.skeleton, p, p);
  $('skeleton-row').hidden = skeletons.length === 0;

  const skills = [...state.characters].filter(([p, c]) => p !== path && c.skills.length).map(([p]) => p).sort();
  checkboxes(ui.skills, own || /\.(skn|bmf|msh)$/i.test(path) ? skills : []);
  const ext = path.split('.').pop().toLowerCase();
  const anims = modelFiles(state.files.keys()).filter((p) => p !== path && p.split('.').pop().toLowerCase() === ext && !isCharacter(p));
  checkboxes(ui.anims, ['iqm', 'glb', 'gltf', 'dpm', 'dmf'].includes(ext) ? anims : []);
}

ui.model.addEventListener('change', () => {
  offerParts();
  loadChosen();
});
for (const s of [ui.suit, ui.skeleton]) s.addEventListener('change', () => loadChosen());

function loadChosen() {
  const path = ui.model.value;
  const options = {};
  if (ui.suit.value) options.suit = ui.suit.value;
  if (ui.skeleton.value) options.skeleton = ui.skeleton.value;
  const skills = checked(ui.skills);
  if (skills.length) options.skills = skills;
  const anims = checked(ui.anims);
  if (anims.length) options.anims = anims;
  clear();
  try {
    const started = performance.now();
    state.model = load(state.files, path, options);
    state.path = path;
    clearError();
    show(state.model);
    ui.status.textContent = `${path}: ${state.model.format}, loaded in ${(performance.now() - started).toFixed(0)} ms`;
  } catch (e) {
    state.model = null;
    ui.status.textContent = `${path}: not loaded`;
    showError(e);
  }
  state.loads++;
}

// ---------------------------------------------------------------------------------------------
// The model in three.js
// ---------------------------------------------------------------------------------------------

function clear() {
  if (state.group) {
    scene3.remove(state.group);
    state.group.traverse((o) => {
      o.geometry?.dispose();
      if (o.material) {
        o.material.map?.dispose();
        o.material.dispose();
      }
    });
  }
  state.model?.free();
  state.model = null;
  state.group = null;
  state.meshes = [];
  state.boneLines = null;
  ui.summary.replaceChildren();
  ui.boneTree.replaceChildren();
  ui.meshList.replaceChildren();
  ui.warnings.replaceChildren();
  ui.scene.replaceChildren();
  state.dirty = true;
}

function show(model) {
  const info = model.info;
  const group = new THREE.Group();
  // ossa keeps the file's axes; three.js looks down -z with y up.
  if (info.upAxis === 'z') group.rotation.x = -Math.PI / 2;
  else if (info.upAxis === 'x') group.rotation.z = Math.PI / 2;
  const inner = new THREE.Group();
  if (info.handedness === 'left') inner.scale.x = -1;
  group.add(inner);

  let textures = { images: [], meshImages: [], warnings: [] };
  try {
    textures = model.textures();
  } catch (e) {
    textures.warnings.push(showError(e));
  }
  const decoded = new Map();
  const textureOf = (image) => {
    if (image === null || image === undefined) return null;
    if (!decoded.has(image)) {
      const t = model.textureRgba(image);
      let texture = null;
      if (t) {
        texture = new THREE.DataTexture(t.rgba, t.width, t.height, THREE.RGBAFormat);
        texture.colorSpace = THREE.SRGBColorSpace;
        texture.wrapS = texture.wrapT = THREE.RepeatWrapping;
        texture.magFilter = THREE.LinearFilter;
        texture.minFilter = THREE.LinearMipmapLinearFilter;
        texture.generateMipmaps = true;
        texture.needsUpdate = true;
      }
      decoded.set(image, texture);
    }
    return decoded.get(image);
  };

  state.meshes = info.meshes.map((m, i) => {
    const geometry = new THREE.BufferGeometry();
    const positions = new THREE.BufferAttribute(new Float32Array(m.vertexCount * 3), 3);
    const normals = new THREE.BufferAttribute(new Float32Array(m.vertexCount * 3), 3);
    positions.setUsage(THREE.DynamicDrawUsage);
    normals.setUsage(THREE.DynamicDrawUsage);
    geometry.setAttribute('position', positions);
    geometry.setAttribute('normal', normals);
    geometry.setIndex(new THREE.BufferAttribute(model.indices(i), 1));
    const uv = model.texcoords(i);
    if (uv) {
      // ossa's v runs down the image (DMF's flip_y textures up): three.js's DataTexture puts
      // the first row at v = 0.
      if (m.flipV) for (let k = 1; k < uv.length; k += 2) uv[k] = 1 - uv[k];
      geometry.setAttribute('uv', new THREE.BufferAttribute(uv, 2));
    }
    const colors = model.colors(i);
    if (colors) geometry.setAttribute('color', new THREE.BufferAttribute(colors, 4, true));
    const map = uv ? textureOf(textures.meshImages[i]) : null;
    const material = new THREE.MeshLambertMaterial({
      color: map || colors ? 0xffffff : 0xb8b8b8,
      map,
      vertexColors: !!colors,
      side: THREE.DoubleSide,
    });
    material.userData.map = map;
    const mesh = new THREE.Mesh(geometry, material);
    mesh.frustumCulled = false;
    inner.add(mesh);
    return { mesh, positions, normals, material };
  });

  // The skeleton: a line from each joint to its parent's, drawn over everything.
  const pairs = info.bones.filter((b) => b.parent >= 0).length;
  const lines = new THREE.BufferGeometry();
  lines.setAttribute('position', new THREE.BufferAttribute(new Float32Array(Math.max(pairs, 1) * 6), 3));
  const boneLines = new THREE.LineSegments(lines, new THREE.LineBasicMaterial({ color: 0xffd700, depthTest: false }));
  const joints = new THREE.Points(
    new THREE.BufferGeometry().setAttribute('position', new THREE.BufferAttribute(new Float32Array(Math.max(info.bones.length, 1) * 3), 3)),
    new THREE.PointsMaterial({ color: 0xff4040, size: 5, sizeAttenuation: false, depthTest: false }),
  );
  boneLines.renderOrder = joints.renderOrder = 1;
  boneLines.frustumCulled = joints.frustumCulled = false;
  inner.add(boneLines, joints);
  state.boneLines = { lines: boneLines, joints };

  scene3.add(group);
  state.group = group;
  group.updateMatrixWorld(true);
  // A skeleton without meshes is framed by its joints at rest, and shown by its bones.
  const bare = info.counts.vertices === 0 && info.bones.length > 0;
  if (bare) {
    const rest = model.pose(0);
    const joints = info.bones.map((_, j) => [rest[j * 12 + 3], rest[j * 12 + 7], rest[j * 12 + 11]]);
    const min = [0, 1, 2].map((k) => Math.min(...joints.map((p) => p[k])));
    const max = [0, 1, 2].map((k) => Math.max(...joints.map((p) => p[k])));
    frame({ min, max });
  } else {
    frame(info.bounds);
  }
  if (bare) ui.bones.checked = true;

  // Scenes
  ui.scene.replaceChildren();
  if (info.scenes.length === 0) option(ui.scene, '-1', '(frame 0: no scenes)');
  info.scenes.forEach((s, i) => option(ui.scene, `${i}`, `${s.name} (${s.frameCount} frames, ${s.duration.toFixed(2)} s)`, i === 0));
  setScene(info.scenes.length ? 0 : -1);
  applyLook();
  describe(info, textures.warnings);
}

/** Puts the camera where it sees the bind pose's bounds whole. */
function frame(bounds) {
  const box = new THREE.Box3();
  if (bounds) {
    box.set(new THREE.Vector3(...bounds.min), new THREE.Vector3(...bounds.max));
    box.applyMatrix4(state.group.matrixWorld);
  } else {
    box.set(new THREE.Vector3(-1, -1, -1), new THREE.Vector3(1, 1, 1));
  }
  const center = box.getCenter(new THREE.Vector3());
  const radius = Math.max(box.getSize(new THREE.Vector3()).length() / 2, 1e-3);
  const distance = radius / Math.sin(THREE.MathUtils.degToRad(camera.fov / 2)) * 1.1;
  camera.near = distance / 100;
  camera.far = distance * 100;
  camera.position.copy(center).add(new THREE.Vector3(0.6, 0.35, 1).normalize().multiplyScalar(distance));
  camera.updateProjectionMatrix();
  controls.target.copy(center);
  controls.update();
}

function setScene(i) {
  state.scene = i;
  state.time = 0;
  const s = state.model?.scenes[i];
  ui.time.max = s ? Math.max(s.duration, 0.001) : 1;
  ui.time.disabled = !s;
  ui.play.disabled = !s;
  state.dirty = true;
}

ui.scene.addEventListener('change', () => setScene(Number(ui.scene.value)));
ui.play.addEventListener('click', () => {
  state.playing = !state.playing;
  ui.play.textContent = state.playing ? 'Pause' : 'Play';
});
ui.time.addEventListener('input', () => {
  state.playing = false;
  ui.play.textContent = 'Play';
  state.time = Number(ui.time.value);
  state.dirty = true;
});

function applyLook() {
  for (const m of state.meshes) {
    m.material.wireframe = ui.wireframe.checked;
    m.material.map = ui.textures.checked ? m.material.userData.map : null;
    m.material.needsUpdate = true;
  }
  if (state.boneLines) state.boneLines.lines.visible = state.boneLines.joints.visible = ui.bones.checked;
  state.dirty = true;
}
for (const c of [ui.bones, ui.wireframe, ui.textures]) c.addEventListener('change', applyLook);

/** The model posed at the current scene and time, skinned by ossa into the buffers. */
function pose() {
  const model = state.model;
  const s = model.scenes[state.scene];
  const matrices = s ? model.pose({ scene: state.scene, time: state.time }) : model.pose(0);
  // One call skins every mesh into the module's memory; the views are copied at once.
  model.skinViews(matrices).forEach((v, i) => {
    const m = state.meshes[i];
    m.positions.array.set(v.positions);
    m.normals.array.set(v.normals);
    m.positions.needsUpdate = true;
    m.normals.needsUpdate = true;
  });
  if (state.boneLines) {
    const line = state.boneLines.lines.geometry.attributes.position;
    const dots = state.boneLines.joints.geometry.attributes.position;
    let k = 0;
    model.bones.forEach((b, i) => {
      const at = (j) => [matrices[j * 12 + 3], matrices[j * 12 + 7], matrices[j * 12 + 11]];
      dots.array.set(at(i), i * 3);
      if (b.parent >= 0) {
        line.array.set([...at(i), ...at(b.parent)], k);
        k += 6;
      }
    });
    line.needsUpdate = dots.needsUpdate = true;
  }
  return matrices;
}

function tick(now) {
  const dt = state.last ? Math.min((now - state.last) / 1000, 0.25) : 0;
  state.last = now;
  resize();
  if (state.model) {
    const s = state.model.scenes[state.scene];
    if (s && state.playing && s.duration > 0) {
      state.time = (state.time + dt) % s.duration;
      state.dirty = true;
    }
    if (state.dirty) {
      try {
        pose();
      } catch (e) {
        showError(e);
        state.playing = false;
      }
      ui.time.value = `${state.time}`;
      ui.timeLabel.textContent = `${state.time.toFixed(2)} s`;
    }
  }
  if (state.dirty) {
    renderer.render(scene3, camera);
    state.frames++;
    state.dirty = false;
  }
  requestAnimationFrame(tick);
}
controls.addEventListener('change', () => (state.dirty = true));
requestAnimationFrame(tick);

// ---------------------------------------------------------------------------------------------
// The info panel
// ---------------------------------------------------------------------------------------------

function describe(info, textureWarnings) {
  const c = info.counts;
  const v3 = (v) => v.map((x) => x.toFixed(3)).join(', ');
  const rows = [
    ['File', info.name],
    ['Format', info.format],
    ['Bones', c.bones],
    ['Meshes', c.meshes],
    ['Vertices', c.vertices],
    ['Triangles', c.triangles],
    ['Frames', c.frames],
    ['Scenes', c.scenes],
    ['Influences', `up to ${info.maxInfluences} a vertex`],
    ['Axes', `${info.upAxis} up, ${info.handedness}-handed`],
    ['Bounds', info.bounds ? `(${v3(info.bounds.min)}) .. (${v3(info.bounds.max)})` : 'none: the meshes wait for a skeleton'],
  ];
  if (c.suits) rows.push(['Suits', info.suits.map((s) => s.name).join(', ')]);
  ui.summary.replaceChildren(
    ...rows.flatMap(([k, v]) => {
      const dt = document.createElement('dt');
      const dd = document.createElement('dd');
      dt.textContent = k;
      dd.textContent = `${v}`;
      return [dt, dd];
    }),
  );
  // The bone tree: children under their parent.
  const items = info.bones.map((b, i) => {
    const li = document.createElement('li');
    li.textContent = `${i} ${b.name}${b.attachment ? ' (attachment)' : ''}`;
    return li;
  });
  info.bones.forEach((b, i) => {
    if (b.parent < 0) {
      ui.boneTree.append(items[i]);
      return;
    }
    const parent = items[b.parent];
    let ul = parent.querySelector(':scope > ul');
    if (!ul) parent.append((ul = document.createElement('ul')));
    ul.append(items[i]);
  });
  for (const m of info.meshes) {
    const li = document.createElement('li');
    li.textContent = `${m.name || '(unnamed)'}: ${m.vertexCount} vertices, ${m.triangleCount} triangles, shader ${m.shader || '-'}`;
    ui.meshList.append(li);
  }
  for (const w of [...info.warnings, ...textureWarnings]) {
    const li = document.createElement('li');
    li.textContent = w;
    ui.warnings.append(li);
  }
}

// ---------------------------------------------------------------------------------------------
// Download
// ---------------------------------------------------------------------------------------------

ui.format.addEventListener('change', () => {
  $('scale-row').hidden = !ui.format.value.startsWith('gl');
  $('engine-rows').hidden = ui.format.value !== 'iqm';
});

/** Hands `bytes` to the browser as the download `name`. */
function offer(name, bytes) {
  const url = URL.createObjectURL(new Blob([bytes], { type: 'application/octet-stream' }));
  const a = document.createElement('a');
  a.href = url;
  a.download = name;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10000);
}

ui.download.addEventListener('click', () => {
  if (!state.model) return;
  const format = ui.format.value;
  const options = {
    maxInfluences: Number($('max-influences').value) || 0,
    keepOrder: $('keep-order').checked,
    skinOrder: $('skin-order').checked,
    bakeScale: $('bake-scale').checked,
  };
  if (format.startsWith('gl')) options.scale = Number($('scale').value) || 1;
  else if (!['dpm', 'skm', 'skp', 'dmf', 'dmf-json', 'skel', 'mod'].includes(format)) delete options.keepOrder;
  if (format === 'iqm') {
    if ($('engine').value) options.engine = $('engine').value;
    if ($('sidecars').checked) options.sidecars = true;
    if ($('player').checked) options.player = true;
  }
  try {
    // The model's file, then what goes beside it (an engine's sidecars, a character's CFPs),
    // each its own download.
    const files = state.model.saveFiles(format, options);
    for (const f of files) offer(f.name, f.bytes);
    clearError();
    const names = files.map((f) => `${f.name}: ${f.bytes.length} bytes`).join(', ');
    const notes = state.model.lastSaveNotes;
    ui.status.textContent = `${names}${notes.length ? `; ${notes.join('; ')}` : ''}`;
  } catch (e) {
    showError(e);
  }
});

// ---------------------------------------------------------------------------------------------
// For the browser tests: what the page shows, in numbers.
// ---------------------------------------------------------------------------------------------

window.ossaViewer = {
  state() {
    camera.updateMatrixWorld();
    const m = state.model;
    return {
      loads: state.loads,
      frames: state.frames,
      path: state.path,
      loaded: !!m,
      error: ui.error.hidden ? null : ui.error.textContent,
      scene: state.scene,
      time: state.time,
      playing: state.playing,
      info: m?.info ?? null,
      options: {
        suit: ui.suit.value || undefined,
        skeleton: ui.skeleton.value || undefined,
        skills: checked(ui.skills),
        anims: checked(ui.anims),
      },
      // World to clip space, column-major; and the model's world matrix.
      viewProjection: new THREE.Matrix4().multiplyMatrices(camera.projectionMatrix, camera.matrixWorldInverse).toArray(),
      world: state.meshes[0]?.mesh.matrixWorld.toArray() ?? null,
      canvas: { width: ui.canvas.width, height: ui.canvas.height },
      textured: state.meshes.filter((x) => x.material.map).length,
    };
  },
  pause() {
    state.playing = false;
    ui.play.textContent = 'Play';
  },
};
