// The package under node: the WebAssembly module is read beside this file and initialised
// synchronously, so that `load` works as soon as the package is imported.
import { readFileSync } from 'node:fs';
import { initSync } from './index.js';

initSync(readFileSync(new URL('./pkg/ossa_web_bg.wasm', import.meta.url)));

export * from './index.js';
