#![no_main]
// Meshes and a skeleton from one input, loaded and bound (see ossa_fuzz::bind).
libfuzzer_sys::fuzz_target!(|data: &[u8]| ossa_fuzz::bind(data));
