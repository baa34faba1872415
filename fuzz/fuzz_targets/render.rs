#![no_main]
// A model of any format drawn by the software renderer (see ossa_fuzz::render).
libfuzzer_sys::fuzz_target!(|data: &[u8]| ossa_fuzz::render(data));
