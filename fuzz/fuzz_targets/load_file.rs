#![no_main]
// ossa_load_file and ossa_model_add_skills through an in-memory filesystem with sidecars and
// links (see ossa_fuzz::load_file).
libfuzzer_sys::fuzz_target!(|data: &[u8]| ossa_fuzz::load_file::run(data));
