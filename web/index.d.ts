// Types of the ossa package (index.js; node.js re-exports it, initialised).

/** The bytes of one file. */
export type FileBytes = Uint8Array | ArrayBuffer | ArrayBufferView;

/** Files by path: relative, `/`-separated, no `..`. */
export type Files = Map<string, FileBytes> | Record<string, FileBytes>;

/** Loads the WebAssembly module (in a browser: once, before anything else). */
export function init(source?: string | URL | Request | Response | BufferSource | WebAssembly.Module): Promise<void>;
/** Loads the WebAssembly module from its bytes, synchronously. */
export function initSync(bytes: BufferSource | WebAssembly.Module): void;

/** The OSSA_ERR_* codes of include/ossa.h. */
export const ErrorCode: Readonly<{
  NULL_ARGUMENT: 1;
  INVALID_ARGUMENT: 2;
  UNKNOWN_FORMAT: 3;
  TRUNCATED: 4;
  MALFORMED: 5;
  UNSUPPORTED: 6;
  LIMIT: 7;
  IO: 8;
  NOT_FOUND: 9;
  MISMATCH: 10;
  OUT_OF_MEMORY: 11;
  PANIC: 12;
}>;

/** An ossa error, with its code and exact message. */
export class OssaError extends Error {
  constructor(code: number, message: string, parts?: { detail?: string; file?: string; offset?: number; line?: number });
  /** ossa's number for the kind of error (ErrorCode). */
  code: number;
  /** Its C name: `OSSA_ERR_TRUNCATED`, ... */
  codeName: string;
  /** The structure and rule alone, without the file, line and offset. */
  detail: string;
  /** The file the error is in, when known. */
  file?: string;
  /** The byte of the file where it breaks the rule. */
  offset?: number;
  /** The line of a text file. */
  line?: number;
}

export interface LoadOptions {
  /** The model's format as the CLI's --format names it (dpm, skm, sims-cmx, dmf-json, ...); default: detected. */
  format?: string;
  /** Reject what the default mode tolerates and repairs. */
  strict?: boolean;
  /** The most memory one file's model may use, with the sidecars read for it; 0: the library's default. */
  maxBytes?: number;
  /** Which skeleton of a Sims file that holds several. */
  skeletonName?: string;
  /** glTF input: sample animations at this rate (0.01 to 1000; 0 automatic). */
  sampleFps?: number;
  /** A skeleton file (a path among the files) to bind meshes that wait for one to. */
  skeleton?: string;
  /** Dress a Sims character in this suit; its file and meshes are found among the files. */
  suit?: string;
  /** Sims skill files (paths among the files) whose skills become scenes. */
  skills?: string[];
  /** Animation files (paths among the files) whose scenes are added. */
  anims?: string[];
}

export interface Bone {
  name: string;
  /** An earlier bone's index, or -1. */
  parent: number;
  attachment: boolean;
  synthetic: boolean;
}

export interface MeshInfo {
  name: string;
  shader: string;
  vertexCount: number;
  triangleCount: number;
  maxInfluences: number;
  hasTexcoords: boolean;
  hasColors: boolean;
  /** The texture's v runs up the image (DMF flip_y). */
  flipV: boolean;
  /** A dressed character's mesh: the file it was read from. */
  file: string | null;
}

export interface SceneEvent {
  time: number;
  key: string;
  value: string;
  /** -1 where the skeleton has no such bone. */
  bone: number;
}

export interface Scene {
  name: string;
  firstFrame: number;
  frameCount: number;
  fps: number;
  looping: boolean;
  moving: boolean;
  distance: number;
  /** Seconds: a looping scene's until it starts again, another's until its last frame. */
  duration: number;
  events: SceneEvent[];
}

export interface Suit {
  name: string;
  type: number;
  skins: { mesh: string; bone: string }[];
}

export interface ModelInfo {
  /** The model's path among the files. */
  name: string;
  /** DPM, SKM, IQM, Sims CMX, glTF binary, ... */
  format: string;
  counts: {
    bones: number;
    meshes: number;
    vertices: number;
    triangles: number;
    frames: number;
    scenes: number;
    events: number;
    textures: number;
    materials: number;
    suits: number;
  };
  maxInfluences: number;
  upAxis: 'x' | 'y' | 'z';
  handedness: 'left' | 'right';
  /** The bind pose's bounds; null for meshes that wait for a skeleton. */
  bounds: { min: [number, number, number]; max: [number, number, number] } | null;
  /** The meshes wait for a skeleton (bind them with the `skeleton` option). */
  unbound: boolean;
  bones: Bone[];
  meshes: MeshInfo[];
  scenes: Scene[];
  suits: Suit[];
  warnings: string[];
}

/** A pose: a frame number, or what to blend. */
export type PoseOf =
  | number
  | { frame: number }
  | { scene: number | string; time?: number }
  | { frames: ArrayLike<number>; weights: ArrayLike<number> };

/** The skinning kernel: `simd128` (WebAssembly SIMD, the default) or `portable` (plain code);
 * both give the same bits. An empty string is the default. */
export type SkinKernel = 'simd128' | 'portable' | '';

export interface Skinned {
  /** 3 floats a vertex. */
  positions: Float32Array;
  /** 3 floats a vertex; null when not asked for. */
  normals: Float32Array | null;
}

export interface SaveOptions {
  /** glTF: multiply positions and translations (default 1). */
  scale?: number;
  /** Keep each vertex's N strongest influences, renormalised (0: all). */
  maxInfluences?: number;
  /** DPM, SKM, SKP, DMF, MM2: write the model's order and keep unused bones (no optimising). */
  keepOrder?: boolean;
  /** Number vertices by influence set. */
  skinOrder?: boolean;
  /** MM2: move rest-pose rotations and scales into the vertices. */
  bakeScale?: boolean;
  /** IQM: write what this engine loads, with the sidecars it reads beside the file (see
   * `saveFiles`); an IQM the engine would refuse is an error naming the rule. */
  engine?: 'darkplaces' | 'xonotic' | 'fte' | 'qfusion' | 'warfork';
  /** IQM: the sidecars even where the engine does not need them (`.framegroups`, or
   * `animation.cfg` for qfusion and Warfork). */
  sidecars?: boolean;
  /** IQM for qfusion or Warfork: a player model, `tris.iqm` with its `animation.cfg` (the
   * anims of the `animation.cfg` among the files beside the model, when there is one). */
  player?: boolean;
}

/** One file `saveFiles` wrote. */
export interface SavedFile {
  name: string;
  bytes: Uint8Array;
}

export interface RenderOptions {
  /** Bone matrices from `pose()`; else `scene` and `time`, or `frame`. */
  pose?: Float32Array;
  scene?: number | string;
  time?: number;
  frame?: number;
  /** Default 512. */
  width?: number;
  /** Default 512. */
  height?: number;
  view?: 'three-quarter' | 'front' | 'side' | 'top';
  yaw?: number;
  pitch?: number;
  /** Red, green, blue, alpha (0 to 255). */
  background?: ArrayLike<number>;
  wireframe?: boolean;
  bones?: boolean;
  antialias?: boolean;
  /** Draw the textures found among the files (default true). */
  textures?: boolean;
}

export interface TextureInfo {
  images: { name: string; path: string; width: number; height: number }[];
  /** Per mesh: its image's index, or null. */
  meshImages: (number | null)[];
  warnings: string[];
}

export class Model {
  private constructor();
  readonly info: ModelInfo;
  readonly format: string;
  readonly counts: ModelInfo['counts'];
  readonly bounds: ModelInfo['bounds'];
  readonly bones: Bone[];
  readonly meshes: MeshInfo[];
  readonly scenes: Scene[];
  readonly suits: Suit[];
  readonly warnings: string[];
  /** What the last save changed or could not keep. */
  lastSaveNotes: string[];
  sceneIndex(scene: number | string): number;
  /** Model-space bone matrices, 12 floats a bone (row-major 3x4). */
  pose(what?: PoseOf): Float32Array;
  sceneBlend(scene: number | string, time: number): { frame: number; weight: number }[];
  skin(pose: Float32Array, options: { mesh: number; normalize?: boolean; normals?: boolean; kernel?: SkinKernel }): Skinned;
  skin(pose: Float32Array, options?: { normalize?: boolean; normals?: boolean; kernel?: SkinKernel }): Skinned[];
  /** Every mesh skinned in one call, as views of the module's memory valid until the next call into ossa. */
  skinViews(pose: Float32Array, normalize?: boolean, kernel?: SkinKernel): { positions: Float32Array; normals: Float32Array }[];
  skinInto(mesh: number, pose: Float32Array, positions: Float32Array, normals?: Float32Array | null, normalize?: boolean, kernel?: SkinKernel): void;
  indices(mesh: number): Uint32Array;
  texcoords(mesh: number): Float32Array | null;
  colors(mesh: number): Uint8Array | null;
  textures(): TextureInfo;
  textureRgba(image: number): { width: number; height: number; rgba: Uint8Array } | null;
  texturePng(image: number): Uint8Array;
  save(format: string, options?: SaveOptions): Uint8Array;
  /** `save` with the files written beside the model, the model's first. */
  saveFiles(format: string, options?: SaveOptions): SavedFile[];
  toGlb(options?: SaveOptions): Uint8Array;
  render(options?: RenderOptions): { width: number; height: number; pixels: Uint8ClampedArray };
  free(): void;
}

/** Loads the model `name` from `files`, its sidecars found beside it among them. */
export function load(files: Files, name: string, options?: LoadOptions): Model;

/** What a Sims character file (CMX or BCF) holds, without loading a model. */
export function characterFile(bytes: FileBytes): {
  /** 300 or 200 for text, null for BCF. */
  version: number | null;
  skeletons: string[];
  suits: { name: string; skins: { mesh: string; bone: string }[] }[];
  skills: { name: string; animation: string }[];
};

/** The model files among `paths`, by extension, sorted. */
export function modelFiles(paths: Iterable<string>): string[];
