// ossa for JavaScript: load the skeletal models of older game engines from their files' bytes,
// pose and skin them, draw them, and write them as glTF or any format ossa writes.
//
// In a browser (or a bundle), call `await init()` once before anything else (`init(bytes)`
// with the .wasm's bytes where it cannot be fetched); under node, `import 'ossa-web'` loads
// `node.js`, which initialises it synchronously.
import rawInit, * as raw from './pkg/ossa_web.js';

let ready = false;
// The module's exports (its memory, for views of what it skins).
let exports = null;
// Set when the module trapped (a panic): its state can no longer be trusted.
let broken = null;

/** Loads the WebAssembly module: from `source` (a URL, a Response, the .wasm's bytes or a
 * compiled module), or by default from `pkg/ossa_web_bg.wasm` beside this file. */
export async function init(source) {
  if (!ready) {
    exports = await rawInit(source === undefined ? undefined : { module_or_path: source });
    ready = true;
  }
}

/** Loads the WebAssembly module from its bytes (or a compiled module), synchronously. */
export function initSync(bytes) {
  if (!ready) {
    exports = raw.initSync({ module: bytes });
    ready = true;
  }
}

/** The OSSA_ERR_* codes of include/ossa.h. */
export const ErrorCode = Object.freeze({
  NULL_ARGUMENT: 1,
  INVALID_ARGUMENT: 2,
  UNKNOWN_FORMAT: 3,
  TRUNCATED: 4,
  MALFORMED: 5,
  UNSUPPORTED: 6,
  LIMIT: 7,
  IO: 8,
  NOT_FOUND: 9,
  MISMATCH: 10,
  OUT_OF_MEMORY: 11,
  PANIC: 12,
});

const codeNames = Object.fromEntries(Object.entries(ErrorCode).map(([k, v]) => [v, `OSSA_ERR_${k}`]));

/** An ossa error: `code` is ossa's number (ErrorCode), `codeName` its C name, `message` its
 * exact text (file, structure, rule, byte offset); `detail`, `file`, `offset` and `line` are
 * its parts. */
export class OssaError extends Error {
  constructor(code, message, parts = {}) {
    super(message);
    this.name = 'OssaError';
    this.code = code;
    this.codeName = codeNames[code] ?? `OSSA_ERR_${code}`;
    this.detail = parts.detail ?? message;
    this.file = parts.file;
    this.offset = parts.offset;
    this.line = parts.line;
  }
}

/** Runs a call into the module, turning what it throws into an OssaError. */
function call(f) {
  if (!ready) {
    throw new OssaError(ErrorCode.INVALID_ARGUMENT, 'ossa is not initialised: call `await init()` first');
  }
  if (broken) throw new OssaError(ErrorCode.PANIC, broken);
  try {
    return f();
  } catch (e) {
    if (e instanceof raw.OssaFailure) {
      const error = new OssaError(e.code, e.message, {
        detail: e.detail,
        file: e.file,
        offset: e.offset,
        line: e.line,
      });
      e.free();
      throw error;
    }
    if (e instanceof WebAssembly.RuntimeError) {
      // A panic aborts the call midway; nothing the module holds can be trusted after it.
      broken = `ossa stopped on an internal error (${e.message}); load the page or the module again`;
      throw new OssaError(ErrorCode.PANIC, broken);
    }
    throw e;
  }
}

function bytesOf(data, name) {
  if (data instanceof Uint8Array) return data;
  if (data instanceof ArrayBuffer) return new Uint8Array(data);
  if (ArrayBuffer.isView(data)) return new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
  throw new OssaError(ErrorCode.INVALID_ARGUMENT, `${name}: the file's bytes must be a Uint8Array or an ArrayBuffer`);
}

function entriesOf(files) {
  if (files instanceof Map) return [...files.entries()];
  if (files && typeof files === 'object') return Object.entries(files);
  throw new OssaError(ErrorCode.INVALID_ARGUMENT, 'files must be a Map or an object of name -> bytes');
}

/** Loads the model `name` from `files` (a Map or an object of path -> Uint8Array: the model
 * and every file it may need beside it: framegroups, skins, SKP, cfg, suits, skills, CFP/BIN,
 * textures). Paths are relative and `/`-separated; sidecars are found beside the model among
 * them, and nothing else is read. Options: see `LoadOptions` in index.d.ts. */
export function load(files, name, options = {}) {
  return call(() => {
    const set = new raw.FileSet();
    try {
      for (const [path, data] of entriesOf(files)) set.add(path, bytesOf(data, path));
    } catch (e) {
      set.free();
      throw e;
    }
    // loadModel takes the set over, whether it loads or fails.
    return new Model(raw.loadModel(set, name, JSON.stringify(options)));
  });
}

/** What a Sims character file (CMX or BCF) holds: `{version, skeletons: [name], suits:
 * [{name, skins: [{mesh, bone}]}], skills: [{name, animation}]}`, without loading a model. */
export function characterFile(bytes) {
  return JSON.parse(call(() => raw.characterFile(bytesOf(bytes, 'the character file'))));
}

/** The model files among `paths` a viewer can offer, by extension: not sidecars (skeletons
 * alone as .skp, skill data, textures, framegroups). */
export function modelFiles(paths) {
  const model = /\.(dpm|skm|iqm|vvm|skn|bmf|msh|cmx|bcf|skel|mod|dmf|glb|gltf)$/i;
  return [...paths].filter((p) => model.test(p)).sort();
}

/** A loaded model. Call `free()` when done with it (or let the garbage collector). */
export class Model {
  #raw;
  #info;

  constructor(handle) {
    this.#raw = handle;
    this.#info = JSON.parse(handle.describe());
    /** Texture and save notes. */
    this.lastSaveNotes = [];
  }

  /** Everything `describe` says: format, counts, bounds, bones, meshes, scenes, suits, warnings. */
  get info() {
    return this.#info;
  }
  get format() {
    return this.#info.format;
  }
  get counts() {
    return this.#info.counts;
  }
  get bounds() {
    return this.#info.bounds;
  }
  get bones() {
    return this.#info.bones;
  }
  get meshes() {
    return this.#info.meshes;
  }
  get scenes() {
    return this.#info.scenes;
  }
  get suits() {
    return this.#info.suits;
  }
  get warnings() {
    return this.#info.warnings;
  }

  /** A scene's index, by index or by name (ASCII case ignored). */
  sceneIndex(scene) {
    const scenes = this.#info.scenes;
    if (typeof scene === 'number' && Number.isInteger(scene) && scene >= 0 && scene < scenes.length) return scene;
    if (typeof scene === 'string') {
      const i = scenes.findIndex((s) => s.name.toLowerCase() === scene.toLowerCase());
      if (i >= 0) return i;
    }
    const has = scenes.length ? `scenes ${scenes.map((s) => s.name).join(', ')}` : 'no scenes';
    throw new OssaError(ErrorCode.NOT_FOUND, `no scene ${scene}: the model has ${has}`);
  }

  /** Model-space bone matrices, 12 floats a bone (row-major 3x4, translation in floats 3, 7
   * and 11). `what`: a frame number; `{frame}`; `{scene, time}` (scene by index or name, time
   * in seconds); `{frames: [...], weights: [...]}` (a blend of up to 8 frames). Default: frame
   * 0, the bind or rest pose. */
  pose(what = 0) {
    return call(() => {
      if (typeof what === 'number') return this.#raw.poseFrames(Uint32Array.of(what), Float32Array.of(1));
      if (what.scene !== undefined) return this.#raw.poseScene(this.sceneIndex(what.scene), what.time ?? 0);
      if (what.frames !== undefined) {
        return this.#raw.poseFrames(Uint32Array.from(what.frames), Float32Array.from(what.weights));
      }
      return this.#raw.poseFrames(Uint32Array.of(what.frame ?? 0), Float32Array.of(1));
    });
  }

  /** The frames and weights a scene shows at a time: [{frame, weight}]. */
  sceneBlend(scene, time) {
    const flat = call(() => this.#raw.sceneBlend(this.sceneIndex(scene), time));
    const out = [];
    for (let i = 0; i < flat.length; i += 2) out.push({ frame: flat[i], weight: flat[i + 1] });
    return out;
  }

  /** Skins every mesh (or mesh `options.mesh` alone) at `pose` (from `pose()`): per mesh
   * `{positions, normals}`, Float32Arrays of 3 floats a vertex. `options.normalize` (default
   * true): unit normals; `options.normals` false: positions alone; `options.kernel`: the
   * skinning kernel, `'simd128'` (the default) or `'portable'`, which give the same bits. */
  skin(pose, options = {}) {
    const { mesh, normalize = true, normals = true, kernel = '' } = options;
    if (mesh !== undefined) {
      const n = this.#raw.vertexCount(mesh) * 3;
      const out = { positions: new Float32Array(n), normals: normals ? new Float32Array(n) : null };
      this.skinInto(mesh, pose, out.positions, out.normals, normalize, kernel);
      return out;
    }
    return this.skinViews(pose, normalize, kernel).map((v) => ({
      positions: v.positions.slice(),
      normals: normals ? v.normals.slice() : null,
    }));
  }

  /** Skins every mesh at `pose` in one call, without copies: per mesh `{positions, normals}`
   * as views of the module's memory, valid only until the next call into ossa (copy them
   * first: `attribute.array.set(view.positions)`). For drawing every frame. `kernel`: as
   * for `skin`. */
  skinViews(pose, normalize = true, kernel = '') {
    const at = call(() => this.#raw.skinAll(pose, normalize, kernel));
    const views = [];
    let offset = at;
    for (const m of this.#info.meshes) {
      const n = m.vertexCount * 3;
      views.push({
        positions: new Float32Array(exports.memory.buffer, offset, n),
        normals: new Float32Array(exports.memory.buffer, offset + n * 4, n),
      });
      offset += n * 8;
    }
    return views;
  }

  /** Skins mesh `mesh` at `pose` into the caller's Float32Arrays (3 floats a vertex; `normals`
   * may be null). `kernel`: as for `skin`. */
  skinInto(mesh, pose, positions, normals = null, normalize = true, kernel = '') {
    call(() => this.#raw.skinInto(mesh, pose, normalize, positions, normals ?? new Float32Array(0), kernel));
  }

  /** Mesh `mesh`'s triangles: three vertex indices each. */
  indices(mesh) {
    return call(() => this.#raw.indices(mesh));
  }
  /** Mesh `mesh`'s texture coordinates, u and v a vertex (null when it has none). */
  texcoords(mesh) {
    const t = call(() => this.#raw.texcoords(mesh));
    return t.length ? t : null;
  }
  /** Mesh `mesh`'s vertex colours, RGBA8 a vertex (null when it has none). */
  colors(mesh) {
    const c = call(() => this.#raw.colors(mesh));
    return c.length ? c : null;
  }

  /** The textures found among the files: `{images: [{name, path, width, height}], meshImages,
   * warnings}`; `meshImages[m]` is mesh m's image (or null). */
  textures() {
    return JSON.parse(call(() => this.#raw.textureInfo()));
  }
  /** Image `image` decoded: `{width, height, rgba}` (null when it did not decode). */
  textureRgba(image) {
    const info = this.textures().images[image];
    const rgba = call(() => this.#raw.textureRgba(image));
    return info && rgba.length ? { width: info.width, height: info.height, rgba } : null;
  }
  /** Image `image` as a PNG file. */
  texturePng(image) {
    return call(() => this.#raw.texturePng(image));
  }

  /** The model written as `format` (glb, gltf, iqm, dpm, skm, skp, dmf, dmf-json, skn, bmf,
   * msh, cmx, bcf, skel, mod), with `ossa convert`'s options (see `SaveOptions`). What changed
   * on the way is then in `lastSaveNotes`. */
  save(format, options = {}) {
    const bytes = call(() => this.#raw.save(format, JSON.stringify(options)));
    this.lastSaveNotes = JSON.parse(this.#raw.saveNotes());
    return bytes;
  }

  /** `save`, with the files written beside the model: `[{name, bytes}]`, the model's file first
   * (`NAME.iqm`, or `tris.iqm` for a qfusion or Warfork player model), then an engine's
   * sidecars (`NAME.iqm.framegroups`, `animation.cfg`, `NAME.iqm_0.skin`...) or a Sims
   * character's skills' CFPs, named as `ossa convert` names them beside its output. */
  saveFiles(format, options = {}) {
    const bytes = call(() => this.#raw.saveFiles(format, JSON.stringify(options)));
    this.lastSaveNotes = JSON.parse(this.#raw.saveNotes());
    let at = 0;
    return JSON.parse(this.#raw.savedFiles()).map(({ name, length }) => {
      const file = { name, bytes: bytes.subarray(at, at + length) };
      at += length;
      return file;
    });
  }

  /** The model as a binary glTF (.glb), with its textures. */
  toGlb(options = {}) {
    return this.save('glb', options);
  }

  /** The model drawn by ossa's software renderer: `{width, height, pixels}` (RGBA8, rows top
   * to bottom). The pose is `options.pose` (bone matrices), else what `options.scene` and
   * `options.time`, or `options.frame`, give (default: frame 0). See `RenderOptions`. */
  render(options = {}) {
    const { pose, scene, time, frame, width = 512, height = 512, background, ...look } = options;
    const matrices =
      pose ?? (scene !== undefined ? this.pose({ scene, time: time ?? 0 }) : this.pose({ frame: frame ?? 0 }));
    const settings = { width, height, ...look };
    if (background !== undefined) settings.background = Array.from(background);
    const pixels = call(() => this.#raw.render(matrices, JSON.stringify(settings)));
    return { width, height, pixels: new Uint8ClampedArray(pixels.buffer, pixels.byteOffset, pixels.length) };
  }

  /** Releases the model's memory in the module. */
  free() {
    if (this.#raw) {
      this.#raw.free();
      this.#raw = null;
    }
  }
}
