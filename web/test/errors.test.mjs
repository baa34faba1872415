// Errors reach JavaScript as OssaError exceptions with ossa's code and its exact message: the
// same line the native CLI prints for the same bytes; and the package's own refusals (paths
// that leave the files, bad options, memory limits) keep ossa's codes.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';

import { ErrorCode, OssaError, load } from '../node.js';
import { cliInfo, cliLine, corpus, noCorpus, noNative } from './helpers.mjs';

/** The OssaError loading `bytes` as `name` throws. */
function refusal(files, name, options) {
  try {
    load(files, name, options).free();
  } catch (e) {
    assert.ok(e instanceof OssaError, `${e}`);
    assert.ok(e instanceof Error);
    return e;
  }
  assert.fail(`${name} loaded`);
}

test('a hostile file is refused with the code and line the native CLI gives', { skip: noCorpus ?? noNative() }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'ossa-web-'));
  try {
    const zombie = readFileSync(join(corpus, 'dpm/xon_zombie.dpm'));
    const hostile = [
      ['asp_InvalidMeshOffset.iqm', readFileSync(join(corpus, 'iqm/asp_InvalidMeshOffset.iqm'))],
      // Cut short inside the bone records, and a mesh offset pointed past the end.
      ['short.dpm', zombie.subarray(0, 700)],
      ['offset.dpm', Buffer.concat([zombie.subarray(0, 60), Buffer.from([0x7f, 0xff, 0xff, 0xf0]), zombie.subarray(64, 4096)])],
      ['noise.dpm', Buffer.from('not a model at all, just words'.repeat(4))],
      ['empty.dpm', Buffer.from([])],
    ];
    const codes = new Set();
    for (const [name, bytes] of hostile) {
      const file = join(dir, name);
      writeFileSync(file, bytes);
      const native = cliInfo(file);
      assert.ok(native.stderr, `the CLI loads ${name}`);
      const e = refusal({ [name]: bytes }, name);
      assert.equal(cliLine(file, e), native.stderr, name);
      assert.equal(e.codeName, native.stderr.split(': ')[2]);
      assert.equal(e.message, `${e.file ?? name}${e.line ? ` line ${e.line}` : ''}: ${e.detail}${e.offset !== undefined ? ` at byte 0x${e.offset.toString(16)}` : ''}`);
      codes.add(e.code);
    }
    assert.ok(codes.size >= 2, `codes ${[...codes]}`);
  } finally {
    rmSync(dir, { recursive: true });
  }
});

test('paths that could leave the files given are refused, and nothing outside them is read', () => {
  for (const path of ['../x.dpm', '/etc/passwd', 'a\\b.dpm', 'C:/x.dpm', '']) {
    const e = refusal({ [path]: new Uint8Array(8) }, path);
    assert.equal(e.code, ErrorCode.INVALID_ARGUMENT, path);
  }
  const missing = refusal({ 'a.dpm': new Uint8Array(8) }, 'b.dpm');
  assert.equal(missing.code, ErrorCode.NOT_FOUND);
  assert.equal(missing.message, 'the model b.dpm: no such file among the files given');
});

test('options are checked: unknown keys, formats and values are invalid arguments', () => {
  const files = { 'a.dpm': new Uint8Array(8) };
  const bad = [{ strikt: true }, { format: 'obj' }, { sampleFps: -1 }, { skeleton: 'none.skp' }];
  const codes = bad.map((o) => refusal(files, 'a.dpm', o).code);
  assert.deepEqual(codes, [ErrorCode.INVALID_ARGUMENT, ErrorCode.INVALID_ARGUMENT, ErrorCode.INVALID_ARGUMENT, ErrorCode.NOT_FOUND]);
  assert.match(refusal(files, 'a.dpm', { strikt: true }).message, /unknown field `strikt`/);
});

test('maxBytes caps what a model may use, sidecars included', { skip: noCorpus }, () => {
  const files = {
    'xon_zombie.dpm': readFileSync(join(corpus, 'dpm/xon_zombie.dpm')),
    'xon_zombie.dpm.framegroups': readFileSync(join(corpus, 'dpm/xon_zombie.dpm.framegroups')),
  };
  const e = refusal(files, 'xon_zombie.dpm', { maxBytes: 100000 });
  assert.equal(e.code, ErrorCode.LIMIT);
  assert.equal(e.codeName, 'OSSA_ERR_LIMIT');
  load(files, 'xon_zombie.dpm', { maxBytes: 64 << 20 }).free();
});
