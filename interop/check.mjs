// node check.mjs DIR: validates every DIR/*.glb with the Khronos glTF-Validator and, where
// NAME.ref.json is beside NAME.glb, compares the skinned positions that a reader computes with the
// ones ossa wrote to NAME.ref.bin. Exit status: 0 all passed, 1 some failed, 2 nothing to check.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { validateBytes } from 'gltf-validator';
import { openThree } from './read-three.mjs';
import { openAllSets } from './read-all-sets.mjs';

const READERS = { three: openThree, 'all-sets': openAllSets };
const SEVERITY = ['error', 'warning'];

// Returns [summary, problems]: a summary for the file's line, and one line per reason it fails.
async function validate(name, bytes) {
  const report = await validateBytes(new Uint8Array(bytes), {
    uri: name,
    format: 'glb',
    maxIssues: 0, // no limit: every error and warning is printed
    writeTimestamp: false,
    externalResourceFunction: (uri) => Promise.reject(`${uri}: the file must be self-contained`),
  });
  const { numErrors, numWarnings, numInfos, numHints, messages } = report.issues;
  const problems = messages
    .filter((m) => m.severity <= 1)
    .map((m) => `${SEVERITY[m.severity]} ${m.code} at ${m.pointer ?? '(file)'}: ${m.message}`);
  const summary = `${numErrors || numWarnings ? 'invalid' : 'valid'} (${numErrors} errors, ${numWarnings} warnings, ${numInfos} infos, ${numHints} hints)`;
  return [summary, problems];
}

// "bind pose + 23 animations x 3 times", or "bind pose + 2 animations, 7 times" when uneven.
function describeSamples(samples) {
  const bind = samples.filter((s) => s.animation === null).length;
  const counts = new Map();
  for (const s of samples) if (s.animation !== null) counts.set(s.animation, (counts.get(s.animation) ?? 0) + 1);
  const [first = 0, ...others] = counts.values();
  const animated = others.every((c) => c === first)
    ? `${counts.size} animations x ${first} times`
    : `${counts.size} animations, ${samples.length - bind} times`;
  return bind ? `bind pose + ${animated}` : animated;
}

function sampleName(s) {
  return s.animation === null ? 'bind pose' : `${JSON.stringify(s.animation)} t=${s.time}`;
}

async function compare(dir, name, bytes, ref) {
  const open = READERS[ref.reader];
  if (!open) return [`reader ${ref.reader}`, [`unknown reader ${JSON.stringify(ref.reader)}`]];
  const problems = [];
  if (ref.glb !== name) problems.push(`the reference is for ${ref.glb}`);
  const binName = name.replace(/\.glb$/, '.ref.bin');
  const bin = readFileSync(join(dir, binName));
  const expected = new DataView(bin.buffer, bin.byteOffset, bin.byteLength);
  const floats = Math.floor(bin.byteLength / 4);
  const reader = await open(bytes);
  if (reader.meshes.length !== ref.meshes.length) {
    problems.push(`the file has ${reader.meshes.length} meshes, the reference ${ref.meshes.length}`);
    return [ref.reader, problems];
  }
  ref.meshes.forEach((m, i) => {
    if (reader.meshes[i].vertexCount !== m.vertex_count) {
      problems.push(`mesh ${i} has ${reader.meshes[i].vertexCount} vertices, the reference ${m.vertex_count}`);
    }
  });
  if (problems.length) return [ref.reader, problems];

  const perSample = ref.meshes.reduce((n, m) => n + 3 * m.vertex_count, 0);
  let worst = { d: -1 };
  let over = 0;
  ref.samples.forEach((s, si) => {
    if (s.offset + perSample > floats) {
      problems.push(`sample ${si} needs floats ${s.offset}..${s.offset + perSample}, ${binName} has ${floats}`);
      return;
    }
    const actual = reader.positions(s);
    let at = s.offset;
    ref.meshes.forEach((m, mi) => {
      const excluded = new Set(m.excluded ?? []);
      for (let v = 0; v < m.vertex_count; v++, at += 3) {
        if (excluded.has(v)) continue;
        const want = [0, 1, 2].map((c) => expected.getFloat32((at + c) * 4, true));
        const got = [0, 1, 2].map((c) => actual[mi][v * 3 + c]);
        const diff = Math.hypot(...want.map((w, c) => got[c] - w));
        const d = Number.isNaN(diff) ? Infinity : diff / ref.size;
        if (d > ref.tolerance) over++;
        if (d > worst.d) worst = { d, sample: s, mesh: mi, vertex: v, want, got };
      }
    });
  });
  const where = worst.d < 0 ? 'nothing compared'
    : `worst ${worst.d.toPrecision(2)} of size (${sampleName(worst.sample)}, mesh ${worst.mesh} ${JSON.stringify(ref.meshes[worst.mesh].name)}, vertex ${worst.vertex})`;
  if (over) {
    const xyz = (p) => `(${p.map((c) => c.toPrecision(7)).join(', ')})`;
    problems.push(`${over} vertex positions over the tolerance ${ref.tolerance} of size ${ref.size}; ` +
      `at the worst expected ${xyz(worst.want)}, ${ref.reader} gives ${xyz(worst.got)}`);
  }
  const meshes = `${ref.meshes.length} mesh${ref.meshes.length === 1 ? '' : 'es'}`;
  const summary = `${ref.reader}: ${describeSamples(ref.samples)}, ${meshes}, ${where}, ${over} over ${ref.tolerance}`;
  return [summary, problems];
}

async function checkFile(dir, name) {
  const bytes = readFileSync(join(dir, name));
  const parts = [];
  const problems = [];
  const run = async (what, step) => {
    try {
      const [summary, found] = await step();
      parts.push(summary);
      problems.push(...found);
    } catch (e) {
      parts.push(`${what} failed`);
      problems.push(`${what}: ${e instanceof Error ? e.message : e}`);
    }
  };
  await run('validation', () => validate(name, bytes));
  const refPath = join(dir, name.replace(/\.glb$/, '.ref.json'));
  if (existsSync(refPath)) {
    await run('comparison', () => compare(dir, name, bytes, JSON.parse(readFileSync(refPath, 'utf8'))));
  } else {
    parts.push('no reference');
  }
  console.log(`${problems.length ? 'FAIL' : 'ok  '} ${name}: ${parts.join('; ')}`);
  for (const p of problems) console.log(`       ${p}`);
  return problems.length === 0;
}

const dir = process.argv[2];
if (!dir) {
  console.error('usage: node check.mjs DIR');
  process.exit(2);
}
const names = existsSync(dir) ? readdirSync(dir).filter((n) => n.endsWith('.glb')).sort() : [];
if (names.length === 0) {
  console.error(`no .glb files in ${dir}: nothing checked`);
  process.exit(2);
}
let passed = 0;
for (const name of names) if (await checkFile(dir, name)) passed++;
console.log(`${passed} passed, ${names.length - passed} failed`);
process.exit(passed === names.length ? 0 : 1);
