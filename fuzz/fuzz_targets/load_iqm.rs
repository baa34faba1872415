#![no_main]
// Loads the input as Iqm, whatever it holds (see ossa_fuzz::load).
libfuzzer_sys::fuzz_target!(|data: &[u8]| ossa_fuzz::load(data, ossa::Format::Iqm));
