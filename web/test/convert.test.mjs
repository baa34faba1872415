// What the package writes is what `ossa convert` writes from the same files: the same bytes for
// glTF (textures found among the files as the CLI finds them on disk) and for every format,
// optimised as the CLI optimises; Khronos' glTF-Validator passes every GLB; and what ossa's
// software renderer draws is the same pixels as natively.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';

import { validateBytes } from 'gltf-validator';

import { load } from '../node.js';
import { cli, corpus, filesOf, native, noCorpus, noNative, sizeOf } from './helpers.mjs';

const skip = noCorpus ?? noNative();

/** [directory, model, load options, the CLI's options for them]. */
const models = [
  ['dpm', 'xon_zombie.dpm', {}, []],
  ['dpm', 'xon_spiderbot.dpm', {}, []],
  ['skm', 'wsw05sdk_monada_tris.skm', {}, []],
  ['iqm', 'asp_mrfixit.iqm', {}, []],
  ['iqm', 'raylib_guy.iqm', { anims: ['raylib_guyanim.iqm'] }, ['--anims', 'raylib_guyanim.iqm']],
  ['sims/proto1998', 'colonelsuit.CMX', { suit: 'colonel', skills: ['adult-greet01.cmx'] }, ['--suit', 'colonel', '--skills', 'adult-greet01.cmx']],
  ['gltf/blender/roundtrip/03_skinned_cylinder', '03_skinned_cylinder.gltf', {}, []],
];

/** A GLB's JSON and binary chunk. */
function glbParts(bytes) {
  const b = Buffer.from(bytes);
  const jsonLength = b.readUInt32LE(12);
  const json = JSON.parse(b.subarray(20, 20 + jsonLength).toString('utf8'));
  const binAt = 20 + jsonLength;
  const bin = binAt + 8 <= b.length ? b.subarray(binAt + 8, binAt + 8 + b.readUInt32LE(binAt)) : Buffer.alloc(0);
  return { json, bin };
}

/** Two JSON values equal, numbers within 1e-6 of their size. */
function closeJson(got, want, path) {
  if (typeof want === 'number') {
    assert.equal(typeof got, 'number', path);
    assert.ok(Math.abs(got - want) <= 1e-6 * Math.max(1, Math.abs(want)), `${path}: ${got}, natively ${want}`);
  } else if (Array.isArray(want)) {
    assert.ok(Array.isArray(got) && got.length === want.length, `${path}: length`);
    want.forEach((w, i) => closeJson(got[i], w, `${path}[${i}]`));
  } else if (want && typeof want === 'object') {
    assert.deepEqual(Object.keys(got).sort(), Object.keys(want).sort(), `${path}: keys`);
    for (const k of Object.keys(want)) closeJson(got[k], want[k], `${path}.${k}`);
  } else {
    assert.equal(got, want, path);
  }
}

/** Every frame (every 7th of long runs) of two files posed and skinned by ossa: the same to
 * within `tolerance` of the model's size; the same counts and names. */
function sameModel(got, want, ext, tolerance) {
  const a = load({ [`got.${ext}`]: got }, `got.${ext}`);
  const b = load({ [`want.${ext}`]: want }, `want.${ext}`);
  try {
    const names = (m) => [m.format, m.counts, m.bones.map((x) => x.name), m.meshes.map((x) => x.name), m.scenes.map((x) => x.name)];
    assert.deepEqual(names(a), names(b));
    const size = sizeOf(b.bounds);
    const step = b.counts.frames > 50 ? 7 : 1;
    let worst = 0;
    for (let f = 0; f < b.counts.frames; f += step) {
      const sa = a.skin(a.pose(f), { normals: false });
      const sb = b.skin(b.pose(f), { normals: false });
      sa.forEach((m, i) => {
        const w = sb[i].positions;
        for (let k = 0; k < w.length; k++) worst = Math.max(worst, Math.abs(m.positions[k] - w[k]));
      });
    }
    assert.ok(worst <= tolerance * size, `${ext}: skinned ${worst / size} of the size apart`);
    return worst / size;
  } finally {
    a.free();
    b.free();
  }
}

/** Two files the same: byte for byte, or, where the module's floats differ from the CLI's in
 * the last bits (glam's SSE2 paths natively, its scalar ones in wasm; sin and acos from Rust's
 * libm or glibc), the same model: equal structure, numbers within 1e-6 of their size, skinned
 * alike to within `tolerance` of the model's size (a format that quantises, as IQM's 16-bit
 * pose channels do, may round such a float to a neighbouring step). A GLB's JSON is held to
 * that too, and its images byte for byte. Returns how many 4-byte words differ. */
function sameFile(got, want, ext, tolerance = 1e-6) {
  const a = Buffer.from(got);
  const b = Buffer.from(want);
  if (a.equals(b)) return 0;
  let words = 0;
  for (let i = 0; i + 4 <= Math.min(a.length, b.length); i += 4) words += a.readUInt32LE(i) !== b.readUInt32LE(i);
  if (ext === 'glb') {
    const [g, w] = [glbParts(a), glbParts(b)];
    closeJson(g.json, w.json, 'glTF');
    for (const image of w.json.images ?? []) {
      const view = w.json.bufferViews[image.bufferView];
      const at = [view.byteOffset ?? 0, (view.byteOffset ?? 0) + view.byteLength];
      assert.ok(g.bin.subarray(...at).equals(w.bin.subarray(...at)), `image ${image.name ?? ''}`);
    }
  }
  sameModel(got, want, ext, tolerance);
  return words;
}

async function validate(name, bytes) {
  const report = await validateBytes(bytes, {
    uri: name,
    format: 'glb',
    maxIssues: 0,
    writeTimestamp: false,
    externalResourceFunction: (uri) => Promise.reject(`${uri}: the file must be self-contained`),
  });
  const problems = report.issues.messages
    .filter((m) => m.severity <= 1)
    .map((m) => `${m.code} at ${m.pointer ?? '(file)'}: ${m.message}`);
  assert.deepEqual(problems, [], `${name}: the validator finds problems`);
  return report;
}

const temp = mkdtempSync(join(tmpdir(), 'ossa-web-convert-'));
test.after(() => rmSync(temp, { recursive: true }));

for (const [sub, name, options, cliOptions] of models) {
  test(`written as ossa convert writes it: ${name}`, { skip }, async () => {
    const dir = join(corpus, sub);
    const model = load(filesOf(dir), name, options);
    try {
      const cliArgs = cliOptions.map((o) => (/\.(cmx|iqm)$/.test(o) ? join(dir, o) : o));
      /** The model saved as `ext` by the package and by `ossa convert`: the same file, or the
       * same refusal. */
      const both = (ext, options = {}, flags = [], tolerance = 1e-6) => {
        const out = join(temp, `${name}.${ext}`);
        let saved;
        let refused;
        try {
          saved = model.save(ext, options);
        } catch (e) {
          refused = e;
        }
        const r = spawnSync(cli, ['convert', join(dir, name), ...cliArgs, '-o', out, ...flags], {
          encoding: 'utf8',
          env: { ...process.env, OSSA_SKIN_KERNEL: 'portable' },
        });
        if (refused) {
          assert.notEqual(r.status, 0, `${ext}: the CLI writes what the package refuses: ${refused.message}`);
          assert.equal(r.stderr.trim(), `ossa: ${join(dir, name)}: ${refused.codeName}: ${refused.message}`);
          return null;
        }
        assert.equal(r.status, 0, `${ext}: ${r.stderr}`);
        const words = sameFile(saved, new Uint8Array(readFileSync(out)), ext, tolerance);
        if (words) console.log(`${name} as ${ext}: ${words} words differ from the CLI's in the last bits`);
        return saved;
      };
      const glb = both('glb');
      const report = await validate(`${name}.glb`, glb);
      if (/colonel/.test(name)) assert.ok(report.info.resources.some((r) => r.mimeType === 'image/png'), 'textures embedded');
      // IQM keeps 4 influences a vertex; DMF too; its rates are whole numbers.
      const four = model.info.maxInfluences > 4 ? [{ maxInfluences: 4 }, ['--max-influences', '4']] : [{}, []];
      const iqm = both('iqm', ...four, 1e-4);
      const again = load({ 'again.iqm': iqm }, 'again.iqm');
      assert.deepEqual(
        [again.counts.bones, again.counts.vertices, again.counts.triangles, again.scenes.map((s) => s.name)],
        [model.counts.bones, model.counts.vertices, model.counts.triangles, model.scenes.map((s) => s.name)],
      );
      again.free();
      both('dmf', ...four);
      assert.ok(model.lastSaveNotes.every((n) => typeof n === 'string'));
      both('dmf', { ...four[0], keepOrder: true }, [...four[1], '--keep-order']);
      both('dpm', { maxInfluences: 2 }, ['--max-influences', '2']);
    } finally {
      model.free();
    }
  });
}

test('IQM for an engine: the files ossa convert --engine writes, byte for byte', { skip }, () => {
  const skm = join(corpus, 'skm');
  const read = (dir, name) => new Uint8Array(readFileSync(join(dir, name)));
  // The Warsow 0.5 SDK's player laid out as the game keeps it: models/players/monada/.
  const player = new Map([
    ['monada/tris.skm', read(skm, 'wsw05sdk_monada_tris.skm')],
    ['monada/tris.skp', read(skm, 'wsw05sdk_monada_tris.skp')],
    ['monada/animation.cfg', read(skm, 'wsw05sdk_monada_animation.cfg')],
  ]);
  const players = join(temp, 'players');
  for (const [path, bytes] of player) {
    mkdirSync(join(players, path, '..'), { recursive: true });
    writeFileSync(join(players, path), bytes);
  }
  const dpm = join(corpus, 'dpm');
  for (const [files, dir, name, options, flags, names] of [
    [filesOf(dpm), dpm, 'xon_zombie.dpm', { engine: 'darkplaces' }, ['--engine', 'darkplaces'],
      ['xon_zombie.iqm', 'xon_zombie.iqm.framegroups', ...[0, 1, 2, 3].map((k) => `xon_zombie.iqm_${k}.skin`)]],
    [filesOf(dpm), dpm, 'xon_spiderbot.dpm', { engine: 'fte', sidecars: true }, ['--engine', 'fte', '--sidecars'],
      ['xon_spiderbot.iqm', 'xon_spiderbot.iqm.framegroups']],
    [player, players, 'monada/tris.skm', { engine: 'warfork' }, ['--engine', 'warfork'], ['tris.iqm', 'animation.cfg']],
    [player, players, 'monada/tris.skm', { engine: 'qfusion', player: true, sidecars: true }, ['--engine', 'qfusion', '--player', '--sidecars'],
      ['tris.iqm', 'animation.cfg']],
  ]) {
    const model = load(files, name, {});
    try {
      const saved = model.saveFiles('iqm', options);
      assert.deepEqual(saved.map((f) => f.name), names, `${name} for ${options.engine}`);
      assert.ok(model.lastSaveNotes[0].startsWith(`IQM for `), model.lastSaveNotes[0]);
      // The same files from the CLI, from the same files on disk.
      const to = join(temp, `engine-out-${options.engine}`);
      rmSync(to, { recursive: true, force: true });
      mkdirSync(to);
      const r = spawnSync(cli, ['convert', join(dir, name), '-o', join(to, names[0]), ...flags], { encoding: 'utf8' });
      assert.equal(r.status, 0, r.stderr);
      assert.deepEqual(readdirSync(to).sort(), [...names].sort());
      for (const f of saved) {
        const want = readFileSync(join(to, f.name));
        if (f.name.endsWith('.iqm')) sameFile(f.bytes, new Uint8Array(want), 'iqm', 1e-4);
        else assert.equal(Buffer.from(f.bytes).toString('utf8'), want.toString('utf8'), f.name);
      }
    } finally {
      model.free();
    }
  }
  // What the engine refuses is refused, naming the rule; the options are for IQM alone.
  const zombie = load(filesOf(join(corpus, 'dpm')), 'xon_zombie.dpm');
  try {
    assert.throws(() => zombie.saveFiles('dpm', { engine: 'fte' }), /engine, sidecars and player are for IQM output, not DPM/);
    assert.throws(() => zombie.saveFiles('iqm', { engine: 'quake' }), /unknown engine quake/);
    assert.throws(() => zombie.saveFiles('iqm', { engine: 'fte', player: true }), /player is for the engines qfusion and warfork/);
    // save() gives the model's file alone, the same bytes.
    const [first] = zombie.saveFiles('iqm', { engine: 'darkplaces' });
    assert.ok(Buffer.from(zombie.save('iqm', { engine: 'darkplaces' })).equals(Buffer.from(first.bytes)));
  } finally {
    zombie.free();
  }
});

test('a Sims character saved with its skills: the CMX and the CFPs ossa convert writes', { skip }, () => {
  const dir = join(corpus, 'sims/proto1998');
  const model = load(filesOf(dir), 'colonelsuit.CMX', { suit: 'colonel', skills: ['adult-greet01.cmx'] });
  try {
    const saved = model.saveFiles('cmx');
    const out = join(temp, 'character');
    rmSync(out, { recursive: true, force: true });
    mkdirSync(out);
    const r = spawnSync(cli, ['convert', join(dir, 'colonelsuit.CMX'), '--suit', 'colonel', '--skills', join(dir, 'adult-greet01.cmx'), '-o', join(out, saved[0].name)], { encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
    assert.deepEqual(saved.map((f) => f.name).sort(), readdirSync(out).sort());
    assert.equal(saved[0].name, 'colonelsuit.cmx');
    assert.ok(saved.length >= 2 && saved.slice(1).every((f) => f.name.endsWith('.cfp')), saved.map((f) => f.name).join());
    for (const f of saved) assert.ok(Buffer.from(f.bytes).equals(readFileSync(join(out, f.name))), f.name);
    assert.ok(model.lastSaveNotes.some((n) => / skills?, (its|their) numbers in .*\.cfp/.test(n)), model.lastSaveNotes.join('; '));
  } finally {
    model.free();
  }
});

test('ossa\'s software renderer draws the same pixels as natively, textures and all', { skip }, () => {
  for (const [sub, name, options, nativeOptions] of [
    ['dpm', 'xon_zombie.dpm', {}, []],
    ['sims/proto1998', 'colonelsuit.CMX', { suit: 'colonel' }, ['--suit', 'colonel']],
    ['iqm', 'lg_box.iqm', {}, []],
  ]) {
    const dir = join(corpus, sub);
    const model = load(filesOf(dir), name, options);
    try {
      const out = join(temp, `${name}.rgba`);
      native(dir, name, [...nativeOptions, '--render', `96x80:${out}`]);
      const picture = model.render({ width: 96, height: 80 });
      assert.equal(picture.pixels.length, 96 * 80 * 4);
      assert.ok(Buffer.from(picture.pixels).equals(readFileSync(out)), `${name}: the pixels differ`);
      const background = picture.pixels.slice(0, 4).join();
      const drawn = new Set();
      for (let i = 0; i < picture.pixels.length; i += 4) drawn.add(picture.pixels.slice(i, i + 4).join());
      assert.ok(drawn.size >= 3 && drawn.has(background), `${name}: ${drawn.size} colours`);
    } finally {
      model.free();
    }
  }
});
