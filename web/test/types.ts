// Checked by `tsc` (npm test): the package's types describe its use as the README shows it.
import { ErrorCode, OssaError, load, modelFiles, type LoadOptions, type Model, type SavedFile, type SkinKernel } from 'ossa-web';

const files = new Map<string, Uint8Array>([['zombie.dpm', new Uint8Array(4)]]);
const options: LoadOptions = { strict: false, maxBytes: 0, skills: [], suit: undefined };
try {
  const model: Model = load(files, 'zombie.dpm', options);
  const scene = model.scenes[0]?.name ?? 0;
  const pose: Float32Array = model.pose({ scene, time: 0.5 });
  const kernel: SkinKernel = 'simd128';
  const all = model.skin(pose, { kernel });
  const first: Float32Array = all[0].positions;
  const one = model.skin(pose, { mesh: 0, normals: false, kernel: 'portable' });
  model.skinInto(0, pose, one.positions, null, true, 'simd128');
  const count: number = one.positions.length + first.length + model.counts.vertices;
  const glb: Uint8Array = model.toGlb();
  const iqm: Uint8Array = model.save('iqm', { maxInfluences: 4 });
  const set: SavedFile[] = model.saveFiles('iqm', { engine: 'darkplaces', sidecars: true });
  console.log(set.map((f) => `${f.name} ${f.bytes.length}`));
  const picture = model.render({ width: 64, height: 64, scene, time: 0, bones: true, background: [0, 0, 0, 0] });
  const rgba: Uint8ClampedArray = picture.pixels;
  console.log(count, glb.length, iqm.length, rgba.length, model.bounds?.max[2], modelFiles(files.keys()));
  model.free();
} catch (e) {
  if (e instanceof OssaError && e.code === ErrorCode.TRUNCATED) console.log(e.codeName, e.offset);
}
