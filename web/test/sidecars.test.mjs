// The files a model refers to are found among the files given, by the library's own rules, as
// the native CLI finds them beside the model on disk: a DPM's .framegroups, an SKM's SKP (a
// LOD's its base's), an IQM's iqm.cfg and its iqmanim files, a Sims character's suit, meshes,
// skills, CFPs and .bin numbers and textures. What is missing is refused as natively.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { test } from 'node:test';

import { ErrorCode, OssaError, characterFile, load } from '../node.js';
import { cliInfo, cliLine, corpus, filesOf, noCorpus, noNative } from './helpers.mjs';

const skip = noCorpus ?? noNative();
const read = (p) => new Uint8Array(readFileSync(join(corpus, p)));

/** `files` written into a new directory, for the CLI; removed after `f`. */
function onDisk(files, f) {
  const dir = mkdtempSync(join(tmpdir(), 'ossa-web-'));
  try {
    for (const [path, bytes] of Object.entries(files)) {
      mkdirSync(join(dir, dirname(path)), { recursive: true });
      writeFileSync(join(dir, path), bytes);
    }
    return f(dir);
  } finally {
    rmSync(dir, { recursive: true });
  }
}

const sceneRows = (scenes) => scenes.map((s) => [s.name, s.firstFrame ?? s.first_frame, s.frameCount ?? s.frame_count, s.fps, s.looping]);

test('a DPM takes its scenes from its .framegroups, names and all', { skip }, () => {
  const dpm = read('dpm/xon_zombie.dpm');
  const alone = load({ 'xon_zombie.dpm': dpm }, 'xon_zombie.dpm');
  const frames = alone.counts.frames;
  // Without one every frame is a scene of its own, named after the frame.
  assert.equal(alone.scenes.length, frames);
  alone.free();
  const named = '1 56 30 1 attackleap\n57 41 60 1 "attack run"\n// a comment\n98 41 60 0 attackrun2\n';
  const files = { 'models/xon_zombie.dpm': dpm, 'models/xon_zombie.dpm.framegroups': new TextEncoder().encode(named) };
  const model = load(files, 'models/xon_zombie.dpm');
  assert.deepEqual(
    sceneRows(model.scenes),
    [
      ['attackleap', 1, 56, 30, true],
      ['attack run', 57, 41, 60, true],
      ['attackrun2', 98, 41, 60, false],
    ],
  );
  onDisk(files, (dir) => {
    const native = cliInfo(join(dir, 'models/xon_zombie.dpm')).info;
    assert.deepEqual(sceneRows(model.scenes), sceneRows(native.animations));
  });
  model.free();
  // The corpus's own, beside it in a dropped folder.
  const corpusOne = load(filesOf(join(corpus, 'dpm')), 'xon_zombie.dpm');
  const native = cliInfo(join(corpus, 'dpm/xon_zombie.dpm')).info;
  assert.ok(native.animations.length > 1 && native.animations.length < frames);
  assert.deepEqual(sceneRows(corpusOne.scenes), sceneRows(native.animations));
  // groupified_1_anim: frames 57 to 97 at 60 a second; half a second in is frame 87.
  assert.deepEqual(corpusOne.sceneBlend('groupified_1_anim', 0.5).filter((b) => b.weight > 0), [{ frame: 87, weight: 1 }]);
  corpusOne.free();
});

test('an SKM finds its SKP (a LOD its base model\'s), and says which files it tried when there is none', { skip }, () => {
  const skm = read('skm/wsw05sdk_monada_tris_2.skm');
  const skp = read('skm/wsw05sdk_monada_tris.skp');
  const lod = load({ 'tris_2.skm': skm, 'tris.skp': skp }, 'tris_2.skm');
  assert.equal(lod.counts.bones, 27);
  assert.ok(lod.scenes.length > 0);
  lod.free();
  const files = { 'tris_2.skm': skm };
  let refused;
  try {
    load(files, 'tris_2.skm');
  } catch (e) {
    refused = e;
  }
  assert.ok(refused instanceof OssaError);
  assert.equal(refused.code, ErrorCode.NOT_FOUND);
  onDisk(files, (dir) => {
    const file = join(dir, 'tris_2.skm');
    assert.equal(cliLine(file, refused), cliInfo(file).stderr);
  });
});

test('meshes that wait for a skeleton load unbound, and bind to one given apart', { skip }, () => {
  const files = {
    'xskin-b001mafit_01-PELVIS-BODY.skn': read('sims/so_xskin-b001mafit_01-PELVIS-BODY.skn'),
    'skeletons/adult-skeleton.cmx': read('sims/so_adult-skeleton.cmx'),
  };
  const alone = load(files, 'xskin-b001mafit_01-PELVIS-BODY.skn');
  assert.equal(alone.info.unbound, true);
  assert.equal(alone.bounds, null);
  assert.throws(() => alone.skin(alone.pose()), (e) => e instanceof OssaError);
  alone.free();
  const bound = load(files, 'xskin-b001mafit_01-PELVIS-BODY.skn', { skeleton: 'skeletons/adult-skeleton.cmx' });
  assert.equal(bound.info.unbound, false);
  assert.ok(bound.counts.bones > 20);
  assert.equal(bound.skin(bound.pose())[0].positions.length, bound.meshes[0].vertexCount * 3);
  bound.free();
});

test('an IQM takes the iqmanim files its iqm.cfg names (Red Eclipse\'s giraffe)', { skip }, () => {
  const files = {
    'head/giraffe/mesh.iqm': read('iqm/rev_giraffe_mesh.iqm'),
    'head/giraffe/anim_idle.iqm': read('iqm/rev_giraffe_anim_idle.iqm'),
    'head/giraffe/iqm.cfg': read('iqm/rev_giraffe.iqm.cfg'),
  };
  const model = load(files, 'head/giraffe/mesh.iqm');
  assert.deepEqual(model.scenes.map((s) => [s.name, s.frameCount]), [['idle', 2]]);
  onDisk(files, (dir) => {
    const native = cliInfo(join(dir, 'head/giraffe/mesh.iqm')).info;
    assert.deepEqual(sceneRows(model.scenes), sceneRows(native.animations));
    assert.deepEqual(model.warnings, native.warnings);
  });
  model.free();
});

test('the Sims 1998 colonel dresses from his .msh parts, plays a .bin skill and finds his textures', { skip }, () => {
  const dir = join(corpus, 'sims/proto1998');
  const model = load(filesOf(dir), 'colonelsuit.CMX', { suit: 'colonel', skills: ['adult-greet01.cmx'] });
  try {
    const suit = model.suits.find((s) => s.name.toLowerCase() === 'colonel');
    assert.ok(suit, 'the suit is the character\'s');
    assert.equal(model.meshes.length, suit.skins.length);
    assert.ok(model.meshes.every((m) => /^xskin-colonel-.*\.msh$/i.test(m.file)), 'each mesh from its .msh');
    const greet = model.scenes.find((s) => s.name.toLowerCase().includes('greet01'));
    assert.ok(greet && greet.frameCount > 1, 'the skill plays from xskill-adult-greet01.bin');
    const textures = model.textures();
    const textured = textures.meshImages.filter((i) => i !== null).length;
    assert.ok(textured >= model.meshes.length - 2, `${textured} of ${model.meshes.length} meshes textured`);
    assert.ok(textures.images.every((im) => im.path.startsWith('Textures/')));
    const first = model.textureRgba(textures.meshImages.find((i) => i !== null));
    assert.equal(first.rgba.length, first.width * first.height * 4);
  } finally {
    model.free();
  }
});

test('a retail Sim: skeleton, suit file, mesh in another folder, skill and its CFP', { skip }, () => {
  const files = {
    'adult-skeleton.cmx': read('sims/so_adult-skeleton.cmx'),
    'B001MAFit_01.cmx': read('sims/so_B001MAFit_01.cmx'),
    'skins/xskin-b001mafit_01-PELVIS-BODY.skn': read('sims/so_xskin-b001mafit_01-PELVIS-BODY.skn'),
    'adult-idle1.cmx': read('sims/so_adult-idle1.cmx'),
    'xskill-A2O-idle1.cfp': read('sims/so_xskill-A2O-idle1.cfp'),
  };
  const model = load(files, 'adult-skeleton.cmx', { suit: 'b001mafit_01', skills: ['adult-idle1.cmx'] });
  try {
    assert.deepEqual(model.meshes.map((m) => m.file), ['skins/xskin-b001mafit_01-PELVIS-BODY.skn']);
    assert.ok(model.scenes.some((s) => s.frameCount > 1));
    // The CFP is read beside the skill file: without it the skill is refused, naming it.
    const { 'xskill-A2O-idle1.cfp': _, ...noCfp } = files;
    let refused;
    try {
      load(noCfp, 'adult-skeleton.cmx', { suit: 'b001mafit_01', skills: ['adult-idle1.cmx'] });
    } catch (e) {
      refused = e;
    }
    assert.equal(refused?.code, ErrorCode.NOT_FOUND);
    assert.match(refused.message, /xskill-A2O-idle1\.cfp/);
  } finally {
    model.free();
  }
});

test('a Sims character file tells its skeletons, suits and skills without a model being made', { skip }, () => {
  const colonel = characterFile(read('sims/proto1998/colonelsuit.CMX'));
  assert.equal(colonel.version, 200);
  assert.equal(colonel.skeletons.length, 1);
  assert.deepEqual(colonel.suits.map((s) => s.name.toLowerCase()), ['colonel']);
  assert.ok(colonel.suits[0].skins.every((k) => k.mesh && k.bone));
  const greet = characterFile(read('sims/proto1998/adult-greet01.cmx'));
  assert.ok(greet.skills.some((s) => /greet01/i.test(s.animation)));
  const bcf = characterFile(read('sims/olt_ross-walking-loop.cmx.bcf'));
  assert.equal(bcf.version, null);
  assert.ok(bcf.skills.length > 0);
  assert.throws(() => characterFile(new Uint8Array([1, 2, 3])), (e) => e instanceof OssaError);
});
