// Bundles the viewer into dist/: index.html, viewer.css and viewer.js, one classic script that
// holds three.js, the package and the WebAssembly module (esbuild's binary loader), so that the
// page works from any web server or opened as a file, and fetches nothing.
//
//   node viewer/build.mjs   (after the module is built into pkg/)
import { copyFileSync, mkdirSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { build } from 'esbuild';

const web = join(dirname(fileURLToPath(import.meta.url)), '..');
const dist = join(web, 'dist');
mkdirSync(dist, { recursive: true });
await build({
  entryPoints: [join(web, 'viewer/viewer.js')],
  bundle: true,
  format: 'iife',
  target: 'es2022',
  minify: true,
  outfile: join(dist, 'viewer.js'),
  loader: { '.wasm': 'binary' },
  legalComments: 'eof',
  logLevel: 'warning',
  // wasm-bindgen's loader names its .wasm by import.meta.url; the viewer passes the bytes.
  logOverride: { 'empty-import-meta': 'silent' },
});
for (const f of ['index.html', 'viewer.css']) copyFileSync(join(web, 'viewer', f), join(dist, f));
console.log(`dist/viewer.js: ${statSync(join(dist, 'viewer.js')).size} bytes`);
