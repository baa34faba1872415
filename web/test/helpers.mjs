// What the tests share: the corpus, the files of a directory as the package takes them, and the
// native programs the WebAssembly build is held against (the `ossa` CLI and
// examples/native_ref.rs, both built for this machine by build.sh).
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const web = resolve(dirname(fileURLToPath(import.meta.url)), '..');
export const repo = resolve(web, '..');
export const corpus = resolve(repo, process.env.OSSA_CORPUS ?? '../shared/corpus');
const target = resolve(repo, process.env.CARGO_TARGET_DIR ?? 'target');
export const cli = process.env.OSSA_CLI ?? join(target, 'release', 'ossa');
export const nativeRef = process.env.OSSA_NATIVE_REF ?? join(target, 'release', 'examples', 'native_ref');

/** Why a test that needs the corpus cannot run, or undefined; said once. */
export const noCorpus = existsSync(corpus) ? undefined : `no corpus at ${corpus} (set OSSA_CORPUS)`;
if (noCorpus) console.log(`skipping the corpus tests: ${noCorpus}`);

let nativeChecked = false;
/** Why the native comparisons cannot run, or undefined; said once. Under OSSA_REQUIRE_INTEROP
 * (as CI sets it) their absence is a failure. */
export function noNative() {
  const why =
    existsSync(cli) && existsSync(nativeRef)
      ? undefined
      : `the native ossa CLI (${cli}) or native_ref (${nativeRef}) is not built: run web/build.sh`;
  if (why && !nativeChecked) {
    if (process.env.OSSA_REQUIRE_INTEROP) throw new Error(`OSSA_REQUIRE_INTEROP is set but ${why}`);
    console.log(`skipping the native comparisons: ${why}`);
  }
  nativeChecked = true;
  return why;
}

/** Every file under `dir` (recursively, links left out), by path relative to it. */
export function filesOf(dir, keep = () => true) {
  const files = new Map();
  const walk = (d) => {
    for (const name of readdirSync(d).sort()) {
      const path = join(d, name);
      const st = statSync(path, { throwIfNoEntry: false });
      if (!st) continue;
      if (st.isDirectory()) walk(path);
      else if (st.isFile()) {
        const rel = relative(dir, path).split('\\').join('/');
        if (keep(rel)) files.set(rel, new Uint8Array(readFileSync(path)));
      }
    }
  };
  walk(dir);
  return files;
}

/** `ossa info --json FILE`, or the CLI's error line and exit status. */
export function cliInfo(file) {
  const r = spawnSync(cli, ['info', '--json', file], { encoding: 'utf8', maxBuffer: 1 << 28 });
  if (r.status === 0) return { info: JSON.parse(r.stdout) };
  return { status: r.status, stderr: r.stderr.trim() };
}

/** The CLI's command line run; its stdout. Its skinning kernel is the portable one, as the
 * WebAssembly build's is (the glTF export skins the bind pose: AVX2's fused multiply-adds round
 * differently in the last bit). */
export function runCli(args) {
  return execFileSync(cli, args, {
    encoding: 'utf8',
    maxBuffer: 1 << 28,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, OSSA_SKIN_KERNEL: 'portable' },
  });
}

/** native_ref's JSON for a model of `dir`. */
export function native(dir, model, args = []) {
  const out = execFileSync(nativeRef, [dir, model, ...args], { encoding: 'utf8', maxBuffer: 1 << 30 });
  return JSON.parse(out);
}

/** The line the CLI prints for an error of `file`, made from an OssaError as `ossa` makes it
 * (src/bin/ossa.rs, error_line): the message without the file when it is the input's. */
export function cliLine(file, error) {
  const name = file.split('/').pop();
  const sameFile = error.file === undefined || error.file === file || error.file === name;
  let message = error.message;
  if (sameFile) {
    const line = error.line !== undefined ? `line ${error.line}: ` : '';
    const at = error.offset !== undefined ? ` at byte 0x${error.offset.toString(16)}` : '';
    message = `${line}${error.detail}${at}`;
  }
  const bare = (p) => (p.startsWith('./') ? p.slice(2) : p);
  const cut = message.indexOf(': ');
  if (cut >= 0 && bare(message.slice(0, cut)) === bare(file)) message = message.slice(cut + 2);
  return `ossa: ${file}: ${error.codeName}: ${message}`;
}

/** The largest side of a bounding box, the scale the skinning tolerance is taken of. */
export function sizeOf(bounds) {
  return Math.max(...[0, 1, 2].map((k) => bounds.max[k] - bounds.min[k]), 1e-30);
}
