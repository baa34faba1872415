// The built page (dist/), in Debian's Chromium driven headless by playwright-core, off the
// network: corpus files dropped on it or picked as a folder are drawn where ossa's own skinned
// vertices project (±2 px), move when the scene or the time changes, the 1998 colonel dressed
// from his .msh parts shows his textures, a hostile file shows ossa's error and the next good
// file still loads, and a downloaded .glb passes Khronos' validator. Screenshots go to
// target/web/ (never committed).
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { pathToFileURL } from 'node:url';

import { validateBytes } from 'gltf-validator';
import { chromium } from 'playwright-core';

import { load } from '../node.js';
import { serve } from '../viewer/serve.mjs';
import { corpus, noCorpus, repo, web } from '../test/helpers.mjs';

const executablePath = process.env.OSSA_CHROMIUM ?? '/usr/bin/chromium';
const page = join(web, 'dist', 'index.html');
const noBrowser = !existsSync(executablePath)
  ? `no Chromium at ${executablePath} (apt-get install chromium)`
  : !existsSync(page)
    ? `the page is not built (${page}): run web/build.sh`
    : undefined;
if (noBrowser) {
  if (process.env.OSSA_REQUIRE_INTEROP) throw new Error(`OSSA_REQUIRE_INTEROP is set but ${noBrowser}`);
  console.log(`skipping the browser tests: ${noBrowser}`);
}
const skip = noBrowser ?? noCorpus;
const shots = join(repo, 'target', 'web');

let context;
let profile;
/** Every request the page made that was not for its own files. */
const offsite = [];

before(async () => {
  if (skip) return;
  mkdirSync(shots, { recursive: true });
  profile = mkdtempSync(join(tmpdir(), 'ossa-chromium-'));
  context = await chromium.launchPersistentContext(profile, {
    executablePath,
    headless: true,
    viewport: { width: 1200, height: 720 },
    acceptDownloads: true,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
  context.on('request', (r) => {
    if (!/^(file|data|blob):/.test(r.url()) && !r.url().startsWith('http://127.0.0.1:')) offsite.push(r.url());
  });
});

after(async () => {
  await context?.close();
  if (profile) rmSync(profile, { recursive: true, force: true });
});

/** A new tab with the page, and its errors collected. */
async function open(url = pathToFileURL(page).href) {
  const tab = await context.newPage();
  const errors = [];
  tab.on('pageerror', (e) => errors.push(e.message));
  await tab.goto(url);
  await tab.waitForFunction(() => window.ossaViewer);
  tab.errors = errors;
  return tab;
}

const viewerState = (tab) => tab.evaluate(() => window.ossaViewer.state());

/** Waits for a load after `action`, then for the picture drawn after it. */
async function loaded(tab, action) {
  const before = (await viewerState(tab)).loads;
  await action();
  await tab.waitForFunction((n) => window.ossaViewer.state().loads > n, before, { timeout: 60000 });
  await drawn(tab);
  return viewerState(tab);
}

/** Waits until what changed before now is drawn: the page draws in its animation frames, so
 * two of them later it is. */
async function drawn(tab) {
  await tab.evaluate(() => new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done))));
}

/** Drops files (path -> bytes) on the page, as a person dropping them from a file manager. */
async function drop(tab, files) {
  const list = [...files].map(([name, bytes]) => [name, Buffer.from(bytes).toString('base64')]);
  await tab.evaluate((list) => {
    const transfer = new DataTransfer();
    for (const [name, b64] of list) {
      const bytes = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
      transfer.items.add(new File([bytes], name));
    }
    const stage = document.getElementById('stage');
    stage.dispatchEvent(new DragEvent('dragover', { dataTransfer: transfer, bubbles: true, cancelable: true }));
    stage.dispatchEvent(new DragEvent('drop', { dataTransfer: transfer, bubbles: true, cancelable: true }));
  }, list);
}

/** The canvas's pixels: the box of those unlike the background (its corner's colour), how
 * many distinct colours they hold, and a hash of them all. */
function pixels(tab) {
  return tab.evaluate(() => {
    const c = document.getElementById('view');
    const t = document.createElement('canvas');
    t.width = c.width;
    t.height = c.height;
    const g = t.getContext('2d');
    g.drawImage(c, 0, 0);
    const { data } = g.getImageData(0, 0, t.width, t.height);
    const bg = [data[0], data[1], data[2]];
    let [x0, y0, x1, y1] = [Infinity, Infinity, -Infinity, -Infinity];
    const colours = new Set();
    let hash = 0;
    for (let y = 0; y < t.height; y++) {
      for (let x = 0; x < t.width; x++) {
        const i = (y * t.width + x) * 4;
        hash = (Math.imul(hash, 31) + data[i] * 65536 + data[i + 1] * 256 + data[i + 2]) | 0;
        if (Math.abs(data[i] - bg[0]) + Math.abs(data[i + 1] - bg[1]) + Math.abs(data[i + 2] - bg[2]) <= 6) continue;
        colours.add((data[i] << 16) | (data[i + 1] << 8) | data[i + 2]);
        x0 = Math.min(x0, x);
        y0 = Math.min(y0, y);
        x1 = Math.max(x1, x);
        y1 = Math.max(y1, y);
      }
    }
    return { box: [x0, y0, x1, y1], colours: colours.size, hash, width: t.width, height: t.height };
  });
}

/** The box of pixels ossa's own skinned vertices (the package under node, the same files and
 * load options) project to with the page's camera. */
function projectedBox(files, s) {
  const model = load(files, s.path, s.options.suit ? s.options : { ...s.options, suit: undefined });
  try {
    const pose = s.info.scenes.length ? model.pose({ scene: s.scene, time: s.time }) : model.pose(0);
    const [w, vp] = [s.world, s.viewProjection];
    const { width, height } = s.canvas;
    let [x0, y0, x1, y1] = [Infinity, Infinity, -Infinity, -Infinity];
    for (const { positions } of model.skin(pose, { normals: false })) {
      for (let i = 0; i < positions.length; i += 3) {
        const [x, y, z] = [positions[i], positions[i + 1], positions[i + 2]];
        // Column-major 4x4s: world, then view-projection.
        const p = [0, 1, 2].map((r) => w[r] * x + w[4 + r] * y + w[8 + r] * z + w[12 + r]);
        const c = [0, 1, 3].map((r) => vp[r] * p[0] + vp[4 + r] * p[1] + vp[8 + r] * p[2] + vp[12 + r]);
        const px = ((c[0] / c[2] + 1) / 2) * width;
        const py = ((1 - c[1] / c[2]) / 2) * height;
        x0 = Math.min(x0, px);
        y0 = Math.min(y0, py);
        x1 = Math.max(x1, px);
        y1 = Math.max(y1, py);
      }
    }
    return [x0, y0, x1, y1];
  } finally {
    model.free();
  }
}

/** The drawn pixels cover the projected box (cut to the canvas), to within 2 px on each side. */
function covers(drawnBox, projected, canvas, what) {
  const [x0, y0, x1, y1] = projected;
  const cut = (v, most) => Math.min(Math.max(v, 0), most);
  const want = [
    cut(Math.floor(x0), canvas.width - 1),
    cut(Math.floor(y0), canvas.height - 1),
    cut(Math.ceil(x1) - 1, canvas.width - 1),
    cut(Math.ceil(y1) - 1, canvas.height - 1),
  ];
  drawnBox.forEach((v, k) => {
    assert.ok(Math.abs(v - want[k]) <= 2, `${what}: drawn box ${drawnBox}, ossa's vertices project to ${projected.map((x) => x.toFixed(1))}`);
  });
}

const read = (p) => new Uint8Array(readFileSync(join(corpus, p)));

test('a dropped DPM is drawn where ossa skins it, and moves with the scene and the time', { skip }, async () => {
  const files = new Map([
    ['xon_zombie.dpm', read('dpm/xon_zombie.dpm')],
    ['xon_zombie.dpm.framegroups', read('dpm/xon_zombie.dpm.framegroups')],
  ]);
  const tab = await open();
  let s = await loaded(tab, () => drop(tab, files));
  assert.equal(s.error, null);
  assert.equal(s.path, 'xon_zombie.dpm');
  const native = load(files, 'xon_zombie.dpm');
  assert.deepEqual(s.info.scenes.map((x) => x.name), native.scenes.map((x) => x.name));
  native.free();
  await tab.evaluate(() => window.ossaViewer.pause());
  const pictures = new Map();
  for (const [scene, time] of [[1, 0.1], [1, 0.45], [9, 1.5]]) {
    await tab.selectOption('#scene', `${scene}`);
    await tab.locator('#time').fill(`${time}`);
    await drawn(tab);
    s = await viewerState(tab);
    assert.deepEqual([s.scene, s.time, s.playing], [scene, time, false]);
    const p = await pixels(tab);
    covers(p.box, projectedBox(files, s), s.canvas, `scene ${scene} at ${time} s`);
    pictures.set(`${scene}:${time}`, p.hash);
    await tab.locator('#view').screenshot({ path: join(shots, `zombie-${scene}-${time}.png`) });
  }
  assert.equal(new Set(pictures.values()).size, 3, 'each scene and time gives its own picture');
  // The bones overlay draws over the model.
  const plain = await pixels(tab);
  await tab.check('#bones');
  await drawn(tab);
  assert.notEqual((await pixels(tab)).hash, plain.hash);
  assert.deepEqual(tab.errors, []);
  await tab.close();
});

test('the 1998 colonel, picked as a folder and dressed from his .msh parts, shows his textures and greets', { skip }, async () => {
  const tab = await open();
  await loaded(tab, () => tab.setInputFiles('#pick-folder', join(corpus, 'sims/proto1998')));
  await loaded(tab, () => tab.selectOption('#model', 'proto1998/colonelsuit.CMX'));
  let s = await viewerState(tab);
  assert.equal(s.options.suit, 'colonel', 'the suit the file holds is offered and worn');
  s = await loaded(tab, () => tab.check('#skills input[value="proto1998/adult-greet01.cmx"]'));
  assert.equal(s.error, null);
  assert.ok(s.info.meshes.length > 20 && s.info.meshes.every((m) => /\.msh$/i.test(m.file)));
  assert.ok(s.textured >= s.info.meshes.length - 2, `${s.textured} meshes textured`);
  const greet = s.info.scenes.findIndex((x) => /greet01/i.test(x.name));
  assert.ok(greet >= 0 && s.info.scenes[greet].frameCount > 1);
  await tab.evaluate(() => window.ossaViewer.pause());
  await tab.selectOption('#scene', `${greet}`);
  await tab.locator('#time').fill('0.8');
  await drawn(tab);
  s = await viewerState(tab);
  // ossa's skinning of the same files under node, through the page's camera.
  const folder = new Map();
  const root = join(corpus, 'sims');
  for (const [path, bytes] of (await import('../test/helpers.mjs')).filesOf(root, (p) => p.startsWith('proto1998/'))) folder.set(path, bytes);
  const textured = await pixels(tab);
  covers(textured.box, projectedBox(folder, s), s.canvas, 'the colonel greeting');
  await tab.locator('#view').screenshot({ path: join(shots, 'colonel-1998.png') });
  await tab.uncheck('#textures');
  await drawn(tab);
  const flat = await pixels(tab);
  assert.notEqual(flat.hash, textured.hash, 'textures change the picture');
  assert.ok(textured.colours > 2 * flat.colours, `${textured.colours} colours textured, ${flat.colours} without`);
  await tab.check('#textures');
  await drawn(tab);
  await tab.screenshot({ path: join(shots, 'viewer.png') });
  assert.deepEqual(tab.errors, []);
  await tab.close();
});

test('a hostile file shows ossa\'s error as ossa words it, and the next good file still loads', { skip }, async () => {
  const tab = await open();
  const hostile = new Map([['asp_InvalidMeshOffset.iqm', read('iqm/asp_InvalidMeshOffset.iqm')]]);
  let s = await loaded(tab, () => drop(tab, hostile));
  let expected;
  try {
    load(hostile, 'asp_InvalidMeshOffset.iqm');
  } catch (e) {
    expected = `${e.codeName}: ${e.message}`;
  }
  assert.ok(expected);
  assert.equal(s.loaded, false);
  assert.equal(s.error, expected);
  assert.equal(await tab.locator('#error').innerText(), expected);
  const good = new Map([
    ['lg_box.iqm', read('iqm/lg_box.iqm')],
    ['lg_box.png', read('iqm/lg_box.png')],
  ]);
  s = await loaded(tab, () => drop(tab, good));
  assert.equal(s.loaded, true);
  assert.equal(s.error, null);
  assert.equal(await tab.locator('#error').isHidden(), true);
  const p = await pixels(tab);
  covers(p.box, projectedBox(good, s), s.canvas, 'the box after the hostile file');
  // A skeleton alone is shown by its bones, framed by its joints.
  s = await loaded(tab, () => drop(tab, new Map([['adult-skeleton.cmx', read('sims/so_adult-skeleton.cmx')]])));
  assert.deepEqual([s.loaded, s.info.counts.vertices > 0, await tab.isChecked('#bones')], [true, false, true]);
  const bones = await pixels(tab);
  assert.ok(bones.box[3] - bones.box[1] > s.canvas.height / 3, `the skeleton drawn ${bones.box}`);
  assert.deepEqual(tab.errors, []);
  await tab.close();
});

test('downloads: the .glb passes the validator, the .iqm loads again; served over HTTP too', { skip }, async () => {
  const server = await serve(0);
  try {
    const tab = await open(`http://127.0.0.1:${server.address().port}/`);
    const files = new Map([
      ['wsw05sdk_monada_tris.skm', read('skm/wsw05sdk_monada_tris.skm')],
      ['wsw05sdk_monada_tris.skp', read('skm/wsw05sdk_monada_tris.skp')],
    ]);
    const s = await loaded(tab, () => drop(tab, files));
    assert.equal(s.error, null);
    const save = async (format) => {
      await tab.selectOption('#format', format);
      const [download] = await Promise.all([tab.waitForEvent('download'), tab.click('#download')]);
      return [download.suggestedFilename(), new Uint8Array(readFileSync(await download.path()))];
    };
    const [glbName, glb] = await save('glb');
    assert.equal(glbName, 'wsw05sdk_monada_tris.glb');
    const report = await validateBytes(glb, { uri: glbName, format: 'glb', maxIssues: 0, writeTimestamp: false });
    assert.equal(report.issues.numErrors, 0, JSON.stringify(report.issues.messages.slice(0, 5)));
    const model = load(files, 'wsw05sdk_monada_tris.skm');
    assert.ok(Buffer.from(glb).equals(Buffer.from(model.toGlb())), 'the page writes what the package writes');
    const [iqmName, iqm] = await save('iqm');
    assert.equal(iqmName, 'wsw05sdk_monada_tris.iqm');
    const again = load({ [iqmName]: iqm }, iqmName);
    assert.deepEqual([again.counts.bones, again.counts.vertices, again.scenes.length], [model.counts.bones, model.counts.vertices, model.scenes.length]);
    again.free();
    // For an engine, the IQM and its sidecars, each a download: what the package writes.
    assert.ok(await tab.isVisible('#engine'));
    await tab.selectOption('#engine', 'fte');
    await tab.check('#sidecars');
    const downloads = [];
    const got = new Promise((done) => {
      tab.on('download', async (d) => {
        downloads.push([d.suggestedFilename(), new Uint8Array(readFileSync(await d.path()))]);
        if (downloads.length === 2) done();
      });
    });
    await tab.click('#download');
    await got;
    const want = model.saveFiles('iqm', { engine: 'fte', sidecars: true, maxInfluences: 0, skinOrder: false, bakeScale: false });
    // Saved as they arrive, which need not be the order they were offered in.
    const byName = new Map(downloads);
    assert.deepEqual([...byName.keys()].sort(), ['wsw05sdk_monada_tris.iqm', 'wsw05sdk_monada_tris.iqm.framegroups']);
    for (const f of want) assert.ok(Buffer.from(byName.get(f.name)).equals(Buffer.from(f.bytes)), f.name);
    assert.match(await tab.textContent('#status'), /IQM for FTE, \d+ bytes; wsw05sdk_monada_tris\.iqm\.framegroups \(\d+ scenes?\)/);
    model.free();
    assert.deepEqual(tab.errors, []);
    await tab.close();
  } finally {
    server.close();
  }
});

test('nothing was fetched from any other host', { skip }, () => {
  assert.deepEqual(offsite, []);
});
